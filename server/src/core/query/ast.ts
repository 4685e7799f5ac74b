// The typed tree between parsing a query body and generating SQL. Parsers (Objects query today,
// the Entries structured query next) produce it; compile.ts turns it into one statement. New
// targets (relation paths, aggregates) are new variants of `Target` and new clauses, not new
// compilers.

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

export type Target =
  /** A property path into the document of the query's locale. */
  | { kind: 'data'; path: string[] }
  | { kind: 'meta'; name: MetaName };

export type Scalar = string | number | boolean;

export type Condition =
  | { op: 'eq' | 'ne'; target: Target; value: Scalar | null }
  | { op: 'lt' | 'lte' | 'gt' | 'gte'; target: Target; value: string | number }
  | { op: 'in'; target: Target; values: (Scalar | null)[] }
  | { op: 'startsWith' | 'endsWith' | 'contains'; target: Target; value: string };

export type FilterNode = { kind: 'and' | 'or'; items: FilterNode[] } | ({ kind: 'condition' } & Condition);

export interface SortKey {
  target: Target;
  direction: 'asc' | 'desc';
  /** Typed sorts reject values of other types; untyped ones order by type, then value. */
  type?: 'string' | 'number' | 'boolean';
}

export interface QueryPlan {
  filter: FilterNode;
  sort: SortKey[];
  /** Data paths to project; undefined: the whole document. */
  fields?: string[][];
  locale: string;
  offset: number;
  limit: number;
}
