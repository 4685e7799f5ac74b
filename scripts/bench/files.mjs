// Files benchmarks on the built server with the embedded default and local storage:
//   - a 250 MiB multipart upload: throughput on loopback and the server's peak RSS growth;
//   - the first 400-px WebP of a 12-megapixel JPEG through the image proxy, then cached repeats.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import sharp from 'sharp';

const root = path.resolve(import.meta.dirname, '../..');
const MiB = 1024 * 1024;

async function startServer(dataDir, port) {
  const child = spawn(process.execPath, [path.join(root, 'dist/server/src/main.js')], {
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(port),
      BASE_URL: `http://127.0.0.1:${port}`,
      DATABASE_URL: '',
      ADMIN_TOKEN: 'bench',
      LOG_LEVEL: 'silent',
      APP_ENV: 'local',
    },
    stdio: 'ignore',
  });
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
  return child;
}

const rssKiB = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);

async function setup(base) {
  const admin = (p, body) =>
    fetch(`${base}/admin/v1${p}`, {
      method: 'POST',
      headers: { Authorization: 'Bearer bench', 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    }).then((r) => r.json());
  await admin('/workspaces', { name: 'bench' });
  const user = await admin('/workspaces/bench/users', { email: 'bench@example.com', permissions: ['create-file', 'view-file'] });
  return (await admin('/workspaces/bench/api-keys', { name: 'bench', user_id: user.id, abilities: ['*'] })).key;
}

function multipartUpload(base, key, size) {
  const boundary = `----bench${Date.now()}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const chunk = randomBytes(MiB);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request(`${base}/api/v1/bench/files`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${key}`,
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        'Content-Length': head.length + size + tail.length,
      },
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, seconds: (performance.now() - started) / 1000 }));
    });
    req.on('error', reject);
    let sent = 0;
    const write = () => {
      req.write(head);
      const pump = () => {
        while (sent < size) {
          const n = Math.min(chunk.length, size - sent);
          sent += n;
          if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return req.once('drain', pump);
        }
        req.end(tail);
      };
      pump();
    };
    write();
  });
}

export async function benchFiles() {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'wsapi-bench-files-'));
  const port = 33_000 + Math.floor(Math.random() * 1000);
  const base = `http://127.0.0.1:${port}`;
  const server = await startServer(dataDir, port);
  try {
    const key = await setup(base);
    // Upload: 250 MiB, peak RSS sampled every 10 ms.
    const size = 250 * MiB;
    const baseline = rssKiB(server.pid);
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, rssKiB(server.pid))), 10);
    const up = await multipartUpload(base, key, size);
    clearInterval(sampler);
    peak = Math.max(peak, rssKiB(server.pid));
    console.log(
      `upload 250 MiB multipart: HTTP ${up.status}, ${(size / MiB / up.seconds).toFixed(0)} MiB/s, peak RSS growth ${((peak - baseline) / 1024).toFixed(1)} MiB   targets >= 160 MiB/s, < 64 MiB`,
    );

    // Image: a 12-megapixel JPEG with real detail (noise), its first 400-px WebP, then repeats.
    const raw = randomBytes(4000 * 3000 * 3);
    const jpeg = await sharp(raw, { raw: { width: 4000, height: 3000, channels: 3 } })
      .blur(1.2)
      .jpeg({ quality: 85 })
      .toBuffer();
    const file = await fetch(`${base}/api/v1/bench/files`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ file: { name: 'photo.jpg', content: jpeg.toString('base64') } }),
    }).then((r) => r.json());
    const url = `${file.image_url}?width=400&format=webp`;
    const timed = async () => {
      const t = performance.now();
      const res = await fetch(url);
      await res.arrayBuffer();
      return { ms: performance.now() - t, status: res.status };
    };
    const first = await timed();
    const repeats = [];
    for (let i = 0; i < 20; i++) repeats.push((await timed()).ms);
    repeats.sort((a, b) => a - b);
    console.log(
      `image 12 MP JPEG (${(jpeg.length / MiB).toFixed(1)} MiB) -> 400 px WebP: first ${first.ms.toFixed(0)} ms (HTTP ${first.status}); cached median ${repeats[10].toFixed(1)} ms, max ${repeats[19].toFixed(1)} ms   targets < 150 ms, < 10 ms`,
    );
  } finally {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await benchFiles();
