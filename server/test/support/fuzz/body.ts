// Invalid bodies derived from an operation's JSON body schema: a valid baseline (the minimal
// instance) mutated at each location the schema describes, plus whole-body garbage (non-JSON,
// truncated JSON, other JSON types, deep nesting, sizes around `x-body-limit`, content types).
// Whether a mutated body is really invalid is decided later by the oracle (Ajv on the spec), so a
// mutation only has to be likely to break something.
import fc from 'fast-check';
import type { OperationSpec } from '../../../src/http/spec';
import { filledText, resourceGenerators, type FilledPlan } from './resource';
import {
  allowedTypes,
  getAt,
  label,
  locations,
  minimal,
  node,
  RawJson,
  setAt,
  defineKey,
  cloneTree,
  type JTree,
  type Location,
  type SchemaNode,
  type BodySpecInfo,
  type JsonType,
} from './schema';

export type BodyPlan =
  | { kind: 'tree'; tree: JTree }
  | { kind: 'text'; text: string }
  | { kind: 'bytes'; hex: string }
  /** The serialised tree cut after `at` (a fraction of its length, at least one character). */
  | { kind: 'truncated'; tree: JTree; at: number }
  /** The serialised tree padded with spaces to exactly `size` bytes. */
  | { kind: 'padded'; tree: JTree; size: number }
  | { kind: 'none' }
  | FilledPlan;

export interface BodyMutation {
  target: 'body';
  category: string;
  label: string;
  plan: BodyPlan;
  /** undefined: `application/json`; null: no Content-Type header. */
  contentType?: string | null;
  /** Sent without Content-Length (chunked). */
  chunked?: boolean;
  /** Why the body is invalid when the schema oracle cannot tell (hand-made multipart bodies). */
  invalid?: string;
}

/**
 * Mutations of one category (at one location): `arb` for random cases, `all` for the values every
 * run tries whatever the seed (each bound plus and minus one, each required property, ...); when
 * `all` is absent, one sample of `arb` is tried.
 */
export interface Generator<T> {
  category: string;
  arb: fc.Arbitrary<T>;
  all?: T[];
}

/** A generator over a list of values; `all` lists the ones tried on every run. */
export function pick<V, T>(
  category: string,
  values: readonly V[],
  f: (v: V) => T,
  always: readonly V[] | 'all' | 'none' = 'none',
): Generator<T> {
  const arb = fc.constantFrom(...values).map(f);
  const all = always === 'all' ? values.map(f) : always === 'none' ? undefined : always.map(f);
  return { category, arb, all };
}

export const HUGE_STRING = 200_000;
const DEPTHS = [100, 1_000, 10_000, 50_000, 100_000];
export const PROTOTYPE_NAMES = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'isPrototypeOf',
  '__defineGetter__',
  'propertyIsEnumerable',
  'toJSON',
  'then',
];
const PROTOTYPE_VALUES: JTree[] = [
  { polluted: true },
  { prototype: { polluted: true } },
  'fuzz',
  1,
  null,
  [],
  true,
  { toString: 'x', valueOf: 1 },
];
export const OVERFLOW_NUMBERS = [
  '9223372036854775807',
  '9223372036854775808',
  '-9223372036854775809',
  '18446744073709551616',
  '2147483648',
  '-2147483649',
  '9007199254740993',
  '1e309',
  '-1e309',
  '1e-400',
  '123456789012345678901234567890',
];

/** `depth` levels of `{"a": ...}` or `[...]` around a leaf, as JSON text. */
export function deepText(depth: number, style: 'object' | 'array'): string {
  return style === 'object' ? '{"a":'.repeat(depth) + '1' + '}'.repeat(depth) : '['.repeat(depth) + ']'.repeat(depth);
}

const WRONG_VALUES: Record<JsonType, JTree[]> = {
  string: ['fuzz-wrong-type', '', '1', 'true', 'null'],
  number: [1.5, -0.5],
  integer: [7, 0, -1],
  boolean: [true, false],
  null: [null],
  array: [[], ['fuzz'], [1, 2]],
  object: [{}, { fuzz: 1 }],
};

