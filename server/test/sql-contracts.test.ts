// Contracts between the TypeScript and the SQL the migrations hold, which a landed migration
// cannot take from the code: each side's value read here and held equal. prisma/schema.sql is the
// schema the migrations leave (generated; `npm run check:generated` keeps it current).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { LOCK_CLASS } from '../src/core/content/kept-texts';
import { fileHole, fileHoleIds } from '../src/core/file-records';
import { ISO_FORMAT } from '../src/core/sql';
import { HOLE_CLOSE, HOLE_OPEN, holesIn } from '../src/lib/fresh-json';
import { projectRoot } from '../src/paths';

const schema = readFileSync(path.join(projectRoot, 'prisma/schema.sql'), 'utf8');

/** The body of the function `name` in schema.sql. */
function functionBody(name: string): string {
  const start = schema.indexOf(`CREATE OR REPLACE FUNCTION public.${name}(`);
  expect(start).toBeGreaterThanOrEqual(0);
  return schema.slice(start, schema.indexOf('$function$;', start));
}

describe('contracts between the code and the database', () => {
  it("takes the kept texts' advisory lock in the class the code tries", () => {
    expect(functionBody('entry_texts_lock')).toContain(`pg_advisory_xact_lock_shared(${LOCK_CLASS}, w)`);
  });

  it('writes kept timestamps in the format the code writes them', () => {
    expect(functionBody('iso_json')).toContain(`'\\"${ISO_FORMAT}\\"'`);
  });

  it("reads a file hole's ID as the database writes the hole, and fills the hole the code finds", async () => {
    const pg = new PGlite();
    try {
      const { rows } = await pg.query<{ j: string; id: string }>(
        `SELECT t.j, h.id FROM (SELECT ${fileHole(3)} AS j
            FROM (VALUES (42, 1, NULL::int, 'u', 't', 'a "name"', 'text/plain', 5::bigint, 'h', '{x}'::text[], NULL::text, now(), now()))
              AS fi(id, workspace_id, user_id, uuid, token, name, mime_type, size, content_hash, tags, alt_text, created_at, updated_at)) t
          CROSS JOIN ${fileHoleIds('t.j', 'h')}`,
      );
      expect(rows.map((r) => r.id)).toEqual(['42']);
      expect(rows[0].j.startsWith(HOLE_OPEN) && rows[0].j.endsWith(HOLE_CLOSE)).toBe(true);
      const seen: string[] = [];
      const filled = holesIn([`[${rows[0].j}]`], ',', (mark) => (seen.push(mark), '"filled"'));
      expect(filled.parts.join('')).toBe('["filled"]');
      expect(JSON.parse(seen[0])).toMatchObject({ p: 3, id: 42, name: 'a "name"', tags: ['x'] });
    } finally {
      await pg.close();
    }
  });
});
