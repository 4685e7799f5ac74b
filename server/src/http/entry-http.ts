// What the Objects and Entries routes share over the entry core: the core's refusals as wire
// errors, the locale rules of reads and writes, and id-ordered cursor listings.
import type { Context } from 'koa';
import { HttpError, fieldErrors, forbidden, invalid, notFound, validationFailed } from './errors';
import { ByteBudget } from '../lib/byte-budget';
import { decodeCursor, encodeCursor, pageUrl } from './pagination';
import { EntryError } from '../core/entries/errors';
import { raw, sql, type Sql } from '../core/sql';
import type { EntryRecord, FindOptions } from '../core/entries/store';
import { isConfiguredLocale } from '../core/entries/locales';

/** The core's refusals as the documents answer them (`noun`: "object" or "entry"). */
function toHttp(err: unknown, noun: string): unknown {
  if (!(err instanceof EntryError)) return err;
  switch (err.kind) {
    case 'not_found':
      return notFound();
    case 'read_only':
      return forbidden();
    case 'review_pending':
      return validationFailed(Object.assign(fieldErrors(), { review: [`The ${noun} has a pending review.`] }));
    case 'stale_version':
    case 'invalid':
      return validationFailed(err.errors);
  }
}

/**
 * The byte budget of an answer (lib/byte-budget.ts): past `limit`, a `422` on `field`, the
 * request's knob for a smaller answer, saying how to turn it.
 */
export const answerBudget = (limit: number, field: string, advice: string) =>
  new ByteBudget(limit, () => invalid(field, `The ${field} field gives a result larger than ${limit} bytes; ${advice}.`));

/** Every handler of the set with the core's errors mapped. */
export function mapCoreErrors<T extends Record<string, (...args: never[]) => Promise<unknown>>>(set: T, noun: string): T {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(set)) {
    out[name] = async (...args: never[]) => {
      try {
        return await fn(...args);
      } catch (err) {
        throw toHttp(err, noun);
      }
    };
  }
  return out as T;
}

/** A locale parameter that names no locale of the workspace (core/entries/locales.ts). */
export const invalidLocale = () => new HttpError(400, { message: 'Invalid locale.' });

/** A read locale: `en-US`, a configured one or `*` (`400` otherwise, as the documents say). */
export function readLocale(locale: string | undefined, locales: string[]): string {
  const value = locale ?? 'en-US';
  if (value !== '*' && !isConfiguredLocale(value, locales)) throw invalidLocale();
  return value;
}

/** A write locale: `en-US` or a configured one (`400` otherwise). */
export function writeLocale(locale: string | undefined, locales: string[]): string {
  const value = locale ?? 'en-US';
  if (!isConfiguredLocale(value, locales)) throw invalidLocale();
  return value;
}

export interface IdPage {
  page: EntryRecord[];
  next: string | null;
  prev: string | null;
}

/**
 * A page of entries in id order after a cursor ([direction: 1 forward, 0 back, the id it continues
 * from]), with the cursors of the pages around it, as Laravel's cursor paginator gives them: a
 * previous page once a cursor was followed, a next one when more rows were found going forward.
 */
export async function idCursorPage(
  find: (where: Sql, page: NonNullable<FindOptions['page']>) => Promise<EntryRecord[]>,
  cursor: string | undefined,
  perPage: number,
): Promise<IdPage> {
  const [forward, from] = cursor ? decodeCursor<[number, number]>(cursor, ['integer', 'integer']) : [1, 0];
  const found = await find(forward ? sql`e.id > ${from}` : sql`e.id < ${from}`, { orderBy: raw(forward ? 'e.id ASC' : 'e.id DESC'), limit: perPage + 1 });
  const hasMore = found.length > perPage;
  const page = found.slice(0, perPage);
  if (!forward) page.reverse();
  const first = page[0]?.id;
  const last = page[page.length - 1]?.id;
  const next = page.length && (forward ? hasMore : true) ? encodeCursor([1, last]) : null;
  const prev = page.length && cursor && (forward || hasMore) ? encodeCursor([0, first]) : null;
  return { page, next, prev };
}

/** The URLs of the pages around an id page. */
export const pageLinks = (baseUrl: string, koa: Context, p: IdPage) => ({ next_page_url: pageUrl(baseUrl, koa, p.next), prev_page_url: pageUrl(baseUrl, koa, p.prev) });
