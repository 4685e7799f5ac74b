// Parameterized SQL built from fragments: `sql\`... ${value} ...\`` binds `value` as a parameter,
// `${otherFragment}` splices a fragment (its parameters renumbered), `raw()` is trusted text (never
// user input). The entry store and the query compiler build every statement this way, so user
// input only ever reaches PostgreSQL as a bound parameter; rendering writes validated names into
// its statements as literals (`literal`).
import type { Prepare, SqlRunner } from '../db/database';

export class Sql {
  constructor(
    readonly strings: readonly string[],
    readonly values: readonly unknown[],
  ) {}

  /** `$1`-numbered text and its values, ready for `SqlRunner.query`. */
  toQuery(): { text: string; values: unknown[] } {
    const values: unknown[] = [];
    const text = this.strings.reduce((acc, s, i) => (i === 0 ? s : `${acc}$${values.push(this.values[i - 1])}${s}`), '');
    return { text, values };
  }
}

export function sql(strings: TemplateStringsArray, ...args: unknown[]): Sql {
  const outStrings: string[] = [strings[0]];
  const outValues: unknown[] = [];
  args.forEach((arg, i) => {
    if (arg instanceof Sql) {
      // Splice: the fragment's first string joins the current one, its last joins the next.
      outStrings[outStrings.length - 1] += arg.strings[0];
      for (let k = 1; k < arg.strings.length; k++) {
        outValues.push(arg.values[k - 1]);
        outStrings.push(arg.strings[k]);
      }
      outStrings[outStrings.length - 1] += strings[i + 1];
    } else {
      outValues.push(arg);
      outStrings.push(strings[i + 1]);
    }
  });
  return new Sql(outStrings, outValues);
}

/**
 * The text of `query` with its values written in, for a statement that takes no parameters
 * (COPY): only integers, which need no quoting.
 */
export function withIntegers(query: Sql): string {
  const { text, values } = query.toQuery();
  return text.replace(/\$(\d+)/g, (_, n: string) => {
    const value = values[Number(n) - 1];
    if (!Number.isSafeInteger(value)) throw new Error(`withIntegers: $${n} is not an integer`);
    return String(value);
  });
}

/** A character by its code as an escape (`\x01`) of an E'' literal and of a regular expression. */
export const charEscape = (code: number) => `\\x${code.toString(16).padStart(2, '0')}`;

/** Trusted SQL text (identifiers and keywords chosen by the code, never by a request). */
export const raw = (text: string) => new Sql([text], []);

export const empty = raw('');

/** Fragments joined by a separator (`, `, ` AND `, ...). */
export function join(parts: Sql[], separator: string): Sql {
  if (parts.length === 0) return empty;
  return parts.slice(1).reduce((acc, part) => sql`${acc}${raw(separator)}${part}`, parts[0]);
}

/**
 * Runs a fragment and returns its rows. `prepare`: `true` when the statement's text is one of a
 * few fixed shapes, `'bounded'` when a request shapes it (see SqlRunner.query).
 */
export async function rows<T>(db: SqlRunner, query: Sql, prepare: Prepare = false): Promise<T[]> {
  const { text, values } = query.toQuery();
  return (await db.query<T>(text, values, prepare)).rows;
}

/** The wire format of a timestamp for to_char: UTC, microseconds, `Z`. */
// The migration 20261128020000_entry_columns_as_json writes the same format (iso_json): entries keep
// their times in it for rendering (content/store.ts keptJson). sql-contracts.test.ts holds the two together.
export const ISO_FORMAT = 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"';

/** A timestamp column as the wire format. */
export const isoTimestamp = (column: Sql) => sql`to_char((${column}) AT TIME ZONE 'UTC', ${raw(`'${ISO_FORMAT}'`)})`;

/**
 * For statements written as text from names (core/content/render.ts, query/project.ts): content
 * types' field names, a configured locale, a query's JSON path segments (`[A-Za-z0-9_-]+` only,
 * query/paths.ts). A SQL string literal, quotes doubled (standard_conforming_strings, the default
 * since PostgreSQL 9.1, leaves backslashes as they are). Values a request gives stay parameters.
 */
export const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

/**
 * A timestamp column named in text, as the JSON text of its wire format (NULL stays NULL): the
 * format's escaped quotes (`\"`) put the string's quotes in to_char's output, one call per value.
 */
export const isoJson = (column: string) => `to_char((${column}) AT TIME ZONE 'UTC', '\\"${ISO_FORMAT}\\"')`;

/** The most arguments a PostgreSQL function takes (FUNC_MAX_ARGS). */
export const MAX_FUNCTION_ARGS = 100;

/**
 * Text of several parts, each written once: `a || b || c` copies what it has so far at every
 * step (quadratic in a long entry's parts), concat() appends each part once. Past
 * MAX_FUNCTION_ARGS parts, concat() of concat()s of at most that many each (a type of 200 fields
 * has about 400 parts). Every part must be non-NULL (concat() would take NULL for ''); the
 * callers' are (coalesce() where a value may be missing).
 */
export function cat(parts: string[]): string {
  if (parts.length === 1) return parts[0];
  if (parts.length <= MAX_FUNCTION_ARGS) return `concat(${parts.join(', ')})`;
  const size = Math.ceil(parts.length / Math.ceil(parts.length / MAX_FUNCTION_ARGS));
  const groups = Array.from({ length: Math.ceil(parts.length / size) }, (_, i) => cat(parts.slice(i * size, (i + 1) * size)));
  return cat(groups);
}

/** A JSON object key and its colon (and the comma before it unless `first`, and `after`), as a SQL literal. */
export const jsonKey = (name: string, first: boolean, after = '') => literal(`${first ? '' : ','}${JSON.stringify(name)}:${after}`);

/**
 * A fragment whose values the code chose (ids, kinds: never a request's), as SQL text with each
 * value a literal: for statements written as text (rendering), so that a condition has one source
 * (a `sql` fragment) whichever way a statement is built. Numbers must be integers, strings and
 * arrays of strings are quoted; anything else is refused.
 */
export function inline(fragment: Sql): string {
  const value = (v: unknown): string => {
    if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
    if (typeof v === 'string') return literal(v);
    if (Array.isArray(v) && v.every((x) => typeof x === 'string'))
      return literal(`{${v.map((x) => `"${x.replace(/["\\]/g, '\\$&')}"`).join(',')}}`);
    throw new Error(`inline: not a value the code chose: ${typeof v}`);
  };
  return fragment.strings.reduce((acc, s, i) => (i === 0 ? s : `${acc}${value(fragment.values[i - 1])}${s}`), '');
}
