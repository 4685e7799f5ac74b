// The bundled spec in the tools people feed it to, with their default options: @hey-api/openapi-ts
// and orval generate clients from it, which must type-check under `tsc --strict`, and Stoplight
// Prism serves a mock of it. Each resolves every `$ref` key of the document (example values
// included), so a symbolic reference shown as a literal `{"$ref": ...}` value breaks all three;
// this check fails on that and on anything else that stops one of them. Run by CI
// (`npm run check:interop`); the output goes to .cache/interop/.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// The tools are not the project's dependencies (some want Node 22, and a newcomer's install on
// Node 20 should not warn for them): scripts/interop pins them, installed here for this check,
// where the generated clients also resolve their imports (axios, ...).
const dir = path.join(root, '.cache', 'interop');
const bin = (name) => path.join(dir, 'node_modules', '.bin', name);
const tsc = path.join(root, 'node_modules', '.bin', 'tsc');
const spec = path.join(dir, 'openapi.json');

function step(label, fn) {
  const started = performance.now();
  try {
    fn();
  } catch (err) {
    console.error(`interop: ${label}: FAILED\n${err.stdout ?? ''}${err.stderr ?? ''}${err.stdout || err.stderr ? '' : err.message}`);
    process.exit(1);
  }
  console.log(`interop: ${label}: ok (${Math.round(performance.now() - started)} ms)`);
}

const run = (cmd, args) => execFileSync(cmd, args, { cwd: dir, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, NO_COLOR: '1' } });

rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
cpSync(path.join(root, 'server', 'src', 'generated', 'openapi.json'), spec);
for (const file of ['package.json', 'package-lock.json']) cpSync(path.join(root, 'scripts', 'interop', file), path.join(dir, file));
step('the tools install (scripts/interop)', () => run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error']));

step('@hey-api/openapi-ts generates a client', () => {
  // It exits with 0 when it could not read the input (an unresolvable $ref): its files tell.
  const out = run(bin('openapi-ts'), ['-i', spec, '-o', path.join(dir, 'hey-api')]);
  for (const file of ['index.ts', 'types.gen.ts', 'sdk.gen.ts']) {
    if (!existsSync(path.join(dir, 'hey-api', file))) throw new Error(`no ${file} generated:\n${out}`);
  }
});
step('orval generates a client', () => run(bin('orval'), ['--input', spec, '--output', path.join(dir, 'orval', 'api.ts')]));
writeFileSync(
  path.join(dir, 'tsconfig.json'),
  JSON.stringify({
    compilerOptions: {
      strict: true,
      noEmit: true,
      target: 'es2022',
      module: 'esnext',
      moduleResolution: 'bundler',
      lib: ['es2022', 'dom'],
      skipLibCheck: true,
    },
    include: ['hey-api/**/*.ts', 'orval/**/*.ts'],
  }),
);
step('both clients type-check (tsc --strict)', () => run(tsc, ['-p', path.join(dir, 'tsconfig.json')]));
await prismMock();

/** Prism's mock server resolves the document and answers a documented route from its examples. */
async function prismMock() {
  const started = performance.now();
  const port = await new Promise((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
  const child = spawn(bin('prism'), ['mock', spec, '-h', '127.0.0.1', '-p', String(port)], {
    cwd: dir,
    env: { ...process.env, NO_COLOR: '1' },
  });
  let output = '';
  const listening = new Promise((resolve, reject) => {
    const seen = (chunk) => {
      output += chunk;
      if (/Prism is listening/.test(output)) resolve();
    };
    child.stdout.on('data', seen);
    child.stderr.on('data', seen);
    child.once('exit', (code) => reject(new Error(`prism exited (${code})`)));
    setTimeout(() => reject(new Error('prism did not listen within 60 s')), 60_000).unref();
  });
  try {
    await listening;
    const res = await fetch(`http://127.0.0.1:${port}/health`);
    if (res.status !== 200) throw new Error(`GET /health answered ${res.status}`);
    console.log(`interop: Prism mocks the spec: ok (${Math.round(performance.now() - started)} ms)`);
  } catch (err) {
    console.error(`interop: Prism mocks the spec: FAILED (${err.message})\n${output.slice(-4000)}`);
    process.exitCode = 1;
  } finally {
    child.kill();
  }
}
