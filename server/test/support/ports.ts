// Free ports, kept apart from server.ts so that jest's global setup can use them without
// loading the server.
import net from 'node:net';

/** A port nothing listens on now (so that BASE_URL and the image proxy's URLs are real). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
