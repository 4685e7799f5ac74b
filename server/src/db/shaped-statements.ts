// Which request-shaped statements a connection keeps prepared. A prepared statement keeps its
// plan in the database server's memory (the embedded one's: this process's) until it is
// deallocated, and a plan's size follows its statement's: a 100 KB structured query (a `$or` of
// 99 conditions through relations) held about 21 MB. So a connection keeps:
// - only statements seen before on it (a shape asked once is planned, run and let go: one key
//   sending ever new queries leaves nothing behind);
// - none longer than MAX_PREPARED_TEXT (planned on every run instead);
// - at most MAX_SHAPED_STATEMENTS, and at most SHAPED_TEXT_BYTES of text together, the least
//   recently used deallocated first.
// The text's length stands for the plan's memory, which PostgreSQL does not report per statement.

/** Statements shaped by requests that a connection keeps prepared. */
export const MAX_SHAPED_STATEMENTS = 100;
/** Their text together, per connection. */
export const SHAPED_TEXT_BYTES = 512 * 1024;
/** The longest statement kept prepared. */
export const MAX_PREPARED_TEXT = 64 * 1024;
/** Names seen once that a connection remembers (a shape seen again among them is prepared). */
const SEEN = 1_000;

/** What a connection should do for a statement: run it prepared (after deallocating `evict`) or unnamed. */
export type Admission = { prepare: false } | { prepare: true; evict: string[] };

/** One connection's prepared request-shaped statements. */
export class ShapedStatements {
  /** Prepared, least recently used first, with their text's length. */
  private readonly held = new Map<string, number>();
  private bytes = 0;
  /** Seen once and not prepared, oldest first. */
  private readonly seen = new Set<string>();

  /** Whether `name` (of a `length`-byte text) runs prepared, and which to deallocate first. */
  admit(name: string, length: number): Admission {
    const size = this.held.get(name);
    if (size !== undefined) {
      // Most recently used: last.
      this.held.delete(name);
      this.held.set(name, size);
      return { prepare: true, evict: [] };
    }
    if (length > MAX_PREPARED_TEXT) return { prepare: false };
    if (!this.seen.delete(name)) {
      this.seen.add(name);
      if (this.seen.size > SEEN) this.seen.delete(this.seen.values().next().value!);
      return { prepare: false };
    }
    const evict: string[] = [];
    for (const [oldest, n] of this.held) {
      if (this.held.size < MAX_SHAPED_STATEMENTS && this.bytes + length <= SHAPED_TEXT_BYTES) break;
      this.held.delete(oldest);
      this.bytes -= n;
      evict.push(oldest);
    }
    this.held.set(name, length);
    this.bytes += length;
    return { prepare: true, evict };
  }

  /** `name` is no longer prepared (deallocated behind the connection's back, or its PREPARE refused). */
  forget(name: string): void {
    const n = this.held.get(name);
    if (n === undefined) return;
    this.held.delete(name);
    this.bytes -= n;
  }

  /** What is held (tests): names and the text bytes together. */
  holding(): { names: string[]; bytes: number } {
    return { names: [...this.held.keys()], bytes: this.bytes };
  }
}
