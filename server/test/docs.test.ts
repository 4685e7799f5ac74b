// The documentation names only what exists. For README.md and every Markdown page of docs/, outside
// fenced code blocks:
//   - every repository path in backticks or in a link (`server/src/db/database.ts`, `scripts/…`,
//     `prisma/migrations/…`, a relative link between pages) exists; a path that does not exist
//     from the repository root is looked up under server/src/ too (`core/content/store.ts`), and
//     a bare file name (`render-tree.ts`) must be the name of some file of the repository;
//   - a link's `#anchor` into a Markdown page names one of that page's headings;
//   - every function named with parentheses (`withoutStatementTimeout()`) occurs in the code
//     (server/src, sdk/src, scripts, prisma/schema.sql, prisma/migrations);
//   - a name put next to its file (`lib/fresh-json.ts` `filledBytes`, `orItems` in `compile.ts`)
//     occurs in that file;
//   - every page of docs/ can be reached by links from README.md.
// A failure lists every missing name with the page that names it.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');
const serverSrc = path.join(root, 'server/src');

/** Prefixes of paths that name something in the repository. */
const ROOTS = ['server/', 'sdk/', 'scripts/', 'prisma/', 'openapi/', 'docs/', 'examples/', '.ci/'];
/** Extensions of file names worth checking when they stand alone (`app.ts`). */
const FILE_NAME = /^[\w.-]+\.(?:ts|mts|mjs|cjs|sql|prisma|yaml)$/; // not `.js`: `decimal.js` is a package
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const SKIPPED_DIRS = new Set(['node_modules', 'dist', 'generated', '.git', '.cache', 'data']);

function walk(dir: string, keep: (file: string) => boolean, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  if (statSync(dir).isFile()) return keep(dir) ? [...out, dir] : out;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED_DIRS.has(entry.name)) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, keep, out);
    else if (keep(full)) out.push(full);
  }
  return out;
}

/** README.md and the pages of docs/, relative to the repository root. */
function markdownPages(): string[] {
  const docs = walk(path.join(root, 'docs'), (f) => f.endsWith('.md')).map((f) => path.relative(root, f));
  return ['README.md', ...docs.sort()];
}

