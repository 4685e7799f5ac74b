// Generated content-model types (issue 14): `GET /admin/v1/workspaces/{workspace}/types.ts` and
// `npx @workspace-api/sdk generate-types` give the same bytes for a workspace with every field
// type, multiple, required and unique fields, relations (one with two targets, one to its own
// type), attachments, names that need quoting and contracts; the module type-checks under
// `--strict`; real server answers fit the generated types; a program using the typed client
// compiles and one with wrong names fails on exactly its marked lines; and the CLI refuses bad
// input with a clear message, a non-zero exit and no file written.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { contentClient, createClient, type PublicClient } from '../../sdk/src';
import { generateTypes, type ContentModel, type FieldModel } from '../../sdk/src/typegen';
import { contractFetch } from './support/contract';
import { request } from './support/http';
import { ADMIN_TOKEN, freePort, startTestServer, type TestServer } from './support/server';
import { adminOk, createBucket } from './support/objects';
import { createContentType, entriesWorkspace, uploadFile, type EntriesWorkspace } from './support/entries';

jest.setTimeout(180_000);

const root = path.resolve(__dirname, '../..');
const cli = path.join(root, 'sdk/dist/cli.js');
const fixtures = path.join(__dirname, 'fixtures/typegen');
const sdkIndex = path.join(root, 'sdk/src/index.ts');

let s: TestServer;
let w: EntriesWorkspace;
let tmp: string;

/** The test workspace's model: buckets `blog` and `my-shop`, and two contracts. */
async function createModel() {
  await createBucket(s, w.ws, 'blog');
  await createBucket(s, w.ws, 'my-shop');
  await createContentType(s, w.ws, 'blog', {
    name: 'author',
    fields: [
      { name: 'name', type: 'text', required: true },
      { name: 'bio', type: 'text' },
      { name: 'avatar', type: 'attachment' },
    ],
  });
  await createContentType(s, w.ws, 'blog', {
    name: 'post',
    fields: [
      { name: 'title', type: 'text', required: true, unique: true },
      { name: 'body', type: 'text' },
      { name: 'rating', type: 'number' },
      { name: 'featured', type: 'boolean' },
      { name: 'published_on', type: 'date' },
      { name: 'starts_at', type: 'date', format: 'datetime' },
      { name: 'daily_at', type: 'date', format: 'time' },
      { name: 'meta', type: 'json' },
      { name: 'author', type: 'relation', targets: ['author'] },
      { name: 'related', type: 'relation', targets: ['post', 'author'], multiple: true },
      { name: 'tags', type: 'text', multiple: true },
      { name: 'scores', type: 'number', multiple: true },
      { name: 'cover', type: 'attachment' },
      { name: 'gallery', type: 'attachment', multiple: true, cascade_on_delete: true },
    ],
  });
  // Names that are not identifiers (`my-shop`, `gift-card`) and reserved words as field names.
  await createContentType(s, w.ws, 'my-shop', {
    name: 'gift-card',
    fields: [
      { name: 'code', type: 'text', required: true, unique: true },
      { name: 'value', type: 'number', required: true },
      { name: 'expires_on', type: 'date' },
      { name: 'default', type: 'text' },
      { name: 'for', type: 'relation', targets: ['gift-card'] },
    ],
  });
  await adminOk(s, 'post', `/admin/v1/workspaces/${w.ws}/contracts`, {
    name: 'article',
    prefix: 'articles',
    schema: {
      type: 'object',
      required: ['title'],
      properties: {
        title: { type: 'string', description: 'The headline */ (a comment terminator stays inside)' },
        author: { $ref: '#/$defs/person' },
        status: { enum: ['draft', 'live'] },
        rating: { type: ['number', 'null'] },
      },
      $defs: { person: { title: 'Person', type: 'object', required: ['name'], properties: { name: { type: 'string' } } } },
    },
  });
  await adminOk(s, 'post', `/admin/v1/workspaces/${w.ws}/contracts`, {
    name: 'shop-settings',
    bucket: 'my-shop',
    mode: 'report',
    schema: {
      type: 'object',
      additionalProperties: false,
      properties: { currencies: { type: 'array', items: { type: 'string', minLength: 3, maxLength: 3 } } },
    },
  });
}

