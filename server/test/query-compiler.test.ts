// The query compiler without a database: each clause checked on the SQL text and bound values it
// produces, and every parse rule on its error path. (The black-box query tests run the same
// statements on PostgreSQL and on the embedded database.)
import { fieldErrors, renderFieldErrors } from '../src/lib/field-errors';
import { ROOT, compileFilter, compileSort } from '../src/core/query/compile';
import type { FilterNode, Hop, Target } from '../src/core/query/ast';
import { parseFields, parseFilter, parseSort } from '../src/core/query/parse';
import { project } from '../src/core/query/run';
import { requiresDocument } from '../src/core/query/candidates';
import { raw } from '../src/core/sql';

const compile = (filter: Record<string, unknown>) => {
  const errors = fieldErrors();
  const tree = parseFilter(filter, errors);
  expect({ ...errors }).toEqual({});
  return compileFilter(tree).toQuery();
};
const problems = (filter: Record<string, unknown>) => {
  const errors = fieldErrors();
  parseFilter(filter, errors);
  return { ...renderFieldErrors(errors) };
};

describe('filters', () => {
  it('writes eq on a data path as jsonb containment of the nested value', () => {
    expect(compile({ 'author.name': { eq: 'Ada' } })).toEqual({ text: '(c.data @> $1::jsonb)', values: ['{"author":{"name":"Ada"}}'] });
  });

  it('writes eq null as missing-or-null and ne as same type and different value', () => {
    expect(compile({ a: { eq: null } }).text).toBe(`(c.data -> $1::text IS NULL OR jsonb_typeof(c.data -> $2::text) = 'null')`);
    expect(compile({ a: { ne: 5 } })).toEqual({
      text: '(jsonb_typeof(c.data -> $1::text) = $2 AND c.data -> $3::text <> $4::jsonb)',
      values: ['a', 'number', 'a', '5'],
    });
  });

  it('compares numbers as numeric and strings in byte order', () => {
    expect(compile({ n: { gt: 1.5 } }).text).toBe(
      `(CASE WHEN jsonb_typeof(c.data -> $1::text) = 'number' THEN (c.data -> $2::text)::numeric END > $3::numeric)`,
    );
    expect(compile({ s: { lte: 'B' } }).text).toContain(`COLLATE "C" <= $3::text COLLATE "C"`);
  });

  it('binds string operators as literal text (no LIKE, so % and _ stay literal)', () => {
    const { text, values } = compile({ t: { contains: '50%_off' } });
    expect(text).not.toMatch(/LIKE/i);
    expect(text).toContain('strpos(');
    expect(values).toContain('50%_off');
  });

  it('reads metadata from entry columns with typed parameters', () => {
    expect(compile({ '@id': { in: [1, 2] } })).toEqual({ text: '(e.id = ANY($1::int[]))', values: [[1, 2]] });
    expect(compile({ '@ref': { startsWith: 'a/' } })).toEqual({ text: 'starts_with(e.ref COLLATE "C", $1::text)', values: ['a/'] });
    expect(compile({ status: { eq: 'x' }, '@status': { eq: 'draft' } }).text).toBe(
      `((c.data @> $1::jsonb) AND e.status COLLATE "C" = $2::text)`,
    );
  });

  it('combines $and and $or groups', () => {
    const { text } = compile({ $or: [{ a: { eq: 1 } }, { $and: [{ b: { eq: 2 } }, { c: { eq: 3 } }] }] });
    expect(text).toBe('((c.data @> $1::jsonb) OR ((c.data @> $2::jsonb) AND (c.data @> $3::jsonb)))');
  });

  it('reports each problem at its request path', () => {
    expect(problems({ 'a..b': { eq: 1 }, '@nope': { eq: 1 }, '@id': { eq: 'x' }, '@created_at': { gt: 'yesterday' } })).toEqual({
      'filter.a..b': ['The filter.a..b field must be dot-separated property names of letters, digits, hyphens and underscores.'],
      'filter.@nope': ['The filter.@nope field is not a known metadata selector.'],
      'filter.@id.eq': ['The filter.@id.eq field must be an integer.'],
      'filter.@created_at.gt': ['The filter.@created_at.gt field must be an ISO 8601 timestamp.'],
    });
    expect(problems({ [Array.from({ length: 13 }, () => 'a').join('.')]: { eq: 1 } })).toHaveProperty(['filter.a.a.a.a.a.a.a.a.a.a.a.a.a']);
  });

  it('limits group nesting to 8 and groups, operators and in operands to 100', () => {
    const nest = (depth: number): Record<string, unknown> => (depth === 0 ? { a: { eq: 1 } } : { $and: [nest(depth - 1)] });
    expect(problems(nest(8))).toEqual({});
    expect(Object.keys(problems(nest(9)))).toEqual([`filter${'.$and.0'.repeat(8)}.$and`]);
    expect(problems({ a: { in: Array.from({ length: 99 }, (_, i) => i) } })).toEqual({});
    expect(Object.keys(problems({ a: { in: Array.from({ length: 99 }, (_, i) => i) }, b: { eq: 1 } }))).toEqual(['filter']);
  });
});

