// The spec side of the fuzz test: each operation's JSON body and parameter schemas read from the
// bundled document, a minimal valid instance of a schema, the locations of a body a mutation can
// aim at, and the oracle (Ajv on the spec's own schemas) that says whether an input is valid.
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { deref, escapePointer, loadDocument, resolvePointer, type OperationSpec } from '../../../src/http/spec';

export type Schema = Record<string, unknown>;
export type JsonType = 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'array' | 'object';

export const doc = loadDocument();
const DOC_ID = 'fuzz-openapi.json';

/** A schema node with the JSON pointer it lives at (for compiling it with its `$ref`s intact). */
export interface SchemaNode {
  schema: Schema;
  pointer: string;
}

export function node(pointer: string): SchemaNode {
  const { value, pointer: p } = deref(doc, resolvePointer(doc, pointer), pointer);
  return { schema: value ?? {}, pointer: p };
}

export function child(parent: SchemaNode, ...keys: (string | number)[]): SchemaNode {
  const pointer = `${parent.pointer}/${keys.map((k) => escapePointer(String(k))).join('/')}`;
  return node(pointer);
}

// ---- validation oracle -------------------------------------------------------------------------

// The same dialect and formats as the server's validator, without defaults or coercion for bodies
// (the oracle must judge exactly what was sent), with coercion for parameters (they arrive as
// strings, and the spec types them).
function newAjv(coerce: boolean): Ajv2020 {
  const ajv = new Ajv2020({
    strict: false,
    allErrors: false,
    coerceTypes: coerce,
    useDefaults: false,
    validateSchema: false,
    logger: false,
  });
  addFormats(ajv);
  ajv.addSchema(doc, DOC_ID);
  return ajv;
}
const bodyAjv = newAjv(false);
const paramAjv = newAjv(true);
const compiled = new Map<string, ValidateFunction>();

function compile(ajv: Ajv2020, key: string, schema: object): ValidateFunction {
  let v = compiled.get(key);
  if (!v) {
    v = ajv.compile(schema);
    compiled.set(key, v);
  }
  return v;
}

/** Whether `value` is valid against the schema at `pointer`, and why not. */
export function validateAt(pointer: string, value: unknown): { valid: boolean; reason?: string } {
  const v = compile(bodyAjv, `body:${pointer}`, { $ref: `${DOC_ID}#${pointer}` });
  if (v(value)) return { valid: true };
  const e = v.errors?.[0];
  return { valid: false, reason: e ? `${e.instancePath || '/'} ${e.message}` : 'invalid' };
}

/** The operation's parameters (path and query) judged like the server does: strings coerced to the spec's types. */
export function validateParams(op: OperationSpec, values: Record<string, unknown>): { valid: boolean; reason?: string } {
  const own = op.parameters.filter((p) => p.in !== 'header');
  if (!own.length) return { valid: true };
  const schema = {
    type: 'object',
    properties: Object.fromEntries(own.map((p) => [p.name, { $ref: `${DOC_ID}#${p.schemaPointer}` }])),
    required: own.filter((p) => p.required).map((p) => p.name),
  };
  const v = compile(paramAjv, `params:${op.operationId}`, schema);
  // Coercion works in place, on a copy; only the declared names matter to the spec.
  const copy: Record<string, unknown> = {};
  for (const p of own) if (Object.prototype.hasOwnProperty.call(values, p.name)) copy[p.name] = structuredClone(values[p.name]);
  if (v(copy)) return { valid: true };
  const e = v.errors?.[0];
  return { valid: false, reason: e ? `${e.instancePath || '/'} ${e.message}` : 'invalid' };
}

// ---- the operation's body ------------------------------------------------------------------------

/** Pointer of the operation object (the parent of `responses`). */
export const operationPointer = (op: OperationSpec) => op.responsesPointer.replace(/\/responses$/, '');

