// Security review "Hardening II" (issue 23), the findings about pipelines, black-box over HTTP.
// Finding 4: a placeholder in an `http.request` URL stands for one encoded path segment or query
// value; it cannot climb out of the operator's path (dot segments, `/`) nor add query parameters.
// Finding 5: steps count against the rate limits of their routes for the key that started the
// execution, on the route's own counters (email), while the entries quota stays exempt.
import { startTestServer, type TestServer } from './support/server';
import { client } from './support/http';
import { createKey, setupWorkspace, TIMESTAMP } from './support/fixtures';
import { eventually } from './support/receiver';
import { startOrigin, type Origin } from './support/origin';
import { expectLimited } from './support/rate-limits';

let s: TestServer;
/** The allowlisted origin: what it receives is what a step requested. */
let origin: Origin;

beforeAll(async () => {
  origin = await startOrigin();
  s = await startTestServer({
    SCHEDULER_TICK_MS: '100',
    PIPELINE_HTTP_ALLOWLIST: origin.origin,
    RATE_LIMIT_ENABLED: 'true',
    // Emails keep their documented default (10 a minute per key); entries are made small to
    // show that steps do not touch that quota.
    RATE_LIMIT_ENTRIES_PER_MINUTE: '2',
  });
});
afterEach(() => {
  origin.requests.length = 0;
});
afterAll(async () => {
  await s?.close();
  await origin?.close();
});

async function workspace() {
  const {
    workspace: ws,
    user,
    key,
  } = await setupWorkspace(s.admin, { permissions: ['list-entries', 'execute-pipeline', 'send-email'], abilities: ['*'] });
  const type = await s.admin.post(`/admin/v1/workspaces/${ws.name}/buckets/general/content-types`, {
    name: 'article',
    fields: [{ name: 'title', type: 'text' }],
  });
  expect(type.status).toBe(201);
  return { name: ws.name, user, key, api: client(s.url, key.key) };
}
type Ws = Awaited<ReturnType<typeof workspace>>;

async function define(w: Ws, name: string, steps: unknown[]) {
  const res = await s.admin.post(`/admin/v1/workspaces/${w.name}/pipelines`, { name, steps });
  expect(res.status).toBe(201);
}

/** Executes and polls the status URL until the execution ended. */
async function run(w: Ws, name: string, input: Record<string, unknown> = {}) {
  let res = await w.api.post(`/api/v1/${w.name}/pipelines/${name}/executions`, { input });
  // A 503 changed nothing and asks to be retried after Retry-After (seen twice in full runs on a
  // loaded 2-core machine, on this file's first executions): retried once, as a client does.
  if (res.status === 503) {
    await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after')) * 1000));
    res = await w.api.post(`/api/v1/${w.name}/pipelines/${name}/executions`, { input });
  }
  expect(res.status).toBe(202);
  return eventually(async () => {
    const got = await w.api.get(`/api/v1/${w.name}/pipelines/executions/${res.body.id}`);
    expect(got.status).toBe(200);
    return ['succeeded', 'failed'].includes(got.body.status) ? got.body : undefined;
  }, 20_000);
}

/** The paths the origin received from one execution. */
const received = (execution: string) => origin.requests.filter((r) => r.headers['x-pipeline-execution'] === execution).map((r) => r.path);

const get = (url: string) => ({ id: 'h', type: 'http.request', with: { method: 'GET', url } });

describe('finding 4: placeholders in an http.request URL', () => {
  it('become one encoded path segment or one query value each, whatever they hold', async () => {
    const w = await workspace();
    await define(w, 'p', [get(`${origin.origin}/articles/{{input.id}}?q={{input.q}}#{{input.f}}`)]);
    const cases: [string, string, string][] = [
      // [id, q, the path the origin received]
      ['../admin/purge?x=', '1', '/articles/..%2Fadmin%2Fpurge%3Fx%3D?q=1'],
      ['a/../../root', '1', '/articles/a%2F..%2F..%2Froot?q=1'],
      ['x?inject=1&y=', '1&admin=true#f', '/articles/x%3Finject%3D1%26y%3D?q=1%26admin%3Dtrue%23f'],
      // Already percent-encoded text is text: `%2e%2e` is sent as `%252e%252e`, not a dot segment.
      ['%2e%2e', '..', '/articles/%252e%252e?q=..'],
      ['..x', 'a b+c', '/articles/..x?q=a%20b%2Bc'],
    ];
    const runs = await Promise.all(cases.map(([id, q]) => run(w, 'p', { id, q, f: '#/..' })));
    for (const [i, done] of runs.entries()) {
      expect(done).toMatchObject({ status: 'succeeded', error: null, output: { status: 200, body: { ok: true } } });
      expect(received(done.id)).toEqual([cases[i][2]]);
    }
    expect(origin.requests).toHaveLength(cases.length);
  });

  it('fail the step, sending nothing, when the resolved URL leaves the part before the first placeholder or makes a dot segment', async () => {
    const w = await workspace();
    await define(w, 'article', [get(`${origin.origin}/articles/{{input.id}}`)]);
    await define(w, 'joined', [get(`${origin.origin}/files/{{input.a}}{{input.b}}/raw`)]);
    await define(w, 'root', [get(`${origin.origin}/{{input.id}}`)]);
    await define(w, 'dotted', [get(`${origin.origin}/files/%2E{{input.a}}`)]);
    const failed = (message: string) => ({
      status: 'failed',
      output: null,
      error: { step: 'h', message },
      steps: [
        {
          id: 'h',
          status: 'failed',
          started_at: expect.stringMatching(TIMESTAMP),
          finished_at: expect.stringMatching(TIMESTAMP),
          error: message,
        },
      ],
    });
    const leaves = (prefix: string) =>
      `The resolved url leaves ${origin.origin}${prefix}, the part of the url before its first placeholder.`;
    const dot = (segment: string) =>
      `The url path segment ${segment} is made with a placeholder and is a dot segment (. or ..), which is refused.`;
    const [climbs, single, joined, dotted, root, fineJoined, fineRoot] = await Promise.all([
      // `..` climbs out of /articles/; `.` stays in it but is no segment of its own.
      run(w, 'article', { id: '..' }),
      run(w, 'article', { id: '.' }),
      // Two placeholders (or a literal dot and one) making one dot segment together.
      run(w, 'joined', { a: '.', b: '.' }),
      run(w, 'dotted', { a: '.' }),
      // At the root nothing is above, yet `..` would still not be the segment it stands for.
      run(w, 'root', { id: '..' }),
      // The same pipelines with ordinary values reach their paths.
      run(w, 'joined', { a: 'x', b: '.y' }),
      run(w, 'root', { id: '...' }),
    ]);
    expect(climbs).toMatchObject(failed(leaves('/articles/')));
    expect(single).toMatchObject(failed(dot('"."')));
    expect(joined).toMatchObject(failed(leaves('/files/')));
    expect(dotted).toMatchObject(failed(leaves('/files/')));
    expect(root).toMatchObject(failed(dot('".."')));
    expect(fineJoined.status).toBe('succeeded');
    expect(fineRoot.status).toBe('succeeded');
    expect(received(fineJoined.id)).toEqual(['/files/x.y/raw']);
    expect(received(fineRoot.id)).toEqual(['/...']);
    // Nothing else was sent.
    expect(origin.requests).toHaveLength(2);
  });
});