describe('filters through relations', () => {
  const scope = { ...ROOT, relations: { bucketId: 1, locale: 'en-US' } };
  const hop = (field: string): Hop => ({ field, typeIds: [2] });
  const through = (hops: string[], path: string): Target =>
    hops.reduceRight<Target>((target, field) => ({ kind: 'related', hop: hop(field), target }), { kind: 'data', path: [path] });
  const eq = (target: Target, value: string): FilterNode => ({ kind: 'condition', op: 'eq', target, value });
  const subqueries = (node: FilterNode) => compileFilter(node, scope).toQuery().text.split('EXISTS (').length - 1;

  it('writes a $or of conditions through one relation as one EXISTS per level, whatever their number', () => {
    const many = (n: number, hops: string[]): FilterNode => ({
      kind: 'or',
      items: Array.from({ length: n }, (_, i) => eq(through(hops, 'name'), `v${i}`)),
    });
    expect(subqueries(many(1, ['author']))).toBe(1);
    expect(subqueries(many(99, ['author']))).toBe(1);
    expect(subqueries(many(99, ['author', 'mentor', 'mentor']))).toBe(3);
    // Two relations: one each; a `some` on one of them joins its group.
    const mixed: FilterNode = {
      kind: 'or',
      items: [
        eq(through(['author'], 'name'), 'a'),
        eq(through(['editor'], 'name'), 'b'),
        { kind: 'some', hop: hop('author'), filter: eq({ kind: 'data', path: ['age'] }, '3') },
        eq(through(['author'], 'name'), 'c'),
      ],
    };
    expect(subqueries(mixed)).toBe(2);
    // Each condition is still in it, ORed.
    const { values } = compileFilter(mixed, scope).toQuery();
    for (const v of ['a', 'b', 'c']) expect(JSON.stringify(values)).toContain(v);
  });

  it('keeps apart what is not "some entry there matches": $and, missing values, an @id eq', () => {
    const and: FilterNode = { kind: 'and', items: [eq(through(['authors'], 'name'), 'a'), eq(through(['authors'], 'name'), 'b')] };
    expect(subqueries(and)).toBe(2);
    const missing: FilterNode = {
      kind: 'or',
      items: [{ kind: 'condition', op: 'eq', target: through(['author'], 'name'), value: null }, eq(through(['author'], 'name'), 'b')],
    };
    expect(subqueries(missing)).toBe(2);
  });
});

describe('sorting', () => {
  it('puts missing and null last in both directions and ends with the id tie-break', () => {
    const errors = fieldErrors();
    const { values, orderBy, violations } = compileSort(
      parseSort(
        [
          { field: 'rating', direction: 'desc', type: 'number' },
          { field: '@created_at', direction: 'asc' },
        ],
        errors,
      ),
    );
    // Each key's value is read once per row, then ordered by.
    expect(values!.map((v) => v.toQuery().text)).toEqual(['c.data -> $1::text AS s0', 'e.created_at AS s1']);
    const { text } = orderBy.toQuery();
    // A typed key orders its type's values (NULL for missing and null, last either way); other
    // values are violations, which sort first.
    expect(text).toBe(
      `CASE WHEN jsonb_typeof(m.s0) = 'number' THEN (m.s0)::numeric END DESC NULLS LAST, m.s1 ASC NULLS LAST, m.page_id ASC`,
    );
    expect(violations.map((v) => v.index)).toEqual([0]);
    expect(violations[0].condition.toQuery().text).toBe(
      `(jsonb_typeof(m.s0) NOT IN ('number', 'null') OR CASE WHEN jsonb_typeof(m.s0) = 'number' THEN NOT (NOT (scale((m.s0)::numeric) > 12 AND min_scale((m.s0)::numeric) > 12) AND (m.s0)::numeric < 1e26 AND (m.s0)::numeric > -1e26) END)`,
    );
  });

  it('puts missing and null last for untyped keys too', () => {
    const { orderBy } = compileSort(parseSort([{ field: 'x', direction: 'desc' }], fieldErrors()));
    expect(orderBy.toQuery().text.startsWith(`(m.s0 IS NULL OR jsonb_typeof(m.s0) = 'null') ASC`)).toBe(true);
  });

  it('orders untyped values by type, then value', () => {
    const { orderBy } = compileSort(parseSort([{ field: 'x', direction: 'asc' }], fieldErrors()));
    expect(orderBy.toQuery().text).toContain(
      `CASE jsonb_typeof(m.s0) WHEN 'boolean' THEN 0 WHEN 'number' THEN 1 WHEN 'string' THEN 2 END ASC NULLS LAST`,
    );
  });
});