export interface BodySpecInfo {
  /** Pointer to the `application/json` schema, streaming operations included. */
  jsonPointer?: string;
  /** Media types the spec documents for the body. */
  mediaTypes: string[];
}

export function bodyInfo(op: OperationSpec): BodySpecInfo {
  const opNode = resolvePointer(doc, operationPointer(op));
  if (!opNode.requestBody) return { mediaTypes: [] };
  const { value, pointer } = deref(doc, opNode.requestBody, `${operationPointer(op)}/requestBody`);
  const content = (value.content ?? {}) as Record<string, unknown>;
  const mediaTypes = Object.keys(content);
  return {
    jsonPointer: content['application/json'] ? `${pointer}/content/${escapePointer('application/json')}/schema` : undefined,
    mediaTypes,
  };
}

// ---- types ----------------------------------------------------------------------------------------

const ALL_TYPES: JsonType[] = ['string', 'number', 'integer', 'boolean', 'null', 'array', 'object'];

function typeOf(v: unknown): JsonType {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v as JsonType;
}

/** The JSON types a schema admits (all of them when it does not say). */
export function allowedTypes(n: SchemaNode): Set<JsonType> {
  const s = n.schema;
  if (typeof s.type === 'string') return new Set(s.type === 'number' ? ['number', 'integer'] : [s.type as JsonType]);
  if (Array.isArray(s.type))
    return new Set((s.type as JsonType[]).flatMap((t) => (t === 'number' ? ['number', 'integer'] : [t])) as JsonType[]);
  if ('const' in s) return new Set([typeOf(s.const)]);
  if (Array.isArray(s.enum)) return new Set((s.enum as unknown[]).map(typeOf));
  for (const k of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(s[k])) {
      const out = new Set<JsonType>();
      (s[k] as unknown[]).forEach((_b, i) => allowedTypes(child(n, k, i)).forEach((t) => out.add(t)));
      return out;
    }
  }
  if (s.properties || s.required) return new Set(['object']);
  if (s.items) return new Set(['array']);
  return new Set(ALL_TYPES);
}

export function primaryType(n: SchemaNode): JsonType | undefined {
  const types = [...allowedTypes(n)];
  if (types.length === ALL_TYPES.length) return undefined;
  return types.find((t) => t !== 'null') ?? types[0];
}

/** The first branch of anyOf/oneOf, or the node itself. */
export function firstBranch(n: SchemaNode): SchemaNode {
  for (const k of ['anyOf', 'oneOf'] as const)
    if (Array.isArray(n.schema[k]) && (n.schema[k] as unknown[]).length) return firstBranch(child(n, k, 0));
  return n;
}

// ---- minimal valid instances ----------------------------------------------------------------------

/** A value from the test's world, filled in when the request is built (a user id, say). */
export class WorldRef {
  constructor(readonly key: string) {}
}

/** JSON text inserted as is (numbers JavaScript cannot hold, deep nesting). */
export class RawJson {
  constructor(readonly text: string) {}
}

export type JTree = null | boolean | number | string | WorldRef | RawJson | JTree[] | { [k: string]: JTree };

const STRING_CANDIDATES = [
  'fuzz',
  'fuzz-secret-value',
  'en-US',
  'a',
  'fuzz_name',
  'https://example.com/fuzz',
  'fuzz@example.com',
  'aGVsbG8gZnV6eg==',
];
const FORMAT_CANDIDATES: Record<string, string> = {
  email: 'fuzz@example.com',
  'date-time': '2026-01-01T00:00:00.000000Z',
  date: '2026-01-01',
  time: '12:00:00Z',
  uri: 'https://example.com/fuzz',
  'uri-reference': '/fuzz',
  uuid: '00000000-0000-4000-8000-000000000000',
  hostname: 'example.com',
  ipv4: '127.0.0.1',
};

