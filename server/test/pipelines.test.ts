// Pipelines (app-services.md, "Pipelines"), black-box over HTTP: definitions through the
// management API with every step validated (nothing saved on a refusal), executions queued with
// `202` and a status URL, placeholders keeping JSON types, each step with the rights of the key
// that started it, `http.request` only to allowlisted origins (redirects included), a failed step
// stopping the execution, and a step that is run again after a crash not writing twice.
import { freePort, startTestServer, type TestServer } from './support/server';
import { client } from './support/http';
import { createKey, createUser, setupWorkspace, TIMESTAMP } from './support/fixtures';
import { eventually } from './support/receiver';
import { startOrigin, type Origin, type OriginAnswer } from './support/origin';
import { loadConfig } from '../src/config';
import { createClient, pipelines as pipelinesOf, PipelineTimeoutError } from '../../sdk/src';

let s: TestServer;
/** The allowlisted origin. */
let origin: Origin;
/** An origin that is not allowlisted: it must never receive a request. */
let outside: Origin;
/** An allowlisted loopback port nothing listens on. */
let closedPort: number;

beforeAll(async () => {
  origin = await startOrigin();
  outside = await startOrigin();
  closedPort = await freePort();
  s = await startTestServer({
    SCHEDULER_TICK_MS: '100',
    PIPELINE_HTTP_ALLOWLIST: `${origin.origin}, https://hooks.example.com,http://127.0.0.1:${closedPort}`,
    PIPELINE_HTTP_TIMEOUT_MS: '1500',
    PIPELINE_LEASE_SECONDS: '2',
    RATE_LIMIT_ENABLED: 'true',
    RATE_LIMIT_PIPELINES_PER_MINUTE: '5',
  });
});
afterEach(() => {
  origin.handle = () => ({ status: 200, body: { ok: true } });
  origin.requests.length = 0;
  expect(outside.requests).toEqual([]);
});
afterAll(async () => {
  await s?.close();
  await origin?.close();
  await outside?.close();
});

