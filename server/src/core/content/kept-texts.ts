// Rendered delivery entries kept in the database between answers (table `entry_texts`, see its
// migration): a delivery list keeps the texts of the entries it rendered, and later lists and
// reads read them instead of rendering them again (render.ts), rendering only the others (a read
// keeps nothing: see core/operations/entries.ts). Kept per variant: what else a text depends
// on (locale, delivery or not, the content types' definitions, the workspace's name, the base URL)
// is in its variant's name, so a text is only read by answers that would render it the same.
//
// Correct under change: every text lists in `deps` the rows it depends on (every entry ID its
// expansion may show or examine, every file it shows), and triggers delete the texts naming a row
// in the statement that changes it. A text is written after the answer that missed it, by this
// process's keeper, in a transaction of its own that first takes the workspace's lock of the table
// exclusively without waiting (a change holds it shared from its trigger to its commit): so it
// renders in a snapshot that no uncommitted change precedes, and a change after it waits, then
// deletes what it wrote. One keep at a time per process: a miss while one runs is kept at a later
// miss. File URLs stay holes, filled per answer (lib/fresh-json.ts).
//
// Bounded: each workspace's texts hold at most KEPT_TEXTS_MB. A keep writes none past it (nested
// rendering stops there; breadth-first rendering writes the page, then keeps what fits), then
// deletes the workspace's oldest kept texts beyond it, under the same lock.
import { createHash } from 'node:crypto';
import type { Database } from '../../db/database';
import type { Logger } from '../../lib/logger';
import { literal, type Sql } from '../sql';
import type { ContentTypeDef } from './content-types';
import { fileHoleIds } from '../file-records';
import { MAX_DEPTH, itemsOf, type RenderOptions } from './render-text';

/**
 * The advisory lock class of `entry_texts` (its second key: the workspace id), as the migration's
 * triggers take it (entry_texts_lock; sql-contracts.test.ts holds the two together).
 */
export const LOCK_CLASS = 280001;
/** The most entries one keep renders (a plain list's page is at most 1,000). */
export const KEEP_MAX = 1000;

/** Variants by the rest of their key, per content type list (a change of types makes a new list). */
const variants = new WeakMap<readonly ContentTypeDef[], Map<string, string>>();

/** The variant of the texts `o` renders: everything besides the rows that they depend on. */
export function variantOf(o: RenderOptions): string {
  let byKey = variants.get(o.types);
  if (!byKey) variants.set(o.types, (byKey = new Map<string, string>()));
  const key = JSON.stringify([o.locale, o.publishedOnly, o.workspace.name, o.config.baseUrl]);
  let variant = byKey.get(key);
  if (!variant) {
    const defs = o.types.map((t) => [t.id, t.name, t.bucketId, t.nameField, t.fields]);
    variant = createHash('sha256')
      .update(JSON.stringify([defs, key]))
      .digest('base64url')
      .slice(0, 24);
    if (byKey.size < 200) byKey.set(key, variant);
  }
  return variant;
}

/** The stored references of an entry of type `type` (SQL) in its document `doc` (SQL), as a jsonb array. */
function storedReferences(types: readonly ContentTypeDef[], doc: string, type: string): string {
  const branches = types.flatMap((t) => {
    const fields = t.fields.filter((f) => f.type === 'relation');
    return fields.length ? [`WHEN ${t.id} THEN ${fields.map((f) => itemsOf(`${doc} -> ${literal(f.key)}`, f.multiple)).join(' || ')}`] : [];
  });
  return branches.length ? `CASE ${type} ${branches.join(' ')} ELSE '[]'::jsonb END` : `'[]'::jsonb`;
}

/**
 * `deps` (`root`, `deps`) of the texts (`texts`: `root`, `j`) of the entries `found` gives: more
 * than they show, never less. From each root, every stored reference in any locale, followed to
 * any entry it names, to the depth rendered: those entries' IDs and every reference they hold
 * (one that names no entry visible now may name one later); and the files the text shows.
 */
export function depsOf(o: RenderOptions): string {
  const refs = storedReferences(o.types, 'd.data', 'e.content_type_id');
  const held = `walk w JOIN entries e ON e.id = w.pk JOIN entry_contents d ON d.entry_pk = e.id CROSS JOIN LATERAL jsonb_array_elements(${refs}) x(v)`;
  return `walk(root, pk, depth) AS (
      SELECT f.pos::int, f.pk, 0 FROM found f
      UNION
      SELECT w.root, c.id, w.depth + 1 FROM ${held} JOIN entries c ON c.entry_id = x.v #>> '{}'
       WHERE w.depth < ${MAX_DEPTH} AND jsonb_typeof(x.v) = 'string'),
    deps AS (SELECT root, array_agg(DISTINCT dep) AS deps FROM (
      SELECT w.root, e.entry_id AS dep FROM walk w JOIN entries e ON e.id = w.pk
      UNION ALL SELECT w.root, x.v #>> '{}' FROM ${held} WHERE jsonb_typeof(x.v) = 'string'
      UNION ALL SELECT t.root, 'f:' || h.id FROM steps t CROSS JOIN ${fileHoleIds('t.j', 'h')}
    ) x WHERE root > 0 GROUP BY root)`;
}

/** Deletes a workspace's ($1) oldest kept texts beyond its budget ($2 bytes), once they pass it. */
const EVICT = `DELETE FROM entry_texts k USING (
    SELECT entry_pk, variant FROM (SELECT entry_pk, variant, sum(bytes) OVER (ORDER BY kept DESC ROWS UNBOUNDED PRECEDING) AS upto FROM entry_texts WHERE workspace_id = $1) t
     WHERE t.upto > $2) d
  WHERE k.entry_pk = d.entry_pk AND k.variant = d.variant AND (SELECT sum(bytes) FROM entry_texts WHERE workspace_id = $1) > $2`;

/** Writes the texts of entries that answers missed, one keep at a time. */
export class TextKeeper {
  private running?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly db: Database,
    private readonly log: Logger,
    /** The statement that renders the entries `pks` as `o` does and keeps their texts within `maxBytes` (render.ts keepStatement). */
    private readonly statement: (o: RenderOptions, pks: number[], maxBytes: number) => Sql,
    /** Each workspace's kept texts hold at most this many bytes. */
    private readonly maxBytes: number,
  ) {}

  /** Keeps the texts of `pks` rendered as `o` renders them, after this answer (unless a keep runs). */
  keep(o: RenderOptions, pks: number[]): void {
    if (this.running || this.stopped || !pks.length) return;
    this.running = this.write(o, pks.slice(0, KEEP_MAX))
      .catch((err) => this.log.error('rendered entries not kept', { error: err instanceof Error ? err.message : String(err) }))
      .finally(() => (this.running = undefined));
  }

  private async write(o: RenderOptions, pks: number[]): Promise<void> {
    const { text, values } = this.statement(o, pks, this.maxBytes).toQuery();
    await this.db.transaction(async (tx) => {
      const lock = await tx.query<{ taken: boolean }>(
        'SELECT pg_try_advisory_xact_lock($1, $2) AS taken',
        [LOCK_CLASS, o.workspace.id],
        true,
      );
      // A change of the workspace is in flight: what would be kept now could be out of date by its commit.
      if (!lock.rows[0].taken) return;
      await tx.query(text, values, 'bounded');
      await tx.query(EVICT, [o.workspace.id, this.maxBytes], true);
    });
  }

  /** Waits for the keep in flight, if any. */
  async settled(): Promise<void> {
    await this.running;
  }

  /** Waits for the keep in flight; none starts after. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }
}