function minimalString(n: SchemaNode): string {
  const s = n.schema;
  const ok = (c: string) => validateAt(n.pointer, c).valid;
  const candidates = [
    ...(s.contentEncoding === 'base64' ? ['aGVsbG8gZnV6eg=='] : []),
    ...(typeof s.format === 'string' && FORMAT_CANDIDATES[s.format] ? [FORMAT_CANDIDATES[s.format]] : []),
    ...(typeof s.example === 'string' ? [s.example] : []),
    ...STRING_CANDIDATES,
  ];
  for (const c of candidates) if (ok(c)) return c;
  const min = typeof s.minLength === 'number' ? s.minLength : 1;
  for (const ch of ['a', '0', 'A']) if (ok(ch.repeat(Math.max(min, 1)))) return ch.repeat(Math.max(min, 1));
  return candidates[0];
}

function minimalNumber(n: SchemaNode, integer: boolean): number {
  const s = n.schema;
  let v = 1;
  if (typeof s.minimum === 'number') v = s.minimum;
  else if (typeof s.exclusiveMinimum === 'number') v = integer ? Math.floor(s.exclusiveMinimum) + 1 : s.exclusiveMinimum + 1;
  if (typeof s.maximum === 'number' && v > s.maximum) v = s.maximum;
  return v;
}

/**
 * World values that make a baseline body meaningful, by property name and type: a creator of the
 * workspace for `user_id`, the test's own receiver for a webhook `url`. Anything else comes from
 * the schema alone.
 */
export const PROPERTY_HINTS: Record<string, { type: JsonType; ref: WorldRef }> = {
  user_id: { type: 'integer', ref: new WorldRef('user_id') },
  url: { type: 'string', ref: new WorldRef('webhook_url') },
};

/**
 * The smallest valid instance: required properties only (more while `minProperties` asks), the
 * first enum value, the lower bound, a string that passes the format and pattern.
 */
export function minimal(n0: SchemaNode, depth = 0, propName?: string): JTree {
  const n = firstBranch(n0);
  const s = n.schema;
  const hint =
    propName !== undefined && Object.prototype.hasOwnProperty.call(PROPERTY_HINTS, propName) ? PROPERTY_HINTS[propName] : undefined;
  if (hint && allowedTypes(n).has(hint.type)) return hint.ref;
  if ('const' in s) return s.const as JTree;
  if (Array.isArray(s.enum)) return ((s.enum as JTree[]).find((v) => v !== null) ?? s.enum[0]) as JTree;
  if ('default' in s && validateAt(n.pointer, s.default).valid && typeof s.default !== 'object') return s.default as JTree;
  if (depth > 12) return null;
  switch (primaryType(n)) {
    case 'object': {
      const out: Record<string, JTree> = {};
      const props = (s.properties ?? {}) as Record<string, unknown>;
      for (const r of (s.required as string[] | undefined) ?? [])
        out[r] = r in props ? minimal(child(n, 'properties', r), depth + 1, r) : 'fuzz';
      const minProps = typeof s.minProperties === 'number' ? s.minProperties : 0;
      for (const k of Object.keys(props)) {
        if (Object.keys(out).length >= minProps) break;
        if (!(k in out)) out[k] = minimal(child(n, 'properties', k), depth + 1, k);
      }
      return out;
    }
    case 'array': {
      const count = typeof s.minItems === 'number' ? s.minItems : 0;
      if (!count || !s.items) return [];
      const items = child(n, 'items');
      const values = Array.isArray(items.schema.enum) ? (items.schema.enum as JTree[]) : [minimal(items, depth + 1)];
      return Array.from({ length: count }, (_, i) => values[i % values.length]);
    }
    case 'string':
      return minimalString(n);
    case 'integer':
      return minimalNumber(n, true);
    case 'number':
      return minimalNumber(n, false);
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return {};
  }
}

// ---- locations ------------------------------------------------------------------------------------

export type PathSeg = string | number;

