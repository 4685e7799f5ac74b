// Fuzz requests go over node:http with one keep-alive connection, the way real clients talk to
// the server, and exactly as built: the path and query are sent as raw text (no URL
// normalisation), bodies with a declared length or chunked.
import http from 'node:http';

export interface Sent {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

export class ConnectionReset extends Error {
  constructor(override readonly cause: Error) {
    super(`the server reset a kept-alive connection: ${cause.message}`);
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms).unref());

/** Idle keep-alive connections are dropped well before the server's own timeout (5 s). */
const MAX_IDLE_MS = 2_000;

export class Sender {
  private agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private lastAnswer = 0;

  constructor(private readonly base: URL) {}

  /**
   * Sends a request. Throws ConnectionReset when the connection the previous answer left open
   * (it said `Connection: keep-alive`) turned out to be dead; the caller retries with `fresh`.
   */
  async send(
    method: string,
    pathAndQuery: string,
    headers: Record<string, string>,
    body: Buffer | undefined,
    chunked: boolean,
    fresh = false,
  ): Promise<Sent> {
    if (fresh || Date.now() - this.lastAnswer > MAX_IDLE_MS) {
      this.agent.destroy();
      this.agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    }
    const all: Record<string, string> = { ...headers };
    if (body !== undefined && !chunked) all['Content-Length'] = String(body.length);
    // Node's client frames GET/DELETE bodies as chunked only when told to.
    if (body !== undefined && chunked) all['Transfer-Encoding'] = 'chunked';
    return new Promise<Sent>((resolve, reject) => {
      let answered = false;
      const req = http.request({
        host: this.base.hostname,
        port: this.base.port,
        method,
        path: pathAndQuery,
        headers: all,
        agent: this.agent,
      });
      req.setTimeout(60_000, () => req.destroy(new Error('no answer within 60 s')));
      req.on('response', (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          this.lastAnswer = Date.now();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') });
        });
        res.on('error', reject);
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        // An answer came before the body was written in full (413, say): the write error that
        // follows is expected.
        if (answered) return;
        if (req.reusedSocket && ['ECONNRESET', 'EPIPE'].includes(err.code ?? '')) reject(new ConnectionReset(err));
        else reject(err);
      });
      if (body !== undefined) {
        if (chunked) req.write(body);
        req.end(chunked ? undefined : body);
      } else req.end();
    });
  }

  /**
   * Whether the kept-alive connection still answers: a cheap GET on it. Returns why not, or
   * undefined. A server that answered without reading the whole body and kept the connection
   * open leaves it dead, and the next request of any client that reuses it hangs or fails.
   *
   * Not a race against a fixed timeout: when the GET is slow, the same GET on a new connection
   * decides. A live connection answers about when the new one does (a busy machine slows both);
   * a dead one never does.
   */
  async checkConnection(path: string, patienceMs = 1_000): Promise<string | undefined> {
    const old = this.get(path, this.agent);
    const first = await Promise.race([old.done, sleep(patienceMs).then(() => 'slow' as const)]);
    if (first === undefined) {
      this.lastAnswer = Date.now();
      return undefined;
    }
    let why: string | undefined = first === 'slow' ? undefined : first;
    if (first === 'slow') {
      const freshAgent = new http.Agent({ keepAlive: false });
      const fresh = this.get(path, freshAgent);
      const freshResult = await Promise.race([fresh.done, sleep(30_000).then(() => 'no answer within 30 s')]);
      fresh.abort();
      freshAgent.destroy();
      if (freshResult !== undefined)
        why = undefined; // The server itself is not answering: nothing to say about the connection.
      else {
        const late = await Promise.race([old.done, sleep(500).then(() => 'slow' as const)]);
        if (late === undefined) {
          this.lastAnswer = Date.now();
          return undefined;
        }
        why = late === 'slow' ? `a GET ${path} on it got no answer, while the same GET on a new connection did` : late;
      }
    }
    old.abort();
    this.agent.destroy();
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    return why;
  }

  /** A GET whose `done` resolves with undefined on an answer, or why it failed. */
  private get(path: string, agent: http.Agent): { done: Promise<string | undefined>; abort: () => void } {
    let req: http.ClientRequest | undefined;
    const done = new Promise<string | undefined>((resolve) => {
      req = http.request({ host: this.base.hostname, port: this.base.port, method: 'GET', path, agent });
      req.on('response', (res) => {
        res.resume();
        res.on('end', () => resolve(undefined));
        res.on('error', (err) => resolve(`a GET ${path} on it failed: ${err.message}`));
      });
      req.on('error', (err: NodeJS.ErrnoException) => resolve(`a GET ${path} on it failed: ${err.code ?? ''} ${err.message}`));
      req.end();
    });
    return { done, abort: () => req?.destroy() };
  }

  close(): void {
    this.agent.destroy();
  }
}
