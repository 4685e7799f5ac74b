// A migration that has landed is never edited again: a database migrated by its first version
// would never see the change. Each migration file in the working tree is compared with its
// first version in the history of HEAD (the commit that added it), and a landed one that is
// missing fails too. Three were edited before this check existed; their last version before it
// is the one they keep. Run by CI (`npm run check:landed`).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = 'prisma/migrations';

/** Migrations edited after they landed, before this check: the commit of the version they keep. */
const EDITED_BEFORE_THE_CHECK = {
  '20261127100000_typed_storage': '8bc10402785af0c91ee582655f5439ef94f65961',
  '20261128030000_entry_texts': 'c72bbafd99e9f4e58e279eb5a0bfc93f4c9754c5',
  '20261129120000_field_keys': '63290a12baad8ed28f2b7003bdbe08c4661436cc',
};

const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });

if (git('rev-parse', '--is-shallow-repository').trim() === 'true') {
  console.error('check:landed: this clone is shallow; the first version of a migration may be missing (git fetch --unshallow)');
  process.exit(1);
}

const problems = [];
// Every migration file HEAD's history ever added, with the commit that added it (oldest first).
const added = new Map();
let commit;
for (const line of git('log', '--reverse', '--diff-filter=A', '--name-only', '--format=commit %H', 'HEAD', '--', dir).split('\n')) {
  if (line.startsWith('commit ')) commit = line.slice(7);
  else if (line.endsWith('/migration.sql') && !added.has(line)) added.set(line, commit);
}
for (const [file, first] of added) {
  const name = path.basename(path.dirname(file));
  if (!existsSync(path.join(root, file))) {
    // (Removed again in the history: a migration that never landed for good, or one renamed.)
    if (git('ls-tree', '--name-only', 'HEAD', file).trim()) problems.push(`${file}: landed in ${first.slice(0, 7)} and is missing`);
    continue;
  }
  const kept = EDITED_BEFORE_THE_CHECK[name] ?? first;
  const landed = git('show', `${kept}:${file}`);
  if (readFileSync(path.join(root, file), 'utf8') !== landed) {
    problems.push(`${file}: differs from the version that landed in ${kept.slice(0, 7)}; add a new migration instead`);
  }
}
const present = readdirSync(path.join(root, dir), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => `${dir}/${d.name}/migration.sql`);
if (problems.length) {
  console.error(`check:landed: ${problems.length} landed migration(s) changed:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  process.exit(1);
}
const landed = present.filter((f) => added.has(f)).length;
console.log(
  `check:landed: ${present.length} migrations, ${landed} of them landed (each as it first landed), ${present.length - landed} new`,
);
