// Bodies at an operation's size limit, to check that no input within the limit costs more than
// a bounded time or stalls other requests: at each of the shallowest arrays of the body schema,
// as many copies of a valid item and of an invalid one (`0`, or `{}` where items are not objects)
// as fit in `x-body-limit`; the first free-text string as long as fits; an object with as many
// keys as fit. Built when the request is (`filled` plans), so a world value in an item is filled
// in first. The harness times these cases and asks `/health` while each is in flight.
import fc from 'fast-check';
import type { OperationSpec } from '../../../src/http/spec';
import type { BodyMutation, BodyPlan, Generator } from './body';
import {
  child,
  firstBranch,
  label,
  locations,
  minimal,
  node,
  primaryType,
  RawJson,
  setAt,
  type BodySpecInfo,
  type JTree,
  type PathSeg,
} from './schema';

export const RESOURCE = 'resource';
/** The arrays filled per operation: the shallowest ones (each array costs two bodies at the limit). */
const ARRAYS_PER_OPERATION = 2;

export type FilledPlan = { kind: 'filled'; tree: JTree; at: PathSeg[]; fill: 'items' | 'string' | 'keys'; item: JTree; size: number };

const plan = (tree: JTree, at: PathSeg[], fill: FilledPlan['fill'], item: JTree, size: number): BodyPlan => ({
  kind: 'filled',
  tree,
  at,
  fill,
  item,
  size,
});
const mutation = (what: string, p: BodyPlan): BodyMutation => ({ target: 'body', category: RESOURCE, label: what, plan: p });

export function resourceGenerators(op: OperationSpec, info: BodySpecInfo): Generator<BodyMutation>[] {
  if (!info.jsonPointer || op.streamingBody) return [];
  const size = op.bodyLimit;
  const root = node(info.jsonPointer);
  const locs = locations(root);
  const all: BodyMutation[] = [];
  const arrays = locs
    .filter((l) => primaryType(firstBranch(l.node)) === 'array' && firstBranch(l.node).schema.items)
    .sort((a, b) => a.path.length - b.path.length);
  for (const loc of arrays.slice(0, ARRAYS_PER_OPERATION)) {
    const items = child(firstBranch(loc.node), 'items');
    const valid = minimal(items);
    const invalid: JTree = primaryType(firstBranch(items)) === 'object' ? 0 : {};
    all.push(mutation(`${label(loc.path)}: valid items filling ${size} bytes`, plan(loc.base, loc.path, 'items', valid, size)));
    all.push(mutation(`${label(loc.path)}: invalid items filling ${size} bytes`, plan(loc.base, loc.path, 'items', invalid, size)));
  }
  const text = locs.find((l) => {
    const s = firstBranch(l.node).schema;
    return primaryType(firstBranch(l.node)) === 'string' && !s.enum && !s.format && !s.pattern && !('const' in s);
  });
  if (text) all.push(mutation(`${label(text.path)}: a string filling ${size} bytes`, plan(text.base, text.path, 'string', null, size)));
  all.push(mutation(`(body): keys filling ${size} bytes`, plan(minimal(root), [], 'keys', 0, size)));
  return all.length ? [{ category: RESOURCE, arb: fc.constantFrom(...all), all }] : [];
}

/** The text of a `filled` plan: the tree with the value at `at` grown until the body is `size` bytes (ASCII, so characters are bytes). */
export function filledText(p: FilledPlan, ser: (t: JTree) => string): string {
  const MARK = '"\u0001fill\u0001"';
  const outer = p.fill === 'keys' ? '' : ser(setAt(p.tree, p.at, new RawJson(MARK)));
  const room = p.size - (outer.length - MARK.length);
  let value: string;
  if (p.fill === 'string') value = `"${'a'.repeat(Math.max(0, room - 2))}"`;
  else if (p.fill === 'items') {
    const item = ser(p.item);
    value = `[${new Array(Math.max(0, Math.floor((room - 1) / (item.length + 1)))).fill(item).join(',')}]`;
  } else {
    // Keys of 8 digits: `"k0000001":0,` is 13 bytes.
    const count = Math.max(0, Math.floor((p.size - 1) / 13));
    value = `{${Array.from({ length: count }, (_, i) => `"k${String(i).padStart(7, '0')}":0`).join(',')}}`;
    return value;
  }
  return outer.replace(MARK, value);
}
