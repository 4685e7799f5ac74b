// A workspace archive streams at both ends: exporting and importing a workspace larger than the
// memory bound (entries holding 210 MB of text that gzip cannot shrink much) grows the serving
// process's RSS by less than 100 MB, as the built server runs (`npm start`). And an import whose
// client goes away midway leaves nothing behind: no workspace, no stored file content.
import { createWriteStream, createReadStream, mkdtempSync, readFileSync, statSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { monotonicFactory } from 'ulid';
import { createTestDatabase, type TestDatabase } from './support/database';
import { describeWithPostgres } from './support/env';
import { ADMIN_TOKEN, spawnServer, startTestServer, type SpawnedServer } from './support/server';
import { createContentType, createEntry, entriesWorkspace, uploadFile } from './support/entries';
import { eventually } from './support/receiver';

const MB = 1e6;
const ENTRIES = 3000;
/** Random hex per entry (70 KB): gzip halves it at best, so the archive is over 100 MB. */
const MD5S_PER_ENTRY = 2200;
const BOUND = 100 * MB;

/** VmRSS of process `pid`, in bytes. */
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

/** The largest growth of `pid`'s RSS over its value now, while `work` runs (sampled every 20 ms). */
async function rssGrowth(pid: number, work: () => Promise<void>): Promise<number> {
  const start = rssOf(pid);
  let max = start;
  const timer = setInterval(() => (max = Math.max(max, rssOf(pid))), 20);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return Math.max(max, rssOf(pid)) - start;
}

/** `method path` on `base` as the admin, with `body` streamed from a file or none; the answer saved to `out` when given. */
function request(
  base: string,
  method: string,
  target: string,
  opts: { body?: string; out?: string } = {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}${target}`,
      {
        method,
        headers: {
          Authorization: `Bearer ${ADMIN_TOKEN}`,
          ...(opts.body ? { 'Content-Type': 'application/gzip', 'Content-Length': statSync(opts.body).size } : {}),
        },
      },
      (res) => {
        if (opts.out && res.statusCode === 200) {
          pipeline(res, createWriteStream(opts.out)).then(() => resolve({ status: 200, text: '' }), reject);
          return;
        }
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, text: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    if (opts.body) createReadStream(opts.body).pipe(req);
    else req.end();
  });
}

describeWithPostgres('a workspace archive streams', () => {
  const databases: TestDatabase[] = [];
  const servers: SpawnedServer[] = [];
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await Promise.all(databases.map((d) => d.drop()));
  });

  it('exports and imports a workspace of 210 MB of entries with the server RSS growing less than 100 MB', async () => {
    const [source, target] = [await createTestDatabase(), await createTestDatabase()];
    databases.push(source, target);
    // The workspace, made through the API; its entries copied from one in SQL (as an import writes
    // rows), once the server that made it is closed (its close reads every document back).
    const maker = await startTestServer({}, source);
    let ws: string;
    let first: { id: string };
    try {
      const w = await entriesWorkspace(maker);
      ws = w.ws;
      await createContentType(maker, ws, 'general', { name: 'page', fields: [{ name: 'body', type: 'text' }] });
      first = await createEntry(w, 'page', { fields: { body: 'the first' } });
      await uploadFile(w.api, ws, 'notes.txt', 'a note');
    } finally {
      await maker.close();
    }
    const ulid = monotonicFactory();
    const client = new pg.Client({ connectionString: source.url });
    await client.connect();
    try {
      await client.query(
        `WITH src AS (SELECT e.*, u.entry_id AS new_id FROM entries e, unnest($2::text[]) AS u(entry_id) WHERE e.entry_id = $1),
              ins AS (INSERT INTO entries (entry_id, workspace_id, bucket_id, content_type_id, kind, ref, live_ref, status, publish_at, lock_version, locales, tags,
                                           contract_choice, contract_name, validation_issues, validation_checked_at, created_at, updated_at)
                      SELECT new_id, workspace_id, bucket_id, content_type_id, kind, 'page/' || new_id, 'page/' || new_id, status, publish_at, lock_version, locales, tags,
                             contract_choice, contract_name, validation_issues, validation_checked_at, created_at, updated_at FROM src
                      RETURNING id)
         INSERT INTO entry_contents (entry_pk, locale, data)
         SELECT ins.id, 'en-US', jsonb_build_object('body', (SELECT string_agg(md5(random()::text || g || '.' || ins.id), '') FROM generate_series(1, ${MD5S_PER_ENTRY}) g)) FROM ins`,
        [first.id, Array.from({ length: ENTRIES }, () => ulid())],
      );
    } finally {
      await client.end();
    }
    const from = await spawnServer(source);
    const to = await spawnServer(target);
    servers.push(from, to);
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'wsapi-archive-memory-')), 'ws.tar.gz');
    let exported!: { status: number };
    const exportGrowth = await rssGrowth(from.process.pid!, async () => {
      exported = await request(from.url, 'GET', `/admin/v1/workspaces/${ws}/export`, { out: file });
    });
    expect(exported.status).toBe(200);
    expect(statSync(file).size).toBeGreaterThan(BOUND);
    let answer!: { status: number; text: string };
    const importGrowth = await rssGrowth(to.process.pid!, async () => {
      answer = await request(to.url, 'POST', '/admin/v1/workspace-imports', { body: file });
    });
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.text)).toMatchObject({
      workspace: { name: ws! },
      rows: { entries: ENTRIES + 1, entry_contents: ENTRIES + 1 },
      files: { count: 1 },
    });
    console.log(
      `archive ${(statSync(file).size / MB).toFixed(1)} MB; RSS growth: export ${(exportGrowth / MB).toFixed(1)} MB, import ${(importGrowth / MB).toFixed(1)} MB`,
    );
    expect(exportGrowth).toBeLessThan(BOUND);
    expect(importGrowth).toBeLessThan(BOUND);
  }, 240_000);

  it('leaves nothing behind when the client goes away during an import', async () => {
    const [source, target] = [await createTestDatabase(), await createTestDatabase()];
    databases.push(source, target);
    const s = await startTestServer({}, source);
    const t = await startTestServer({}, target);
    try {
      const w = await entriesWorkspace(s);
      await createContentType(s, w.ws, 'general', { name: 'note', fields: [{ name: 'text', type: 'text' }] });
      for (let i = 0; i < 3; i++) await createEntry(w, 'note', { fields: { text: `note ${i}` } });
      // Files come after the rows: a stored content is written before the client goes.
      await uploadFile(w.api, w.ws, 'big.txt', 'x'.repeat(1024 * 1024));
      const res = await fetch(`${s.url}/admin/v1/workspaces/${w.ws}/export`, { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } });
      const archive = Buffer.from(await res.arrayBuffer());
      const stored = async () => {
        const hashes: string[] = [];
        for await (const o of t.server.app.storage.list()) hashes.push(o.hash);
        return hashes;
      };
      // All but the archive's last bytes; once the import has stored the file's content, the connection closed.
      const req = http.request(`${t.url}/admin/v1/workspace-imports`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/gzip', 'Content-Length': archive.length },
      });
      req.on('error', () => undefined);
      req.write(archive.subarray(0, archive.length - 64));
      await eventually(async () => (await stored()).length === 1);
      req.destroy();
      // (The import rolls back once the server sees the connection gone.)
      await eventually(async () => (await stored()).length === 0);
      expect((await t.admin.get(`/admin/v1/workspaces/${w.ws}`)).status).toBe(404);
      expect((await t.admin.get('/admin/v1/workspaces')).body.data).toEqual([]);
      // The same archive whole imports (nothing of the interrupted one is in its way).
      const whole = await fetch(`${t.url}/admin/v1/workspace-imports`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/gzip' },
        body: new Uint8Array(archive),
      });
      expect(whole.status).toBe(201);
    } finally {
      await Promise.all([s.close(), t.close()]);
    }
  });
});
