// The README's walk-through ("The first five minutes", continued by "The model as code" in
// docs/model-as-code.md) run as written, so that it cannot drift from the product: its shell
// blocks, in order, in one bash script (BASE and ADMIN pointing at a fresh server;
// `npx @workspace-api/sdk generate-types` included), then its TypeScript blocks, type-checked under
// `tsc --strict` against the SDK and the generated module, and run with node. What they print is
// checked against what the docs say they print. "Moving and backing up" (docs/operations.md) too.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { createTestDatabase } from './support/database';
import { client } from './support/http';
import { ADMIN_TOKEN, startTestServer, type TestServer } from './support/server';

const run = promisify(execFile);
const root = path.resolve(__dirname, '../..');
// Inside the project, so that `@workspace-api/sdk` resolves from its node_modules (the workspace package).
const work = path.join(root, '.cache', `readme-${process.pid}`);

/** The fenced blocks, in order, of the section `## heading` of a Markdown file of the repository. */
function section(file: string, heading: string): { lang: string; code: string }[] {
  const text = readFileSync(path.join(root, file), 'utf8');
  const start = text.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`${file} has no section "## ${heading}"`);
  const end = text.indexOf('\n## ', start + 1);
  const body = text.slice(start, end < 0 ? undefined : end);
  return [...body.matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1], code: m[2] }));
}

/** The walk-through: the README's "The first five minutes", then docs/model-as-code.md's "The model as code". */
function walkthrough(): { lang: string; code: string }[] {
  return [...section('README.md', 'The first five minutes'), ...section('docs/model-as-code.md', 'The model as code')];
}

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  rmSync(work, { recursive: true, force: true });
  mkdirSync(path.join(work, 'src'), { recursive: true });
});
afterAll(async () => {
  await s?.close();
  rmSync(work, { recursive: true, force: true });
});

it('holds shell and TypeScript blocks only, the shell ones first in each step', () => {
  const blocks = walkthrough();
  expect(blocks.map((b) => b.lang)).toEqual(['sh', 'sh', 'sh', 'sh', 'sh', 'ts', 'sh', 'ts', 'sh']);
});

it('runs every command of the walk-through and prints what it says', async () => {
  const blocks = walkthrough();
  const env = { ...process.env, BASE: s.url, ADMIN: ADMIN_TOKEN, NO_COLOR: '1' };
  // The key the shell part created, for the typed client's block (`KEY` there).
  const script = ['set -euo pipefail', ...blocks.filter((b) => b.lang === 'sh').map((b) => b.code), 'printf "%s" "$KEY" > .key'].join('\n');
  const shell = await run('bash', ['-c', script], { cwd: work, env, timeout: 120_000 });
  const out = shell.stdout;
  expect(out).toContain('"name":"website"');
  expect(out).toContain('{"data":[{"title":"Notes on the engine","author":{"name":"Ada Lovelace"}}],"pagination":');
  expect(out).toContain('{"data":[{"group":{"published_on":"2026-10-01"},"count":1,"sum":{"views":"120"}}]');
  expect(out).toMatch(/\{"data":\[\{"index":0,"action":"create","id":"[0-9A-Z]{26}","lock_version":0,"ref":"grace"\},\{"index":1,/);
  expect(out).not.toMatch(/"message"/); // no refusal anywhere
  expect(readFileSync(path.join(work, 'src', 'content.ts'), 'utf8')).toContain('export interface Content');
  // The model as code: the plan, its apply (the types rewritten), the copy into another workspace.
  expect(out).toMatch(
    /Plan for workspace "acme" at version [0-9a-f]{32}: 2 changes\n {2}\+ Create content type general\/tag with 1 field\.\n {2}\+ Add field general\/post\.subtitle\.\n/,
  );
  expect(out).toMatch(/Applied 2 changes: workspace "acme" is at version ([0-9a-f]{32})\./);
  expect(out).toMatch(/Applied 3 changes: workspace "acme-staging" is at version ([0-9a-f]{32})\./);
  const versions = [...out.matchAll(/is at version ([0-9a-f]{32})/g)].map((m) => m[1]);
  expect(versions[1]).toBe(versions[0]);
  expect(readFileSync(path.join(work, 'src', 'content.ts'), 'utf8')).toContain('subtitle?:');

  // The TypeScript blocks: type-checked together, then run one after the other.
  const tsBlocks = blocks.filter((b) => b.lang === 'ts');
  tsBlocks.forEach((b, i) => writeFileSync(path.join(work, 'src', `block${i}.ts`), `${b.code}\nexport {};\n`));
  writeFileSync(
    path.join(work, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'es2022',
        module: 'esnext',
        moduleResolution: 'bundler',
        lib: ['es2022', 'dom'],
        types: ['node'],
        skipLibCheck: true,
      },
      include: ['src/**/*.ts'],
    }),
  );
  await run(path.join(root, 'node_modules', '.bin', 'tsc'), ['-p', path.join(work, 'tsconfig.json')], { cwd: work }).catch((err) => {
    throw new Error(`the README's TypeScript does not type-check:\n${err.stdout}${err.stderr}`);
  });
  const printed: string[] = [];
  for (const [i, b] of tsBlocks.entries()) {
    const js = ts.transpileModule(b.code, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } }).outputText;
    const file = path.join(work, 'src', `block${i}.mjs`);
    writeFileSync(file, js);
    printed.push(
      (
        await run(process.execPath, [file], {
          cwd: work,
          env: { ...env, KEY: readFileSync(path.join(work, '.key'), 'utf8') },
          timeout: 60_000,
        })
      ).stdout,
    );
  }
  expect(printed[0]).toBe('website\n');
  const lines = printed[1].trimEnd().split('\n');
  expect(lines.slice(0, 2)).toEqual(['Compilers by Grace Hopper', 'Notes on the engine by Ada Lovelace']);
  expect(JSON.parse(lines[2])).toEqual([
    { group: { published_on: '2026-10-01' }, count: 1, sum: { views: '120' } },
    { group: { published_on: '2026-11-01' }, count: 1, sum: { views: '80' } },
  ]);
  expect(lines[3]).toMatch(/^\[ '[0-9A-Z]{26}', '[0-9A-Z]{26}' \]$/);
  expect(lines).toHaveLength(4);
});

