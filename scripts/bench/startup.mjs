// Start time of the embedded default: from `npm start` to the first answered GET /health (which
// asks the database), on an empty DATA_DIR (the first start: the seed copied, migrations checked)
// and on an existing one (a restart). Issue 40's targets: 2.5 s and 1.5 s, medians of 5.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

async function startOnce(dataDir, port) {
  const t0 = performance.now();
  const child = spawn(npm, ['start', '--silent'], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), DATABASE_URL: '', LOG_LEVEL: 'silent' },
    stdio: 'ignore',
    detached: true,
  });
  try {
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/health`);
        if (res.ok) {
          await res.arrayBuffer();
          return performance.now() - t0;
        }
      } catch {
        /* not up yet */
      }
      if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}`);
      if (performance.now() - t0 > 60_000) throw new Error('server did not answer within 60 s');
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    process.kill(-child.pid, 'SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function benchStartup(runs = 5) {
  const empty = [];
  const existing = [];
  for (let i = 0; i < runs; i++) {
    const dir = mkdtempSync(path.join(tmpdir(), 'wsapi-bench-'));
    try {
      empty.push(await startOnce(dir, 31_000 + i));
      existing.push(await startOnce(dir, 32_000 + i));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const fmt = (xs) => `median ${median(xs).toFixed(0)} ms (runs: ${xs.map((x) => x.toFixed(0)).join(', ')})`;
  console.log(`first start (empty DATA_DIR):  ${fmt(empty)}   target <= 2500 ms`);
  console.log(`restart (existing DATA_DIR):   ${fmt(existing)}   target <= 1500 ms`);
  return { empty: median(empty), existing: median(existing) };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchStartup(Number(process.argv[2] ?? 5));
