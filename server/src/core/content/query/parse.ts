// From an Entries structured query body (its shape already checked against the spec) to the
// typed tree of core/query/ast.ts plus the projection and aggregation plans. Every problem is
// reported at its request path (`filter.$or.1.author.name.eq`, `fields.3`), all at once.
import { addFieldError, fieldDetail, type FieldErrors } from '../../../lib/field-errors';
import type { FilterNode, Hop, Scalar, SortKey, Target } from '../../query/ast';
import type { ContentTypeDef, FieldDef } from '../content-types';
import { checkScalar, ULID } from '../field-values';
import { LosslessNumber } from '../../../lib/exact-json';
import { typedColumnOf } from '../../query/typed';
import { ENTRY_META, MAX_RELATION_LEVELS, relationHop, resolvePath, type PathHop, type ResolvedPath } from './paths';

export const ENTRY_QUERY_LIMITS = { filterItems: 100, groupDepth: 8, numericPaths: 10, groupKeyBytes: 512 };

type RawFilter = Record<string, unknown>;

export interface EntryQueryBody {
  type: string;
  fields?: string[];
  filter?: RawFilter;
  sort?: { field: string; direction?: 'asc' | 'desc' }[];
  locale?: string;
  aggregate?: { count?: boolean; sum?: string[]; avg?: string[]; min?: string[]; max?: string[] };
  groupBy?: (string | { field: string; interval: Interval; timezone?: string })[];
  offset?: number;
  limit?: number;
}

export type Interval = 'day' | 'week' | 'month' | 'quarter' | 'year';

/** What a projection selects under one output key. */
export type Selection = Map<string, Selected>;
export type Selected =
  | { kind: 'meta'; column: string }
  /** A content field's stored value (scalars, multiple scalars, a whole JSON field). */
  | { kind: 'value'; def: FieldDef }
  /** Property paths inside a JSON field, as a tree of output keys (a leaf is `true`). */
  | { kind: 'json'; def: FieldDef; tree: JsonTree }
  /** A relation's visible entry IDs, or an attachment's existing file IDs. */
  | { kind: 'ids'; def: FieldDef; hop?: Hop }
  | { kind: 'relation'; def: FieldDef; hop: PathHop; children: Selection }
  | { kind: 'files'; def: FieldDef; properties: string[] };
export interface JsonTree {
  [key: string]: JsonTree | true;
}

export const AGGREGATE_OPS = ['sum', 'avg', 'min', 'max'] as const;
export type AggregateOp = (typeof AGGREGATE_OPS)[number];

export interface GroupPlan {
  path: ResolvedPath;
  /** The value grouped by (through single relations). */
  target: Target;
  /** The row's group key: the path as requested (a bucket's `field`). */
  key: string;
  bucket?: { interval: Interval; timezone: string };
}

export interface AggregatePlan {
  count: boolean;
  /** Per operation, the requested paths (in order) and their index into `paths`. */
  ops: { op: AggregateOp; paths: { text: string; index: number }[] }[];
  /** Distinct numeric paths. */
  paths: ResolvedPath[];
  groupBy: GroupPlan[];
}

export interface EntryQueryPlan {
  filter: FilterNode;
  sort: SortKey[];
  /** undefined: every content field as stored, relations and attachments as IDs. */
  selection: Selection;
  aggregate?: AggregatePlan;
  offset: number;
  limit: number;
}

/** A problem of the query at `key`, worded as what the field must (not) do. */
const at = (errors: FieldErrors, key: string, detail: string) => addFieldError(errors, key, fieldDetail('query', detail));

/** Wraps the condition at the end of a path into the relations before it. */
function through(hops: PathHop[], node: FilterNode): FilterNode {
  return hops.reduceRight<FilterNode>((inner, hop) => {
    if (!hop.def.multiple && inner.kind === 'condition') return { ...inner, target: { kind: 'related', hop, target: inner.target } };
    return { kind: 'some', hop, filter: inner };
  }, node);
}

