#!/usr/bin/env node
// `npm run build` (also run by `npm install` through `prepare`): everything `npm start` needs.
//   1. the Prisma client (generated, not checked in)
//   2. server and SDK compiled to JavaScript (dist/, sdk/dist/)
//   3. dist/pglite-seed.tar: a migrated, empty embedded database that a new DATA_DIR starts from
//   4. the API reference page (dist/docs/index.html), Redoc with its scripts inlined so that it
//      works with no network
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NODE_NO_WARNINGS: '1' };
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
const step = (label, cmd, args) => {
  const t = Date.now();
  try {
    execFileSync(cmd === 'node' ? process.execPath : bin(cmd), args, { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    process.stderr.write(`${label} failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
    process.exit(1);
  }
  console.log(`build: ${label} (${Date.now() - t} ms)`);
};

step('Prisma client', 'prisma', ['generate']);
step('server', 'tsc', ['-p', 'tsconfig.build.json']);
step('sdk', 'tsc', ['-p', 'sdk/tsconfig.json']);
step('embedded database seed', 'node', ['dist/server/src/db/seed-cli.js']);
mkdirSync(path.join(root, 'dist/docs'), { recursive: true });
step('API reference', 'redocly', [
  'build-docs', 'server/src/generated/openapi.json', '--inlineBundle', '--title', 'Workspace API', '-o', 'dist/docs/index.html',
]);