beforeAll(async () => {
  // scripts/test.mjs builds it before every run.
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npm run build\``);
  tmp = mkdtempSync(path.join(os.tmpdir(), 'wsapi-typegen-'));
  s = await startTestServer();
  w = await entriesWorkspace(s);
  await createModel();
});
afterAll(async () => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  await s?.close();
});

const typesPath = (ws: string) => `/admin/v1/workspaces/${ws}/types.ts`;

async function endpointTypes(ws = w.ws): Promise<string> {
  const res = await s.admin.get(typesPath(ws), { headers: { Accept: 'text/plain' } });
  if (res.status !== 200) throw new Error(`types.ts: ${res.status} ${res.text}`);
  return res.text;
}

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built CLI (`sdk/dist/cli.js`, what `npx @workspace-api/sdk` runs). */
function runCli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [cli, ...args],
      { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/** Type-checks `files` under `--strict`, with `@workspace-api/sdk` resolved to the SDK's sources. */
function typecheck(files: string[]): ts.Diagnostic[] {
  const program = ts.createProgram(files, {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.Node16,
    moduleResolution: ts.ModuleResolutionKind.Node16,
    lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
    types: [],
    baseUrl: path.dirname(files[0]),
    paths: { '@workspace-api/sdk': [sdkIndex] },
  });
  return [...ts.getPreEmitDiagnostics(program)];
}

const describeDiagnostic = (d: ts.Diagnostic) => {
  const where =
    d.file && d.start !== undefined ? `${path.basename(d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}: ` : '';
  return where + ts.flattenDiagnosticMessageText(d.messageText, '\n');
};
const lineOf = (d: ts.Diagnostic) => d.file!.getLineAndCharacterOfPosition(d.start!).line + 1;

/** A directory with the generated module as `content.ts` and the given fixture files. */
function project(name: string, module: string, files: Record<string, string> = {}): string {
  const dir = path.join(tmp, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'content.ts'), module);
  for (const [file, text] of Object.entries(files)) writeFileSync(path.join(dir, file), text);
  return dir;
}

