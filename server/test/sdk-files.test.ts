// The SDK's file helpers against the real server.
import { Readable } from 'node:stream';
import { startTestServer, type TestServer } from './support/server';
import { setupWorkspace } from './support/fixtures';
import { contractFetch } from './support/contract';
import { createClient, refreshTemporaryUrls, uploadFile } from '../../sdk/src';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s.close());

const bytes = (n: number) => Uint8Array.from({ length: n }, (_v, i) => i % 251);

describe('uploadFile', () => {
  it.each([
    ['a Blob', () => new Blob([bytes(5000)], { type: 'application/octet-stream' })],
    ['a File', () => new File([bytes(5000)], 'named.bin')],
    ['bytes', () => bytes(5000)],
    ['a Node.js stream', () => Readable.from([bytes(2000), bytes(3000)])],
    ['a web stream', () => new Blob([bytes(5000)]).stream()],
  ])('uploads %s', async (_label, make) => {
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ['create-file', 'view-file'] });
    const api = createClient({ baseUrl: s.url, apiKey: key.key, fetch: contractFetch });
    const input = make();
    const { data, error, response } = await uploadFile(
      api,
      workspace.name,
      input as never,
      input instanceof File ? {} : { name: 'data.bin' },
    );
    expect(error).toBeUndefined();
    expect(response.status).toBe(201);
    expect(data).toMatchObject({ name: input instanceof File ? 'named.bin' : 'data.bin', size: 5000 });
    const download = new Uint8Array(await (await fetch(data!.download_url)).arrayBuffer());
    const expected = input instanceof Readable ? Buffer.concat([bytes(2000), bytes(3000)]) : Buffer.from(bytes(5000));
    expect(Buffer.from(download).equals(expected)).toBe(true);
  });

  it('returns the API error of a rejected upload', async () => {
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ['create-file'] });
    const api = createClient({ baseUrl: s.url, apiKey: key.key, fetch: contractFetch });
    const { error, response } = await uploadFile(api, workspace.name, new Uint8Array(0), { name: 'empty.txt' });
    expect(response.status).toBe(422);
    expect(error).toEqual({ message: 'The file must not be empty.', errors: { file: ['The file must not be empty.'] } });
  });
});

describe('refreshTemporaryUrls', () => {
  it('keeps fresh URLs and fetches new ones when they expire soon', async () => {
    const { workspace, key } = await setupWorkspace(s.admin, { permissions: ['create-file', 'view-file'] });
    const api = createClient({ baseUrl: s.url, apiKey: key.key, fetch: contractFetch });
    const { data: file } = await uploadFile(api, workspace.name, bytes(10), { name: 'a.bin' });
    expect(await refreshTemporaryUrls(api, workspace.name, file!)).toBe(file);
    const later = new Date(Date.parse(file!.temporary_url_expires_at!) - 30_000);
    const refreshed = await refreshTemporaryUrls(api, workspace.name, file!, { now: later, expiresIn: 120 });
    expect(refreshed).not.toBe(file);
    expect(refreshed.id).toBe(file!.id);
    expect(Date.parse(refreshed.temporary_url_expires_at!) - Date.now()).toBeLessThanOrEqual(121_000);
  });
});
