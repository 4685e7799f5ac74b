import { defineConfig } from 'prisma/config';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';

// Prisma's CLI is used offline for two things only: `generate` and `migrate diff` (see
// scripts/generate.mjs and scripts/new-migration.mjs). `generate` resolves the datasource URL even
// though the client engine never uses it; `migrate diff` runs on an in-memory PGlite through the
// driver adapter, so no schema-engine binary has to be downloaded.
process.env.DATABASE_URL ??= 'postgresql://localhost/unused';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  experimental: { adapter: true },
  engine: 'js',
  adapter: async () => new PrismaPGlite(new PGlite()),
});