const ID_TARGET: Target = { kind: 'meta', name: '@id', ...ENTRY_META['@id'] };
const COMPARABLE = new Set(['eq', 'ne', 'in', 'lt', 'lte', 'gt', 'gte', 'startsWith', 'endsWith', 'contains', 'includes']);

/** Checks an operand of a content field (`null` allowed only where `nullable`), normalized as stored. */
function fieldOperand(def: FieldDef, value: unknown, nullable: boolean): { value: unknown } | { error: string } {
  if (value === null) return nullable ? { value } : { error: 'must not be null' };
  if (def.type === 'relation' && typeof value !== 'string') return { error: 'must be an entry ID' };
  return checkScalar(def, value);
}

/** Whether an operand fits a metadata column; timestamps must be ISO 8601. */
function metaOperand(name: string, op: string, value: unknown): string | undefined {
  const meta = ENTRY_META[name];
  if (value === null) return meta.nullable || op === 'eq' || op === 'ne' || op === 'in' ? undefined : 'must not be null';
  switch (meta.type) {
    case 'integer':
      return Number.isSafeInteger(value) && Math.abs(value as number) <= 2147483647 ? undefined : 'must be an integer';
    case 'string':
      return typeof value === 'string' ? undefined : 'must be a string';
    case 'status':
      return typeof value !== 'string'
        ? 'must be a string'
        : ['eq', 'ne', 'in'].includes(op) && !['draft', 'published'].includes(value)
          ? 'must be draft or published'
          : undefined;
    case 'timestamp':
      // The year 0000 is no year PostgreSQL reads (it counts 1 BC).
      return typeof value === 'string' &&
        /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2})?)?$/.test(value) &&
        !Number.isNaN(Date.parse(value)) &&
        !value.startsWith('0000')
        ? undefined
        : 'must be an ISO 8601 timestamp of the years 0001 to 9999';
    case 'locales':
      return typeof value === 'string' ? undefined : 'must be a locale code';
  }
}

/** Which operators a path end takes. */
function operatorProblem(path: ResolvedPath, op: string): string | undefined {
  const end = path.end;
  if (end.kind === 'file') return 'cannot filter by attachments';
  if (end.kind === 'meta') {
    const type = end.meta.type;
    if (type === 'locales') return op === 'includes' ? undefined : 'only takes includes';
    if (op === 'includes') return 'only applies to array fields';
    if (['startsWith', 'endsWith', 'contains'].includes(op) && type !== 'string' && type !== 'status')
      return `cannot be used on ${end.name}`;
    if (['lt', 'lte', 'gt', 'gte'].includes(op) && (type === 'string' || type === 'status')) return `cannot be used on ${end.name}`;
    return undefined;
  }
  const def = end.def;
  if (op === 'some')
    return def.type === 'relation' && def.multiple && !end.json.length ? undefined : 'only applies to multiple relation fields';
  if (def.type === 'attachment') return 'cannot filter by attachments';
  if (def.type === 'json') return op === 'includes' ? 'only applies to array fields' : undefined;
  if (def.multiple) return op === 'includes' ? undefined : 'cannot compare array fields: use includes';
  if (op === 'includes') return 'only applies to array fields';
  if (['lt', 'lte', 'gt', 'gte'].includes(op) && def.type !== 'number' && def.type !== 'date')
    return `cannot be used on ${def.type} fields`;
  if (['startsWith', 'endsWith', 'contains'].includes(op) && def.type !== 'text') return `cannot be used on ${def.type} fields`;
  return undefined;
}