/** The page without its fenced code blocks (shell and TypeScript there are checked by readme.test.ts). */
function prose(text: string): string {
  return text.replace(/^ *(```|~~~)[^\n]*\n[\s\S]*?^ *\1[^\n]*$/gm, '');
}

/** GitHub's anchor of a heading: the guide page's rule (scripts/docs-guide.mjs), loaded before the tests. */
let slug: (heading: string) => string;
beforeAll(async () => ({ slug } = await import('../../scripts/docs-guide.mjs')));

function anchors(file: string): Set<string> {
  const text = prose(readFileSync(file, 'utf8'));
  return new Set([...text.matchAll(/^#{1,6} +(.+)$/gm)].map((m) => slug(m[1])));
}

/** Every file name of the repository's own sources (for a bare `render-tree.ts`). */
let fileNames: Set<string> | undefined;
function knownFileName(name: string): boolean {
  fileNames ??= new Set(
    [root, ...['server', 'sdk', 'scripts', 'prisma', 'openapi', 'examples', '.ci'].map((d) => path.join(root, d))]
      .flatMap((d, i) => (i === 0 ? readdirSync(d).map((f) => path.join(d, f)) : walk(d, () => true)))
      .map((f) => path.basename(f)),
  );
  return fileNames.has(name);
}

/** The identifiers of the code a function name may be defined or used in. */
let codeWords: Set<string> | undefined;
function inCode(name: string): boolean {
  codeWords ??= new Set(
    ['server/src', 'sdk/src', 'scripts', 'prisma/schema.sql', 'prisma/migrations']
      .flatMap((d) => walk(path.join(root, d), (f) => /\.(?:ts|mts|mjs|cjs|js|sql)$/.test(f)))
      .flatMap((f) => readFileSync(f, 'utf8').match(/[A-Za-z_$][\w$]*/g) ?? []),
  );
  return codeWords.has(name);
}

/** The files a path in the docs names: from the root, else under server/src/, else by file name. */
function resolvePath(name: string, from: string): string[] {
  const clean = name.replace(/\/\*{1,2}$/, '/').replace(/^\.\//, '');
  const candidates = [path.join(root, clean), path.join(serverSrc, clean)];
  if (from !== root) candidates.unshift(path.join(from, clean));
  const found = candidates.filter((c) => existsSync(c));
  if (found.length || clean.includes('/')) return found;
  return walk(root, (f) => path.basename(f) === clean);
}

/** Does this text in backticks look like a repository path we should find? */
function looksLikePath(code: string): boolean {
  if (/[\s<>{}$…*?=:@]|\.\.\./.test(code.replace(/\/\*{1,2}$/, ''))) return false;
  if (code.startsWith('/')) return false; // a URL path
  const clean = code.replace(/^\.\//, '');
  if (ROOTS.some((r) => clean.startsWith(r))) return true;
  const first = clean.split('/')[0];
  if (clean.includes('/') && existsSync(path.join(serverSrc, first)) && statSync(path.join(serverSrc, first)).isDirectory()) return true;
  return FILE_NAME.test(clean) || (clean.includes('/') && /\.(?:ts|mjs|cjs|js|md|sql|prisma)$/.test(clean));
}

interface Problem {
  page: string;
  problem: string;
}

/** What a page names that does not exist. `page` is relative to the root; `text`, its content. */
function checkPage(page: string, text: string): { problems: Problem[]; checked: number } {
  const problems: Problem[] = [];
  const dir = path.dirname(path.join(root, page));
  const body = prose(text);
  let checked = 0;
  const missing = (problem: string) => problems.push({ page, problem });

  // Paths in backticks.
  for (const [, code] of body.matchAll(/`([^`\n]+)`/g)) {
    if (!looksLikePath(code)) continue;
    checked++;
    const found = code.includes('/') || !FILE_NAME.test(code) ? resolvePath(code, root) : knownFileName(code) ? ['ok'] : [];
    if (!found.length) missing(`path \`${code}\``);
  }

  // Links (relative ones: to a page, a file or a folder, with an optional #anchor).
  for (const [, target] of body.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
    checked++;
    const [file, anchor] = target.split('#');
    const resolved = file ? path.resolve(dir, file) : path.join(root, page);
    if (!existsSync(resolved)) {
      missing(`link (${target})`);
      continue;
    }
    if (anchor !== undefined && resolved.endsWith('.md') && !anchors(resolved).has(anchor)) missing(`link anchor (${target})`);
  }

  // Functions named with parentheses: `withoutStatementTimeout()`, `Operations.check()`.
  for (const [, name] of body.matchAll(/`([A-Za-z_$][\w$.]*)\(\)`/g)) {
    checked++;
    const last = name.split('.').pop()!;
    if (!inCode(last)) missing(`function \`${name}()\``);
  }

  // A name beside its file: `lib/fresh-json.ts` `filledBytes`, `orItems` in `compile.ts`.
  const pairs = [
    ...[...body.matchAll(/`([^`\s]+\.(?:ts|mjs|cjs|js))` +`([A-Za-z_$][\w$]*)(?:\(\))?`/g)].map((m) => ({ file: m[1], name: m[2] })),
    ...[...body.matchAll(/`([A-Za-z_$][\w$]*)(?:\(\))?` in `([^`\s]+\.(?:ts|mjs|cjs|js))`/g)].map((m) => ({ file: m[2], name: m[1] })),
  ];
  for (const { file, name } of pairs) {
    if (!IDENTIFIER.test(name)) continue;
    checked++;
    const files = resolvePath(file, root).filter((f) => statSync(f).isFile());
    if (!files.length) continue; // reported as a path above
    if (!files.some((f) => new RegExp(`(?<![\\w$])${name.replace(/\$/g, '\\$')}(?![\\w$])`).test(readFileSync(f, 'utf8'))))
      missing(`\`${name}\` in \`${file}\``);
  }
  return { problems, checked };
}

/** The pages linked from a page (relative to the root). */
function linkedPages(page: string): string[] {
  const dir = path.dirname(path.join(root, page));
  return [...prose(readFileSync(path.join(root, page), 'utf8')).matchAll(/\]\(([^)\s#]+)(?:#[^)\s]*)?\)/g)]
    .map((m) => m[1])
    .filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t))
    .map((t) => path.resolve(dir, t))
    .map((t) => (existsSync(t) && statSync(t).isDirectory() ? path.join(t, 'README.md') : t))
    .filter((t) => t.endsWith('.md') && existsSync(t))
    .map((t) => path.relative(root, t));
}

const report = (problems: Problem[]) => problems.map((p) => `${p.page}: ${p.problem}`).join('\n  ');

it('names only paths, functions and anchors that exist', () => {
  const pages = markdownPages();
  expect(pages.length).toBeGreaterThan(10);
  let checked = 0;
  const problems: Problem[] = [];
  for (const page of pages) {
    const result = checkPage(page, readFileSync(path.join(root, page), 'utf8'));
    checked += result.checked;
    problems.push(...result.problems);
  }
  if (problems.length) throw new Error(`the docs name ${problems.length} things that do not exist:\n  ${report(problems)}`);
  // The checks found what they look for (a broken pattern would pass on nothing).
  expect(checked).toBeGreaterThan(300);
});

it('links every page of docs/ from README.md, directly or through other pages', () => {
  const seen = new Set<string>(['README.md']);
  const queue = ['README.md'];
  while (queue.length)
    for (const next of linkedPages(queue.shift()!)) if (!seen.has(next) && (seen.add(next), next.startsWith('docs/'))) queue.push(next);
  expect(markdownPages().filter((p) => !seen.has(p))).toEqual([]);
});

it('reports a wrong path, link, anchor or function with its page', () => {
  const text = [
    'See `server/src/db/database.ts`, `core/content/store.ts`, `render-tree.ts` and `withoutStatementTimeout()`.',
    'Wrong: `server/src/db/nowhere.ts`, `core/contents/store.ts`, `render-trees.ts`, `withoutStatementTimeouts()`,',
    '[a page](docs/nowhere.md), [an anchor](README.md#no-such-heading), `lib/fresh-json.ts` `noSuchName`.',
    '```sh\nnode scripts/not-checked-in-code-blocks.mjs `server/src/not/checked.ts`\n```',
  ].join('\n');
  expect(checkPage('README.md', text).problems.map((p) => `${p.page}: ${p.problem}`)).toEqual([
    'README.md: path `server/src/db/nowhere.ts`',
    'README.md: path `core/contents/store.ts`',
    'README.md: path `render-trees.ts`',
    'README.md: link (docs/nowhere.md)',
    'README.md: link anchor (README.md#no-such-heading)',
    'README.md: function `withoutStatementTimeouts()`',
    'README.md: `noSuchName` in `lib/fresh-json.ts`',
  ]);
});