const FORMAT_INVALID: Record<string, string[]> = {
  email: ['not-an-email', 'a@', '@example.com', 'a b@example.com', 'fuzz@example.com\n', 'fuzz@@example.com', 'fuzz@example..com'],
  'date-time': [
    '2026-13-01T00:00:00Z',
    '2026-01-01',
    'yesterday',
    '2026-01-01T25:00:00Z',
    '2026-02-30T00:00:00Z',
    '2026-01-01 00:00:00',
    '1e309',
  ],
  date: ['2026-13-01', '01/01/2026', '2026-02-30'],
  uri: ['not a uri', 'http://', '//example.com', 'https://exa mple.com', '::'],
  uuid: ['not-a-uuid', '00000000-0000-4000-8000-00000000000'],
};

const PATTERN_INVALID = ['', ' ', 'UPPER', '-x', '_x', 'a b', 'a/b', '../x', 'é', 'x'.repeat(300), 'a\tb', 'a\nb', '\u202ea'];
const UNICODE = ['\ud800', '\udfff', '😀', '\u202e', '\u200b', 'e\u0301', '\uffff', '\u0001', '\u007f', 'ﷺ'];

const mut = (category: string, lbl: string, plan: BodyPlan, extra: Partial<BodyMutation> = {}): BodyMutation => ({
  target: 'body',
  category,
  label: lbl,
  plan,
  ...extra,
});
const tree = (t: JTree): BodyPlan => ({ kind: 'tree', tree: t });

/** A string of exactly `length` characters, built from `seed` so that it keeps its shape where it can. */
export function stringOfLength(seed: string, length: number): string {
  if (length <= 0) return '';
  if (seed.length >= length) return seed.slice(0, length);
  const at = seed.indexOf('@');
  // Grow the part before an `@` (emails), otherwise the end.
  if (at > 0) return seed.slice(0, at) + seed[at - 1].repeat(length - seed.length) + seed.slice(at);
  const fill = /[a-z]/.test(seed[seed.length - 1] ?? '') ? seed[seed.length - 1] : 'a';
  return (seed || 'a') + fill.repeat(length - (seed || 'a').length);
}

