// Every name the delivery statement gives its rows and its parts (render.ts deliveryStatement and
// the render-*.ts modules it is written by), in one place, so that a reviewer reading the printed
// statement (render-statement.test.ts snapshots) finds what each alias stands for here. The
// functions that write the statement pass these between them; aliases used inside one clause only
// (a field's items `y(v, n)`, a tree node's locales `lo` and references `x`, a piece `v(k, t)`, a
// file row `fi`, a kept text `k`) are named where they are written.

/** The parts (CTEs) of the statement, in the order they are written. */
export const PART = {
  /** The page's entries as the caller finds them: `pk` (an `entries.id`) and `pos`, its order. */
  listed: 'listed',
  /** The texts kept of them (kept-texts.ts): `pk`, `root`, `j`. */
  kept: 'kept',
  /** The entries to render: `pk`, `pos`. */
  found: 'found',
  /** The answer's byte budget: `max`, and the bytes `spent` by kept texts. */
  budget: 'budget',
  /** One row per root to render: `pk`, `root` (its place in the answer), `step`. */
  roots: 'roots',
  /** The walk over the roots: `step`, `root`, `j` (its text), `total` (the answer's bytes so far). */
  steps: 'steps',
  /** A breadth-first root's expansion (render-tree.ts): one row per node. */
  tree: 'tree',
  /** Its nodes' files, as holes. */
  held: 'held',
} as const;

/** The row aliases passed between the functions that write the statement. */
export const ROW = {
  /** A row of `found` (or `listed`). */
  found: 'f',
  /** A row of `roots`. */
  root: 'r',
  /** The step before, in the walk over the roots. */
  step: 's',
  /** The text a step writes: `root`, `j`. */
  written: 'w',
  /** An entry row of a summary, or a breadth-first root's. */
  entry: 'e',
  /** A breadth-first node (`tree`), and the entry a reference of it names. */
  node: 'p',
  child: 'r',
  /** A breadth-first root's row of `roots`. */
  treeRoot: 'rt',
} as const;

/** A nested text's entry row at `depth`: the root's `r0`, a related entry's `c<depth>`. */
export const nestedRow = (depth: number) => (depth === 0 ? 'r0' : `c${depth}`);

/** The document row joined to the entry row `a` (store.ts documentJoin). */
export { docRow } from './store';