/** A place in a body a mutation can aim at: its path, schema, and a valid body that has it. */
export interface Location {
  path: PathSeg[];
  node: SchemaNode;
  /** The baseline body with this location present (optional properties filled in). */
  base: JTree;
  /** Whether the location's property is required by its parent. */
  required: boolean;
}

export const label = (path: PathSeg[]) => (path.length ? path.join('.') : '(body)');

export function cloneTree(t: JTree): JTree {
  if (Array.isArray(t)) return t.map(cloneTree);
  if (t && typeof t === 'object' && !(t instanceof WorldRef) && !(t instanceof RawJson)) {
    const out: Record<string, JTree> = {};
    for (const k of Object.keys(t)) defineKey(out, k, cloneTree((t as Record<string, JTree>)[k]));
    return out;
  }
  return t;
}

/** Sets an own property, `__proto__` included. */
export function defineKey(o: Record<string, JTree>, k: string, v: JTree): void {
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
}

export function getAt(t: JTree, path: PathSeg[]): JTree {
  return path.reduce<JTree>((acc, seg) => (acc as Record<string, JTree>)?.[seg as string], t);
}

/** A copy of `t` with the value at `path` replaced (or removed with `remove`). */
export function setAt(t: JTree, path: PathSeg[], value: JTree, remove = false): JTree {
  if (!path.length) return value;
  const root = cloneTree(t);
  let cur = root as Record<string, JTree>;
  for (const seg of path.slice(0, -1)) cur = cur[seg as string] as Record<string, JTree>;
  const last = path[path.length - 1];
  if (remove) {
    if (Array.isArray(cur)) cur.splice(Number(last), 1);
    else delete cur[last as string];
  } else if (Array.isArray(cur)) cur[Number(last)] = value;
  else defineKey(cur, String(last), value);
  return root;
}

/** Every location of a body schema, breadth first, up to a depth. */
export function locations(root: SchemaNode, maxDepth = 6): Location[] {
  const out: Location[] = [];
  const baseline = minimal(root);
  const walk = (n0: SchemaNode, path: PathSeg[], base: JTree, required: boolean, seen: string[]) => {
    const n = firstBranch(n0);
    out.push({ path, node: n0, base, required });
    if (path.length >= maxDepth || seen.includes(n.pointer)) return;
    const s = n.schema;
    const type = primaryType(n);
    if (type === 'object' && s.properties) {
      const req = new Set((s.required as string[] | undefined) ?? []);
      for (const k of Object.keys(s.properties as object)) {
        const cn = child(n, 'properties', k);
        const cur = getAt(base, [...path, k]);
        const withIt = cur === undefined ? setAt(base, [...path, k], minimal(cn, 0, k)) : base;
        walk(cn, [...path, k], withIt, req.has(k), [...seen, n.pointer]);
      }
    } else if (type === 'array' && s.items && typeof s.items === 'object') {
      const cn = child(n, 'items');
      const arr = (getAt(base, path) as JTree[]) ?? [];
      const withIt = arr.length ? base : setAt(base, path, [minimal(cn)]);
      walk(cn, [...path, 0], withIt, true, [...seen, n.pointer]);
    }
  };
  walk(root, [], baseline, true, []);
  return out;
}

// ---- serialising -----------------------------------------------------------------------------------

/** JSON text of a tree, with world values filled in and raw pieces inserted as they are. */
export function serialize(t: JTree, world: (key: string) => JTree): string {
  if (t instanceof RawJson) return t.text;
  if (t instanceof WorldRef) return serialize(world(t.key), world);
  if (Array.isArray(t)) return `[${t.map((v) => serialize(v, world)).join(',')}]`;
  if (t && typeof t === 'object')
    return `{${Object.keys(t)
      .map((k) => `${JSON.stringify(k)}:${serialize((t as Record<string, JTree>)[k], world)}`)
      .join(',')}}`;
  return JSON.stringify(t) ?? 'null';
}