function locationGenerators(loc: Location, numericAny: boolean): Generator<BodyMutation>[] {
  const gens: Generator<BodyMutation>[] = [];
  const { path, node: n, base } = loc;
  const s = n.schema;
  const where = label(path);
  const current = getAt(base, path);
  const put = (v: JTree) => setAt(base, path, v);
  const types = allowedTypes(n);
  const add = (category: string, arb: fc.Arbitrary<BodyMutation>, all?: BodyMutation[]) => gens.push({ category, arb, all });
  const root = path.length === 0;

  // Wrong JSON types.
  const wrong = (Object.keys(WRONG_VALUES) as JsonType[]).filter((t) => !types.has(t) && !(t === 'integer' && types.has('number')));
  if (wrong.length) {
    add(
      'wrong-type',
      fc
        .constantFrom(...wrong)
        .chain((t) =>
          fc.constantFrom(...WRONG_VALUES[t]).map((v) => mut('wrong-type', `${where}: ${t} ${JSON.stringify(v)}`, tree(put(v)))),
        ),
    );
  }
  // Deep nesting in place of the value.
  const deep = ({ depth, style }: { depth: number; style: 'object' | 'array' }) =>
    mut(
      'deep-nesting',
      `${where}: ${depth} levels of ${style === 'object' ? '{"a":…}' : '[…]'}`,
      tree(put(new RawJson(deepText(depth, style)))),
    );
  add(
    'deep-nesting',
    fc.record({ depth: fc.constantFrom(...DEPTHS), style: fc.constantFrom('object' as const, 'array' as const) }).map(deep),
    // The whole body 10,000 levels deep, both ways, on every run.
    root ? [deep({ depth: 10_000, style: 'object' }), deep({ depth: 10_000, style: 'array' })] : undefined,
  );
  // Numbers beyond 64 bits and doubles (where a number fits, or everywhere when the body has none).
  if (types.has('integer') || types.has('number') || !numericAny) {
    const numeric = types.has('integer') || types.has('number');
    gens.push(
      pick(
        'overflow-64',
        OVERFLOW_NUMBERS,
        (raw) => mut('overflow-64', `${where}: ${raw}`, tree(put(new RawJson(raw)))),
        numeric ? ['9223372036854775808', '-9223372036854775809', '2147483648', '1e309'] : 'none',
      ),
    );
  }
  if (types.has('string')) {
    const str = typeof current === 'string' ? current : 'fuzz';
    add(
      'nul',
      fc
        .constantFrom(`${str}\u0000`, `\u0000${str}`, `${str.slice(0, 1)}\u0000${str.slice(1)}`, '\u0000')
        .map((v) => mut('nul', `${where}: NUL in ${JSON.stringify(v)}`, tree(put(v)))),
    );
    add(
      'huge',
      fc
        .constantFrom(HUGE_STRING, 70_000)
        .map((len) => mut('huge', `${where}: string of ${len} characters`, tree(put(stringOfLength(str, len))))),
    );
    add(
      'unicode',
      fc
        .tuple(fc.constantFrom(...UNICODE), fc.boolean())
        .map(([u, before]) =>
          mut('unicode', `${where}: ${JSON.stringify(u)} ${before ? 'before' : 'after'}`, tree(put(before ? u + str : str + u))),
        ),
    );
    const bounds: [string, number][] = [];
    if (typeof s.minLength === 'number') {
      if (s.minLength > 0) bounds.push([`minLength-1 (${s.minLength - 1})`, s.minLength - 1]);
      bounds.push([`minLength (${s.minLength})`, s.minLength]);
    }
    if (typeof s.maxLength === 'number')
      bounds.push([`maxLength (${s.maxLength})`, s.maxLength], [`maxLength+1 (${s.maxLength + 1})`, s.maxLength + 1]);
    if (bounds.length)
      gens.push(
        pick('bound', bounds, ([what, len]) => mut('bound', `${where}: ${what} characters`, tree(put(stringOfLength(str, len)))), 'all'),
      );
    if (typeof s.format === 'string' && FORMAT_INVALID[s.format]) {
      add(
        'format',
        fc.constantFrom(...FORMAT_INVALID[s.format]).map((v) => mut('format', `${where}: ${s.format} ${JSON.stringify(v)}`, tree(put(v)))),
      );
    }
    if (typeof s.pattern === 'string') {
      add(
        'pattern',
        fc
          .constantFrom(...PATTERN_INVALID, str.toUpperCase(), ` ${str}`, `${str}\n`)
          .map((v) => mut('pattern', `${where}: ${JSON.stringify(v.slice(0, 40))}`, tree(put(v)))),
      );
    }
    if (Array.isArray(s.enum) || Array.isArray(s.anyOf) || Array.isArray(s.oneOf)) {
      add(
        'enum',
        fc
          .constantFrom('fuzz-not-in-enum', str.toUpperCase(), `${str} `, ` ${str}`, '*', '')
          .map((v) => mut('enum', `${where}: ${JSON.stringify(v)}`, tree(put(v)))),
      );
    }
  }
  if (types.has('integer') || types.has('number')) {
    const bounds: [string, number][] = [];
    if (typeof s.minimum === 'number') bounds.push([`minimum-1`, s.minimum - 1], ['minimum', s.minimum]);
    if (typeof s.exclusiveMinimum === 'number')
      bounds.push(['exclusiveMinimum', s.exclusiveMinimum], ['exclusiveMinimum+1', s.exclusiveMinimum + 1]);
    if (typeof s.maximum === 'number') bounds.push(['maximum', s.maximum], ['maximum+1', s.maximum + 1]);
    if (typeof s.exclusiveMaximum === 'number')
      bounds.push(['exclusiveMaximum-1', s.exclusiveMaximum - 1], ['exclusiveMaximum', s.exclusiveMaximum]);
    const num = typeof current === 'number' ? current : 1;
    if (types.has('integer') && !types.has('number')) bounds.push(['a fraction', num + 0.5]);
    bounds.push(['zero', 0], ['minus one', -1]);
    gens.push(pick('bound', bounds, ([what, v]) => mut('bound', `${where}: ${what} (${v})`, tree(put(v))), 'all'));
    add(
      'number-text',
      fc.constantFrom('1.0', '1e0', '-0', '1E2', '0.1e1').map((raw) => mut('number-text', `${where}: ${raw}`, tree(put(new RawJson(raw))))),
    );
  }
  if (types.has('array')) {
    const items = s.items && typeof s.items === 'object' ? node(`${n.pointer}/items`) : undefined;
    const arr = Array.isArray(current) ? current : [];
    const one: JTree = arr[0] ?? (items ? minimal(items) : 'fuzz');
    const enumValues = items && Array.isArray(items.schema.enum) ? (items.schema.enum as JTree[]) : undefined;
    const fill = (count: number): JTree[] =>
      Array.from({ length: count }, (_, i) => (enumValues ? enumValues[i % enumValues.length] : cloneTree(one)));
    const bounds: [string, JTree[]][] = [];
    if (typeof s.minItems === 'number') {
      if (s.minItems > 0) bounds.push([`minItems-1 (${s.minItems - 1})`, fill(s.minItems - 1)]);
      bounds.push([`minItems (${s.minItems})`, fill(s.minItems)]);
    }
    if (typeof s.maxItems === 'number')
      bounds.push([`maxItems (${s.maxItems})`, fill(s.maxItems)], [`maxItems+1 (${s.maxItems + 1})`, fill(s.maxItems + 1)]);
    if (s.uniqueItems === true) bounds.push(['a duplicate item', [one, cloneTree(one)]]);
    if (bounds.length) gens.push(pick('bound', bounds, ([what, v]) => mut('bound', `${where}: ${what} items`, tree(put(v))), 'all'));
    add(
      'huge',
      fc
        .constantFrom(50_000, 5_000)
        .map((count) =>
          mut('huge', `${where}: ${count} items`, tree(put(new RawJson(`[${Array(count).fill(JSON.stringify(one)).join(',')}]`)))),
        ),
    );
  }
  if (types.has('object')) {
    const obj =
      current && typeof current === 'object' && !Array.isArray(current) && !(current instanceof RawJson)
        ? (current as Record<string, JTree>)
        : {};
    const props = (s.properties ?? {}) as Record<string, unknown>;
    const required = ((s.required as string[] | undefined) ?? []).filter((r) => r in obj);
    if (required.length) {
      gens.push(
        pick(
          'missing-required',
          required,
          (r) => mut('missing-required', `${where}: without ${r}`, tree(setAt(base, [...path, r], null, true))),
          'all',
        ),
      );
    }
    const withKey = (k: string, v: JTree) => {
      const o = cloneTree(obj) as Record<string, JTree>;
      defineKey(o, k, v);
      return put(o);
    };
    add(
      'unknown-property',
      fc
        .tuple(fc.constantFrom('fuzz_unknown', '', 'a\u0000b', 'FUZZ', ' ', 'x'.repeat(1000)), fc.jsonValue({ maxDepth: 2 }))
        .map(([k, v]) =>
          mut('unknown-property', `${where}: unknown property ${JSON.stringify(k.slice(0, 20))}`, tree(withKey(k, v as JTree))),
        ),
    );
    const proto = ([k, v]: [string, JTree]) =>
      mut('prototype-property', `${where}: property ${k} = ${JSON.stringify(v)}`, tree(withKey(k, v)));
    add(
      'prototype-property',
      fc.tuple(fc.constantFrom(...PROTOTYPE_NAMES), fc.constantFrom(...PROTOTYPE_VALUES)).map(proto),
      // Every prototype name at the top of the body on every run.
      root
        ? PROTOTYPE_NAMES.map((k) =>
            proto([k, k === '__proto__' || k === 'constructor' ? { prototype: { polluted: true }, polluted: true } : 1]),
          )
        : undefined,
    );
    // A known property twice (JSON.parse keeps the last one); the first copy is invalid.
    const known = Object.keys(obj)[0];
    if (known) {
      add(
        'unknown-property',
        fc
          .constant(known)
          .map((k) =>
            mut(
              'unknown-property',
              `${where}: ${k} twice, first one null`,
              tree(
                put(
                  new RawJson(
                    `{${JSON.stringify(k)}:null,${JSON.stringify(k)}:${JSON.stringify(obj[k] instanceof RawJson ? null : obj[k])}}`,
                  ),
                ),
              ),
            ),
          ),
      );
    }
    if (typeof s.minProperties === 'number' && s.minProperties > 0) {
      const m = mut('bound', `${where}: minProperties-1 (no properties)`, tree(put({})));
      add('bound', fc.constant(m), [m]);
    }
    if (typeof s.maxProperties === 'number') {
      const all: Record<string, JTree> = cloneTree(obj) as Record<string, JTree>;
      for (const k of Object.keys(props))
        if (!(k in all)) all[k] = minimal(node(`${n.pointer}/properties/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`), 0, k);
      const m = mut('bound', `${where}: maxProperties+1 (${Object.keys(all).length} properties)`, tree(put(all)));
      add('bound', fc.constant(m), [m]);
    }
    add(
      'huge',
      fc.constant(
        mut(
          'huge',
          `${where}: 10000 unknown properties`,
          tree(put(new RawJson(`{${Array.from({ length: 10_000 }, (_, i) => `"k${i}":0`).join(',')}}`))),
        ),
      ),
    );
  }
  return gens;
}