const ALL_PERMISSIONS = ['list-entries', 'view-entry', 'create-entry', 'update-entry', 'delete-entry', 'execute-pipeline', 'send-email'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A workspace with an `article` type in General and a key with every right. */
async function workspace(opts: { permissions?: string[]; abilities?: string[] } = {}) {
  const {
    workspace: ws,
    user,
    key,
  } = await setupWorkspace(s.admin, { permissions: opts.permissions ?? ALL_PERMISSIONS, abilities: opts.abilities ?? ['*'] });
  const type = await s.admin.post(`/admin/v1/workspaces/${ws.name}/buckets/general/content-types`, {
    name: 'article',
    fields: [
      { name: 'title', type: 'text' },
      { name: 'count', type: 'number' },
    ],
  });
  expect(type.status).toBe(201);
  return { name: ws.name, user, key, api: client(s.url, key.key) };
}
type Ws = Awaited<ReturnType<typeof workspace>>;

const pipelines = (ws: string) => `/admin/v1/workspaces/${ws}/pipelines`;

async function define(ws: string, name: string, steps: unknown[]) {
  const res = await s.admin.post(pipelines(ws), { name, steps });
  expect(res.status).toBe(201);
  return res.body;
}

async function execute(w: Ws, name: string, input: unknown = {}) {
  const res = await w.api.post(`/api/v1/${w.name}/pipelines/${name}/executions`, { input });
  expect(res.status).toBe(202);
  return res.body as { id: string; status_url: string };
}

/** Polls the status URL until the execution ended. */
async function finished(w: Ws, id: string) {
  return eventually(async () => {
    const res = await w.api.get(`/api/v1/${w.name}/pipelines/executions/${id}`);
    expect(res.status).toBe(200);
    return ['succeeded', 'failed'].includes(res.body.status) ? res.body : undefined;
    // Generous: on a loaded machine a step may lose its 2 s lease and run again after a backoff.
  }, 60_000);
}

const entryCount = async (ws: string) =>
  (
    await s.server.app.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM entries e JOIN workspaces w ON w.id = e.workspace_id WHERE w.name = $1 AND e.deleted_at IS NULL`,
      [ws],
    )
  ).rows[0].n;

const createArticle = (title: unknown = '{{input.title}}') => ({
  id: 'create',
  type: 'entries.batch',
  with: { bucket: 'general', operations: [{ action: 'create', type: 'article', fields: { title, count: '{{input.count}}' } }] },
});

describe('definitions', () => {
  it('creates, reads, lists, renames and deletes a pipeline', async () => {
    const w = await workspace();
    const steps = [
      createArticle(),
      {
        id: 'find',
        type: 'entries.query',
        with: { bucket: 'general', type: 'article', filter: { '@id': { eq: '{{steps.create.data.0.id}}' } } },
      },
    ];
    const res = await s.admin.post(pipelines(w.name), { name: 'publish', description: 'Creates an article.', steps });
    expect(res.status).toBe(201);
    const created = {
      id: expect.any(Number),
      name: 'publish',
      description: 'Creates an article.',
      steps,
      created_at: expect.stringMatching(TIMESTAMP),
      updated_at: expect.stringMatching(TIMESTAMP),
    };
    expect(res.body).toEqual(created);
    expect((await s.admin.get(`${pipelines(w.name)}/publish`)).body).toEqual(res.body);
    expect((await s.admin.get(pipelines(w.name))).body).toEqual({ data: [res.body] });
    expect(await s.admin.post(pipelines(w.name), { name: 'publish', steps })).toMatchObject({
      status: 422,
      body: { errors: { name: ['The name has already been taken.'] } },
    });

    const renamed = await s.admin.put(`${pipelines(w.name)}/publish`, { name: 'publish-2', steps: steps.slice(0, 1) });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ ...created, id: res.body.id, name: 'publish-2', description: null, steps: steps.slice(0, 1) });
    expect((await s.admin.get(`${pipelines(w.name)}/publish`)).status).toBe(404);
    expect((await s.admin.put(`${pipelines(w.name)}/publish`, { name: 'x', steps })).status).toBe(404);
    expect((await s.admin.delete(`${pipelines(w.name)}/publish-2`)).status).toBe(204);
    expect((await s.admin.delete(`${pipelines(w.name)}/publish-2`)).status).toBe(404);
    expect((await s.admin.get(pipelines(w.name))).body).toEqual({ data: [] });
    expect((await s.admin.get(pipelines('no-such-workspace'))).status).toBe(404);
  });

  const query = (extra: Record<string, unknown> = {}) => ({
    id: 'q',
    type: 'entries.query',
    with: { bucket: 'general', type: 'article', ...extra },
  });
  const http = (w: Record<string, unknown>) => ({ id: 'h', type: 'http.request', with: { method: 'POST', ...w } });
  it.each<[string, unknown[], string[]]>([
    ['an unknown step type', [{ id: 'a', type: 'entries.delete', with: {} }], ['steps.0.type']],
    ['a step without with', [{ id: 'a', type: 'entries.query' }], ['steps.0.with']],
    ['a malformed step id', [{ ...query(), id: '1st' }], ['steps.0.id']],
    ['a repeated step id', [query(), query()], ['steps.1.id']],
    [
      'a placeholder naming a missing step',
      [query({ filter: { title: { eq: '{{steps.nope.data}}' } } })],
      ['steps.0.with.filter.title.eq'],
    ],
    ['a placeholder naming a later step', [query({ limit: '{{steps.later.x}}' }), { ...query(), id: 'later' }], ['steps.0.with.limit']],
    ['a placeholder naming the step itself', [query({ limit: '{{steps.q.pagination.limit}}' })], ['steps.0.with.limit']],
    ['a placeholder with another root', [query({ filter: { title: { eq: 'x {{env.HOME}}' } } })], ['steps.0.with.filter.title.eq']],
    ['a malformed placeholder path', [query({ filter: { title: { eq: '{{input..a}}' } } })], ['steps.0.with.filter.title.eq']],
    ['a query without bucket', [{ id: 'q', type: 'entries.query', with: { type: 'article' } }], ['steps.0.with.bucket']],
    ['a query body the route refuses', [query({ limit: 'ten', bogus: 1 })], ['steps.0.with.limit', 'steps.0.with.bogus']],
    ['a batch without operations', [{ id: 'b', type: 'entries.batch', with: { bucket: 'general' } }], ['steps.0.with.operations']],
    [
      'a batch operation the route refuses',
      [{ id: 'b', type: 'entries.batch', with: { bucket: 'general', operations: [{ action: 'upsert' }] } }],
      ['steps.0.with.operations.0.action'],
    ],
    ['an object without data', [{ id: 'o', type: 'objects.create', with: { ref: 'a' } }], ['steps.0.with.data']],
    ['a URL off the allowlist', [http({ url: 'https://evil.example.com/x' })], ['steps.0.with.url']],
    ['a URL whose origin is a placeholder', [http({ url: '{{input.url}}' })], ['steps.0.with.url']],
    ['a URL whose host ends in a placeholder', [http({ url: 'https://hooks.example.com{{input.suffix}}/x' })], ['steps.0.with.url']],
    ['a URL with credentials', [http({ url: 'https://user:pw@hooks.example.com/x' })], ['steps.0.with.url']],
    ['an unknown method', [http({ url: 'https://hooks.example.com/x', method: 'CONNECT' })], ['steps.0.with.method']],
    ['a GET with a body', [http({ url: 'https://hooks.example.com/x', method: 'GET', body: {} })], ['steps.0.with.body']],
    [
      'a header with a line break',
      [http({ url: 'https://hooks.example.com/x', headers: { 'X-A': 'a\r\nB: c' } })],
      ['steps.0.with.headers.X-A'],
    ],
    ['a with over 64 KiB', [query({ filter: { title: { eq: 'x'.repeat(70_000) } } })], ['steps.0.with']],
    ['no steps', [], ['steps']],
    ['21 steps', Array.from({ length: 21 }, (_, i) => ({ ...query(), id: `q${i}` })), ['steps']],
  ])('refuses %s with a 422 and saves nothing', async (_what, steps, keys) => {
    const w = await workspace();
    const res = await s.admin.post(pipelines(w.name), { name: 'bad', steps });
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors).sort()).toEqual([...keys].sort());
    expect(res.body.message).toEqual(expect.any(String));
    expect((await s.admin.get(pipelines(w.name))).body).toEqual({ data: [] });
  });

  it('accepts placeholders where the route wants another type, and whole-string ones anywhere', async () => {
    const w = await workspace();
    await define(w.name, 'typed', [
      {
        id: 'q',
        type: 'entries.query',
        with: { bucket: '{{input.bucket}}', type: 'article', limit: '{{input.limit}}', filter: '{{input.filter}}' },
      },
      {
        id: 'h',
        type: 'http.request',
        with: { method: 'PUT', url: `${origin.origin}/items/{{steps.q.data.0.@id}}?x={{input.x}}`, body: '{{steps.q}}' },
      },
    ]);
  });

  it('answers malformed JSON with a 400 and an unknown property with a 422', async () => {
    const w = await workspace();
    const bad = await s.admin.post(pipelines(w.name), undefined, {
      raw: '{"name": "x", "steps": [',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    const extra = await s.admin.post(pipelines(w.name), { name: 'x', steps: [query()], owner: 1 });
    expect(extra).toMatchObject({ status: 422, body: { errors: { owner: ['The owner field is not allowed.'] } } });
    const name = await s.admin.post(pipelines(w.name), { name: 'Has Spaces', steps: [query()] });
    expect(Object.keys(name.body.errors)).toEqual(['name']);
  });
});

describe('executions', () => {
  it('queues with 202 and a status URL, resolves placeholders with their JSON types, and writes with the source pipeline', async () => {
    const w = await workspace();
    origin.handle = (req) => ({ status: 201, body: { received: req.body } });
    await define(w.name, 'publish', [
      createArticle(),
      {
        id: 'find',
        type: 'entries.query',
        with: { bucket: 'general', type: 'article', fields: ['title', 'count'], filter: { '@id': { eq: '{{steps.create.data.0.id}}' } } },
      },
      {
        id: 'notify',
        type: 'http.request',
        with: {
          method: 'POST',
          url: `${origin.origin}/hook/{{steps.create.data.0.id}}`,
          headers: { 'X-Title': 'Title: {{input.title}}' },
          body: { row: '{{steps.find.data.0}}', count: '{{input.count}}', text: 'n={{input.count}} tags={{input.tags}}' },
        },
      },
    ]);
    const res = await w.api.post(`/api/v1/${w.name}/pipelines/publish/executions`, {
      input: { title: 'Hello', count: 3, tags: ['a', 'b'] },
    });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      id: expect.stringMatching(UUID),
      pipeline: 'publish',
      status: 'queued',
      status_url: `${s.url}/api/v1/${w.name}/pipelines/executions/${res.body.id}`,
      created_at: expect.stringMatching(TIMESTAMP),
    });
    expect(res.body.status_url.startsWith(s.url)).toBe(true);

    const done = await finished(w, res.body.id);
    const step = (id: string) => ({
      id,
      status: 'succeeded',
      started_at: expect.stringMatching(TIMESTAMP),
      finished_at: expect.stringMatching(TIMESTAMP),
      error: null,
    });
    const [sent] = origin.requests;
    const entryId = sent.path.split('/').pop();
    expect(done).toEqual({
      id: res.body.id,
      pipeline: 'publish',
      status: 'succeeded',
      input: { title: 'Hello', count: 3, tags: ['a', 'b'] },
      output: { status: 201, body: { received: sent.body } },
      error: null,
      steps: [step('create'), step('find'), step('notify')],
      created_at: res.body.created_at,
      started_at: expect.stringMatching(TIMESTAMP),
      finished_at: expect.stringMatching(TIMESTAMP),
    });
    expect(sent.method).toBe('POST');
    expect(sent.headers['x-title']).toBe('Title: Hello');
    expect(sent.headers['x-pipeline-execution']).toBe(res.body.id);
    expect(sent.headers['x-pipeline-step']).toBe('notify');
    expect(sent.headers['content-type']).toBe('application/json');
    // Whole-string placeholders keep the JSON type; embedded ones become text.
    expect(sent.body).toEqual({ row: { title: 'Hello', count: 3 }, count: 3, text: 'n=3 tags=["a","b"]' });
    const { rows } = await s.server.app.db.query<{ source: string; actor: string }>(
      `SELECT r.source, r.actor FROM entry_revisions r JOIN entries e ON e.id = r.entry_pk WHERE e.entry_id = $1`,
      [entryId],
    );
    expect(rows).toEqual([{ source: 'pipeline', actor: `api_key:${w.key.id}` }]);
  });

  it('resolves placeholders once: values that look like placeholders stay text; text PostgreSQL cannot store is refused', async () => {
    const w = await workspace();
    await define(w.name, 'p', [
      {
        id: 'h',
        type: 'http.request',
        with: { method: 'POST', url: `${origin.origin}/x`, body: { whole: '{{input.a}}', inner: '<{{input.a}}>' } },
      },
    ]);
    const done = await finished(w, (await execute(w, 'p', { a: '{{input.b}}', b: 'secret' })).id);
    expect(done.status).toBe('succeeded');
    expect(origin.requests[0].body).toEqual({ whole: '{{input.b}}', inner: '<{{input.b}}>' });
    // Text PostgreSQL cannot store never gets in (and an answer holding it fails its step).
    const nul = await w.api.post(`/api/v1/${w.name}/pipelines/p/executions`, { input: { bucket: 'a\u0000b' } });
    expect(nul).toMatchObject({
      status: 422,
      body: { errors: { 'input.bucket': ['The input.bucket field must not contain NUL characters.'] } },
    });
    origin.handle = () => ({ status: 200, body: { text: 'a\u0000b' } });
    const failed = await finished(w, (await execute(w, 'p', { a: 1 })).id);
    expect(failed.error).toEqual({ step: 'h', message: 'The output holds text that cannot be stored: body.text.' });
  });

  it('creates objects with the source pipeline and outputs the envelope', async () => {
    const w = await workspace();
    await define(w.name, 'obj', [
      { id: 'o', type: 'objects.create', with: { ref: 'notes/{{input.slug}}', data: '{{input.data}}', status: 'published' } },
    ]);
    const { id } = await execute(w, 'obj', { slug: 'first', data: { n: 1, nested: { ok: true } } });
    const done = await finished(w, id);
    expect(done.status).toBe('succeeded');
    expect(done.output).toMatchObject({ ref: 'notes/first', data: { n: 1, nested: { ok: true } }, status: 'published' });
    const { rows } = await s.server.app.db.query<{ source: string }>(`SELECT r.source FROM entry_revisions r WHERE r.entry_pk = $1`, [
      done.output.id,
    ]);
    expect(rows).toEqual([{ source: 'pipeline' }]);
  });

  it('sends an email through the outbox, once, and refuses an email body the route refuses', async () => {
    const w = await workspace();
    await define(w.name, 'mail', [
      { id: 'm', type: 'email.send', with: { to: '{{input.to}}', subject: 'Hello {{input.name}}', text: 'Welcome, {{input.name}}.' } },
    ]);
    const done = await finished(w, (await execute(w, 'mail', { to: ['a@example.com', 'b@example.com'], name: 'Ada' })).id);
    expect(done).toMatchObject({ status: 'succeeded', output: { queued: true } });
    const outbox = await s.admin.get(`/admin/v1/workspaces/${w.name}/outbox`);
    expect(outbox.body.data).toEqual([
      expect.objectContaining({ to: ['a@example.com', 'b@example.com'], subject: 'Hello Ada', text: 'Welcome, Ada.' }),
    ]);

    const bad = await s.admin.post(pipelines(w.name), {
      name: 'bad',
      steps: [{ id: 'm', type: 'email.send', with: { to: 'not an address', subject: 'x' } }],
    });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual(['steps.0.with.html', 'steps.0.with.text', 'steps.0.with.to']);
    const failed = await finished(w, (await execute(w, 'mail', { to: 'nobody', name: 'x' })).id);
    expect(failed.error.message).toMatch(/^422 .*"to"/);
    expect((await s.admin.get(`/admin/v1/workspaces/${w.name}/outbox`)).body.data).toHaveLength(1);
  });

  it('refuses a missing pipeline, a non-object input, an oversized body, a key without rights, and another workspace', async () => {
    const w = await workspace();
    await define(w.name, 'p', [{ id: 'q', type: 'entries.query', with: { bucket: 'general', type: 'article' } }]);
    const path = `/api/v1/${w.name}/pipelines`;
    expect(await w.api.post(`${path}/nope/executions`, { input: {} })).toMatchObject({ status: 404, body: { message: 'Not Found' } });
    expect(await w.api.post(`${path}/p/executions`, { input: [1] })).toMatchObject({
      status: 422,
      body: { errors: { input: ['The input field must be an object.'] } },
    });
    expect(await w.api.post(`${path}/p/executions`, { input: 'x' })).toMatchObject({ status: 422 });
    expect((await w.api.post(`${path}/p/executions`, { input: { big: 'x'.repeat(65_536) } })).status).toBe(413);
    expect(
      (await w.api.post(`${path}/p/executions`, undefined, { raw: '{"input":', headers: { 'Content-Type': 'application/json' } })).status,
    ).toBe(400);

    const weakUser = await createUser(s.admin, w.name, ['list-entries']);
    const noPermission = client(s.url, (await createKey(s.admin, w.name, weakUser.id, ['*'])).key);
    expect(await noPermission.post(`${path}/p/executions`, { input: {} })).toMatchObject({
      status: 403,
      body: { message: 'This API key is not permitted to perform this action' },
    });
    const noAbility = client(s.url, (await createKey(s.admin, w.name, w.user.id, ['entries:query'])).key);
    expect(await noAbility.post(`${path}/p/executions`, { input: {} })).toMatchObject({
      status: 403,
      body: { message: 'This API key is not permitted to perform this action' },
    });
    const count = await s.server.app.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pipeline_executions e JOIN workspaces w ON w.id = e.workspace_id WHERE w.name = $1`,
      [w.name],
    );
    expect(count.rows[0].n).toBe(0);

    // Without a body, the input is {} (another key: refused requests count against the rate limit too).
    const empty = await client(s.url, (await createKey(s.admin, w.name, w.user.id, ['*'])).key).post(`${path}/p/executions`);
    expect(empty.status).toBe(202);
    const other = await workspace();
    expect(await other.api.get(`/api/v1/${other.name}/pipelines/executions/${empty.body.id}`)).toMatchObject({
      status: 404,
      body: { message: 'Not Found' },
    });
    expect((await w.api.get(`${path}/executions/not-a-uuid`)).status).toBe(404);
    expect((await w.api.get(`${path}/executions/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
    expect((await finished(w, empty.body.id)).input).toEqual({});
  });

  it('limits executions to the configured number per minute per API key', async () => {
    const w = await workspace();
    await define(w.name, 'p', [{ id: 'q', type: 'entries.query', with: { bucket: 'general', type: 'article' } }]);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await w.api.post(`/api/v1/${w.name}/pipelines/p/executions`, { input: {} })).status);
    expect(statuses).toEqual([202, 202, 202, 202, 202, 429]);
    expect(loadConfig({ DATA_DIR: s.db.dataDir, ADMIN_TOKEN: 'x', APP_KEY: 'y' }).rateLimits.pipelinesPerMinute).toBe(30);
  });

  it('stops at a failing step: the error names it, later steps are skipped, earlier writes stay', async () => {
    const w = await workspace();
    await define(w.name, 'p', [
      createArticle(),
      { id: 'bad', type: 'entries.query', with: { bucket: 'general', type: 'article', filter: { title: { eq: '{{input.missing}}' } } } },
      { id: 'never', type: 'http.request', with: { method: 'POST', url: `${origin.origin}/never` } },
    ]);
    const { id } = await execute(w, 'p', { title: 'Kept', count: 1 });
    const done = await finished(w, id);
    const message = 'The placeholder {{input.missing}} names nothing (no missing).';
    expect(done).toMatchObject({ status: 'failed', output: null, error: { step: 'bad', message } });
    expect(done.steps.map((x: { status: string }) => x.status)).toEqual(['succeeded', 'failed', 'skipped']);
    expect(done.steps[1].error).toBe(message);
    expect(done.steps[2]).toEqual({ id: 'never', status: 'skipped', started_at: null, finished_at: null, error: null });
    expect(origin.requests).toEqual([]);
    expect(await entryCount(w.name)).toBe(1);
  });

  it("fails a step with the route's answer when the resolved with is invalid, writing nothing", async () => {
    const w = await workspace();
    await define(w.name, 'p', [createArticle('{{input.title}}')]);
    const { id } = await execute(w, 'p', { title: { not: 'text' }, count: 1 });
    const done = await finished(w, id);
    expect(done.status).toBe('failed');
    expect(done.error.step).toBe('create');
    expect(done.error.message).toMatch(/^422 .*operations\.0\.fields\.title/);
    expect(await entryCount(w.name)).toBe(0);
  });

  it('runs each step with the rights of the key as they are then: a lost permission or a deleted key fails the step', async () => {
    const w = await workspace({ permissions: ['execute-pipeline', 'list-entries'] });
    await define(w.name, 'p', [createArticle()]);
    const first = await finished(w, (await execute(w, 'p', { title: 'x', count: 1 })).id);
    expect(first.error).toEqual({ step: 'create', message: '403 This API key is not permitted to perform this action' });
    expect(await entryCount(w.name)).toBe(0);

    // The key is deleted while the first step waits for its answer: the second step refuses to run.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    origin.handle = async () => (await released, { status: 200, body: {} });
    await define(w.name, 'q', [
      { id: 'wait', type: 'http.request', with: { method: 'GET', url: `${origin.origin}/wait` } },
      { id: 'read', type: 'entries.query', with: { bucket: 'general', type: 'article' } },
    ]);
    const { id } = await execute(w, 'q');
    await eventually(async () => origin.requests.length > 0);
    expect((await s.admin.delete(`/admin/v1/workspaces/${w.name}/api-keys/${w.key.id}`)).status).toBe(204);
    release();
    const row = await eventually(async () => {
      const r = await s.server.app.db.query<{ status: string; error: unknown }>(
        `SELECT status, error FROM pipeline_executions WHERE id = $1`,
        [id],
      );
      return r.rows[0].status === 'failed' ? r.rows[0] : undefined;
    });
    expect(row.error).toEqual({ step: 'read', message: 'The API key that started the execution no longer exists.' });
  });
});

describe('http.request', () => {
  const step = (w: Record<string, unknown>) => [
    { id: 'h', type: 'http.request', with: { method: 'GET', url: `${origin.origin}/start`, ...w } },
  ];

  it('follows redirects within the allowlist and keeps the answer as text when it is not JSON', async () => {
    const w = await workspace();
    origin.handle = (req): OriginAnswer =>
      req.path === '/start'
        ? { status: 302, headers: { Location: '/next?x=1' } }
        : { status: 200, headers: { 'Content-Type': 'text/plain' }, body: 'plain text' };
    await define(w.name, 'p', step({}));
    const done = await finished(w, (await execute(w, 'p')).id);
    expect(done.output).toEqual({ status: 200, body: 'plain text' });
    expect(origin.requests.map((r) => r.path)).toEqual(['/start', '/next?x=1']);
  });

  it('never follows a redirect to an origin off the allowlist', async () => {
    const w = await workspace();
    origin.handle = () => ({ status: 307, headers: { Location: `${outside.origin}/steal` } });
    await define(w.name, 'p', step({ method: 'POST', body: { secret: 1 } }));
    const done = await finished(w, (await execute(w, 'p')).id);
    expect(done.error).toEqual({
      step: 'h',
      message: `The answer redirected to a URL that names the origin ${outside.origin}, which is not in PIPELINE_HTTP_ALLOWLIST; it was not followed.`,
    });
    expect(origin.requests).toHaveLength(1);
    // outside.requests is checked to be empty after each test.
  });

  it('lets placeholders change only the path: the origin stays the saved one', async () => {
    const w = await workspace();
    await define(w.name, 'p', step({ url: `${origin.origin}/{{input.path}}` }));
    const done = await finished(w, (await execute(w, 'p', { path: '@evil.example.com/' })).id);
    // The origin stays; the value is one encoded path segment (more in pipelines-hardening.test.ts).
    expect(done.status).toBe('succeeded');
    expect(origin.requests.map((r) => r.path)).toEqual(['/%40evil.example.com%2F']);
  });

  it('fails on an answer over 1 MiB, on a timeout and on a refused connection', async () => {
    const w = await workspace();
    origin.handle = (req) => (req.path === '/big' ? { status: 200, body: 'x'.repeat(1024 * 1024 + 1) } : 'hang');
    await define(w.name, 'big', step({ url: `${origin.origin}/big` }));
    await define(w.name, 'slow', step({ url: `${origin.origin}/slow` }));
    await define(w.name, 'closed', step({ url: `http://127.0.0.1:${closedPort}/x` }));
    const [big, slow, closed] = await Promise.all([execute(w, 'big'), execute(w, 'slow'), execute(w, 'closed')]);
    expect((await finished(w, big.id)).error).toEqual({ step: 'h', message: 'The answer is larger than 1048576 bytes.' });
    expect((await finished(w, slow.id)).error).toEqual({ step: 'h', message: 'No answer within 1500 ms.' });
    expect((await finished(w, closed.id)).error).toEqual({ step: 'h', message: 'The request failed: ECONNREFUSED.' });
  });
});

