// The size of an answer counted while it is built, piece by piece, so that one over its limit
// stops there: before the rest is read, rendered and serialized, never after. Each piece is
// counted as the JSON text it becomes (UTF-8), so the count of a whole answer is its size.
import { stringifyExact } from './exact-json';

/** The UTF-8 bytes of `value` as JSON (`exact`: it may hold LosslessNumbers, lib/exact-json.ts). */
export const jsonBytes = (value: unknown, exact = false): number => Buffer.byteLength(exact ? stringifyExact(value) : (JSON.stringify(value) ?? 'null'));

export class ByteBudget {
  private used = 0;

  constructor(
    readonly limit: number,
    /** The refusal once the limit is passed (a `422` naming what to ask for less of). */
    private readonly over: () => Error,
  ) {}

  get spent(): number {
    return this.used;
  }

  /** Counts `bytes` more (fewer when negative: a `null` replaced); throws `over()` past the limit. */
  spend(bytes: number): void {
    this.used += bytes;
    if (this.used > this.limit) throw this.over();
  }

  /** Counts the JSON text of `value`. */
  spendJson(value: unknown, exact = false): void {
    this.spend(jsonBytes(value, exact));
  }

  /**
   * Counts `value` put into a field that held `[]` or `null` when it was counted: a comma after
   * an array's earlier items, or the `null` it replaces. `value` itself is counted unless it is
   * `counted` elsewhere (an entry rendered on its own, when its fields are filled).
   */
  spendPut(container: unknown[] | null, value: unknown, counted = false, exact = false): void {
    this.spend((container === null ? -4 : container.length > 0 ? 1 : 0) + (counted ? 0 : jsonBytes(value, exact)));
  }

  /** Counts an array of `n` items counted one by one: its brackets and commas. */
  spendArray(n: number): void {
    this.spend(n > 0 ? n + 1 : 2);
  }
}