/** The filter tree; `roots` are the types the paths start from (several inside `some`). */
export function parseEntryFilter(
  filter: RawFilter | undefined,
  roots: ContentTypeDef[],
  types: Map<string, ContentTypeDef>,
  errors: FieldErrors,
  base = 'filter',
): FilterNode {
  let items = 0;
  let tooDeep = false;
  // `levels`: the relation levels the `some` filters around `node` traverse (they count towards
  // the limit like the hops of a dot path).
  const walk = (node: RawFilter, path: string, depth: number, from: ContentTypeDef[], levels: number): FilterNode => {
    const out: FilterNode[] = [];
    for (const [key, value] of Object.entries(node)) {
      const keyAt = `${path}.${key}`;
      if (key === '$and' || key === '$or') {
        items++;
        if (depth + 1 > ENTRY_QUERY_LIMITS.groupDepth) {
          tooDeep = true;
          continue;
        }
        out.push({
          kind: key === '$and' ? 'and' : 'or',
          items: (value as RawFilter[]).map((child, i) => walk(child, `${keyAt}.${i}`, depth + 1, from, levels)),
        });
        continue;
      }
      const resolved = resolvePath(key, from, types, levels);
      if (typeof resolved === 'string') {
        items++;
        at(errors, keyAt, resolved);
        continue;
      }
      for (const [op, operand] of Object.entries(value as Record<string, unknown>)) {
        const opAt = `${keyAt}.${op}`;
        items++; // an `in` is one operator, whatever its 1 to 100 values
        if (!COMPARABLE.has(op) && op !== 'some') continue; // the spec's schema admits no other
        const problem = operatorProblem(resolved, op);
        if (problem) {
          at(errors, opAt, problem);
          continue;
        }
        const node = conditionAt(resolved, op, operand, opAt, depth, levels);
        if (node) out.push(node);
      }
    }
    return out.length === 1 ? out[0] : { kind: 'and', items: out };
  };

  const conditionAt = (
    path: ResolvedPath,
    op: string,
    operand: unknown,
    opAt: string,
    depth: number,
    levels: number,
  ): FilterNode | undefined => {
    const end = path.end;
    if (op === 'some') {
      if (end.kind !== 'field') return undefined;
      if (depth + 1 > ENTRY_QUERY_LIMITS.groupDepth) {
        tooDeep = true;
        return undefined;
      }
      const targets = end.def.targets.map((n) => types.get(n)).filter((t): t is ContentTypeDef => t !== undefined);
      const hop = relationHop(end.def, types, targets);
      if (!targets.length) return void at(errors, opAt, 'names a relation whose accepted types do not exist');
      const below = levels + path.hops.length + 1;
      if (below > MAX_RELATION_LEVELS) return void at(errors, opAt, `must not traverse more than ${MAX_RELATION_LEVELS} relation levels`);
      return through(path.hops, { kind: 'some', hop, filter: walk(operand as RawFilter, opAt, depth + 1, targets, below) });
    }
    const values = op === 'in' ? (operand as unknown[]) : [operand];
    const nullable = op === 'eq' || op === 'ne' || op === 'in';
    const normalized: unknown[] = [];
    for (const v of values) {
      let problem: string | undefined;
      if (end.kind === 'meta') problem = metaOperand(end.name, op, v);
      else if (end.kind === 'field' && (end.def.type === 'json' || end.json.length)) {
        problem =
          v === null && !nullable
            ? 'must not be null'
            : typeof v === 'object' && v !== null && !(v instanceof LosslessNumber)
              ? 'must be a scalar'
              : undefined;
        if (!problem) normalized.push(v);
        if (problem) return void at(errors, opAt, problem);
        continue;
      } else if (end.kind === 'field') {
        if (['startsWith', 'endsWith', 'contains'].includes(op) && typeof v !== 'string') problem = 'must be a string';
        else {
          const checked = fieldOperand(end.def, v, nullable);
          if ('error' in checked) problem = checked.error;
          else if (!['startsWith', 'endsWith', 'contains'].includes(op)) {
            normalized.push(checked.value);
            continue;
          }
        }
      }
      if (problem) return void at(errors, opAt, problem);
      // Entry IDs are stored uppercase; paths and batch targets take them in any case, so do equality filters.
      normalized.push(
        end.kind === 'meta' && end.name === '@id' && typeof v === 'string' && ['eq', 'ne', 'in'].includes(op) && ULID.test(v)
          ? v.toUpperCase()
          : v,
      );
    }
    let target: Target;
    if (end.kind === 'meta') target = { kind: 'meta', name: end.name, ...end.meta };
    else if (end.kind === 'field' && end.def.type === 'relation') {
      const hop = relationHop(end.def, types);
      // A relation by itself compares the IDs of the visible entries it refers to.
      if (end.def.multiple)
        return through(path.hops, {
          kind: 'some',
          hop,
          filter: { kind: 'condition', op: 'eq', target: ID_TARGET, value: normalized[0] as string },
        });
      target = { kind: 'related', hop, target: ID_TARGET };
    } else {
      const def = (end as { def: FieldDef }).def;
      const json = end.kind === 'field' ? end.json : [];
      target = { kind: 'data', path: [def.key, ...json], column: json.length ? undefined : typedColumnOf(def) };
    }
    const condition =
      op === 'in' ? { op: 'in' as const, target, values: normalized as (Scalar | null)[] } : { op, target, value: normalized[0] };
    return through(path.hops, { kind: 'condition', ...condition } as FilterNode);
  };

  const tree = walk(filter ?? {}, base, 0, roots, 0);
  if (tooDeep) at(errors, base, `must not nest filter groups more than ${ENTRY_QUERY_LIMITS.groupDepth} deep`);
  if (items > ENTRY_QUERY_LIMITS.filterItems)
    at(errors, base, `must not hold more than ${ENTRY_QUERY_LIMITS.filterItems} groups and operators in total`);
  return tree;
}

