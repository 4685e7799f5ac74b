#!/usr/bin/env node
// `npm run build` (also run by `npm install` through `prepare`): everything `npm start` needs.
//   1. the Prisma client (generated, not checked in)
//   2. SDK and server compiled to JavaScript (sdk/dist/, dist/)
//   3. dist/pglite-seed/: a migrated, empty embedded database that a new DATA_DIR copies
//   4. the API reference page (dist/docs/index.html), Redoc with its scripts inlined so that it
//      works with no network, and the guide (dist/docs/guide.html, scripts/docs-guide.mjs)
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
// The SDK first: the server imports its generated types and its typegen as the package.
step('sdk', 'tsc', ['-p', 'sdk/tsconfig.json']);
step('server', 'tsc', ['-p', 'tsconfig.build.json']);
step('embedded database seed', 'node', ['dist/server/src/db/seed-cli.js']);
// Builds before the seed was a directory left it as a tar; nothing reads that any more.
rmSync(path.join(root, 'dist/pglite-seed.tar'), { force: true });
mkdirSync(path.join(root, 'dist/docs'), { recursive: true });
step('API reference', 'redocly', [
  'build-docs',
  'server/src/generated/openapi.json',
  '--inlineBundle',
  '--title',
  'Workspace API',
  '-o',
  'dist/docs/index.html',
]);

// Redoc's sidebar footer loads the Redocly logo from its CDN, which fails offline (and is a request
// to a third party). Replace it with an inline wordmark, and fail the build if any CDN address
// that the page would load remains.
const docs = path.join(root, 'dist/docs/index.html');
const wordmark = (width) =>
  'data:image/svg+xml;base64,' +
  Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="20" viewBox="0 0 ${width} 20">` +
      `<text x="0" y="15" font-family="sans-serif" font-size="14" font-weight="600" fill="#bd2c2c">${width > 40 ? 'Redocly' : 'R'}</text></svg>`,
  ).toString('base64');
const html = readFileSync(docs, 'utf8')
  .replaceAll('https://cdn.redoc.ly/redoc/logo-mini-full.svg', wordmark(64))
  .replaceAll('https://cdn.redoc.ly/redoc/logo-mini.svg', wordmark(14));
if (html.includes('cdn.redoc.ly')) {
  console.error('build: the API reference still refers to cdn.redoc.ly; extend the replacement in scripts/build.mjs');
  process.exit(1);
}
writeFileSync(docs, html);
step('guide', 'node', ['scripts/docs-guide.mjs']);