describe('projection', () => {
  it('refuses overlapping selections and metadata', () => {
    const errors = fieldErrors();
    parseFields(['a.b', 'c', 'a', '@id', 'c'], errors);
    expect({ ...renderFieldErrors(errors) }).toEqual({
      'fields.2': ['The fields.2 field overlaps fields.0: parent and child selections must not overlap.'],
      'fields.3': ['The fields.3 field cannot select metadata (the envelope is always complete).'],
      'fields.4': ['The fields.4 field overlaps fields.1: parent and child selections must not overlap.'],
    });
  });

  it('selects paths, missing ones as null, whole arrays and objects', () => {
    const data = { a: { b: 1, x: 2 }, list: [1, { y: 2 }], s: 'str' };
    expect(JSON.parse(JSON.stringify(project(data, [['a', 'b'], ['list'], ['s', 'deeper'], ['none']])))).toEqual({
      a: { b: 1 },
      list: [1, { y: 2 }],
      s: { deeper: null },
      none: null,
    });
    expect(JSON.parse(JSON.stringify(project(null, [])))).toEqual({});
  });
});

describe('candidates', () => {
  const tree = (filter: Record<string, unknown>) => {
    const errors = fieldErrors();
    const t = parseFilter(filter, errors);
    expect({ ...errors }).toEqual({});
    return t;
  };
  // A filter that an entry without a document in the locale cannot satisfy is answered from documents alone.
  it.each([
    [{ a: { eq: 1 } }, true],
    [{ a: { ne: 1 } }, true],
    [{ a: { ne: null } }, true],
    [{ a: { gte: 1 } }, true],
    [{ a: { in: [1, 2] } }, true],
    [{ a: { startsWith: 'x' } }, true],
    [{ a: { eq: null } }, false],
    [{ a: { in: [1, null] } }, false],
    [{ '@ref': { eq: 'x' } }, false],
    [{}, false],
    [{ a: { eq: 1 }, '@ref': { eq: 'x' } }, true],
    [{ a: { eq: null }, b: { eq: 2 } }, true],
    [{ $or: [{ a: { eq: 1 } }, { b: { gt: 2 } }] }, true],
    [{ $or: [{ a: { eq: 1 } }, { '@ref': { eq: 'x' } }] }, false],
    [{ $or: [{ a: { eq: 1 } }, { b: { eq: null } }] }, false],
  ])('%j needs a document: %s', (filter, expected) => {
    expect(requiresDocument(tree(filter))).toBe(expected);
  });
});

describe('typed storage', () => {
  const amount = {
    kind: 'data' as const,
    path: ['amount'],
    column: { name: 'f7', type: 'numeric' as const, multiple: false, indexed: true },
  };
  const tags = { kind: 'data' as const, path: ['tags'], column: { name: 'f8', type: 'text' as const, multiple: true, indexed: false } };
  const root = { entry: 'e', doc: 'c', depth: 0, relations: { bucketId: 1, locale: 'en-US' }, row: 't' };

  it('reads a field with a column from the typed row, without type tests, where the scope has one', () => {
    expect(compileFilter({ kind: 'condition', op: 'gt', target: amount, value: 100 }, root).toQuery()).toEqual({
      text: 't.f7 > $1::numeric',
      values: [100],
    });
    expect(compileFilter({ kind: 'condition', op: 'in', target: amount, values: [1, null] }, root).toQuery()).toEqual({
      text: '(t.f7 = ANY($1::numeric[]) OR t.f7 IS NULL)',
      values: [[1]],
    });
    expect(compileFilter({ kind: 'condition', op: 'includes', target: tags, value: 'x' }, root).toQuery()).toEqual({
      text: '$1::text = ANY(t.f8)',
      values: ['x'],
    });
    // Without the typed row (an Objects query, a related entry) the document is read.
    expect(compileFilter({ kind: 'condition', op: 'gt', target: amount, value: 100 }).toQuery().text).toBe(
      `(CASE WHEN jsonb_typeof(c.data -> $1::text) = 'number' THEN (c.data -> $2::text)::numeric END > $3::numeric)`,
    );
    // A scalar `eq` on a list keeps the document's reading (its containment answers it).
    expect(compileFilter({ kind: 'condition', op: 'eq', target: tags, value: 'x' }, root).toQuery().text).toBe('(c.data @> $1::jsonb)');
  });

  it('orders by typed columns in the filtering statement itself, ties by ULID, with nothing to check', () => {
    const sort = compileSort([{ target: amount, direction: 'desc', type: 'numeric' }], root.relations, raw('t.entry_id'), 't');
    expect(sort.orderBy.toQuery().text).toBe('t.f7 DESC NULLS LAST, t.entry_id COLLATE "C" ASC');
    expect(sort.values).toBeUndefined();
    expect(sort.violations).toEqual([]);
  });
});