/**
 * An execution that succeeded, put back as if its process died right after the step's write
 * committed and before the step's output was stored: the step running, the lease run out. Waits
 * for another run to end it and checks it ended the same, with one entry in the workspace.
 */
async function rerunAfterCrash(w: Ws, id: string, first: { output: unknown }) {
  const db = s.server.app.db;
  await db.query(`UPDATE pipeline_step_runs SET status = 'running', output = NULL, finished_at = NULL WHERE execution_id = $1`, [id]);
  await db.query(
    `UPDATE pipeline_executions SET status = 'running', output = NULL, finished_at = NULL, lease = gen_random_uuid(), locked_until = now() - interval '1 second' WHERE id = $1`,
    [id],
  );
  const again = await finished(w, id);
  expect(again.status).toBe('succeeded');
  expect(again.output).toEqual(first.output);
  expect(await entryCount(w.name)).toBe(1);
}

describe('durability', () => {
  it('runs an interrupted entries.batch step again without writing twice (the idempotency key replays)', async () => {
    const w = await workspace();
    await define(w.name, 'p', [createArticle()]);
    const { id } = await execute(w, 'p', { title: 'Once', count: 1 });
    const first = await finished(w, id);
    expect(first.status).toBe('succeeded');
    await rerunAfterCrash(w, id, first);
    const attempts = await s.server.app.db.query<{ attempts: number }>(`SELECT attempts FROM pipeline_executions WHERE id = $1`, [id]);
    expect(attempts.rows[0].attempts).toBe(2);
  });

  it('runs an interrupted objects.create step again without creating a second object (its write was recorded with it)', async () => {
    const w = await workspace();
    await define(w.name, 'obj', [{ id: 'o', type: 'objects.create', with: { path: 'notes', data: { n: '{{input.n}}' } } }]);
    const { id } = await execute(w, 'obj', { n: 1 });
    const first = await finished(w, id);
    expect(first.status).toBe('succeeded');
    const db = s.server.app.db;
    const committed = await db.query<{ committed: unknown }>(`SELECT committed FROM pipeline_step_runs WHERE execution_id = $1`, [id]);
    expect(committed.rows).toEqual([{ committed: { object_id: first.output.id } }]);
    await rerunAfterCrash(w, id, first);
  });

  it('gives up after 5 attempts', async () => {
    const w = await workspace();
    await define(w.name, 'p', [createArticle()]);
    const { id } = await execute(w, 'p', { title: 'x', count: 1 });
    await finished(w, id);
    await s.server.app.db.query(
      `UPDATE pipeline_executions SET status = 'running', attempts = 5, lease = NULL, locked_until = NULL WHERE id = $1`,
      [id],
    );
    await s.server.app.db.query(`UPDATE pipeline_step_runs SET status = 'running', output = NULL WHERE execution_id = $1`, [id]);
    const done = await finished(w, id);
    const message = 'The execution did not finish after 5 attempts.';
    expect(done.error).toEqual({ step: null, message });
    expect(done.steps).toEqual([
      {
        id: 'create',
        status: 'failed',
        started_at: expect.stringMatching(TIMESTAMP),
        finished_at: expect.stringMatching(TIMESTAMP),
        error: message,
      },
    ]);
  });
});

