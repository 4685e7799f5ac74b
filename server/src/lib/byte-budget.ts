// The size of an answer, counted before it is sent: an answer over its limit is refused with the
// limit's error instead. Answers are JSON text built by PostgreSQL (core/content/render.ts,
// core/content/query/project.ts), which stops building past the limit; what Node adds (file
// objects, envelopes, a batch's members) is counted here too, so the count of a whole answer is
// its size in UTF-8 bytes.
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

  /** Counts `bytes` more; throws `over()` past the limit. */
  spend(bytes: number): void {
    this.used += bytes;
    if (this.used > this.limit) throw this.over();
  }
}
