// From a query body (its shape already checked against the spec) to the typed tree: data path
// syntax, metadata selectors and their operand types, group nesting and size limits, projection
// rules. Every problem is reported at its request path (`filter.$or.1.title.gt`), all at once.
import { fieldDetail, fieldError, type FieldErrors } from '../../lib/field-errors';
import { META_FIELDS, type Condition, type FilterNode, type MetaName, type Scalar, type SortKey, type Target } from './ast';

export const QUERY_LIMITS = {
  groupDepth: 8,
  /** Groups, operators and `in` operands together. */
  filterItems: 100,
  pathSteps: 12,
  pathLength: 256,
};

const SEGMENT = /^[A-Za-z0-9_-]+$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})?)?$/;

/** A data path (`a.b.c`) as its segments, or an error message. */
export function parseDataPath(text: string): string[] | string {
  if (text.length > QUERY_LIMITS.pathLength) return `must not be longer than ${QUERY_LIMITS.pathLength} characters`;
  const segments = text.split('.');
  if (segments.length > QUERY_LIMITS.pathSteps) return `must not have more than ${QUERY_LIMITS.pathSteps} steps`;
  if (!segments.every((s) => SEGMENT.test(s))) return 'must be dot-separated property names of letters, digits, hyphens and underscores';
  return segments;
}

/** A filter or sort target: a metadata selector or a data path. */
function parseTarget(text: string): Target | string {
  if (text.startsWith('@'))
    return Object.hasOwn(META_FIELDS, text)
      ? { kind: 'meta', name: text, ...META_FIELDS[text as MetaName] }
      : 'is not a known metadata selector';
  const path = parseDataPath(text);
  return typeof path === 'string' ? path : { kind: 'data', path };
}

/** Whether an operand fits a metadata column (data paths take any JSON scalar). */
function operandProblem(target: Target, op: Condition['op'], value: unknown): string | undefined {
  if (target.kind !== 'meta' || value === null) return undefined;
  const type = target.type;
  if (['startsWith', 'endsWith', 'contains'].includes(op) && type !== 'string' && type !== 'status')
    return `cannot be used on ${target.name}`;
  switch (type) {
    case 'integer':
      return Number.isInteger(value) ? undefined : 'must be an integer';
    case 'string':
      return typeof value === 'string' ? undefined : 'must be a string';
    case 'status':
      return typeof value !== 'string'
        ? 'must be a string'
        : ['eq', 'ne', 'in'].includes(op) && !['draft', 'published'].includes(value)
          ? 'must be draft or published'
          : undefined;
    case 'timestamp':
      return typeof value === 'string' && TIMESTAMP.test(value) && !Number.isNaN(Date.parse(value))
        ? undefined
        : 'must be an ISO 8601 timestamp';
    default:
      return 'cannot be filtered here';
  }
}

type RawFilter = Record<string, unknown>;

export function parseFilter(filter: RawFilter | undefined, errors: FieldErrors, base = 'filter'): FilterNode {
  let items = 0;
  const walk = (node: RawFilter, path: string, depth: number): FilterNode => {
    const out: FilterNode[] = [];
    for (const [key, value] of Object.entries(node)) {
      const at = `${path}.${key}`;
      if (key === '$and' || key === '$or') {
        items++;
        if (depth + 1 > QUERY_LIMITS.groupDepth) {
          errors[at] = [
            fieldError('depth', 'The :attribute field must not nest filter groups more than :depth deep.', {
              depth: QUERY_LIMITS.groupDepth,
            }),
          ];
          continue;
        }
        const list = value as RawFilter[];
        out.push({ kind: key === '$and' ? 'and' : 'or', items: list.map((child, i) => walk(child, `${at}.${i}`, depth + 1)) });
        continue;
      }
      const target = parseTarget(key);
      if (typeof target === 'string') {
        errors[at] = [fieldDetail('target', target)];
        continue;
      }
      for (const [op, operand] of Object.entries(value as Record<string, unknown>)) {
        const opAt = `${at}.${op}`;
        items += op === 'in' ? 1 + (operand as unknown[]).length : 1;
        const values = op === 'in' ? (operand as unknown[]) : [operand];
        const problem = values.map((v) => operandProblem(target, op as Condition['op'], v)).find(Boolean);
        if (problem) {
          errors[opAt] = [fieldDetail('operand', problem)];
          continue;
        }
        const condition =
          op === 'in' ? { op: 'in' as const, target, values: operand as (Scalar | null)[] } : ({ op, target, value: operand } as Condition);
        out.push({ kind: 'condition', ...condition });
      }
    }
    return out.length === 1 ? out[0] : { kind: 'and', items: out };
  };
  const tree = walk(filter ?? {}, base, 0);
  if (items > QUERY_LIMITS.filterItems)
    errors[base] = [
      fieldError('size', 'The :attribute field must not hold more than :limit groups, operators and in operands in total.', {
        limit: QUERY_LIMITS.filterItems,
      }),
    ];
  return tree;
}

export function parseSort(
  sort: { field: string; direction: 'asc' | 'desc'; type?: 'string' | 'number' | 'boolean' }[] | undefined,
  errors: FieldErrors,
): SortKey[] {
  const keys: SortKey[] = [];
  (sort ?? []).forEach((s, i) => {
    const target = parseTarget(s.field);
    if (typeof target === 'string') errors[`sort.${i}.field`] = [fieldDetail('target', target)];
    else if (target.kind === 'meta' && s.type)
      errors[`sort.${i}.type`] = [fieldError('metadata', 'The :attribute field cannot be used with a metadata selector.')];
    else keys.push({ target, direction: s.direction, type: s.type });
  });
  return keys;
}

/** Projection paths; a path and one of its descendants (or a repeat) may not both be selected. */
export function parseFields(fields: string[] | undefined, errors: FieldErrors): string[][] | undefined {
  if (fields === undefined) return undefined;
  const paths: string[][] = [];
  fields.forEach((text, i) => {
    const at = `fields.${i}`;
    const path = text.startsWith('@') ? 'cannot select metadata (the envelope is always complete)' : parseDataPath(text);
    if (typeof path === 'string') {
      errors[at] = [fieldDetail('path', path)];
      return;
    }
    const overlap = paths.findIndex((other) =>
      other.length <= path.length ? other.every((s, k) => s === path[k]) : path.every((s, k) => s === other[k]),
    );
    if (overlap >= 0)
      errors[at] = [
        fieldError('overlap', 'The :attribute field overlaps :other: parent and child selections must not overlap.', {
          other: `fields.${fields.indexOf(paths[overlap].join('.'))}`,
        }),
      ];
    else paths.push(path);
  });
  return paths;
}
