#!/usr/bin/env node
// `npm run bench`: the performance figures the issues ask for, measured on this machine.
// Builds first, so that `npm start` runs current JavaScript.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { benchStartup } from './bench/startup.mjs';
import { benchFiles } from './bench/files.mjs';

const root = path.resolve(import.meta.dirname, '..');
execFileSync(process.execPath, [path.join(root, 'scripts/build.mjs')], { stdio: 'inherit', cwd: root });
await benchStartup(Number(process.env.BENCH_RUNS ?? 5));
await benchFiles();