/** A value a sort or a group can read: through single relations only, to a scalar. */
function scalarTarget(path: ResolvedPath): { target: Target; type?: SortKey['type']; def?: FieldDef } | string {
  if (path.hops.some((h) => h.def.multiple)) return 'cannot go through a multiple relation';
  const end = path.end;
  let target: Target;
  let type: SortKey['type'];
  if (end.kind === 'file') return 'cannot use attachments';
  if (end.kind === 'meta') {
    if (end.meta.type === 'locales') return `cannot use ${end.name}`;
    target = { kind: 'meta', name: end.name, ...end.meta };
  } else {
    const def = end.def;
    if (def.type === 'json') return 'cannot use JSON fields';
    if (def.multiple) return 'cannot use multiple-value fields';
    if (def.type === 'attachment') return 'cannot use attachments';
    if (def.type === 'relation') target = { kind: 'related', hop: { field: def.key, typeIds: [] }, target: ID_TARGET };
    else {
      target = { kind: 'data', path: [def.key], column: typedColumnOf(def) };
      type = def.type === 'number' ? 'numeric' : def.type === 'boolean' ? 'boolean' : 'string';
    }
  }
  const wrapped = path.hops.reduceRight<Target>((inner, hop) => ({ kind: 'related', hop, target: inner }), target);
  return { target: wrapped, type, def: end.kind === 'field' ? end.def : undefined };
}

/** Fills in the accepted type ids of a bare relation's hop (known only with the bucket's types). */
function relationIds(target: Target, types: Map<string, ContentTypeDef>, def?: FieldDef): Target {
  if (target.kind !== 'related') return target;
  if (target.target.kind !== 'related' && target.hop.typeIds.length === 0 && def) {
    return { ...target, hop: relationHop(def, types) };
  }
  return { ...target, target: relationIds(target.target, types, def) };
}