describe('GET /admin/v1/workspaces/{workspace}/types.ts', () => {
  it('answers the module as UTF-8 text, with the workspace and the model hash in its header, the same bytes every time', async () => {
    const res = await s.admin.get(typesPath(w.ws), { headers: { Accept: 'text/plain' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    const lines = res.text.split('\n');
    expect(lines[0]).toBe(`// TypeScript types of the content model of workspace "${w.ws}", generated by @workspace-api/sdk.`);
    expect(lines[1]).toMatch(/^\/\/ Content hash: sha256:[0-9a-f]{64}$/);
    expect(res.text).toContain(`import type * as Sdk from "@workspace-api/sdk";`);
    expect(await endpointTypes()).toBe(res.text);
  });

  it('names the model: every type, its descriptors, the contracts and where they apply; non-identifiers are quoted', async () => {
    const text = await endpointTypes();
    for (const name of [
      'BlogAuthorEntry',
      'BlogPostFields',
      'BlogPostCreate',
      'BlogPostUpdate',
      'MyShopGiftCardEntry',
      'ArticleContract',
      'Article_Person',
      'ShopSettingsContract',
    ]) {
      expect(text).toMatch(new RegExp(`^export interface ${name} `, 'm'));
    }
    expect(text).toContain('    "my-shop": {\n      "gift-card": {');
    expect(text).toContain('related: { type: "relation"; format: null; multiple: true; required: false; targets: "post" | "author" };');
    expect(text).toContain('  related: (BlogPostEntry | BlogAuthorEntry | Sdk.EntryReference)[];');
    expect(text).toContain('  title: string;\n'); // required on create
    expect(text).toContain('  cover?: number | null;\n'); // a file ID on writes
    expect(text).toContain('  cover: Sdk.FileObject | null;\n'); // the file object on reads
    expect(text).toContain('"shop-settings": { data: ShopSettingsContract; mode: "report"; bucket: "my-shop"; prefix: null };');
    expect(text).toContain(
      '  objects: {\n    "*": {\n      articles: "article";\n    };\n    "my-shop": {\n      "": "shop-settings";\n    };\n  };',
    );
    // The comment terminator of the description cannot end the comment.
    expect(text).not.toContain('headline */');
  });

  it('answers 404 for an unknown workspace and 403 without the admin token', async () => {
    expect((await s.admin.get(typesPath('no-such-workspace'))).status).toBe(404);
    expect((await request(s.url, 'GET', typesPath(w.ws), { token: w.key })).body).toEqual({ message: 'Forbidden' });
  });

  it('follows the model: a new content type changes the module and its hash', async () => {
    const other = await entriesWorkspace(s);
    const before = await endpointTypes(other.ws);
    await createContentType(s, other.ws, 'general', { name: 'note', fields: [{ name: 'text', type: 'text' }] });
    const after = await endpointTypes(other.ws);
    expect(after.split('\n')[1]).not.toBe(before.split('\n')[1]);
    expect(after).toContain('export interface GeneralNoteEntry ');
    expect(before).toContain('  buckets: {\n  };');
  });
});

describe('the generator', () => {
  it('gives the same bytes for the same model, whatever the order it comes in', async () => {
    const admin = (p: string) => adminOk(s, 'get', `/admin/v1/workspaces/${w.ws}${p}`);
    const types = [...(await admin('/buckets/blog/content-types')).data, ...(await admin('/buckets/my-shop/content-types')).data];
    const contracts = (await admin('/contracts')).data;
    const model: ContentModel = { workspace: w.ws, contentTypes: types, contracts };
    const first = await generateTypes(model);
    expect(await generateTypes(model)).toBe(first);
    // Reordered types and contracts, reordered schema keys, ids and timestamps changed.
    const reorder = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(reorder)
        : v && typeof v === 'object'
          ? Object.fromEntries(
              Object.entries(v)
                .reverse()
                .map(([k, x]) => [k, reorder(x)]),
            )
          : v;
    const shuffled: ContentModel = {
      workspace: w.ws,
      contentTypes: [...types].reverse().map((t) => ({ ...t, id: 999, created_at: 'x' })),
      contracts: [...contracts].reverse().map((c) => ({ ...c, schema: reorder(c.schema) as Record<string, unknown>, updated_at: 'y' })),
    };
    expect(await generateTypes(shuffled)).toBe(first);
    expect(await endpointTypes()).toBe(first);
  });

  it('never emits invalid code: names that are no identifiers, collide, or hold quotes, newlines and comment ends', async () => {
    // Deliberately beyond what the API allows (any name, an unknown field type): the generator is a pure function of any JSON.
    const field = (name: string, type: string, extra: Record<string, unknown> = {}) =>
      ({
        name,
        type,
        format: type === 'date' ? 'date' : null,
        multiple: false,
        required: false,
        unique: false,
        targets: [],
        cascade_on_delete: false,
        ...extra,
      }) as unknown as FieldModel;
    const odd = ['a b', 'x"y', 'c*/d', 'line\nbreak', 'sep\u2028arator', '9lives', 'class', '__proto__', 'ünï', '$', ''];
    const model: ContentModel = {
      workspace: 'ws "*/\n\u2028',
      contentTypes: [
        { bucket: 'b-1', name: 'x', name_field: null, fields: odd.map((n) => field(n, 'text')) },
        { bucket: 'b', name: '1-x', name_field: null, fields: [field('r', 'relation', { targets: ['x', 'missing', '1-x'] })] },
        { bucket: 'b1', name: 'x', name_field: null, fields: [field('r', 'relation', { targets: ['x'], multiple: true })] },
        { bucket: 'b-1', name: 'x', name_field: null, fields: [] }, // a repeated type: the first one wins
        { bucket: '*/', name: 'content', name_field: null, fields: [field('when', 'date'), field('odd', 'unheard-of')] },
      ],
      contracts: [
        {
          name: 'a-b',
          mode: 'enforce',
          bucket: null,
          prefix: null,
          schema: {
            type: 'object',
            properties: { c: { title: 'C', type: 'object' }, far: { $ref: 'https://example.com/x.json' }, near: { $ref: 'other.json#/a' } },
          },
        },
        {
          name: 'a',
          mode: 'enforce',
          bucket: null,
          prefix: null,
          schema: { type: 'object', properties: { bc: { title: 'BC', type: 'string' } } },
        },
        {
          name: 'a_b',
          mode: 'report',
          bucket: 'b',
          prefix: 'p/q',
          schema: { type: 'object', properties: { t: { tsType: 'string; } evil {' } } },
        },
        { name: 'broken', mode: 'enforce', bucket: null, prefix: null, schema: { $ref: '#/$defs/nowhere' } },
        { name: 'both', mode: 'enforce', bucket: null, prefix: 'p/q', schema: { type: 'string' } },
      ],
    };
    const text = await generateTypes(model);
    expect(await generateTypes(model)).toBe(text);
    expect(text).toContain('export type BrokenContract = unknown;');
    expect(text).not.toContain('evil');
    const dir = project('odd', text, {
      'use.ts': `import type { Content } from './content';\nexport type Check = Content['buckets']['b-1']['x']['model']['c*/d'];\n`,
    });
    expect(typecheck([path.join(dir, 'content.ts'), path.join(dir, 'use.ts')]).map(describeDiagnostic)).toEqual([]);
  });
});

describe('the CLI (npx @workspace-api/sdk generate-types)', () => {
  it('writes the same bytes as the endpoint', async () => {
    const out = path.join(tmp, 'cli', 'src', 'content.ts');
    const run = await runCli(['generate-types', '--url', s.url, '--token', ADMIN_TOKEN, '--workspace', w.ws, '--out', out]);
    expect(run).toMatchObject({ code: 0, stdout: '' });
    expect(run.stderr).toMatch(
      new RegExp(`^wrote .*content\\.ts: workspace "${w.ws}", 3 content types, 2 contracts \\(sha256:[0-9a-f]{64}\\)\\n$`),
    );
    expect(readFileSync(out, 'utf8')).toBe(await endpointTypes());
    // The token may come from the environment; `-` writes to standard output.
    const piped = await runCli(['generate-types', '--url', s.url, '--workspace', w.ws, '--out', '-'], {
      WORKSPACE_API_ADMIN_TOKEN: ADMIN_TOKEN,
    });
    expect(piped.code).toBe(0);
    expect(piped.stdout).toBe(readFileSync(out, 'utf8'));
  });

  describe('refuses bad input with a clear message, a non-zero exit and no file written', () => {
    const attempt = async (args: string[]) => {
      const dir = mkdtempSync(path.join(tmp, 'bad-'));
      const out = path.join(dir, 'content.ts');
      const run = await runCli(['generate-types', ...args, '--out', out]);
      expect(readdirSync(dir)).toEqual([]); // no file, no temporary left behind
      // An existing file is left as it was.
      writeFileSync(out, 'previous\n');
      const again = await runCli(['generate-types', ...args, '--out', out]);
      expect(again.code).toBe(run.code);
      expect(readFileSync(out, 'utf8')).toBe('previous\n');
      expect(readdirSync(dir)).toEqual(['content.ts']);
      return run;
    };

    it('an unknown workspace', async () => {
      const run = await attempt(['--url', s.url, '--token', ADMIN_TOKEN, '--workspace', 'no-such-workspace']);
      expect(run).toEqual({ code: 1, stdout: '', stderr: 'error: workspace "no-such-workspace" not found (404 reading the workspace)\n' });
    });

    it('a token without rights (an API key, or a wrong token)', async () => {
      for (const token of [w.key, 'not-the-admin-token']) {
        const run = await attempt(['--url', s.url, '--token', token, '--workspace', w.ws]);
        expect(run).toEqual({
          code: 1,
          stdout: '',
          stderr: "error: the server refused the token (403 Forbidden): --token must be the server's ADMIN_TOKEN\n",
        });
      }
    });

    it('an unreachable URL', async () => {
      const url = `http://127.0.0.1:${await freePort()}`;
      const run = await attempt(['--url', url, '--token', ADMIN_TOKEN, '--workspace', w.ws]);
      expect(run).toEqual({ code: 1, stdout: '', stderr: `error: cannot reach ${url}: ECONNREFUSED\n` });
    });

    it('a URL that is no Workspace API server', async () => {
      const run = await attempt(['--url', `${s.url}/docs`, '--token', ADMIN_TOKEN, '--workspace', w.ws]);
      expect(run).toEqual({
        code: 1,
        stdout: '',
        stderr: `error: ${s.url}/docs does not serve the Workspace API (no GET /health there): check --url\n`,
      });
    });

    it('a wrong invocation (exit 2, with the usage)', async () => {
      const missing = await attempt(['--url', s.url, '--workspace', w.ws]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toMatch(/^error: --token is required\n\nUsage: npx @workspace-api\/sdk generate-types /);
      const notUrl = await attempt(['--url', 'localhost:3000', '--token', ADMIN_TOKEN, '--workspace', w.ws]);
      expect(notUrl.code).toBe(2);
      expect(notUrl.stderr).toMatch(/^error: --url must be an http or https address, not "localhost:3000"\n/);
      const unknown = await runCli(['generate-typez']);
      expect(unknown.code).toBe(2);
      expect(unknown.stderr).toMatch(/^error: unknown command "generate-typez"\n/);
    });
  });
});

describe('the generated module and the typed client', () => {
  let module: string;
  let api: PublicClient;
  beforeAll(async () => {
    module = await endpointTypes();
    api = createClient({ baseUrl: s.url, apiKey: w.key, fetch: contractFetch });
  });

  it('type-checks under --strict, with a program using the typed client', () => {
    const dir = project('valid', module, { 'valid.ts': readFileSync(path.join(fixtures, 'valid.ts'), 'utf8') });
    expect(typecheck([path.join(dir, 'content.ts'), path.join(dir, 'valid.ts')]).map(describeDiagnostic)).toEqual([]);
  });

  it('refuses wrong field, type and contract names: every marked line is an error, and only those', () => {
    const source = readFileSync(path.join(fixtures, 'invalid.ts'), 'utf8');
    const marked = source.split('\n').flatMap((line, i) => (line.trim().startsWith('// @ts-expect-error') ? [i + 2] : []));
    expect(marked.length).toBeGreaterThanOrEqual(20);
    // With the directives: no error (an unused directive would be one).
    const dir = project('invalid', module, { 'invalid.ts': source });
    expect(typecheck([path.join(dir, 'invalid.ts')]).map(describeDiagnostic)).toEqual([]);
    // Without them: one error on each marked line, none elsewhere.
    const bare = project('invalid-bare', module, { 'invalid.ts': source.replace(/\/\/ @ts-expect-error/g, '// expected error:') });
    const errors = typecheck([path.join(bare, 'invalid.ts')]);
    expect([...new Set(errors.map(lineOf))].sort((a, b) => a - b)).toEqual(marked);
    expect(errors).toHaveLength(marked.length);
  });

  it('describes what the server answers: entries, compact references, files, query rows, objects', async () => {
    // Typed by the fixtures above; here the calls run (untyped: the module is generated at run time).
    const cms: any = contentClient<any>(api, w.ws);
    const blog = cms.entries('blog');
    const file = await uploadFile(w.api, w.ws, 'cover.txt', 'cover');
    const author = await blog.create('author', { fields: { name: 'Ada Lovelace', avatar: file.id }, status: 'published' });
    expect(author.response.status).toBe(201);
    const post = await blog.create('post', {
      fields: {
        title: 'Notes',
        rating: 4.5,
        featured: true,
        published_on: '2026-11-22',
        starts_at: '2026-12-01 18:30',
        daily_at: '08:15',
        meta: { seo: { noindex: false } },
        author: author.data.id,
        tags: ['news'],
        scores: [1, 2],
        cover: file.id,
        gallery: [file.id],
      },
      status: 'published',
    });
    expect(post.response.status).toBe(201);
    // Related to itself: the rendered entry holds a compact reference (`_relation: cycle`).
    const updated = await blog.update('post', post.data.id, { fields: { related: [post.data.id, author.data.id] } });
    expect(updated.data.fields.related.map((r: { _relation?: unknown }) => r._relation ?? null)).toEqual([{ reason: 'cycle' }, null]);
    const read = await blog.get('post', post.data.id);
    const listed = await cms.entries('blog').list('author');
    const query = await blog.query({
      type: 'post',
      fields: [
        'title',
        '@id',
        '@status',
        'author.name',
        'author.@id',
        'cover.download_url',
        'related.@id',
        'meta.seo.noindex',
        'tags',
        'gallery',
      ],
      filter: { rating: { gte: 4 }, $or: [{ tags: { includes: 'news' } }, { 'author.name': { startsWith: 'Ada' } }] },
      sort: [{ field: 'published_on', direction: 'desc' }],
    });
    const defaults = await blog.query({ type: 'post' });
    expect(query.data.data).toHaveLength(1);
    const batch = await blog.batch([
      blog.op.create('author', { ref: 'grace', fields: { name: 'Grace Hopper' } }),
      blog.op.create('post', {
        fields: { title: 'Compilers', author: { $ref: 'grace' } },
        check: { filter: { title: { eq: 'Compilers' } }, exists: false },
      }),
      blog.op.update('post', post.data.id, { fields: { rating: 5 }, expected_version: updated.data.lock_version }),
    ]);
    expect(batch.response.status).toBe(200);
    const object = await cms.objects.create('article', {
      ref: 'articles/hello',
      data: { title: 'Hello', author: { name: 'Ada' } },
      status: 'published',
    });
    expect(object.data).toMatchObject({ contract: 'article', validation: { mode: 'enforce' } });
    const found = await cms.objects.get(object.data.id);

    // Each answer, as a literal of its generated type: missing or extra properties fail to compile.
    const literal = (v: unknown) => JSON.stringify(v, null, 2);
    const dir = project('answers', module, {
      'answers.ts': [
        `import type { AnyObject, TypedQueryResult } from '@workspace-api/sdk';`,
        `import type { BlogAuthorEntry, BlogPostEntry, Content } from './content';`,
        `type Fields = readonly ['title', '@id', '@status', 'author.name', 'author.@id', 'cover.download_url', 'related.@id', 'meta.seo.noindex', 'tags', 'gallery'];`,
        `export const post: BlogPostEntry = ${literal(read.data)};`,
        `export const authors: BlogAuthorEntry[] = ${literal(listed.data)};`,
        `export const query: TypedQueryResult<Content, 'blog', 'post', Fields> = ${literal(query.data)};`,
        `export const defaults: TypedQueryResult<Content, 'blog', 'post', undefined> = ${literal(defaults.data)};`,
        `export const object: AnyObject<Content> = ${literal(found.data)};`,
      ].join('\n'),
    });
    expect(typecheck([path.join(dir, 'answers.ts')]).map(describeDiagnostic)).toEqual([]);
  });
});
