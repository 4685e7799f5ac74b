// The structured query typed by a generated content model: which paths `fields`, `filter` and
// `sort` accept (the same rules the server's path resolver applies: own fields, `@` metadata,
// up to 3 relation levels, attachment properties, JSON property paths), which operators each
// path takes, and the shape of a row for a projection. Types only.
//
// `BT` is a bucket's content types (`Content['buckets'][bucket]`), `M` the field descriptors of
// the type a path starts from, `D` the relation levels still allowed (a tuple, one per level).
import type { FileObject } from './model.js';

type Levels = [0, 0, 0];

/** Metadata selectors and their values in a projected row. */
export interface MetaValues {
  '@id': string;
  '@lock_version': number;
  '@status': 'draft' | 'published';
  '@locales': string[];
  '@created_at': string;
  '@updated_at': string;
  '@publish_at': string | null;
  '@published_at': string | null;
}
export type MetaSelector = keyof MetaValues;
type FileProperty = Extract<keyof FileObject, string>;

/** The field descriptors of the relation's targets; a path may use the fields they all have. */
type ModelsOf<BT, T> = T extends keyof BT ? (BT[T] extends { model: infer M } ? M : never) : never;
type Common<U> = [U] extends [never] ? {} : { [K in keyof U & string]: U[K] };
export type TargetModel<BT, F> = F extends { targets: infer T } ? Common<ModelsOf<BT, T>> : {};

type Deeper<D> = D extends [unknown, ...infer R] ? R : never;

/** Every path `fields` may select. */
export type ProjectionPath<BT, M, D extends unknown[] = Levels> =
  | MetaSelector
  | {
      [K in keyof M & string]: M[K] extends { type: 'relation' }
        ? K | (D extends [unknown, ...infer R] ? `${K}.${ProjectionPath<BT, TargetModel<BT, M[K]>, R>}` : never)
        : M[K] extends { type: 'attachment' }
          ? K | `${K}.${FileProperty}`
          : M[K] extends { type: 'json' }
            ? K | `${K}.${string}`
            : K;
    }[keyof M & string];

/** Every path a `filter` may use (attachments cannot be filtered). */
export type FilterPath<BT, M, D extends unknown[] = Levels> =
  | MetaSelector
  | {
      [K in keyof M & string]: M[K] extends { type: 'relation' }
        ? K | (D extends [unknown, ...infer R] ? `${K}.${FilterPath<BT, TargetModel<BT, M[K]>, R>}` : never)
        : M[K] extends { type: 'attachment' }
          ? never
          : M[K] extends { type: 'json' }
            ? K | `${K}.${string}`
            : K;
    }[keyof M & string];

/** Every path a `sort` may use: single scalar values, through single relations only. */
export type SortPath<BT, M, D extends unknown[] = Levels> =
  | Exclude<MetaSelector, '@locales'>
  | {
      [K in keyof M & string]: M[K] extends { multiple: true }
        ? never
        : M[K] extends { type: 'json' | 'attachment' }
          ? never
          : M[K] extends { type: 'relation' }
            ? K | (D extends [unknown, ...infer R] ? `${K}.${SortPath<BT, TargetModel<BT, M[K]>, R>}` : never)
            : K;
    }[keyof M & string];

/** The paths of a batch write's `check`: the type's own single scalar fields and `@id`. */
export type CheckPath<M> =
  | '@id'
  | {
      [K in keyof M & string]: M[K] extends { multiple: true }
        ? never
        : M[K] extends { type: 'text' | 'number' | 'boolean' | 'date' }
          ? K
          : never;
    }[keyof M & string];

// ---- Conditions -------------------------------------------------------------------------

type JsonPathField = { type: 'json-path' };
type MetaField<P extends MetaSelector> = P extends '@lock_version'
  ? { type: 'number'; multiple: false }
  : P extends '@locales'
    ? { type: 'text'; multiple: true }
    : P extends '@created_at' | '@updated_at' | '@publish_at' | '@published_at'
      ? { type: 'date'; multiple: false }
      : P extends '@status'
        ? { type: 'status'; multiple: false }
        : { type: 'text'; multiple: false };