describe('SDK', () => {
  it('pipelines.run waits for the end of an execution, polling its status URL', async () => {
    const w = await workspace();
    await define(w.name, 'p', [createArticle()]);
    const api = pipelinesOf(createClient({ baseUrl: s.url, apiKey: w.key.key }), w.name);
    const queued = await api.run('p', { title: 'SDK', count: 2 });
    expect(queued.data).toMatchObject({ status: 'queued', pipeline: 'p' });
    const done = await api.run('p', { title: 'SDK', count: 2 }, { wait: true, timeoutMs: 20_000 });
    expect(done.data).toMatchObject({ status: 'succeeded', pipeline: 'p', error: null });
    expect(done.data!.output).toEqual({ data: [expect.objectContaining({ index: 0, action: 'create' })] });
    expect((await api.status(queued.data!.id)).data!.id).toBe(queued.data!.id);
    const missing = await api.run('missing', {}, { wait: true });
    expect(missing.response.status).toBe(404);
    expect(missing.error).toEqual({ message: 'Not Found' });
    // A step that never answers within the wait: the helper gives up, the execution goes on.
    origin.handle = () => 'hang';
    await define(w.name, 'slow', [{ id: 'h', type: 'http.request', with: { method: 'GET', url: `${origin.origin}/slow` } }]);
    await expect(api.run('slow', {}, { wait: true, timeoutMs: 300 })).rejects.toBeInstanceOf(PipelineTimeoutError);
  });
});

