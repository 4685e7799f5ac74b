// Validation costs time linear in the body and reports a bounded list: a body within its route's
// size limit holding 100,000 invalid array items is refused in well under a second, with the
// bound's error and those of the first items (100 problems at most), while other requests
// (`/health`) go on being answered. Once such a body
// took 50 s of the only thread (Ajv copied its growing error list at every failing `$ref`).
// The time bounds below are 10 to 50 times what the answers take; the fault they guard took 50 s.
import { startTestServer, type TestServer } from './support/server';
import { client } from './support/http';
import { setupWorkspace } from './support/fixtures';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const json = { 'Content-Type': 'application/json' };
const ANSWER_MS = 3_000;
const HEALTH_MS = 1_000;

/**
 * Sends `send()` and, while it is in flight, asks `/health`: both answers, with how long each
 * took. Asked after the big request's body is on its way, `/health` waits behind any stall.
 */
async function withHealth<T>(send: () => Promise<T>): Promise<{ answer: T; answerMs: number; healthMs: number }> {
  const t0 = Date.now();
  const pending = send().then((answer) => ({ answer, answerMs: Date.now() - t0 }));
  await new Promise((r) => setTimeout(r, 30));
  const h0 = Date.now();
  const health = await fetch(`${s.url}/health`);
  const healthMs = Date.now() - h0;
  expect(health.status).toBe(200);
  return { ...(await pending), healthMs };
}

/**
 * The 422 of an array of bad items past its bound: the bound's error, then the errors of the
 * first `maxItems + 1` items (the array is checked cut there), 100 paths at most.
 */
function expectBoundedReport(body: { message: string; errors: Record<string, string[]> }, field: string, maxItems: number) {
  const paths = Object.keys(body.errors);
  expect(paths).toHaveLength(Math.min(100, maxItems + 2));
  expect(body.errors[field]).toEqual([`The ${field} field must not have more than ${maxItems} items.`]);
  expect(paths.filter((p) => p !== field).every((p) => new RegExp(`^${field}\\.\\d+`).test(p))).toBe(true);
  expect(body.message).toMatch(new RegExp(`^The ${field} field must not have more than ${maxItems} items\\. \\(and \\d+ more errors\\)$`));
}

it('refuses a batch write of 100,000 zeros at once, listing 100 problems, /health unaffected', async () => {
  const { workspace, key } = await setupWorkspace(s.admin);
  const api = client(s.url, key.key);
  const raw = JSON.stringify({ operations: new Array(100_000).fill(0) });
  const { answer, answerMs, healthMs } = await withHealth(() =>
    api.post(`/api/v1/${workspace.name}/general/entries/batch`, undefined, { raw, headers: json }),
  );
  expect(answer.status).toBe(422);
  expectBoundedReport(answer.body, 'operations', 100);
  expect(answer.body.errors['operations.0']).toEqual(['The operations.0 field must be an object.']);
  expect(answer.text.length).toBeLessThan(20_000);
  expect(answerMs).toBeLessThan(ANSWER_MS);
  expect(healthMs).toBeLessThan(HEALTH_MS);
});

it('refuses a pipeline of 100,000 steps at once, and writes nothing', async () => {
  const { workspace } = await setupWorkspace(s.admin);
  const path = `/admin/v1/workspaces/${workspace.name}/pipelines`;
  const raw = JSON.stringify({ name: 'p', steps: new Array(100_000).fill(0) });
  const { answer, answerMs, healthMs } = await withHealth(() => s.admin.post(path, undefined, { raw, headers: json }));
  expect(answer.status).toBe(422);
  expectBoundedReport(answer.body, 'steps', 20);
  expect(answerMs).toBeLessThan(ANSWER_MS);
  expect(healthMs).toBeLessThan(HEALTH_MS);
  expect((await s.admin.get(path)).body).toEqual({ data: [] });
});

it('checks a document of 100,000 invalid items against a contract with $refs at once, and writes nothing', async () => {
  const { workspace, key } = await setupWorkspace(s.admin, { permissions: ['list-entries', 'create-entry'] });
  // Item schemas that refer further are not inlined by Ajv: each failing item goes through a `$ref`.
  const schema = {
    type: 'object',
    properties: { items: { type: 'array', items: { $ref: '#/$defs/item' } } },
    $defs: { item: { type: 'object', required: ['a'], properties: { a: { $ref: '#/$defs/text' } } }, text: { type: 'string' } },
  };
  expect((await s.admin.post(`/admin/v1/workspaces/${workspace.name}/contracts`, { name: 'list', schema, prefix: 'lists' })).status).toBe(
    201,
  );
  const api = client(s.url, key.key);
  const raw = JSON.stringify({ ref: 'lists/a', data: { items: new Array(100_000).fill(0) } });
  const { answer, answerMs, healthMs } = await withHealth(() =>
    api.post(`/api/v1/${workspace.name}/objects`, undefined, { raw, headers: json }),
  );
  expect(answer.status).toBe(422);
  const paths = Object.keys(answer.body.errors);
  expect(paths).toHaveLength(100);
  expect(paths.every((p) => /^data\.items\.\d+$/.test(p))).toBe(true);
  expect(answer.body.errors['data.items.0']).toEqual(['The data.items.0 field must be an object.']);
  expect(answerMs).toBeLessThan(ANSWER_MS);
  expect(healthMs).toBeLessThan(HEALTH_MS);
  expect((await api.get(`/api/v1/${workspace.name}/objects?ref=lists/a`)).body.data).toEqual([]);
});

it('lists every problem of a body with fewer than 100 of them', async () => {
  const { workspace } = await setupWorkspace(s.admin);
  const res = await s.admin.post(`/admin/v1/workspaces/${workspace.name}/pipelines`, { name: 'p', steps: [0, 0, 0] });
  expect(res.status).toBe(422);
  expect(res.body).toEqual({
    message: 'The steps.0 field must be an object. (and 2 more errors)',
    errors: {
      'steps.0': ['The steps.0 field must be an object.'],
      'steps.1': ['The steps.1 field must be an object.'],
      'steps.2': ['The steps.2 field must be an object.'],
    },
  });
});