it('moves a workspace off the embedded default as "Moving and backing up" shows', async () => {
  const blocks = section('docs/operations.md', 'Moving and backing up');
  expect(blocks.map((b) => b.lang)).toEqual(['sh']);
  const embedded = await startTestServer({}, await createTestDatabase('pglite'));
  const postgres = await startTestServer();
  const dir = path.join(work, 'move');
  mkdirSync(dir, { recursive: true });
  try {
    // The embedded server's workspace: the walk-through's model and an entry.
    const admin = embedded.admin;
    expect((await admin.post('/admin/v1/workspaces', { name: 'acme' })).status).toBe(201);
    const user = (
      await admin.post('/admin/v1/workspaces/acme/users', {
        email: 'editor@example.com',
        permissions: ['list-entries', 'view-entry', 'create-entry'],
      })
    ).body as { id: number };
    const key = (await admin.post('/admin/v1/workspaces/acme/api-keys', { name: 'site', user_id: user.id, abilities: ['*'] })).body as {
      key: string;
    };
    expect(
      (
        await admin.post('/admin/v1/workspaces/acme/buckets/general/content-types', {
          name: 'post',
          fields: [{ name: 'title', type: 'text', required: true }],
        })
      ).status,
    ).toBe(201);
    const api = client(embedded.url, key.key);
    expect(
      (await api.post('/api/v1/acme/entries?contentBucket=general&contentType=post', { fields: { title: 'Moved' }, status: 'published' }))
        .status,
    ).toBe(201);
    const before = await api.get('/api/v1/acme/entries?contentBucket=general&contentType=post');
    expect(before.status).toBe(200);
    const env = { ...process.env, BASE: embedded.url, NEW: postgres.url, ADMIN: ADMIN_TOKEN, NO_COLOR: '1' };
    const shell = await run('bash', ['-c', ['set -euo pipefail', blocks[0].code].join('\n')], { cwd: dir, env, timeout: 120_000 });
    expect(shell.stderr).toMatch(/backed up 1 workspaces to backup-1 /);
    expect(shell.stderr).toMatch(/imported workspace "acme": /);
    expect(shell.stderr).toMatch(/restored 1 workspaces from backup-1\n/);
    // The same answer, byte for byte, from the PostgreSQL server.
    expect(shell.stdout.trim()).toBe(before.text.split(embedded.url).join(postgres.url));
  } finally {
    await Promise.all([embedded.close(), postgres.close()]);
  }
});
