// Array bounds before items: a body whose array holds more items than its schema's `maxItems` is
// invalid whatever the items are, so validation (which reports every error) sees that array cut
// to `maxItems + 1` items: the bound's error and the first items' errors, never the work of
// checking 349,525 items of a 1 MiB body. The bounds are read once per body schema, through
// `properties`, `items` and `$ref` (where a path's schema does not depend on the value).
import { deref, type OpenApiDocument } from './spec';

export interface ArrayBounds {
  maxItems?: number;
  items?: ArrayBounds;
  properties?: Map<string, ArrayBounds>;
}

/** The array bounds of the schema at `pointer`, or undefined when it has none. */
export function arrayBounds(
  doc: OpenApiDocument,
  schema: unknown,
  pointer: string,
  seen: Set<string> = new Set(),
): ArrayBounds | undefined {
  const { value, pointer: at } = deref(doc, schema, pointer);
  if (!value || typeof value !== 'object' || seen.has(at)) return undefined;
  const inner = new Set(seen).add(at);
  const out: ArrayBounds = {};
  if (typeof value.maxItems === 'number') out.maxItems = value.maxItems;
  if (value.items && typeof value.items === 'object') out.items = arrayBounds(doc, value.items, `${at}/items`, inner);
  if (value.properties && typeof value.properties === 'object') {
    for (const [name, sub] of Object.entries(value.properties as Record<string, unknown>)) {
      const bounds = arrayBounds(doc, sub, `${at}/properties/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`, inner);
      if (bounds) (out.properties ??= new Map()).set(name, bounds);
    }
  }
  return out.maxItems === undefined && !out.items && !out.properties ? undefined : out;
}

/** `value` with every array past its bound cut to `maxItems + 1` items (copies along the way; `value` itself is untouched). */
export function cutToBounds(value: unknown, bounds: ArrayBounds | undefined): unknown {
  if (!bounds || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const kept = bounds.maxItems !== undefined && value.length > bounds.maxItems + 1 ? value.slice(0, bounds.maxItems + 1) : value;
    if (!bounds.items) return kept;
    let changed = kept !== value;
    const items = kept.map((item) => {
      const cut = cutToBounds(item, bounds.items);
      changed ||= cut !== item;
      return cut;
    });
    return changed ? items : value;
  }
  if (!bounds.properties) return value;
  let copy: Record<string, unknown> | undefined;
  for (const [name, sub] of bounds.properties) {
    if (!Object.hasOwn(value, name)) continue;
    const before = (value as Record<string, unknown>)[name];
    const cut = cutToBounds(before, sub);
    if (cut !== before) (copy ??= Object.assign(Object.create(null) as Record<string, unknown>, value))[name] = cut;
  }
  return copy ?? value;
}
