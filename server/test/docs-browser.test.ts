// The rendered API reference (GET /docs) in real headless Chromium, with no internet: every
// request to a host other than the test server is blocked and recorded, and must not happen;
// Redoc must render the spec (title, sidebar, operations) without console errors.
// Skipped in embedded mode and without Chromium (see support/browser.ts). Set
// DOCS_SCREENSHOT_DIR to keep the screenshots.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { describeWithBrowser, isLocalUrl, launchChromium } from './support/browser';
import { client } from './support/http';
import { startTestServer, type TestServer } from './support/server';

interface Spec {
  info: { title: string };
  tags: { name: string; 'x-displayName'?: string }[];
  paths: Record<string, Record<string, { summary?: string; tags?: string[]; responses: Record<string, unknown> }>>;
}

const VIEWPORT = { width: 1280, height: 800 };
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describeWithBrowser('the API reference at /docs in Chromium, offline', () => {
  let s: TestServer;
  let spec: Spec;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let shotDir: string;
  /** Requests to any host but the test server's, all blocked. */
  const external: string[] = [];
  /** Console errors and uncaught exceptions, less the expected ones (see below). */
  const errors: string[] = [];
  /** Failed or unsuccessful requests to the test server (the favicon aside). */
  const localFailures: string[] = [];

  const isFavicon = (url: string) => URL.canParse(url) && new URL(url).pathname === '/favicon.ico';
  const menu = () => page.locator('[data-component-name="Menu/Menu"]');
  // Redoc's headings hold a "link to …" anchor besides their text: match the text alone.
  const heading = (text: string, p = page) => p.locator('h1, h2, h3').filter({ hasText: new RegExp(`^\\s*${escapeRegExp(text)}\\s*$`) });

  /** Opens an operation from the sidebar: expands its tag when needed, then clicks it. */
  async function showOperation(tagLabel: string, summary: string): Promise<boolean> {
    const item = menu().getByText(summary, { exact: true });
    // A click on a tag navigates to it and toggles its group: at most two are needed.
    for (let i = 0; i < 2 && !(await item.isVisible()); i++) {
      await menu().getByText(tagLabel, { exact: true }).click();
      await item.waitFor({ state: 'visible', timeout: 2_000 }).catch(() => {});
    }
    if (!(await item.isVisible())) return false;
    await item.click();
    return true;
  }

  beforeAll(async () => {
    s = await startTestServer();
    spec = (await client(s.url).get<Spec>('/openapi.json')).body;
    shotDir = process.env.DOCS_SCREENSHOT_DIR || mkdtempSync(path.join(tmpdir(), 'wsapi-docs-'));
    mkdirSync(shotDir, { recursive: true });

    browser = await launchChromium();
    context = await browser.newContext({ viewport: VIEWPORT, serviceWorkers: 'block' });
    await context.route('**/*', (route) => {
      const request = route.request();
      if (isLocalUrl(request.url())) return route.continue();
      external.push(`${request.method()} ${request.url()} (${request.resourceType()})`);
      return route.abort('blockedbyclient');
    });
    // Listeners on the context cover every page the tests open.
    context.on('page', (p) =>
      p.on('websocket', (ws) => {
        if (!isLocalUrl(ws.url())) external.push(`WebSocket ${ws.url()}`);
      }),
    );
    context.on('console', (msg) => {
      if (msg.type() !== 'error') return;
      const where = msg.location().url;
      // A missing favicon is not the page's fault; a blocked request is reported by its own test.
      if (isFavicon(where)) return;
      if (msg.text().startsWith('Failed to load resource') && !isLocalUrl(where)) return;
      errors.push(`console.error: ${msg.text()} (at ${where}:${msg.location().lineNumber})`);
    });
    context.on('weberror', (err) => errors.push(`uncaught: ${err.error().stack ?? err.error().message}`));
    context.on('requestfailed', (request) => {
      if (isLocalUrl(request.url()) && !isFavicon(request.url())) localFailures.push(`${request.url()}: ${request.failure()?.errorText}`);
    });
    context.on('response', (response) => {
      if (response.status() >= 400 && isLocalUrl(response.url()) && !isFavicon(response.url())) {
        localFailures.push(`${response.url()}: ${response.status()}`);
      }
    });
    page = await context.newPage();

    const response = await page.goto(`${s.url}/docs`, { waitUntil: 'load' });
    if (response?.status() !== 200) throw new Error(`GET /docs in the browser answered ${response?.status()}`);
    await page.locator('h1', { hasText: spec.info.title }).first().waitFor({ state: 'visible', timeout: 30_000 });
  });

  afterAll(async () => {
    await browser?.close();
    await s?.close();
    if (shotDir && !process.env.DOCS_SCREENSHOT_DIR) rmSync(shotDir, { recursive: true, force: true });
  });

  /**
   * A screenshot of the page once it is painted: under load (CI's other passes) Chromium could
   * capture a blank frame right after a jump to an operation, so a blank one is taken again, for
   * at most 5 s (a page that never paints still fails the check below).
   */
  async function screenshot(file: string) {
    const until = Date.now() + 5_000;
    for (;;) {
      await page.screenshot({ path: file });
      if (readFileSync(file).length > 20_000 || Date.now() > until) return;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /** Checks a PNG: signature, size of the viewport, and real content (not one flat colour). */
  async function expectNonTrivialPng(file: string) {
    const png = readFileSync(file);
    expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
    expect(png.toString('ascii', 12, 16)).toBe('IHDR');
    expect({ width: png.readUInt32BE(16), height: png.readUInt32BE(20) }).toEqual(VIEWPORT);
    // A blank 1280x800 page is about 5 KB.
    expect(png.length).toBeGreaterThan(20_000);
    // Decode it in the browser and count colours: text, code blocks and the sidebar give hundreds.
    const scratch = await context.newPage();
    try {
      const colours = await scratch.evaluate(
        async (dataUrl) => {
          const img = new Image();
          img.src = dataUrl;
          await img.decode();
          const canvas = document.createElement('canvas');
          canvas.width = img.width;
          canvas.height = img.height;
          const ctx = canvas.getContext('2d')!;
          ctx.drawImage(img, 0, 0);
          const data = ctx.getImageData(0, 0, img.width, img.height).data;
          const seen = new Set<number>();
          for (let i = 0; i < data.length; i += 4) seen.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
          return seen.size;
        },
        `data:image/png;base64,${png.toString('base64')}`,
      );
      expect(colours).toBeGreaterThan(32);
    } finally {
      await scratch.close();
    }
  }

  it('GET /docs is an HTML page', async () => {
    const res = await client(s.url).get('/docs', { headers: { Accept: 'text/html' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html\b/);
    expect(res.text).toMatch(/^<!DOCTYPE html>/i);
  });

  it("has the API's title", async () => {
    expect(await page.title()).toBe(spec.info.title);
    expect(await page.locator('h1').first().innerText()).toContain(spec.info.title);
  });

  it('lists every tag of the spec in the sidebar', async () => {
    expect(spec.tags.length).toBeGreaterThan(0);
    for (const tag of spec.tags) {
      const label = menu().getByText(tag['x-displayName'] ?? tag.name, { exact: true });
      expect({ tag: tag.name, visible: await label.isVisible() }).toEqual({ tag: tag.name, visible: true });
    }
  });

  it('renders the landing page (screenshot)', async () => {
    const file = path.join(shotDir, 'docs-landing.png');
    await screenshot(file);
    await expectNonTrivialPng(file);
  });

  it('renders "Create a workspace" with its path and responses', async () => {
    expect(await showOperation('Workspaces', 'Create a workspace')).toBe(true);
    const title = heading('Create a workspace').first();
    await title.waitFor({ state: 'visible' });
    expect(page.url()).toMatch(/\/docs#\//);
    // The operation's section: the nearest ancestor of its heading that has its responses too.
    const section = title.locator('xpath=ancestor::*[.//*[normalize-space(text())="Responses"]][1]');
    expect(await section.getByText('/admin/v1/workspaces', { exact: true }).first().isVisible()).toBe(true);
    const text = await section.innerText();
    for (const code of Object.keys(spec.paths['/admin/v1/workspaces'].post.responses)) expect(text).toMatch(new RegExp(`\\b${code}\\b`));

    const file = path.join(shotDir, 'docs-create-workspace.png');
    await screenshot(file);
    await expectNonTrivialPng(file);
  });

  it('renders every operation of the spec, reached from its tag in the sidebar', async () => {
    const byTag = new Map<string, string[]>();
    for (const ops of Object.values(spec.paths)) {
      for (const op of Object.values(ops)) {
        if (!op.summary) continue;
        const tag = op.tags?.[0] ?? '';
        byTag.set(tag, [...(byTag.get(tag) ?? []), op.summary]);
      }
    }
    expect([...byTag.values()].flat()).toEqual(expect.arrayContaining(['Create a workspace', 'Inspect the calling API key']));

    const missing: string[] = [];
    for (const tag of spec.tags) {
      const summaries = byTag.get(tag.name) ?? [];
      if (!summaries.length) continue;
      for (const summary of summaries) {
        if (!(await showOperation(tag['x-displayName'] ?? tag.name, summary))) {
          missing.push(`${tag.name} / ${summary}: not in the sidebar`);
          continue;
        }
        try {
          await heading(summary).first().waitFor({ state: 'visible', timeout: 5_000 });
        } catch {
          missing.push(`${tag.name} / ${summary}: no visible heading after a click in the sidebar`);
        }
      }
    }
    expect(missing).toEqual([]);
  }, 120_000);

  it('opens a deep link to an operation', async () => {
    expect(await showOperation('API key', 'Inspect the calling API key')).toBe(true);
    const anchor = page.getByRole('link', { name: 'link to Inspect the calling API key', exact: true });
    await anchor.waitFor({ state: 'attached' });
    const target = await anchor.getAttribute('href');
    expect(target).toMatch(/^#\//);
    const fresh = await context.newPage();
    try {
      await fresh.goto(`${s.url}/docs${target}`);
      await heading('Inspect the calling API key', fresh).first().waitFor({ state: 'visible', timeout: 30_000 });
    } finally {
      await fresh.close();
    }
  });

  it('links to the guide, which renders every page and keeps its links within itself', async () => {
    const guide = await context.newPage();
    try {
      await page.goto(`${s.url}/docs`);
      await page.getByRole('link', { name: 'guide', exact: true }).first().click();
      await page.waitForURL(`${s.url}/docs/guide`);
      await guide.goto(`${s.url}/docs/guide#docs-architecture-modules--the-cores-context`);
      const section = guide.locator('#docs-architecture-modules--the-cores-context');
      await section.waitFor({ state: 'visible' });
      // Scrolled to the heading the link named.
      expect(await section.evaluate((h) => Math.abs(h.getBoundingClientRect().top) < 50)).toBe(true);
      // A link between pages moves within the page; the sidebar goes back to the reference.
      await guide.locator('nav a', { hasText: 'Operations' }).first().click();
      expect(guide.url()).toBe(`${s.url}/docs/guide#docs-operations`);
      await guide.locator('nav a.api').click();
      await guide.waitForURL(`${s.url}/docs`);
    } finally {
      await guide.close();
    }
  });

  // Last, so that they cover everything the tests above did in the page.
  it('requests nothing outside the test server (no CDN, no telemetry)', () => {
    expect(external).toEqual([]);
  });

  it('logs no console errors and throws no exceptions', () => {
    expect(errors).toEqual([]);
    expect(localFailures).toEqual([]);
  });
});