/** The field (or metadata) at the end of a path; `D` counts the relation levels left. */
export type FieldAt<BT, M, P extends string> = P extends MetaSelector
  ? MetaField<P>
  : P extends keyof M
    ? M[P]
    : P extends `${infer H}.${infer R}`
      ? H extends keyof M
        ? M[H] extends { type: 'relation' }
          ? FieldAt<BT, TargetModel<BT, M[H]>, R>
          : M[H] extends { type: 'json' }
            ? JsonPathField
            : never
        : never
      : never;

type FilterScalar = string | number | boolean;
type Equality<T> = { eq?: T | null; ne?: T | null; in?: (T | null)[] };
type Ordering<T> = { lt?: T; lte?: T; gt?: T; gte?: T };
type TextMatch = { startsWith?: string; endsWith?: string; contains?: string };

/** The operators a field takes (EntryFilterCondition, narrowed by the field's type). */
export type ConditionFor<BT, F, D extends unknown[]> = F extends { type: 'relation'; multiple: true }
  ? { includes?: string; some?: EntryFilterOf<BT, TargetModel<BT, F>, Deeper<D>> }
  : F extends { multiple: true }
    ? { includes?: F extends { type: 'number' } ? number : F extends { type: 'boolean' } ? boolean : string }
    : F extends { type: 'number' }
      ? Equality<number> & Ordering<number>
      : F extends { type: 'date' }
        ? Equality<string> & Ordering<string>
        : F extends { type: 'boolean' }
          ? Equality<boolean>
          : F extends { type: 'status' }
            ? Equality<'draft' | 'published'> & TextMatch
            : F extends { type: 'text' | 'relation' }
              ? Equality<string> & TextMatch
              : Equality<FilterScalar> & Ordering<number | string> & TextMatch;

/** A `filter` over type `M`: each key a path, each value that path's operators, and `$and`/`$or`. */
export type EntryFilterOf<BT, M, D extends unknown[] = Levels> = {
  [P in FilterPath<BT, M, D>]?: ConditionFor<BT, FieldAt<BT, M, P>, D>;
} & { $and?: EntryFilterOf<BT, M, D>[]; $or?: EntryFilterOf<BT, M, D>[] };

/** A batch write's `check.filter`: own single scalar fields and `@id`. */
export type CheckFilterOf<M> = { [P in CheckPath<M>]?: ConditionFor<{}, FieldAt<{}, M, P>, []> } & {
  $and?: CheckFilterOf<M>[];
  $or?: CheckFilterOf<M>[];
};

export interface SortKeyOf<BT, M> {
  field: SortPath<BT, M>;
  direction?: 'asc' | 'desc';
}

// ---- Rows -------------------------------------------------------------------------------

type Head<P extends string> = P extends `${infer H}.${string}` ? H : P;
type Tail<P extends string, H extends string> = P extends `${H}.${infer R}` ? R : never;
type Many<F, T> = F extends { multiple: true } ? T[] : T | null;

/** A field's value when selected by its bare name: IDs for relations and attachments. */
export type BareValue<F> = F extends { type: 'json' }
  ? unknown
  : Many<
      F,
      F extends { type: 'number' } ? number : F extends { type: 'boolean' } ? boolean : F extends { type: 'attachment' } ? number : string
    >;

type JsonRow<P extends string> = { [H in Head<P>]: [Tail<P, H>] extends [never] ? unknown : JsonRow<Tail<P, H>> };

type Below<BT, F, P extends string> = F extends { type: 'relation' }
  ? Many<F, RowOf<BT, TargetModel<BT, F>, P>>
  : F extends { type: 'attachment' }
    ? Many<F, Pick<FileObject, P & FileProperty>>
    : F extends { type: 'json' }
      ? JsonRow<P>
      : never;

/** One row of a query that selected the paths `P` (keys nested at each `.`, as the server does). */
export type RowOf<BT, M, P extends string> = {
  [H in Head<P>]: H extends MetaSelector
    ? MetaValues[H]
    : H extends keyof M
      ? [Tail<P, H>] extends [never]
        ? BareValue<M[H]>
        : Below<BT, M[H], Tail<P, H>>
      : unknown;
};

/** One row of a query without `fields`: every content field by its bare name. */
export type DefaultRowOf<M> = { [K in keyof M]: BareValue<M[K]> };
