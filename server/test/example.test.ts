// examples/blog-reader run as its README says, against a fresh server: its setup (workspace,
// content model, key), the SDK's generate-types, its type check under `tsc --strict` (module
// nodenext), and the program itself, whose printed lines are checked. It runs from a copy inside
// the project, so that `@workspace-api/sdk` resolves from the root's node_modules as it does in
// the repository.
import { execFile } from 'node:child_process';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ADMIN_TOKEN, startTestServer, type TestServer } from './support/server';

const run = promisify(execFile);
const root = path.resolve(__dirname, '../..');
const work = path.join(root, '.cache', `example-${process.pid}`);
const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  rmSync(work, { recursive: true, force: true });
  cpSync(path.join(root, 'examples', 'blog-reader'), work, { recursive: true, filter: (src) => !/[/\\](dist|node_modules)$/.test(src) });
});
afterAll(async () => {
  await s?.close();
  rmSync(work, { recursive: true, force: true });
});

it('sets up, generates its types, type-checks and reads and writes the blog', async () => {
  const env = { ...process.env, BASE: s.url, ADMIN: ADMIN_TOKEN, WORKSPACE: 'blog', NO_COLOR: '1' };
  const setup = await run(process.execPath, ['setup.mjs'], { cwd: work, env });
  const key = /^KEY=(wsk_\S+)$/m.exec(setup.stdout)?.[1];
  expect(key).toBeDefined();

  // `npm run types`: the SDK's CLI, as its package's bin.
  await run(
    bin('workspace-api-sdk'),
    ['generate-types', '--url', s.url, '--token', ADMIN_TOKEN, '--workspace', 'blog', '--out', 'src/content.ts'],
    { cwd: work, env },
  );
  expect(readFileSync(path.join(work, 'src', 'content.ts'), 'utf8')).toMatch(/export interface GeneralPostFields \{/);

  // `npm start`: tsc, then node.
  await run(bin('tsc'), ['-p', 'tsconfig.json'], { cwd: work, env }).catch((err) => {
    throw new Error(`the example does not type-check:\n${err.stdout}${err.stderr}`);
  });
  const { stdout } = await run(process.execPath, ['dist/main.js'], { cwd: work, env: { ...env, KEY: key } });
  expect(stdout.trimEnd().split('\n')).toEqual([
    '2 published posts: Notes on the engine, Poetical science',
    'popular: Notes on the engine (120 views) by Ada Lovelace',
    'read back: Notes on the engine, published on 2026-10-12',
  ]);
});
