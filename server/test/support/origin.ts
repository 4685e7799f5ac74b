// An HTTP origin on loopback for `http.request` steps: it records every request and answers as
// the test's handler says (any status, headers and body, after a delay, or never).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OriginRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: any;
}

export type OriginAnswer = { status?: number; headers?: Record<string, string>; body?: unknown } | 'hang';
export type OriginHandler = (req: OriginRequest, index: number) => OriginAnswer | Promise<OriginAnswer>;

export interface Origin {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  origin: string;
  requests: OriginRequest[];
  handle: OriginHandler;
  close(): Promise<void>;
}

export async function startOrigin(handle: OriginHandler = () => ({ status: 200, body: { ok: true } })): Promise<Origin> {
  const requests: OriginRequest[] = [];
  const hanging: http.ServerResponse[] = [];
  const origin = { requests, handle } as Origin;
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', async () => {
      let body: unknown = raw;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        /* text */
      }
      const rec: OriginRequest = { method: req.method!, path: req.url!, headers: req.headers, raw, body };
      const index = requests.push(rec) - 1;
      const answer = await origin.handle(rec, index);
      if (answer === 'hang') return void hanging.push(res);
      res.writeHead(answer.status ?? 200, { 'Content-Type': 'application/json', ...answer.headers });
      res.end(answer.body === undefined ? '' : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  origin.close = async () => {
    hanging.forEach((r) => r.destroy());
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return origin;
}
