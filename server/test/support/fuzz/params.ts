// Invalid path and query parameters, from the operation's declared parameters and their schemas.
// Values are raw URL text (already percent-encoded), so that malformed encodings reach the server.
import fc from 'fast-check';
import type { OperationSpec, ParameterSpec } from '../../../src/http/spec';
import { allowedTypes, node } from './schema';
import type { Generator } from './body';
import { OVERFLOW_NUMBERS, PROTOTYPE_NAMES } from './body';

/** A path parameter value: raw URL text, or one taken from the world when the request is built. */
export type PathValue = { raw: string } | { world: 'foreign' | 'plus1' | 'minus1' };

export interface PathMutation {
  target: 'path';
  category: 'path-param';
  label: string;
  param: string;
  value: PathValue;
  /** The value can name no resource at all (so a 2xx answer is wrong whatever the spec says). */
  namesNothing: boolean;
}

export interface QueryMutation {
  target: 'query';
  category: 'query-param' | 'query-unknown';
  label: string;
  /** Replaces the parameter's baseline value (null: drops it); raw URL text. */
  set?: { name: string; raw: string | null };
  /** Appended to the query string as it is. */
  extra?: string;
}

/** Every byte but the unreserved ones as %XX (lone surrogates become U+FFFD, as UTF-8 has no place for them). */
export function percentEncode(s: string): string {
  const out = [...Buffer.from(s, 'utf8')]
    .map((b) =>
      /[A-Za-z0-9_~.-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');
  // `.` and `..` are dot segments that clients resolve away; keep them a plain value.
  return /^\.{1,2}$/.test(out) ? `${out}x` : out;
}

export const HUGE_PARAM = 4_000; // under Node's 16 KiB header limit, far over any name length

const INTEGER_TEXT = [
  '0',
  '-1',
  '1.5',
  '2147483647',
  '2147483648',
  '-2147483649',
  ...OVERFLOW_NUMBERS.filter((n) => !n.includes('e-')),
  '1e3',
  '0x1F',
  '01',
  '%201',
  '1%20',
  '+1',
  '1_000',
  'abc',
  'NaN',
  'Infinity',
  '-Infinity',
  'true',
  'null',
  '[]',
  '%00',
  '1%00',
  '9'.repeat(HUGE_PARAM),
];

// Values that name no resource of any kind: prototype names, NUL, broken encodings, huge strings.
const NOTHING = [
  ...PROTOTYPE_NAMES,
  '%00',
  'a%00b',
  '%2F',
  'a%2Fb',
  '%',
  '%zz',
  '%ED%A0%80',
  '%C0%AF',
  '%FF',
  '%F0%9F%92%A9',
  'a%20b',
  '%0A',
  '%3Cscript%3E',
  '%27%20OR%201%3D1--',
  'x'.repeat(HUGE_PARAM),
  '%E2%80%AE',
];
const STRING_TEXT = [...NOTHING, 'UPPER', 'a', '-', '_', '0', '~'];

const isIntegerParam = (p: ParameterSpec) => {
  const types = allowedTypes(node(p.schemaPointer));
  return types.has('integer') && !types.has('string');
};

const ALWAYS_INTEGER = [
  '0',
  '-1',
  '2147483648',
  '9223372036854775808',
  '1e309',
  'abc',
  '%00',
  '__proto__',
  'constructor',
  '9'.repeat(HUGE_PARAM),
];
const ALWAYS_STRING = ['__proto__', 'constructor', '%00', '%', 'x'.repeat(HUGE_PARAM)];

/** One generator per path parameter: the values above (some on every run), random strings, resources of another workspace. */
export function pathGenerators(op: OperationSpec): Generator<PathMutation>[] {
  return op.parameters
    .filter((p) => p.in === 'path')
    .map((p) => {
      const integer = isIntegerParam(p);
      const mutation = ([what, value, namesNothing]: [string, PathValue, boolean]): PathMutation => ({
        target: 'path',
        category: 'path-param',
        label: `{${p.name}} = ${what.length > 40 ? `${what.slice(0, 12)}… (${what.length} characters)` : JSON.stringify(what)}`,
        param: p.name,
        value,
        namesNothing,
      });
      const raw = (integer ? [...INTEGER_TEXT, ...NOTHING] : STRING_TEXT).map((v): [string, PathValue, boolean] => [
        v,
        { raw: v },
        NOTHING.includes(v),
      ]);
      const world: [string, PathValue, boolean][] = [
        ['a resource of another workspace', { world: 'foreign' }, false],
        ...(integer
          ? ([
              ['the real id + 1', { world: 'plus1' }, false],
              ['the real id - 1', { world: 'minus1' }, false],
            ] as [string, PathValue, boolean][])
          : []),
      ];
      const values = [...raw, ...world];
      const always = values.filter(
        ([v, value]) => ('world' in value && value.world === 'foreign') || (integer ? ALWAYS_INTEGER : ALWAYS_STRING).includes(v),
      );
      const arb = fc
        .oneof(
          { weight: 4, arbitrary: fc.constantFrom(...values) },
          {
            weight: 1,
            arbitrary: fc
              .string({ unit: 'binary', minLength: 1, maxLength: 12 })
              .map((s): [string, PathValue, boolean] => [s, { raw: percentEncode(s) }, false]),
          },
        )
        .map(mutation);
      return { category: 'path-param', arb, all: always.map(mutation) };
    });
}

function queryValues(p: ParameterSpec): string[] {
  const s = node(p.schemaPointer).schema;
  const out: string[] = [];
  for (const [k, d] of [
    ['minimum', -1],
    ['maximum', 1],
  ] as const) {
    if (typeof s[k] === 'number') out.push(String((s[k] as number) + d), String(s[k]));
  }
  if (typeof s.exclusiveMinimum === 'number') out.push(String(s.exclusiveMinimum));
  if (typeof s.exclusiveMaximum === 'number') out.push(String(s.exclusiveMaximum));
  if (typeof s.maxLength === 'number') out.push('x'.repeat(s.maxLength + 1));
  if (typeof s.minLength === 'number' && s.minLength > 0) out.push('x'.repeat(s.minLength - 1));
  if (Array.isArray(s.enum)) out.push('fuzz-not-in-enum', String(s.enum[0]).toUpperCase(), `${String(s.enum[0])}%20`);
  const types = allowedTypes(node(p.schemaPointer));
  if (types.has('integer') || types.has('number')) out.push(...INTEGER_TEXT);
  else out.push(...STRING_TEXT);
  out.push('', '%00');
  return out;
}

const UNKNOWN_QUERY = [
  'fuzz_unknown=1',
  '__proto__=1',
  '__proto__[polluted]=1',
  '__proto__.polluted=1',
  'constructor=1',
  'constructor[prototype][polluted]=1',
  'prototype=1',
  'hasOwnProperty=1',
  'toString=1',
  'valueOf=x',
  '=x',
  'x',
  '&&&',
  '%=1',
  'a=%',
  'a=%zz',
  'a=%00',
  '%00=1',
  `${'k'.repeat(HUGE_PARAM)}=1`,
  Array.from({ length: 1000 }, (_, i) => `k${i}=1`).join('&'),
];

const ALWAYS_UNKNOWN = ['fuzz_unknown=1', '__proto__[polluted]=1', 'constructor[prototype][polluted]=1', 'a=%00'];

export function queryGenerators(op: OperationSpec): Generator<QueryMutation>[] {
  const gens: Generator<QueryMutation>[] = [];
  for (const p of op.parameters.filter((q) => q.in === 'query')) {
    const s = node(p.schemaPointer).schema;
    const set = (raw: string): QueryMutation => ({
      target: 'query',
      category: 'query-param',
      label: `${p.name}=${raw.length > 40 ? `${raw.slice(0, 12)}… (${raw.length} characters)` : raw}`,
      set: { name: p.name, raw },
    });
    const shape = ([what, extra]: [string, string | undefined]): QueryMutation => ({
      target: 'query',
      category: 'query-param',
      label: `${p.name} ${what}`,
      set: { name: p.name, raw: null },
      extra,
    });
    const shapes: [string, string | undefined][] = [
      ['twice', `${p.name}=1&${p.name}=2`],
      ['as an array', `${p.name}[]=1`],
      ['as an object', `${p.name}[a]=1`],
      ...(p.required ? ([['missing', undefined]] as [string, string | undefined][]) : []),
    ];
    // Each bound minus and plus one (outside), on every run; the bounds themselves in random cases.
    const bounds: string[] = [];
    for (const [k, d] of [
      ['minimum', -1],
      ['maximum', 1],
    ] as const)
      if (typeof s[k] === 'number') bounds.push(String((s[k] as number) + d));
    gens.push({
      category: 'query-param',
      arb: fc.oneof(fc.constantFrom(...queryValues(p)).map(set), fc.constantFrom(...shapes).map(shape)),
      all: [
        ...bounds.map(set),
        ...(allowedTypes(node(p.schemaPointer)).has('string') ? [] : [set('abc'), set('9223372036854775808')]),
        set('%00'),
        shape(shapes[0]),
      ],
    });
  }
  gens.push({
    category: 'query-unknown',
    arb: fc.constantFrom(...UNKNOWN_QUERY).map(unknown),
    all: ALWAYS_UNKNOWN.map(unknown),
  });
  return gens;
}

const unknown = (extra: string): QueryMutation => ({
  target: 'query',
  category: 'query-unknown',
  label: extra.length > 60 ? `${extra.slice(0, 30)}… (${extra.length} characters)` : extra,
  extra,
});
