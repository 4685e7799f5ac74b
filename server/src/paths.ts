// Locations of the project's files, the same whether the server runs from src/ (tests) or dist/.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

function findRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'workspace-api') return dir;
    if (path.dirname(dir) === dir) throw new Error(`workspace-api root not found above ${start}`);
  }
}

export const projectRoot = findRoot(__dirname);
export const migrationsDir = path.join(projectRoot, 'prisma', 'migrations');
/** Generated artefacts that the server reads at run time (bundled spec, reference and guide pages). */
export const generatedDir = path.join(projectRoot, 'server', 'src', 'generated');
export const docsHtmlPath = path.join(projectRoot, 'dist', 'docs', 'index.html');
/** The guide page (scripts/docs-guide.mjs): the repository's Markdown docs as one page. */
export const guideHtmlPath = path.join(projectRoot, 'dist', 'docs', 'guide.html');
/** A migrated, empty embedded database (built by `npm run build`) that a new DATA_DIR starts from. */
export const pgliteSeedDir = path.join(projectRoot, 'dist', 'pglite-seed');
