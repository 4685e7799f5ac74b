// The delivery statement as a value (core/content/render.ts deliveryStatement): printed for a
// fixture model in each of its forms, so that a change to the SQL that renders entries shows in
// review as a change of __snapshots__/render-statement.test.ts.snap. No database: the statement is
// built from the model and the request alone. Its size follows what the request reaches.
import { loadConfig } from '../src/config';
import type { ContentTypeDef, FieldDef, FieldType } from '../src/core/content/content-types';
import { deliveryStatement, reachable, type RenderOptions } from '../src/core/content/render';
import { sql } from '../src/core/sql';

let nextId = 1;
function field(name: string, type: FieldType, more: Partial<FieldDef> = {}): FieldDef {
  return {
    id: nextId++,
    name,
    key: name,
    type,
    format: type === 'date' ? 'date' : null,
    multiple: false,
    required: false,
    unique: false,
    targets: [],
    cascadeOnDelete: false,
    indexed: null,
    ...more,
  };
}
function type(id: number, name: string, fields: FieldDef[], nameField: string | null = null): ContentTypeDef {
  return {
    id,
    name,
    bucketId: 1,
    bucket: 'general',
    workspaceId: 7,
    nameField,
    fields,
    byName: new Map(fields.map((f) => [f.name, f])),
    typedReady: true,
  };
}

// author <- post -> tag; person: a type no post reaches.
const author = type(1, 'author', [field('name', 'text'), field('mentor', 'relation', { targets: ['author'] })], 'name');
const tag = type(2, 'tag', [field('label', 'text')], 'label');
const post = type(
  3,
  'post',
  [
    field('title', 'text'),
    field('amount', 'number'),
    field('authors', 'relation', { targets: ['author'], multiple: true }),
    field('tag', 'relation', { targets: ['tag'] }),
    field('cover', 'attachment'),
  ],
  'title',
);
const person = type(4, 'person', [field('name', 'text')], 'name');
const types = [author, tag, post, person];

const config = loadConfig({ ADMIN_TOKEN: 'x', APP_KEY: 'y', BASE_URL: 'https://api.example.com' });
const options = (more: Partial<RenderOptions>): RenderOptions => ({
  config,
  workspace: { id: 7, name: 'acme' },
  types,
  rootTypes: [post],
  locale: 'en-US',
  publishedOnly: true,
  view: 'full',
  now: new Date('2026-01-01T00:00:00Z'),
  maxBytes: 16 * 1024 * 1024,
  ...more,
});
const found = sql`SELECT page_id AS pk, page_pos AS pos FROM (SELECT 1 AS page_id, 1 AS page_pos) page`;
/** The statement's text and values, as a reviewer reads them. */
const printed = (o: RenderOptions, show: { limit: number; reverse?: boolean }) => {
  const { text, values } = deliveryStatement(found, o, show).toQuery();
  return `${text}\n-- values: ${JSON.stringify(values)}`;
};

describe('the delivery statement of a fixture model', () => {
  it("is written for the types the roots reach, not the workspace's", () => {
    expect(reachable(options({})).map((t) => t.name)).toEqual(['author', 'tag', 'post']);
    expect(reachable(options({ rootTypes: [tag] })).map((t) => t.name)).toEqual(['tag']);
    expect(reachable(options({ rootTypes: undefined })).map((t) => t.name)).toEqual(['author', 'tag', 'post', 'person']);
    expect(printed(options({}), { limit: 50 })).not.toContain('"person"');
  });

  it('nested: a page of posts, each text one expression, written root by root within the budget', () => {
    expect(printed(options({}), { limit: 50 })).toMatchSnapshot();
  });

  it('nested, reversed: a previous page', () => {
    expect(printed(options({}), { limit: 10, reverse: true })).toMatchSnapshot();
  });

  it('breadth first (tree): every locale', () => {
    expect(printed(options({ locale: '*' }), { limit: 50 })).toMatchSnapshot();
  });

  it('summaries', () => {
    expect(printed(options({ view: 'summary' }), { limit: 50 })).toMatchSnapshot();
  });
});
