// The SDK (sdk/src, and the built and packed sdk/dist) against the real server. Every response
// goes through the contract check (`fetch: contractFetch`).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  PageError,
  batchEntries,
  createAdminClient,
  createClient,
  isApiError,
  isValidationError,
  pages,
  paginate,
  queryEntries,
  queryEntriesBatch,
  type AdminClient,
} from '../../sdk/src';
import { contractFetch } from './support/contract';
import { uniqueName, TIMESTAMP, newWorkspaceBody } from './support/fixtures';
import { ADMIN_TOKEN, startTestServer, type TestServer } from './support/server';

const run = promisify(execFile);
const root = path.resolve(__dirname, '../..');
const sdkDir = path.join(root, 'sdk');

let s: TestServer;
let admin: AdminClient;
beforeAll(async () => {
  s = await startTestServer();
  admin = createAdminClient({ baseUrl: s.url, adminToken: ADMIN_TOKEN, fetch: contractFetch });
});
afterAll(() => s.close());

/** A contract-checked fetch that also records what each request carried. */
function recordingFetch() {
  const seen: { method: string; path: string; authorization: string | null }[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const request = new Request(input, init);
    seen.push({ method: request.method, path: new URL(request.url).pathname, authorization: request.headers.get('authorization') });
    return contractFetch(request);
  };
  return { seen, fetch };
}

/** A workspace with a creator and a key, made through the SDK. */
async function setup() {
  const name = uniqueName();
  const ws = await admin.POST('/admin/v1/workspaces', { body: { name } });
  const user = await admin.POST('/admin/v1/workspaces/{workspace}/users', {
    params: { path: { workspace: name } },
    body: { email: `${uniqueName('ed')}@example.com`, permissions: ['view-file'] },
  });
  const key = await admin.POST('/admin/v1/workspaces/{workspace}/api-keys', {
    params: { path: { workspace: name } },
    body: { name: 'Website', user_id: user.data!.id, abilities: ['files:read'] },
  });
  return { name, workspace: ws.data!, user: user.data!, key: key.data! };
}

describe('the first five minutes', () => {
  it('creates a workspace, a creator and a key, then calls the public API with the key', async () => {
    const adminFetch = recordingFetch();
    const a = createAdminClient({ baseUrl: `${s.url}/`, adminToken: ADMIN_TOKEN, fetch: adminFetch.fetch });
    const name = uniqueName();

    const ws = await a.POST('/admin/v1/workspaces', { body: { name, locales: ['de-DE'] } });
    expect(ws.response.status).toBe(201);
    expect(ws.error).toBeUndefined();
    expect(ws.data).toEqual(newWorkspaceBody(name, ['en-US', 'de-DE']));

    const user = await a.POST('/admin/v1/workspaces/{workspace}/users', {
      params: { path: { workspace: name } },
      body: { email: 'editor@example.com', permissions: ['view-file', 'create-file'] },
    });
    expect(user.response.status).toBe(201);
    expect(user.data).toEqual({ id: expect.any(Number), email: 'editor@example.com', permissions: ['view-file', 'create-file'] });
    const userId = user.data!.id;

    const key = await a.POST('/admin/v1/workspaces/{workspace}/api-keys', {
      params: { path: { workspace: name } },
      body: { name: 'Website', user_id: userId, abilities: ['files:read', 'files:write'] },
    });
    expect(key.response.status).toBe(201);
    expect(key.data).toEqual({
      id: expect.any(Number),
      name: 'Website',
      user_id: userId,
      abilities: ['files:read', 'files:write'],
      origins: [],
      created_at: expect.stringMatching(TIMESTAMP),
      key: expect.stringMatching(/^wsk_[A-Za-z0-9_-]{43}$/),
    });
    const secret = key.data!.key;

    const publicFetch = recordingFetch();
    const api = createClient({ baseUrl: s.url, apiKey: secret, fetch: publicFetch.fetch });
    const me = await api.GET('/api/v1/{workspace}/api-key', { params: { path: { workspace: name } } });
    expect(me.response.status).toBe(200);
    expect(me.error).toBeUndefined();
    expect(me.data).toEqual({
      id: key.data!.id,
      name: 'Website',
      workspace: name,
      abilities: ['files:read', 'files:write'],
      origins: [],
      user: { id: userId, email: 'editor@example.com', permissions: ['view-file', 'create-file'] },
    });

    // Each client sent its own credential, as a bearer token, on every request.
    expect(adminFetch.seen).toEqual([
      { method: 'POST', path: '/admin/v1/workspaces', authorization: `Bearer ${ADMIN_TOKEN}` },
      { method: 'POST', path: `/admin/v1/workspaces/${name}/users`, authorization: `Bearer ${ADMIN_TOKEN}` },
      { method: 'POST', path: `/admin/v1/workspaces/${name}/api-keys`, authorization: `Bearer ${ADMIN_TOKEN}` },
    ]);
    expect(publicFetch.seen).toEqual([{ method: 'GET', path: `/api/v1/${name}/api-key`, authorization: `Bearer ${secret}` }]);
  });

  it('lets the caller add headers but not replace the credential', async () => {
    const { name, key } = await setup();
    const rec = recordingFetch();
    const api = createClient({
      baseUrl: s.url,
      apiKey: key.key,
      fetch: rec.fetch,
      headers: { Authorization: 'Bearer nope', 'X-Request-Id': 'sdk-test-1' },
    });
    const me = await api.GET('/api/v1/{workspace}/api-key', { params: { path: { workspace: name } } });
    expect(me.response.status).toBe(200);
    expect(me.response.headers.get('x-request-id')).toBe('sdk-test-1');
    expect(rec.seen[0].authorization).toBe(`Bearer ${key.key}`);
  });
});