const NON_JSON = [
  'hello',
  'name=fuzz&x=1',
  '<fuzz/>',
  "{'a': 1}",
  '{a: 1}',
  '{"a": 1,}',
  '[1,]',
  'NaN',
  'undefined',
  '{"a": NaN}',
  '{"a": Infinity}',
  '{"a": 01}',
  '{"a": 0x10}',
  '{"a": "\\x00"}',
  '{"a": "\u0001"}',
  '{"a": "b"}}',
  '{"a"}',
  '{} {}',
  '{}x',
  '\u0000',
  '// c\n{}',
  '/* c */ {}',
  ' ',
  '\n\n',
  '{"a":"\\ud800"}',
  '\ufeff{}',
];
const NON_JSON_BYTES = ['fffefd', '7b226e616d65223a22c328227d', '7b226e616d65223a22eda080227d', 'fffe7b000000', 'c0af'];
const NON_OBJECT = ['null', '[]', '[{}]', '0', '-1', '1.5', '"fuzz"', '""', 'true', 'false', '9223372036854775808', '1e309'];
const WRONG_CONTENT_TYPES: (string | null)[] = [
  null,
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/xml',
  'multipart/form-data',
  'multipart/form-data; boundary=fuzz',
  'application/octet-stream',
  'application/jsonx',
  'json',
  'application/json; charset=utf-16',
  'application/json; charset=fuzz',
  'application/merge-patch+json',
  'APPLICATION/JSON',
  'application/*',
  '*/*',
  'text/json',
  ';',
  '',
];

