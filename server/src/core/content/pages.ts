// Id-ordered cursor pages of entries, as Laravel's cursor paginator gives them.
import { decodeCursor, encodeCursor } from '../cursors';
import { raw, sql, type Sql } from '../sql';
import type { EntryRecord, FindOptions } from './store';

export interface IdPage {
  page: EntryRecord[];
  next: string | null;
  prev: string | null;
}

/** Id order, after `leading` (a column every row of the page has the same value of, which lets an index led by it give the order). */
export const idOrder = (forward: boolean, leading?: string): Sql => {
  const dir = forward ? 'ASC' : 'DESC';
  return raw(leading ? `${leading} ${dir}, e.id ${dir}` : `e.id ${dir}`);
};

/**
 * The page after a cursor ([direction: 1 forward, 0 back, the id it continues from]): the
 * condition and order to read `perPage` + 1 rows with, whether the page shows them reversed, and
 * the cursors around it from the ids read (a previous page once a cursor was followed, a next one
 * when more rows were found going forward). `leading`: see idOrder.
 */
export function idCursor(cursor: string | undefined, perPage: number, leading?: string) {
  const [forward, from] = cursor ? decodeCursor<[number, number]>(cursor, ['integer', 'integer']) : [1, 0];
  return {
    where: forward ? sql`e.id > ${from}` : sql`e.id < ${from}`,
    page: { orderBy: idOrder(Boolean(forward), leading), limit: perPage + 1 } satisfies NonNullable<FindOptions['page']>,
    reverse: !forward,
    /** The cursors of the pages around the one read (`found`: the ids read, in their order). */
    links(found: number[]): { next: string | null; prev: string | null } {
      const hasMore = found.length > perPage;
      const shown = found.slice(0, perPage);
      if (!forward) shown.reverse();
      const first = shown[0];
      const last = shown[shown.length - 1];
      const next = shown.length && (forward ? hasMore : true) ? encodeCursor([1, last]) : null;
      const prev = shown.length && cursor && (forward || hasMore) ? encodeCursor([0, first]) : null;
      return { next, prev };
    },
  };
}

/** A page of entries in id order after a cursor, with the cursors of the pages around it (see idCursor; `leading`: idOrder). */
export async function idCursorPage(
  find: (where: Sql, page: NonNullable<FindOptions['page']>) => Promise<EntryRecord[]>,
  cursor: string | undefined,
  perPage: number,
  leading?: string,
): Promise<IdPage> {
  const c = idCursor(cursor, perPage, leading);
  const found = await find(c.where, c.page);
  const page = found.slice(0, perPage);
  if (c.reverse) page.reverse();
  return { page, ...c.links(found.map((e) => e.id)) };
}