describe('retention', () => {
  let c: TestServer;
  beforeAll(async () => {
    c = await startTestServer({ TEST_CLOCK: '1', SCHEDULER_TICK_MS: '100' });
  });
  afterAll(() => c?.close());

  it('keeps an ended execution 30 days: the pipelines:prune task then deletes it, and its status URL answers 404', async () => {
    const { workspace: ws, key } = await setupWorkspace(c.admin, { permissions: ALL_PERMISSIONS, abilities: ['*'] });
    expect(
      (
        await c.admin.post(`/admin/v1/workspaces/${ws.name}/buckets/general/content-types`, {
          name: 'article',
          fields: [{ name: 'title', type: 'text' }],
        })
      ).status,
    ).toBe(201);
    const api = client(c.url, key.key);
    expect(
      (
        await c.admin.post(pipelines(ws.name), {
          name: 'one',
          steps: [{ id: 'q', type: 'entries.query', with: { bucket: 'general', type: 'article' } }],
        })
      ).status,
    ).toBe(201);
    const started = await api.post(`/api/v1/${ws.name}/pipelines/one/executions`, { input: {} });
    expect(started.status).toBe(202);
    const url = `/api/v1/${ws.name}/pipelines/executions/${started.body.id}`;
    await eventually(async () => ((await api.get(url)).body.status === 'succeeded' ? true : undefined), 20_000);
    const prune = async () => (await c.admin.post('/admin/v1/tasks/pipelines:prune')).body;
    expect((await c.admin.post('/admin/v1/clock', { advance_seconds: 29 * 86_400 })).status).toBe(200);
    expect(await prune()).toMatchObject({ task: 'pipelines:prune', processed: 0 });
    expect((await api.get(url)).status).toBe(200);
    expect((await c.admin.post('/admin/v1/clock', { advance_seconds: 2 * 86_400 })).status).toBe(200);
    // The scheduler runs the daily task too once the clock passes a day (its tick is 100 ms here):
    // whichever run comes first deletes the execution, and the other finds nothing.
    const last = await prune();
    expect(last.task).toBe('pipelines:prune');
    expect([0, 1]).toContain(last.processed);
    expect((await api.get(url)).status).toBe(404);
  });
});
