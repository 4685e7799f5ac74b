// Where the rows a query filters come from. Each document carries copies of its entry's
// visibility columns and ULID (kept by triggers, see prisma/schema.prisma), so a filter that can
// only hold for an entry with a document in the query's locale scans documents alone:
// `entry_contents c LEFT JOIN entries e`, a join the planner removes unless the filter or sort
// names the entry's metadata. A GIN containment test then costs no lookup of each candidate's
// entry row. Any other filter (an empty one, `eq null`, metadata alone) may match entries without
// such a document, so it reads the entries with their documents beside them.
import { BASE_LOCALE, scope, type EntryKind } from '../content/store';
import { raw, sql, type Sql } from '../sql';
import type { FilterNode, Target } from './ast';
import { typedTable } from './typed';

/** Who sees an entry: the columns copied onto its documents, and more conditions on the entry row. */
export interface Visibility {
  workspaceId: number;
  kinds: EntryKind[];
  /** Bucket ids the entry must have (numbers, or expressions: the Objects API's bucket by name). */
  bucketIds?: (number | Sql)[];
  contentTypeId?: number;
  /** Conditions on the entry row `e` (ref, prefix): they keep its join. */
  also?: Sql[];
  /** Typed entries of `contentTypeId`: their typed storage row `t` is read (core/query/typed.ts). */
  typed?: boolean;
}

/**
 * Visibility as conditions on the entry row (`e`: the store's own `scope` conditions) or on the
 * copies its documents carry (`c`, the same columns; `live` for `deleted_at IS NULL`).
 */
export function visibleOn(alias: 'e' | 'c', v: Visibility): Sql {
  const on = alias === 'e' ? scope : copiedScope;
  return scope.and(on.workspace(v.workspaceId), on.kinds(...v.kinds), on.live, narrowedOn(alias, v));
}

/** The narrowing part of a visibility (bucket, content type, `also`), for a read whose sight (store.ts) is the rest. */
export function narrowedOn(alias: 'e' | 'c', v: Visibility): Sql {
  const conditions: Sql[] = [raw('true')];
  // As `= ANY`: a bucket's list orders by bucket_id, id (listObjects), which the (bucket_id, id)
  // index gives only when the bucket is no constant the planner could drop from the order.
  for (const id of v.bucketIds ?? [])
    conditions.push(sql`${raw(alias)}.bucket_id = ANY(ARRAY[${typeof id === 'number' ? sql`${id}::int` : id}]::int[])`);
  if (v.contentTypeId !== undefined) conditions.push(sql`${raw(alias)}.content_type_id = ${v.contentTypeId}::int`);
  conditions.push(...(v.also ?? []));
  return scope.and(...conditions);
}

/** `scope`'s conditions on the copies a document carries. */
const copiedScope: Pick<typeof scope, 'workspace' | 'kinds' | 'live'> = {
  workspace: (workspaceId) => sql`c.workspace_id = ${workspaceId}::int`,
  kinds: (...kinds) => sql`c.kind = ANY(${kinds}::text[])`,
  live: raw('c.live'),
};

export interface Candidates {
  /** FROM clause: `e` (the entry) and `c` (its document in the locale, NULL in the entries form). */
  from: Sql;
  /** Visibility and locale: the caller adds the filter. */
  where: Sql;
  /** The entry's primary key and ULID as this form reads them (not through `e`, which can then be left out). */
  id: Sql;
  entryId: Sql;
  /** The typed storage row's alias (`t`), when the entries are typed. */
  row?: string;
}

export function candidates(v: Visibility, locale: string, filter: FilterNode): Candidates {
  if (v.typed && v.contentTypeId !== undefined) return typedCandidates(v, v.contentTypeId, locale, filter);
  if (requiresDocument(filter)) {
    return {
      from: raw('entry_contents c LEFT JOIN entries e ON e.id = c.entry_pk'),
      where: sql`c.locale = ${locale}::text AND ${visibleOn('c', v)}`,
      id: raw('c.entry_pk'),
      entryId: raw('c.entry_id'),
    };
  }
  return {
    from: sql`entries e LEFT JOIN entry_contents c ON c.entry_pk = e.id AND c.locale = ${locale}::text`,
    where: visibleOn('e', v),
    id: raw('e.id'),
    entryId: raw('e.entry_id'),
  };
}

/**
 * Typed entries: the type's table holds a row per entry with a document in the locale, and one
 * per entry in the base locale (empty without a document there). So a query of the base locale,
 * or one whose filter needs a document, reads typed rows (`t`) alone, with the entry and the
 * document joined where a condition names them (the planner drops the joins none reads). Any
 * other filter reads the entries, each with its typed row beside it (NULL columns without one).
 */
function typedCandidates(v: Visibility, contentTypeId: number, locale: string, filter: FilterNode): Candidates {
  const table = raw(typedTable(contentTypeId));
  if (locale === BASE_LOCALE || requiresDocument(filter)) {
    return {
      from: sql`${table} t LEFT JOIN entries e ON e.id = t.entry_pk LEFT JOIN entry_contents c ON c.entry_pk = t.entry_pk AND c.locale = t.locale`,
      where: sql`t.locale = ${locale}::text AND t.live${v.also?.length ? sql` AND ${scope.and(...v.also)}` : raw('')}`,
      id: raw('t.entry_pk'),
      entryId: raw('t.entry_id'),
      row: 't',
    };
  }
  return {
    from: sql`entries e LEFT JOIN ${table} t ON t.entry_pk = e.id AND t.locale = ${locale}::text LEFT JOIN entry_contents c ON c.entry_pk = e.id AND c.locale = ${locale}::text`,
    where: visibleOn('e', v),
    id: raw('e.id'),
    entryId: raw('e.entry_id'),
    row: 't',
  };
}

/**
 * Whether `node` can hold only for an entry that has a document in the query's locale: with no
 * document every data value is missing (so is every relation, read from the document), and only
 * conditions that a missing value satisfies, or metadata, could still match.
 */
export function requiresDocument(node: FilterNode): boolean {
  switch (node.kind) {
    case 'and':
      return node.items.some(requiresDocument);
    case 'or':
      return node.items.every(requiresDocument);
    case 'some':
      return true;
    case 'condition':
      if (!readsDocument(node.target)) return false;
      if (node.op === 'eq') return node.value !== null;
      if (node.op === 'in') return !node.values.includes(null);
      return true;
  }
}

/** Data paths and relations read the document; metadata reads the entry row. */
const readsDocument = (t: Target): boolean => t.kind !== 'meta';
