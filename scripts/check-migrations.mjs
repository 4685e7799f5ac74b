// Drift check of prisma/migrations against prisma/schema.prisma (part of `npm run check:generated`):
// the schema that the migrations build must equal the schema that Prisma derives from
// schema.prisma. Both are built in in-memory PGlite databases and their catalogs compared
// (tables, columns, constraints, indexes), since Prisma's own `--from-migrations` needs a
// schema-engine binary that cannot be downloaded here. Constraint triggers are left out: Prisma
// describes no triggers (typed storage is kept by them).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';

const CATALOG = `
  SELECT 'column ' || table_name || '.' || column_name || ' ' || data_type || ' ' || coalesce(udt_name, '') ||
         ' null=' || is_nullable || ' default=' || coalesce(column_default, '') AS item
    FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'
  UNION ALL
  SELECT 'constraint ' || conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid)
    FROM pg_constraint WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text <> '_prisma_migrations' AND contype <> 't'
  UNION ALL
  SELECT 'index ' || indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename <> '_prisma_migrations'
  ORDER BY 1`;

async function catalogOf(sqlScripts) {
  const pg = new PGlite();
  for (const sql of sqlScripts) await pg.exec(sql);
  const { rows } = await pg.query(CATALOG);
  await pg.close();
  return rows.map((r) => r.item);
}

export async function checkMigrations(root) {
  const dir = path.join(root, 'prisma/migrations');
  const migrations = readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort()
    .map((name) => readFileSync(path.join(dir, name, 'migration.sql'), 'utf8'));
  const fromSchema = execFileSync(
    path.join(root, 'node_modules/.bin/prisma'),
    ['migrate', 'diff', '--from-empty', '--to-schema-datamodel', 'prisma/schema.prisma', '--script'],
    { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' },
  );
  const [a, b] = [await catalogOf(migrations), await catalogOf([fromSchema])];
  const onlyMigrations = a.filter((x) => !b.includes(x));
  const onlySchema = b.filter((x) => !a.includes(x));
  return [
    ...onlySchema.map((x) => `schema.prisma has, migrations lack: ${x}`),
    ...onlyMigrations.map((x) => `migrations have, schema.prisma lacks: ${x}`),
  ];
}
