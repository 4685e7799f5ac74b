// Answers given before the request body was read (a refused upload: no key, a wrong type, too
// large) close the connection, since what remains of the body cannot be told from a next request.
// Closed at once, the socket would be reset by the kernel as soon as more of the body arrives, and
// a client still writing (Node's fetch, the SDK) fails with EPIPE before it reads the answer.
// So the close lingers, as nginx's `lingering_close` does: the answer and a FIN go out, the rest
// of the body is read and dropped, and the socket is destroyed once the client is done, after
// `LINGER_MS`, or once it sent more than the route would ever have read.
import type { Socket } from 'node:net';
import type { Context } from 'koa';

/** How long a refused client may go on sending before its connection is dropped. */
export const LINGER_MS = 5_000;
/** The bytes read after the answer at most, when the route's own limit is not known (no route matched). */
const DEFAULT_LINGER_BYTES = 65_536;

/** After an answer sent with the request body unread: `Connection: close`, closed lingering. */
export function closeAfterUnreadBody(ctx: Context): void {
  if (ctx.req.complete) return;
  ctx.set('Connection', 'close');
  // No socket left (the client went away, or the request was aborted): nothing to linger on.
  const socket = ctx.req.socket as Socket | null;
  if (socket && !socket.destroyed) lingerOnClose(socket, (ctx.state.bodyLimit as number | undefined) ?? DEFAULT_LINGER_BYTES);
}

/** How often a lingering socket's bytes are counted (Node's parser reads the socket without 'data' events). */
const CHECK_MS = 10;

function lingerOnClose(socket: Socket, maxBytes: number): void {
  // Node's HTTP server ends a `Connection: close` answer with `destroySoon()`: end, then destroy
  // when the FIN is written. Here it ends, then reads until the client ends or a bound is hit.
  socket.destroySoon = function lingering(this: Socket) {
    const start = this.bytesRead;
    const until = Date.now() + LINGER_MS;
    const check = setInterval(() => {
      if (Date.now() >= until || this.bytesRead - start > maxBytes) this.destroy();
    }, CHECK_MS);
    this.once('end', () => this.destroy());
    this.once('close', () => clearInterval(check));
    this.end();
    this.resume();
  };
}