export function parseEntrySort(
  sort: EntryQueryBody['sort'],
  root: ContentTypeDef,
  types: Map<string, ContentTypeDef>,
  errors: FieldErrors,
): SortKey[] {
  const keys: SortKey[] = [];
  (sort ?? []).forEach((s, i) => {
    const path = resolvePath(s.field, root, types);
    const found = typeof path === 'string' ? path : scalarTarget(path);
    if (typeof found === 'string')
      return at(
        errors,
        `sort.${i}.field`,
        found.startsWith('cannot') ? found.replace('cannot', 'cannot sort by').replace('by use', 'by') : found,
      );
    keys.push({ target: relationIds(found.target, types, found.def), direction: s.direction ?? 'asc', type: found.type });
  });
  return keys;
}

/** The projection; overlapping paths (a relation and a path below it, or one path twice) are refused. */
export function parseSelection(
  fields: string[] | undefined,
  root: ContentTypeDef,
  types: Map<string, ContentTypeDef>,
  errors: FieldErrors,
): Selection {
  const selection: Selection = new Map();
  if (fields === undefined) {
    for (const def of root.fields) {
      const hop = def.type === 'relation' ? relationHop(def, types) : undefined;
      selection.set(def.name, def.type === 'relation' || def.type === 'attachment' ? { kind: 'ids', def, hop } : { kind: 'value', def });
    }
    return selection;
  }
  fields.forEach((text, i) => {
    const key = `fields.${i}`;
    const path = resolvePath(text, root, types);
    if (typeof path === 'string') return at(errors, key, path);
    const overlap = () =>
      at(errors, key, 'overlaps another selected path: a path and a path below it (or one path twice) cannot both be selected');
    let level = selection;
    for (const hop of path.hops) {
      const existing = level.get(hop.def.name);
      if (existing && existing.kind !== 'relation') return overlap();
      const next = existing ?? { kind: 'relation' as const, def: hop.def, hop, children: new Map<string, Selected>() };
      level.set(hop.def.name, next);
      level = next.children;
    }
    const end = path.end;
    if (end.kind === 'meta') {
      if (level.has(end.name)) return overlap();
      level.set(end.name, { kind: 'meta', column: end.meta.column });
    } else if (end.kind === 'file') {
      const existing = level.get(end.def.name);
      if (existing && (existing.kind !== 'files' || existing.properties.includes(end.property))) return overlap();
      if (existing) existing.properties.push(end.property);
      else level.set(end.def.name, { kind: 'files', def: end.def, properties: [end.property] });
    } else if (end.json.length) {
      const existing = level.get(end.def.name);
      if (existing && existing.kind !== 'json') return overlap();
      const json = existing ?? { kind: 'json' as const, def: end.def, tree: Object.create(null) as JsonTree };
      let node = json.tree;
      for (const [k, segment] of end.json.entries()) {
        const last = k === end.json.length - 1;
        const child = node[segment];
        if (child === true || (last && child !== undefined)) return overlap();
        if (last) node[segment] = true;
        else node = (node[segment] ??= Object.create(null)) as JsonTree;
      }
      level.set(end.def.name, json);
    } else {
      if (level.has(end.def.name)) return overlap();
      const def = end.def;
      const hop = def.type === 'relation' ? relationHop(def, types) : undefined;
      level.set(def.name, def.type === 'relation' || def.type === 'attachment' ? { kind: 'ids', def, hop } : { kind: 'value', def });
    }
  });
  return selection;
}

const GROUPABLE_META = new Set(['@id', '@status', '@created_at', '@updated_at', '@publish_at', '@published_at']);

