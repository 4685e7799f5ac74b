// The guide at GET /docs/guide (scripts/docs-guide.mjs): every Markdown page of the repository's
// documentation rendered into one page served by the real server, whose every link lands on an
// element of the page, beside the API reference it links to.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { client } from './support/http';
import { startTestServer, type TestServer } from './support/server';

const root = path.resolve(__dirname, '../..');

/** Every page the guide must hold: the README, CONTRIBUTING.md, the SDK's README and docs/. */
function expectedPages(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((d) =>
      d.isDirectory() ? walk(`${dir}/${d.name}`) : d.name.endsWith('.md') ? [`${dir}/${d.name}`] : [],
    );
  return ['README.md', 'CONTRIBUTING.md', 'sdk/README.md', ...walk('docs')].sort();
}

const all = (html: string, pattern: RegExp) => [...html.matchAll(pattern)].map((m) => m[1]);

let s: TestServer;
let html: string;

beforeAll(async () => {
  s = await startTestServer();
  const res = await client(s.url).get('/docs/guide', { headers: { Accept: 'text/html' } });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
  html = res.text;
});
afterAll(() => s?.close());

it('is one HTML page holding every documentation page, in a section of its own', () => {
  expect(html).toMatch(/^<!doctype html>/i);
  expect(all(html, /<section id="[^"]+" data-page="([^"]+)">/g).sort()).toEqual(expectedPages());
  // Each page's own first heading is there, rendered.
  for (const page of expectedPages()) {
    const title = /^# +(.+)$/m
      .exec(readFileSync(path.join(root, page), 'utf8'))![1]
      .replace(/'/g, '&#39;')
      .replace(/`([^`]*)`/g, '<code>$1</code>');
    expect({ page, rendered: html.includes(`>${title}</h1>`) }).toEqual({ page, rendered: true });
  }
});

it('keeps every link within the page, and links back to the API reference', () => {
  const ids = all(html, / id="([^"]+)"/g);
  expect(new Set(ids).size).toBe(ids.length);
  const targets = all(html, / href="#([^"]*)"/g);
  expect(targets.length).toBeGreaterThan(150);
  expect(targets.filter((t) => !ids.includes(t))).toEqual([]);
  // No link is left pointing at a Markdown file or a relative path the server does not serve.
  const others = all(html, / href="([^#][^"]*)"/g);
  expect(others.filter((href) => !/^(https?:|mailto:)/.test(href) && href !== '/docs')).toEqual([]);
  expect(others).toContain('/docs');
  // A link to a source file keeps its text and names the path, which exists.
  const paths = all(html, /<span class="path" title="([^"]+)">/g);
  expect(paths.length).toBeGreaterThan(0);
  expect(paths.filter((p) => !existsSync(path.join(root, p)))).toEqual([]);
});

it('a page link lands on the page, a heading link on the heading', () => {
  // docs/README.md links "Configuration" (a page) and the README links "Decisions" (a heading).
  expect(html).toContain('<a href="#docs-configuration">Configuration</a>');
  expect(html).toContain('<a href="#docs-README--decisions">Decisions</a>');
  expect(html).toContain('<h2 id="docs-README--decisions">Decisions</h2>');
});

it('is linked from the API reference, whose document points to it', async () => {
  const doc = (await client(s.url).get<{ info: { description: string } }>('/openapi.json')).body;
  expect(doc.info.description).toContain('[guide](/docs/guide)');
});
