// Content types and their field definitions, with the rules of the field-definition model.
import { handlers } from '../http/handlers';
import { notFound, validationFailed } from '../http/errors';
import { addFieldError, fieldError, fieldErrors } from '../lib/field-errors';
import { createContentType } from '../core/content/content-type-create';
import { changeContentType, withStorageLocks } from '../core/content/content-type-changes';
import { deleteContentType } from '../core/content/model-deletes';
import { uniqueOr422 } from '../core/errors';
import { sqlState } from '../lib/sql-state';
import { MAX_CONTENT_TYPES, TOO_MANY_CONTENT_TYPES } from '../core/content/content-types';
import { presentContentType } from './presenters';
import { requireBucket } from '../http/lookup';

/** A content type's creation: a name taken, or the workspace at MAX_CONTENT_TYPES, is a 422 on `name`. */
async function withinLimit<T>(create: () => Promise<T>): Promise<T> {
  try {
    return await uniqueOr422('name', create);
  } catch (err) {
    if (sqlState(err) !== TOO_MANY_CONTENT_TYPES) throw err;
    const errors = fieldErrors();
    addFieldError(
      errors,
      'name',
      fieldError('limit', 'The workspace holds :max content types, the most it may.', { max: MAX_CONTENT_TYPES }),
    );
    throw validationFailed(errors);
  }
}

export const contentTypeHandlers = handlers({
  async createContentType({ params, body }, app) {
    const { bucket } = await requireBucket(app, params.workspace, params.bucket);
    const id = await withinLimit(() => createContentType(app, bucket.id, body));
    const type = await app.db.prisma.contentType.findUnique({ where: { id }, include: { fields: true } });
    // Deleted at once by another request: gone for this one too.
    if (!type) throw notFound();
    return { status: 201, body: presentContentType(type, bucket.name) };
  },

  async listContentTypes({ params }, app) {
    const { bucket } = await requireBucket(app, params.workspace, params.bucket);
    const rows = await app.db.prisma.contentType.findMany({
      where: { bucketId: bucket.id },
      include: { fields: true },
      orderBy: { id: 'asc' },
    });
    return { status: 200, body: { data: rows.map((t) => presentContentType(t, bucket.name)) } };
  },

  async updateContentType({ params, body }, app) {
    const { workspace, bucket } = await requireBucket(app, params.workspace, params.bucket);
    const id = await changeContentType(app, { id: bucket.id, workspaceId: workspace.id, name: bucket.name }, params.type, body);
    // Deleted since by another request: gone for this one too.
    const type = await app.db.prisma.contentType.findUnique({ where: { id }, include: { fields: true } });
    if (!type) throw notFound();
    return { status: 200, body: presentContentType(type, bucket.name) };
  },

  async deleteContentType({ params, query }, app) {
    const { workspace, bucket } = await requireBucket(app, params.workspace, params.bucket);
    await withStorageLocks(() =>
      deleteContentType(app, { id: bucket.id, workspaceId: workspace.id, name: bucket.name }, params.type, query.purge === 'true'),
    );
    return { status: 204 };
  },

  async getContentType({ params }, app) {
    const { bucket } = await requireBucket(app, params.workspace, params.bucket);
    const type = await app.db.prisma.contentType.findUnique({
      where: { bucketId_name: { bucketId: bucket.id, name: params.type } },
      include: { fields: true },
    });
    if (!type) throw notFound();
    return { status: 200, body: presentContentType(type, bucket.name) };
  },
});
