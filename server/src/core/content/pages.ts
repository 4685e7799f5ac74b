// Id-ordered cursor pages of entries, as Laravel's cursor paginator gives them.
import { decodeCursor, encodeCursor } from '../cursors';
import { raw, sql, type Sql } from '../sql';
import type { EntryRecord, FindOptions } from './store';

export interface IdPage {
  page: EntryRecord[];
  next: string | null;
  prev: string | null;
}

/**
 * A page of entries in id order after a cursor ([direction: 1 forward, 0 back, the id it continues
 * from]), with the cursors of the pages around it: a previous page once a cursor was followed, a
 * next one when more rows were found going forward.
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
