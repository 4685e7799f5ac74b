// A workspace's archive: exported as a stream, imported from one (core/archive/).
import { handlers } from '../http/handlers';
import { HttpError } from '../http/errors';
import { requireWorkspace } from '../http/lookup';
import { exportWorkspace } from '../core/archive/export';
import { importWorkspace } from '../core/archive/import';
import { passphraseOf } from '../core/archive/secrets';
import { presentWorkspace } from './presenters';

/** The operator's passphrase that seals (export) or opens (import) an archive's secrets. */
const PASSPHRASE_HEADER = 'X-Archive-Passphrase';

export const archiveHandlers = handlers({
  async exportWorkspace({ params, koa }, app) {
    const workspace = await requireWorkspace(app, params.workspace);
    const passphrase = passphraseOf(koa.get(PASSPHRASE_HEADER) || undefined);
    return {
      status: 200,
      body: exportWorkspace(app, workspace, passphrase),
      headers: {
        'Content-Type': 'application/gzip',
        'Content-Disposition': `attachment; filename="${workspace.name}.tar.gz"`,
        'Cache-Control': 'no-store',
      },
    };
  },

  async importWorkspace({ query, koa }, app) {
    if (!koa.is('application/gzip', 'application/x-gzip', 'application/octet-stream'))
      throw new HttpError(415, { message: 'Unsupported Media Type: expected application/gzip (an archive of GET .../export).' });
    const summary = await importWorkspace(app, koa.req, query.name, passphraseOf(koa.get(PASSPHRASE_HEADER) || undefined));
    const workspace = await requireWorkspace(app, summary.workspace);
    return { status: 201, body: { workspace: presentWorkspace(workspace), rows: summary.rows, files: summary.files } };
  },
});