export function parseAggregate(
  body: EntryQueryBody,
  root: ContentTypeDef,
  types: Map<string, ContentTypeDef>,
  errors: FieldErrors,
): AggregatePlan | undefined {
  const agg = body.aggregate;
  if (!agg) {
    if (body.groupBy) at(errors, 'groupBy', 'needs aggregate');
    return undefined;
  }
  if (body.fields !== undefined || body.sort !== undefined) at(errors, 'aggregate', 'cannot be combined with fields or sort');
  const plan: AggregatePlan = { count: agg.count === true, ops: [], paths: [], groupBy: [] };
  const byText = new Map<string, number>();
  for (const op of AGGREGATE_OPS) {
    const list = agg[op];
    if (!list) continue;
    const paths: { text: string; index: number }[] = [];
    list.forEach((text, i) => {
      const key = `aggregate.${op}.${i}`;
      if (paths.some((p) => p.text === text)) return at(errors, key, 'repeats a path of this operation');
      const path = resolvePath(text, root, types);
      if (typeof path === 'string') return at(errors, key, path);
      const end = path.end;
      if (end.kind !== 'field' || end.def.type !== 'number' || end.json.length)
        return at(errors, key, 'must end at a numeric content field');
      if (end.def.multiple) return at(errors, key, 'must not end at a multiple-value field');
      if (!byText.has(text)) {
        byText.set(text, plan.paths.length);
        plan.paths.push(path);
      }
      paths.push({ text, index: byText.get(text)! });
    });
    plan.ops.push({ op, paths });
  }
  if (byText.size > ENTRY_QUERY_LIMITS.numericPaths)
    at(errors, 'aggregate', `must not name more than ${ENTRY_QUERY_LIMITS.numericPaths} distinct numeric paths`);
  if (!plan.count && !plan.ops.length) at(errors, 'aggregate', 'must ask for count: true or at least one of sum, avg, min and max');
  if (!body.groupBy) {
    if (body.offset !== undefined) at(errors, 'offset', 'cannot be used with an aggregate without groupBy');
    if (body.limit !== undefined) at(errors, 'limit', 'cannot be used with an aggregate without groupBy');
  }
  const seen = new Set<string>();
  (body.groupBy ?? []).forEach((g, i) => {
    const key = `groupBy.${i}`;
    const field = typeof g === 'string' ? g : g.field;
    if (seen.has(field)) return at(errors, key, 'repeats a grouping field');
    seen.add(field);
    const path = resolvePath(field, root, types);
    if (typeof path === 'string') return at(errors, key, path);
    const found = scalarTarget(path);
    if (typeof found === 'string') return at(errors, key, found.replace('cannot', 'cannot group by').replace('by use', 'by'));
    const end = path.end;
    if (end.kind === 'meta' && !GROUPABLE_META.has(end.name)) return at(errors, key, `cannot group by ${end.name}`);
    if (end.kind === 'field' && end.def.type === 'number') return at(errors, key, 'cannot group by numeric fields');
    const target = relationIds(found.target, types, found.def);
    if (typeof g === 'string') return plan.groupBy.push({ path, key: field, target });
    const timezone = g.timezone ?? 'UTC';
    const datetime =
      end.kind === 'meta'
        ? end.meta.type === 'timestamp'
        : end.kind === 'field' && end.def.type === 'date' && end.def.format === 'datetime';
    const dateOnly = end.kind === 'field' && end.def.type === 'date' && (end.def.format === 'date' || end.def.format === null);
    if (!datetime && !dateOnly) return at(errors, key, 'can only bucket date and datetime fields');
    if (dateOnly && timezone !== 'UTC') return at(errors, `${key}.timezone`, 'must be omitted or UTC for a date-only field');
    plan.groupBy.push({ path, key: field, target, bucket: { interval: g.interval, timezone } });
  });
  return plan;
}

/** Filter, sort, selection and aggregation of a query body (throws nothing: problems go to `errors`). */
export function parseEntryQuery(
  body: EntryQueryBody,
  root: ContentTypeDef,
  types: Map<string, ContentTypeDef>,
  errors: FieldErrors,
): EntryQueryPlan {
  const filter = parseEntryFilter(body.filter, [root], types, errors);
  const sort = parseEntrySort(body.sort, root, types, errors);
  const selection = parseSelection(body.fields, root, types, errors);
  const aggregate = parseAggregate(body, root, types, errors);
  return { filter, sort, selection, aggregate, offset: body.offset ?? 0, limit: body.limit ?? 20 };
}
