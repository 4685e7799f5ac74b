#!/usr/bin/env node
// The guide (GET /docs/guide): the README, docs/, CONTRIBUTING.md and the SDK's README rendered into one
// self-contained HTML page beside the API reference (GET /docs), so an operator reads the same
// pages the repository shows, from the running server, with no network.
//
// Pages come in the order the README and docs/README.md link them, then any page of docs/ no link
// reached. A link to a page becomes a link into the page's section (`#docs-operations`), a heading
// anchor one into its heading (`#docs-operations--backups`); a link to a source file or folder
// keeps its text and names the path in its title. `npm run build` writes dist/docs/guide.html;
// server/test/docs.test.ts checks that every link on the page lands on an element of it.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Marked } from 'marked';

const START = ['README.md', 'docs/README.md', 'CONTRIBUTING.md'];
const EXTERNAL = /^[a-z][a-z0-9+.-]*:/i;

/** GitHub's anchor of a heading (the one rule the repository's links and this page share). */
export function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/`/g, '')
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The id of a page's section: its path without `.md`, `/` as `-`. */
const pageId = (page) => page.replace(/\.md$/, '').replace(/[^A-Za-z0-9]+/g, '-');

/** A page's Markdown, read once for the link walk, its title and its rendering. */
const texts = new Map();
const textOf = (root, page) => {
  const file = path.join(root, page);
  if (!texts.has(file)) texts.set(file, readFileSync(file, 'utf8'));
  return texts.get(file);
};

const escapeHtml = (text) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The Markdown links of a page (not those inside code), as repository paths with their anchors. */
function linksOf(root, page) {
  const text = textOf(root, page).replace(/^ *(```|~~~)[^\n]*\n[\s\S]*?^ *\1[^\n]*$/gm, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((href) => !EXTERNAL.test(href) && !href.startsWith('#'));
}

const resolveFrom = (page, href) => path.posix.normalize(path.posix.join(path.posix.dirname(page), href.split('#')[0]));

/** The pages of the guide, in reading order. */
export function guidePages(root) {
  const pages = [];
  const queue = [...START];
  while (queue.length) {
    const page = queue.shift();
    if (pages.includes(page) || !existsSync(path.join(root, page))) continue;
    pages.push(page);
    for (const href of linksOf(root, page)) {
      const target = resolveFrom(page, href);
      if (target.endsWith('.md') && !target.startsWith('..')) queue.push(target);
    }
  }
  const walk = (dir) =>
    readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((d) =>
      d.isDirectory() ? walk(`${dir}/${d.name}`) : d.name.endsWith('.md') ? [`${dir}/${d.name}`] : [],
    );
  for (const page of walk('docs').sort()) if (!pages.includes(page)) pages.push(page);
  return pages;
}

/** One page's HTML section; its headings and links point within the guide. */
function renderPage(root, page, pages) {
  const id = pageId(page);
  const seen = new Map(); // a repeated heading's anchor gets `-1`, `-2`, as on GitHub
  const marked = new Marked({
    gfm: true,
    renderer: {
      heading({ tokens, depth, text }) {
        const base = slug(text);
        const n = seen.get(base) ?? 0;
        seen.set(base, n + 1);
        return `<h${depth} id="${id}--${escapeHtml(n ? `${base}-${n}` : base)}">${this.parser.parseInline(tokens)}</h${depth}>\n`;
      },
      link({ href, title, tokens }) {
        const inner = this.parser.parseInline(tokens);
        const titled = title ? ` title="${escapeHtml(title)}"` : '';
        if (EXTERNAL.test(href)) return `<a href="${escapeHtml(href)}"${titled}>${inner}</a>`;
        const [file, anchor] = href.split('#');
        const target = file === '' ? page : resolveFrom(page, file);
        if (!pages.includes(target)) return `<span class="path" title="${escapeHtml(target)}">${inner}</span>`;
        const at = anchor === undefined ? pageId(target) : `${pageId(target)}--${anchor}`;
        return `<a href="#${escapeHtml(at)}"${titled}>${inner}</a>`;
      },
    },
  });
  return `<section id="${id}" data-page="${escapeHtml(page)}">\n${marked.parse(textOf(root, page))}</section>`;
}

const titleOf = (root, page) => /^# +(.+)$/m.exec(textOf(root, page))?.[1].replace(/`/g, '') ?? page;

const STYLE = `
body { margin: 0; font: 16px/1.55 system-ui, sans-serif; color: #1d2330; display: flex; }
nav { position: sticky; top: 0; height: 100vh; overflow-y: auto; width: 18rem; flex: none; padding: 1rem; box-sizing: border-box;
  background: #f4f5f7; border-right: 1px solid #dde1e6; font-size: 14px; }
nav a { display: block; padding: 2px 0; color: #1d2330; text-decoration: none; }
nav a:hover { text-decoration: underline; }
nav .api { font-weight: 600; margin-bottom: 0.75rem; }
main { max-width: 52rem; padding: 1rem 2.5rem 6rem; min-width: 0; }
section { border-bottom: 1px solid #dde1e6; padding-bottom: 2rem; }
pre { background: #f4f5f7; padding: 0.75rem; overflow-x: auto; }
code { font: 14px ui-monospace, monospace; }
table { border-collapse: collapse; } th, td { border: 1px solid #dde1e6; padding: 4px 8px; text-align: left; }
.path { border-bottom: 1px dotted #8a93a3; }
`;

/** The whole guide page. */
export function renderGuide(root) {
  const pages = guidePages(root);
  const nav = pages.map((page) => `<a href="#${pageId(page)}">${escapeHtml(titleOf(root, page))}</a>`).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Workspace API guide</title>
<style>${STYLE}</style>
</head>
<body>
<nav><a class="api" href="/docs">API reference</a>
${nav}
</nav>
<main>
${pages.map((page) => renderPage(root, page, pages)).join('\n')}
</main>
</body>
</html>
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = path.resolve(import.meta.dirname, '..');
  writeFileSync(path.join(root, 'dist/docs/guide.html'), renderGuide(root));
}
