// A webhook receiver on loopback that records every request and answers as the test says.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: any;
  at: number;
}

/** What to answer: a status, or 'hang' (never answer). Called with the request's index. */
export type Responder = (index: number, req: Received) => number | 'hang';

export interface Receiver {
  url: string;
  requests: Received[];
  respond: Responder;
  /** Resolves when at least `n` requests have arrived. */
  waitFor(n: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(respond: Responder = () => 200): Promise<Receiver> {
  const requests: Received[] = [];
  const hanging: http.ServerResponse[] = [];
  const receiver = { respond } as Receiver;
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const rec: Received = { headers: req.headers, raw, body: raw ? JSON.parse(raw) : undefined, at: Date.now() };
      const index = requests.push(rec) - 1;
      const answer = receiver.respond(index, rec);
      if (answer === 'hang') {
        hanging.push(res);
        return;
      }
      res.statusCode = answer;
      res.end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.requests = requests;
  receiver.waitFor = async (n, timeoutMs = 15_000) => {
    const deadline = Date.now() + timeoutMs;
    while (requests.length < n) {
      if (Date.now() > deadline) throw new Error(`receiver got ${requests.length} of ${n} requests`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return requests;
  };
  receiver.close = async () => {
    hanging.forEach((r) => r.destroy());
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return receiver;
}

/** Polls `fn` until it returns a truthy value. */
export async function eventually<T>(fn: () => Promise<T | undefined | false>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