describe('finding 5: steps and the rate limits of their routes', () => {
  const email = (n: number) => ({ id: `m${n}`, type: 'email.send', with: { to: '{{input.to}}', subject: `Message ${n}`, text: 'Hello.' } });
  const outbox = async (w: Ws) => (await s.admin.get(`/admin/v1/workspaces/${w.name}/outbox?limit=100`)).body.data as unknown[];
  const LIMITED =
    '429 Too Many Attempts. The step counts against the emails rate limit of its route (10 per minute per API key), which is used up; the step did not run.';

  it('counts email.send steps against the email limit of the executing key, shared with the email route', async () => {
    const w = await workspace();
    await define(
      w,
      'mail',
      Array.from({ length: 12 }, (_, n) => email(n)),
    );
    const done = await run(w, 'mail', { to: 'a@example.com' });
    expect(done).toMatchObject({ status: 'failed', output: null, error: { step: 'm10', message: LIMITED } });
    expect(done.steps.map((x: { status: string }) => x.status)).toEqual([...Array(10).fill('succeeded'), 'failed', 'skipped']);
    expect(done.steps[10].error).toBe(LIMITED);
    expect(await outbox(w)).toHaveLength(10);

    // The route counts on the same counter: this key is used up there too.
    const send = (api: ReturnType<typeof client>) => api.post(`/api/v1/${w.name}/emails`, { to: 'a@example.com', subject: 'x', text: 'y' });
    expectLimited(await send(w.api));
    // And per key: another key of the same creator sends, by route and by pipeline.
    const other = client(s.url, (await createKey(s.admin, w.name, w.user.id, ['*'])).key);
    expect((await send(other)).status).toBe(204);
    expect(await outbox(w)).toHaveLength(11);
  });

  it('fails an email.send step at once when the key used its limit on the route', async () => {
    const w = await workspace();
    await define(w, 'mail', [email(0)]);
    for (let i = 0; i < 10; i++)
      expect((await w.api.post(`/api/v1/${w.name}/emails`, { to: 'a@example.com', subject: 'x', text: 'y' })).status).toBe(204);
    const done = await run(w, 'mail', { to: 'a@example.com' });
    expect(done).toMatchObject({ status: 'failed', error: { step: 'm0', message: LIMITED } });
    expect(await outbox(w)).toHaveLength(10);
  });

  it('uses nothing up for a step refused for its rights', async () => {
    const w = await workspace();
    await s.admin.patch(`/admin/v1/workspaces/${w.name}/users/${w.user.id}`, { permissions: ['execute-pipeline'] });
    await define(w, 'mail', [email(0)]);
    const refused = await Promise.all(Array.from({ length: 10 }, () => run(w, 'mail', { to: 'a@example.com' })));
    expect(refused.map((e) => e.error)).toEqual(
      Array(10).fill({ step: 'm0', message: '403 This API key is not permitted to perform this action' }),
    );
    // Given the permission, the key has its whole limit.
    expect(
      (await s.admin.patch(`/admin/v1/workspaces/${w.name}/users/${w.user.id}`, { permissions: ['execute-pipeline', 'send-email'] }))
        .status,
    ).toBe(200);
    expect((await w.api.post(`/api/v1/${w.name}/emails`, { to: 'a@example.com', subject: 'x', text: 'y' })).status).toBe(204);
    expect(await outbox(w)).toHaveLength(1);
  });

  it('leaves entries steps out of the entries quota, as documented', async () => {
    const w = await workspace();
    const query = (n: number) => ({ id: `q${n}`, type: 'entries.query', with: { bucket: 'general', type: 'article' } });
    await define(w, 'reads', [query(0), query(1), query(2)]);
    expect((await run(w, 'reads')).status).toBe('succeeded');
    // The quota of 2 is whole for the route.
    const read = () => w.api.post(`/api/v1/${w.name}/general/entries/query`, { type: 'article' });
    expect((await read()).status).toBe(200);
    expect((await read()).status).toBe(200);
    expectLimited(await read());
  });
});
