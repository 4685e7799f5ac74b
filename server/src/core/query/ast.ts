// The typed tree between parsing a query body and generating SQL. Parsers (Objects query today,
// the Entries structured query next) produce it; compile.ts turns it into one statement. New
// targets (relation paths, aggregates) are new variants of `Target` and new clauses, not new
// compilers.
import type { TypedColumn } from './typed';

/** Entry metadata a filter or sort may name, with the column and value type behind each. */
export const META_FIELDS = {
  '@id': { column: 'id', type: 'integer' },
  '@entry_id': { column: 'entry_id', type: 'string' },
  '@bucket_id': { column: 'bucket_id', type: 'integer' },
  '@ref': { column: 'ref', type: 'string' },
  '@status': { column: 'status', type: 'status' },
  '@lock_version': { column: 'lock_version', type: 'integer' },
  '@created_at': { column: 'created_at', type: 'timestamp' },
  '@updated_at': { column: 'updated_at', type: 'timestamp' },
} as const;
export type MetaName = keyof typeof META_FIELDS;

/** An entry column a target reads (Objects and typed entries name them differently). */
export interface MetaColumn {
  column: string;
  type: 'integer' | 'string' | 'status' | 'timestamp' | 'locales';
  /** Missing values are NULL (`eq: null` tests them). */
  nullable?: boolean;
}

/** A relation followed to its visible entries: live typed entries of the same bucket, of the accepted types. */
export interface Hop {
  /** The relation field of the document the hop starts from. */
  field: string;
  typeIds: number[];
  /** The field's typed column, read where the scope the hop starts from has its typed row. */
  column?: TypedColumn;
  /** The one accepted type, when its typed storage is complete: the entries reached have their typed row. */
  typedTarget?: number;
}

export type Target =
  /**
   * A property path into the document of the query's locale; `column`: the field's typed column
   * (typed entries), read instead where the query has the typed row (core/query/typed.ts).
   */
  | { kind: 'data'; path: string[]; column?: TypedColumn }
  | ({ kind: 'meta'; name: string } & MetaColumn)
  /** A value of the entry a single relation refers to (missing when it refers to no visible entry). */
  | { kind: 'related'; hop: Hop; target: Target };

export type Scalar = string | number | boolean;

export type Condition =
  | { op: 'eq' | 'ne'; target: Target; value: Scalar | null }
  | { op: 'lt' | 'lte' | 'gt' | 'gte'; target: Target; value: string | number }
  | { op: 'in'; target: Target; values: (Scalar | null)[] }
  | { op: 'startsWith' | 'endsWith' | 'contains'; target: Target; value: string }
  /** Exact membership of a scalar in an array (a multiple field's values, the enabled locales). */
  | { op: 'includes'; target: Target; value: Scalar };

export type FilterNode =
  | { kind: 'and' | 'or'; items: FilterNode[] }
  | ({ kind: 'condition' } & Condition)
  /** At least one visible entry the relation refers to satisfies `filter` (all of it, the same entry). */
  | { kind: 'some'; hop: Hop; filter: FilterNode };

export interface SortKey {
  target: Target;
  direction: 'asc' | 'desc';
  /**
   * Typed sorts reject values of other types; untyped ones order by type, then value. `number`:
   * exact DECIMAL(38,12) values (the Objects rule); `numeric`: any JSON number (number fields of
   * typed entries, which take any).
   */
  type?: 'string' | 'number' | 'numeric' | 'boolean';
}

/** Where the relations of typed entries lead: visible entries of this bucket, documents in this locale. */
export interface RelationScope {
  bucketId: number;
  locale: string;
}

export interface QueryPlan {
  filter: FilterNode;
  sort: SortKey[];
  /** Data paths to project; undefined: the whole document. */
  fields?: string[][];
  locale: string;
  offset: number;
  limit: number;
  /** Typed entries: relations followed by filters and sorts; ties broken by entry ULID. */
  relations?: RelationScope;
}