/** Every generator of invalid bodies for an operation, grouped by category. */
export function bodyGenerators(op: OperationSpec, info: BodySpecInfo): Generator<BodyMutation>[] {
  const gens: Generator<BodyMutation>[] = [];
  const add = (category: string, arb: fc.Arbitrary<BodyMutation>, all?: BodyMutation[]) => gens.push({ category, arb, all });
  const root: SchemaNode | undefined = info.jsonPointer ? node(info.jsonPointer) : undefined;
  const acceptsMultipart = info.mediaTypes.includes('multipart/form-data');

  if (!info.mediaTypes.length) {
    // No documented body: one sent anyway must be ignored or refused, never crash anything.
    if (op.method !== 'get') {
      add(
        'unexpected-body',
        fc
          .constantFrom<[string, string | null]>(
            ['{"a":', 'application/json'],
            ['{}', 'application/json'],
            [deepText(10_000, 'array'), 'application/json'],
            ['fuzz', 'text/plain'],
            ['fuzz', null],
          )
          .map(([text, type]) =>
            mut('unexpected-body', `a body ${JSON.stringify(text.slice(0, 20))} as ${type}`, { kind: 'text', text }, { contentType: type }),
          ),
      );
    }
    return gens;
  }

  if (root) {
    const locs = locations(root);
    const numericAny = locs.some((l) => allowedTypes(l.node).has('integer') || allowedTypes(l.node).has('number'));
    for (const loc of locs) gens.push(...locationGenerators(loc, numericAny));

    const baseline = minimal(root);
    gens.push(
      pick('non-json', NON_JSON, (text) => mut('non-json', `body ${JSON.stringify(text)}`, { kind: 'text', text }), [
        'hello',
        '{"a": 1,}',
        '\u0000',
      ]),
    );
    add(
      'non-json',
      fc.constantFrom(...NON_JSON_BYTES).map((hex) => mut('non-json', `body bytes ${hex}`, { kind: 'bytes', hex })),
    );
    add(
      'truncated-json',
      fc
        .double({ min: 0, max: 1, noNaN: true, maxExcluded: true })
        .map((at) => mut('truncated-json', `baseline cut at ${Math.round(at * 100)}%`, { kind: 'truncated', tree: baseline, at })),
    );
    gens.push(
      pick(
        'non-object-json',
        [...NON_OBJECT, `[${JSON.stringify(baseline)}]`],
        (text) => mut('non-object-json', `body ${text.slice(0, 40)}`, { kind: 'text', text }),
        ['null', '[]', '"fuzz"', '9223372036854775808'],
      ),
    );
    gens.push(
      pick<[BodyPlan, string | null | undefined], BodyMutation>(
        'missing-body',
        [
          [{ kind: 'none' }, null],
          [{ kind: 'text', text: '' }, undefined],
        ],
        ([plan, type]) =>
          mut('missing-body', plan.kind === 'none' ? 'no body' : 'empty body as application/json', plan, { contentType: type }),
        'all',
      ),
    );
    if (!op.streamingBody) {
      // `x-body-limit` minus one, exactly, plus one (declared and chunked), and far over.
      const limit = op.bodyLimit;
      gens.push(
        pick<[string, number, boolean], BodyMutation>(
          'body-limit',
          [
            [`limit-1 (${limit - 1} bytes)`, limit - 1, false],
            [`limit (${limit} bytes)`, limit, false],
            [`limit+1 (${limit + 1} bytes)`, limit + 1, false],
            [`limit+1 (${limit + 1} bytes), chunked`, limit + 1, true],
            [`4 x limit (${limit * 4} bytes), chunked`, limit * 4, true],
          ],
          ([what, size, chunked]) => mut('body-limit', `baseline padded to ${what}`, { kind: 'padded', tree: baseline, size }, { chunked }),
          'all',
        ),
      );
    }
    gens.push(
      pick(
        'content-type',
        WRONG_CONTENT_TYPES,
        (type) =>
          mut('content-type', `baseline as ${type === null ? 'no Content-Type' : JSON.stringify(type)}`, tree(baseline), {
            contentType: type,
          }),
        [null, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data'],
      ),
    );
  }
  gens.push(...resourceGenerators(op, info));
  if (acceptsMultipart) {
    const b = 'fuzzboundary';
    const part = (name: string, extra = '') =>
      `--${b}\r\nContent-Disposition: form-data; name="${name}"; filename="a.txt"${extra}\r\nContent-Type: text/plain\r\n\r\nhello\r\n`;
    // [what, content type, body, invalid]: the last says whether the spec refuses it for certain.
    const bodies: [string, string, string, boolean][] = [
      ['multipart without a boundary', 'multipart/form-data', part('file') + `--${b}--\r\n`, true],
      ['truncated multipart', `multipart/form-data; boundary=${b}`, part('file').slice(0, 60), true],
      ['multipart without a closing boundary', `multipart/form-data; boundary=${b}`, part('file'), true],
      ['multipart with another part name', `multipart/form-data; boundary=${b}`, part('notfile') + `--${b}--\r\n`, true],
      ['multipart with two files', `multipart/form-data; boundary=${b}`, part('file') + part('file') + `--${b}--\r\n`, true],
      [
        'multipart with an empty file',
        `multipart/form-data; boundary=${b}`,
        `--${b}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\n\r\n--${b}--\r\n`,
        false,
      ],
      [
        'multipart with a NUL file name',
        `multipart/form-data; boundary=${b}`,
        part('file').replace('a.txt', 'a\u0000.txt') + `--${b}--\r\n`,
        false,
      ],
      [
        'multipart with a huge part header',
        `multipart/form-data; boundary=${b}`,
        part('file', `; x="${'x'.repeat(100_000)}"`) + `--${b}--\r\n`,
        false,
      ],
      ['multipart garbage', `multipart/form-data; boundary=${b}`, 'garbage', true],
      ['multipart with a prototype part name', `multipart/form-data; boundary=${b}`, part('__proto__') + `--${b}--\r\n`, true],
      ['multipart boundary of 200 characters', `multipart/form-data; boundary=${'b'.repeat(200)}`, 'x', true],
    ];
    gens.push(
      pick(
        'multipart',
        bodies,
        ([what, type, text, invalid]) =>
          mut('multipart', what, { kind: 'text', text }, { contentType: type, invalid: invalid ? what : undefined }),
        'all',
      ),
    );
  }
  return gens;
}

/** The bytes of a plan, with world values filled in. */
export function planBytes(plan: BodyPlan, ser: (t: JTree) => string): Buffer | undefined {
  switch (plan.kind) {
    case 'none':
      return undefined;
    case 'tree':
      return Buffer.from(ser(plan.tree));
    case 'text':
      return Buffer.from(plan.text);
    case 'bytes':
      return Buffer.from(plan.hex, 'hex');
    case 'truncated': {
      const text = ser(plan.tree);
      return Buffer.from(text.slice(0, Math.max(1, Math.min(text.length - 1, Math.floor(plan.at * text.length)))));
    }
    case 'filled':
      return Buffer.from(filledText(plan, ser));
    case 'padded': {
      const text = Buffer.from(ser(plan.tree));
      return text.length >= plan.size ? text : Buffer.concat([text, Buffer.alloc(plan.size - text.length, ' ')]);
    }
  }
}
