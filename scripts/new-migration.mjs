#!/usr/bin/env node
// `node scripts/new-migration.mjs <name> [--from <old schema.prisma>]`: writes
// prisma/migrations/<timestamp>_<name>/migration.sql with the SQL that turns the old schema
// (default: prisma/schema.prisma as committed at HEAD) into the current one. `npm run
// check:generated` then verifies that all migrations together build the current schema.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const [name, flag, fromArg] = process.argv.slice(2);
if (!name || !/^[a-z0-9_]+$/.test(name)) {
  console.error('usage: node scripts/new-migration.mjs <snake_case_name> [--from <old schema.prisma>]');
  process.exit(2);
}
let from = flag === '--from' ? fromArg : undefined;
if (!from) {
  from = path.join(mkdtempSync(path.join(tmpdir(), 'wsapi-migration-')), 'schema.prisma');
  writeFileSync(from, execFileSync('git', ['show', 'HEAD:prisma/schema.prisma'], { cwd: root }));
}
const sql = execFileSync(
  path.join(root, 'node_modules/.bin/prisma'),
  ['migrate', 'diff', '--from-schema-datamodel', from, '--to-schema-datamodel', 'prisma/schema.prisma', '--script'],
  { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
);
if (!/\b(CREATE|ALTER|DROP)\b/.test(sql)) {
  console.log('no schema change: nothing written');
  process.exit(0);
}
const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
const dir = path.join(root, 'prisma/migrations', `${stamp}_${name}`);
mkdirSync(dir, { recursive: true });
writeFileSync(path.join(dir, 'migration.sql'), sql);
console.log(`wrote ${path.relative(root, dir)}/migration.sql`);