describe('errors', () => {
  it('returns a 422 as a typed `error` with `errors` by field', async () => {
    const { name } = await setup();
    const dup = await admin.POST('/admin/v1/workspaces', { body: { name } });
    expect(dup.response.status).toBe(422);
    expect(dup.data).toBeUndefined();
    expect(dup.error).toEqual({ message: 'The name has already been taken.', errors: { name: ['The name has already been taken.'] } });
    expect(isApiError(dup.error)).toBe(true);
    if (!isValidationError(dup.error)) throw new Error('expected a validation error');
    // Narrowed to ValidationError: `errors` is typed.
    const messages: string[] = dup.error.errors.name;
    expect(messages).toEqual(['The name has already been taken.']);
  });

  it('returns 403 Forbidden for a wrong API key', async () => {
    const { name } = await setup();
    const api = createClient({ baseUrl: s.url, apiKey: 'wsk_not-a-real-key', fetch: contractFetch });
    const res = await api.GET('/api/v1/{workspace}/api-key', { params: { path: { workspace: name } } });
    expect(res.response.status).toBe(403);
    expect(res.data).toBeUndefined();
    expect(res.error).toEqual({ message: 'Forbidden' });
    expect(isApiError(res.error)).toBe(true);
    expect(isValidationError(res.error)).toBe(false);
    // The typed error shape: `message` is always a string.
    const message: string | undefined = res.error?.message;
    expect(message).toBe('Forbidden');
  });

  it('returns 403 Forbidden for a key of another workspace and 404 for an unknown workspace', async () => {
    const a = await setup();
    const b = await setup();
    const api = createClient({ baseUrl: s.url, apiKey: a.key.key, fetch: contractFetch });
    const other = await api.GET('/api/v1/{workspace}/api-key', { params: { path: { workspace: b.name } } });
    expect(other.response.status).toBe(403);
    expect(other.error).toEqual({ message: 'Forbidden' });
    const missing = await api.GET('/api/v1/{workspace}/api-key', { params: { path: { workspace: 'missing-ws' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toEqual({ message: 'Not Found' });
  });

  it('returns 403 Forbidden for a wrong admin token, and for an API key on the management API', async () => {
    const wrong = createAdminClient({ baseUrl: s.url, adminToken: 'nope', fetch: contractFetch });
    const res = await wrong.GET('/admin/v1/workspaces');
    expect(res.response.status).toBe(403);
    expect(res.error).toEqual({ message: 'Forbidden' });

    const { key } = await setup();
    const api = createClient({ baseUrl: s.url, apiKey: key.key, fetch: contractFetch });
    // @ts-expect-error the public client only knows the public paths
    const viaKey = await api.GET('/admin/v1/workspaces');
    expect(viaKey.response.status).toBe(403);
    expect(viaKey.error).toEqual({ message: 'Forbidden' });
  });

  it('refuses to build a client without a credential or a base URL', () => {
    expect(() => createClient({ baseUrl: s.url, apiKey: '' })).toThrow(new TypeError('apiKey is required'));
    // @ts-expect-error adminToken is required
    expect(() => createAdminClient({ baseUrl: s.url })).toThrow(new TypeError('adminToken is required'));
    expect(() => createClient({ baseUrl: '', apiKey: 'k' })).toThrow(new TypeError('baseUrl is required'));
  });

  it.each([
    [{ message: 'Forbidden' }, true, false],
    [{ message: 'Invalid.', errors: { name: ['Invalid.'] } }, true, true],
    [{ message: 'x', errors: { name: 'Invalid.' } }, false, false],
    [{ message: 1 }, false, false],
    [{ errors: {} }, false, false],
    ['Forbidden', false, false],
    [null, false, false],
    [undefined, false, false],
  ])('isApiError(%j) is %s, isValidationError %s', (value, api, validation) => {
    expect(isApiError(value)).toBe(api);
    expect(isValidationError(value)).toBe(validation);
  });
});

describe('cursor pages', () => {
  it('iterates every object of a list across pages (paginate) and every page (pages), typed by the path', async () => {
    const name = uniqueName();
    await admin.POST('/admin/v1/workspaces', { body: { name } });
    const user = await admin.POST('/admin/v1/workspaces/{workspace}/users', {
      params: { path: { workspace: name } },
      body: { email: `${uniqueName('ed')}@example.com`, permissions: ['list-entries', 'view-entry', 'create-entry'] },
    });
    const key = await admin.POST('/admin/v1/workspaces/{workspace}/api-keys', {
      params: { path: { workspace: name } },
      body: { name: 'k', user_id: user.data!.id, abilities: ['*'] },
    });
    const api = createClient({ baseUrl: s.url, apiKey: key.data!.key, fetch: contractFetch });
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      const created = await api.POST('/api/v1/{workspace}/objects', {
        params: { path: { workspace: name } },
        body: { data: { i }, ref: `o${i}`, status: 'published' },
      });
      ids.push(created.data!.id);
    }
    const seen: number[] = [];
    for await (const o of paginate(api, '/api/v1/{workspace}/objects', {
      path: { workspace: name },
      query: { per_page: 2, view: 'full' },
    })) {
      seen.push(o.id);
      expect(o.data).toEqual({ i: seen.length - 1 });
    }
    expect(seen).toEqual(ids);
    const sizes: number[] = [];
    for await (const page of pages(api, '/api/v1/{workspace}/objects', { path: { workspace: name }, query: { per_page: 2 } }))
      sizes.push(page.data.length);
    expect(sizes).toEqual([2, 2, 1]);
    const failing = paginate(api, '/api/v1/{workspace}/objects', { path: { workspace: 'missing-ws' } });
    await expect(failing.next()).rejects.toEqual(expect.any(PageError));
    // @ts-expect-error file details are not a cursor page
    void (() => paginate(api, '/api/v1/{workspace}/files/{file}', { path: { workspace: name, file: 1 } }));
  });

  it('follows next_page_url through typed entry lists (v2, and v1 when paged or not)', async () => {
    const name = uniqueName();
    await admin.POST('/admin/v1/workspaces', { body: { name } });
    await admin.POST('/admin/v1/workspaces/{workspace}/buckets/{bucket}/content-types', {
      params: { path: { workspace: name, bucket: 'general' } },
      body: { name: 'note', fields: [{ name: 'title', type: 'text' }] },
    });
    const user = await admin.POST('/admin/v1/workspaces/{workspace}/users', {
      params: { path: { workspace: name } },
      body: { email: `${uniqueName('ed')}@example.com`, permissions: ['list-entries', 'create-entry'] },
    });
    const key = await admin.POST('/admin/v1/workspaces/{workspace}/api-keys', {
      params: { path: { workspace: name } },
      body: { name: 'k', user_id: user.data!.id, abilities: ['*'] },
    });
    const api = createClient({ baseUrl: s.url, apiKey: key.data!.key, fetch: contractFetch });
    const query = { contentBucket: 'general', contentType: 'note' };
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await api.POST('/api/v1/{workspace}/entries', {
        params: { path: { workspace: name }, query },
        body: { fields: { title: `n${i}` }, status: 'published' },
      });
      ids.push(created.data!.id);
    }
    const v2: string[] = [];
    for await (const e of paginate(api, '/api/v2/{workspace}/entries', { path: { workspace: name }, query: { ...query, per_page: 2 } }))
      v2.push(e.id);
    expect(v2).toEqual(ids);
    const sizes: number[] = [];
    for await (const page of pages(api, '/api/v1/{workspace}/entries', { path: { workspace: name }, query: { ...query, per_page: 2 } }))
      sizes.push(page.data.length);
    expect(sizes).toEqual([2, 1]);
    const plain: string[] = [];
    for await (const e of paginate(api, '/api/v1/{workspace}/entries', { path: { workspace: name }, query })) plain.push(e.id);
    expect(plain).toEqual(ids);
    // The unpaged v1 list answers at most 1,000 entries: the iterators ask for pages, so they see all.
    for (let b = 0; b < 11; b++) {
      const operations = Array.from({ length: 100 }, (_x, i) => ({
        action: 'create' as const,
        type: 'note',
        fields: { title: `b${b}-${i}` },
        status: 'published' as const,
      }));
      expect((await batchEntries(api, name, 'general', { operations })).response.status).toBe(200);
    }
    let all = 0;
    for await (const e of paginate(api, '/api/v1/{workspace}/entries', { path: { workspace: name }, query })) all += e.id ? 1 : 0;
    expect(all).toBe(1103);
  });
});

describe('entry queries and batch writes', () => {
  async function entriesApi(fetch: typeof globalThis.fetch = contractFetch) {
    const name = uniqueName();
    await admin.POST('/admin/v1/workspaces', { body: { name } });
    await admin.POST('/admin/v1/workspaces/{workspace}/buckets/{bucket}/content-types', {
      params: { path: { workspace: name, bucket: 'general' } },
      body: {
        name: 'note',
        fields: [
          { name: 'title', type: 'text' },
          { name: 'rank', type: 'number' },
        ],
      },
    });
    const user = await admin.POST('/admin/v1/workspaces/{workspace}/users', {
      params: { path: { workspace: name } },
      body: { email: `${uniqueName('ed')}@example.com`, permissions: ['list-entries', 'create-entry', 'update-entry'] },
    });
    const key = await admin.POST('/admin/v1/workspaces/{workspace}/api-keys', {
      params: { path: { workspace: name } },
      body: { name: 'k', user_id: user.data!.id, abilities: ['*'] },
    });
    return { name, api: createClient({ baseUrl: s.url, apiKey: key.data!.key, fetch }) };
  }

  it('writes a batch once even when the first answer is lost, retrying with the same key, and queries with a typed body', async () => {
    let dropped = 0;
    const keys: (string | null)[] = [];
    // The first batch reaches the server and commits, but its answer never arrives.
    const lossy: typeof globalThis.fetch = async (input, init) => {
      const request = new Request(input, init);
      const batch = new URL(request.url).pathname.endsWith('/entries/batch');
      if (batch) keys.push(request.headers.get('Idempotency-Key'));
      const response = await contractFetch(request);
      if (batch && dropped++ === 0) throw new TypeError('fetch failed');
      return response;
    };
    const { name, api } = await entriesApi(lossy);
    const operations = [1, 2].map((rank) => ({ action: 'create' as const, type: 'note', fields: { title: `n${rank}`, rank } }));
    const written = await batchEntries(api, name, 'general', { operations }, { retryDelayMs: 10 });
    expect(written.response.status).toBe(200);
    expect(written.response.headers.get('Idempotent-Replayed')).toBe('true');
    expect(keys).toHaveLength(2);
    expect(keys[0]).toBe(keys[1]);
    expect(written.idempotencyKey).toBe(keys[0]);
    expect(written.data!.data.map((r) => r.action)).toEqual(['create', 'create']);

    const found = await queryEntries(api, name, 'general', {
      type: 'note',
      fields: ['title', '@id'],
      filter: { rank: { gte: 1 } },
      sort: [{ field: 'rank', direction: 'desc' }],
    });
    expect(found.response.status).toBe(200);
    // @ts-expect-error a misspelled operator does not compile
    void (() => queryEntries(api, name, 'general', { type: 'note', filter: { rank: { gtee: 1 } } }));
    // @ts-expect-error nor does a misspelled property
    void (() => queryEntries(api, name, 'general', { type: 'note', limt: 5 }));
    // Exactly the two entries of the one batch, newest rank first.
    expect(found.data).toEqual({
      data: [
        { title: 'n2', '@id': written.data!.data[1].id },
        { title: 'n1', '@id': written.data!.data[0].id },
      ],
      pagination: { offset: 0, limit: 20, hasMore: false },
    });

    // Aggregate rows are typed as such, also in a batch of queries.
    const total = await queryEntries(api, name, 'general', { type: 'note', aggregate: { count: true, sum: ['rank'] } });
    const count: number | undefined = total.data!.data[0].count;
    expect([count, total.data!.data[0].sum]).toEqual([2, { rank: '3' }]);
    const both = await queryEntriesBatch(api, name, 'general', {
      titles: { type: 'note', fields: ['title'], limit: 1 },
      ranks: { type: 'note', aggregate: { max: ['rank'] } },
    });
    expect(both.data!.results.titles.data).toEqual([{ title: 'n1' }]);
    expect(both.data!.results.ranks.data[0].max).toEqual({ rank: '2' });
    // @ts-expect-error a misspelled operator in a member does not compile
    void (() => queryEntriesBatch(api, name, 'general', { a: { type: 'note', filter: { rank: { gtee: 1 } } } }));
  });

  it('retries an attempt that gets no answer within timeoutMs, and gives the key with the error when every attempt fails', async () => {
    let hung = 0;
    // The first batch commits on the server, but its answer never comes: only the timeout ends it.
    const hanging: typeof globalThis.fetch = async (input, init) => {
      const request = new Request(input, init);
      const response = await contractFetch(request.clone());
      if (new URL(request.url).pathname.endsWith('/entries/batch') && hung++ === 0) {
        await new Promise((_resolve, reject) => request.signal.addEventListener('abort', () => reject(request.signal.reason)));
      }
      return response;
    };
    const { name, api } = await entriesApi(hanging);
    const written = await batchEntries(
      api,
      name,
      'general',
      { operations: [{ action: 'create', type: 'note', fields: { title: 'once' } }] },
      { timeoutMs: 300, retryDelayMs: 10 },
    );
    expect(written.response.headers.get('Idempotent-Replayed')).toBe('true');
    const once = await queryEntries(api, name, 'general', { type: 'note', aggregate: { count: true }, filter: { title: { eq: 'once' } } });
    expect(once.data!.data[0].count).toBe(1);

    const down = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'x', fetch: () => Promise.reject(new TypeError('fetch failed')) });
    const failed = await batchEntries(
      down,
      name,
      'general',
      { operations: [{ action: 'create', type: 'note', fields: { title: 'never' } }] },
      { retries: 1, retryDelayMs: 1 },
    ).catch((err) => err);
    expect(failed).toBeInstanceOf(TypeError);
    expect(failed.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('the package', () => {
  it('packs the compiled client, its types and the generated types, and nothing of the server', async () => {
    // scripts/test.mjs has just built sdk/dist; --ignore-scripts keeps `prepack` from rebuilding it.
    const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: sdkDir });
    const [pack] = JSON.parse(stdout) as [{ name: string; files: { path: string }[] }];
    expect(pack.name).toBe('@workspace-api/sdk');
    const files = pack.files.map((f) => f.path);
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'bin/workspace-api-sdk.js',
        'dist/index.js',
        'dist/cli.js',
        'dist/index.d.ts',
        'dist/generated/openapi.d.ts',
      ]),
    );
    for (const file of files) expect(file).toMatch(/^(package\.json|README\.md|bin\/workspace-api-sdk\.js|dist\/[\w/.-]+|src\/[\w/.-]+)$/);
    expect(files.filter((f) => /server|prisma|openapi\.json|\.test\./.test(f))).toEqual([]);
  });

  it('can be required from plain Node (CommonJS) and imported from ESM, and works there', async () => {
    const { name, key } = await setup();
    const script = (load: string) => `${load}
      const api = sdk.createClient({ baseUrl: ${JSON.stringify(s.url)}, apiKey: ${JSON.stringify(key.key)} });
      api.GET('/api/v1/{workspace}/api-key', { params: { path: { workspace: ${JSON.stringify(name)} } } }).then((r) => {
        console.log(JSON.stringify({ exports: Object.keys(sdk).sort(), status: r.response.status, id: r.data && r.data.id }));
      });`;
    const expected = {
      exports: [
        'PageError',
        'PipelineTimeoutError',
        'auth',
        'batchEntries',
        'bearerAuth',
        'contentClient',
        'createAdminClient',
        'createClient',
        'emails',
        'isApiError',
        'isValidationError',
        'pages',
        'paginate',
        'parseWebhookEvent',
        'pipelines',
        'queryEntries',
        'queryEntriesBatch',
        'refreshTemporaryUrls',
        'typedEntries',
        'typedObjects',
        'uploadFile',
        'verifyWebhookSignature',
      ],
      status: 200,
      id: key.id,
    };
    // By package name (through the workspace link, so package.json `main`/`exports` are used).
    const cjs = await run(process.execPath, ['-e', script(`const sdk = require('@workspace-api/sdk');`)], { cwd: root });
    expect(JSON.parse(cjs.stdout)).toEqual(expected);
    const cjsPath = await run(
      process.execPath,
      ['-e', script(`const sdk = require(${JSON.stringify(path.join(sdkDir, 'dist/index.js'))});`)],
      { cwd: root },
    );
    expect(JSON.parse(cjsPath.stdout)).toEqual(expected);
    const esm = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        script(
          // Named imports: Node must detect the CommonJS exports.
          `import { PageError, auth, batchEntries, bearerAuth, contentClient, createAdminClient, createClient, emails, isApiError, isValidationError, pages, paginate, parseWebhookEvent, PipelineTimeoutError, pipelines, queryEntries, queryEntriesBatch, refreshTemporaryUrls, typedEntries, typedObjects, uploadFile, verifyWebhookSignature } from '@workspace-api/sdk';
         const sdk = { PageError, auth, batchEntries, bearerAuth, contentClient, createAdminClient, createClient, emails, isApiError, isValidationError, pages, paginate, parseWebhookEvent, PipelineTimeoutError, pipelines, queryEntries, queryEntriesBatch, refreshTemporaryUrls, typedEntries, typedObjects, uploadFile, verifyWebhookSignature };`,
        ),
      ],
      { cwd: root },
    );
    expect(JSON.parse(esm.stdout)).toEqual(expected);
  });
});
