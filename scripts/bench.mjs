#!/usr/bin/env node
// `npm run bench`: the performance figures the issues ask for, measured on this machine.
// Builds first, so that `npm start` runs current JavaScript. Sections: startup, files, hot-path,
// objects, entries, entries-query, anchor, scale, model-scale, model-changes, archive (`npm run bench -- hot-path`
// runs one).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { benchStartup } from './bench/startup.mjs';
import { benchFiles } from './bench/files.mjs';
import { benchHotPath } from './bench/hot-path.mjs';
import { benchObjects } from './bench/objects.mjs';
import { benchEntries } from './bench/entries.mjs';
import { benchEntriesQuery } from './bench/entries-query.mjs';
import { benchAnchor } from './bench/anchor.mjs';
import { benchScale } from './bench/scale.mjs';
import { benchModelScale } from './bench/model-scale.mjs';
import { benchModelChanges } from './bench/model-changes.mjs';
import { benchArchive } from './bench/archive.mjs';

const root = path.resolve(import.meta.dirname, '..');
execFileSync(process.execPath, [path.join(root, 'scripts/build.mjs')], { stdio: 'inherit', cwd: root });
// `npm run bench -- hot-path files` runs only the named sections.
const only = process.argv.slice(2);
const sections = {
  startup: () => benchStartup(Number(process.env.BENCH_RUNS ?? 5)),
  files: benchFiles,
  'hot-path': benchHotPath,
  objects: benchObjects,
  entries: benchEntries,
  'entries-query': benchEntriesQuery,
  anchor: benchAnchor,
  scale: benchScale,
  'model-scale': benchModelScale,
  'model-changes': benchModelChanges,
  archive: benchArchive,
};
for (const [name, run] of Object.entries(sections)) if (!only.length || only.includes(name)) await run();
