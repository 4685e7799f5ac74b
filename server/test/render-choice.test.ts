// Which way the renderer expands relations (core/content/render.ts): nested expressions where the
// content model bounds every expansion within the budget, else breadth first. Both write the same
// text (entries-rules.test.ts reads the same entries both ways); this checks the bound itself.
import type { ContentTypeDef, FieldDef } from '../src/core/content/content-types';
import type { RenderOptions } from '../src/core/content/render-text';
import { nestable } from '../src/core/content/render-nested';

let nextId = 1;
const field = (name: string, type: FieldDef['type'], extra: Partial<FieldDef> = {}): FieldDef => ({
  id: nextId++,
  name,
  key: name,
  type,
  format: null,
  multiple: false,
  required: false,
  unique: false,
  targets: [],
  cascadeOnDelete: false,
  indexed: null,
  ...extra,
});
const relation = (name: string, targets: string[], multiple = false) => field(name, 'relation', { targets, multiple });
function type(name: string, fields: FieldDef[], bucketId = 1): ContentTypeDef {
  return {
    id: nextId++,
    name,
    bucketId,
    bucket: `b${bucketId}`,
    workspaceId: 1,
    nameField: null,
    fields,
    byName: new Map(fields.map((f) => [f.name, f])),
    typedReady: true,
  };
}
const options = (types: ContentTypeDef[], extra: Partial<RenderOptions> = {}) => ({ types, locale: 'en-US', ...extra }) as RenderOptions;

describe('the bound of an expansion', () => {
  const person = type('person', [field('name', 'text')]);
  const tag = type('tag', [field('label', 'text')]);
  const article = type('article', [
    field('title', 'text'),
    relation('authors', ['person'], true),
    relation('tags', ['tag'], true),
    field('cover', 'attachment'),
  ]);

  it('nests a model whose types show at most 100 related entries (25 per multiple field, 1 per single one, to 3 levels)', () => {
    // article: 25 authors + 25 tags, who relate to nothing: 50.
    expect(nestable(options([person, tag, article]))).toBe(true);
    // A single relation to its own type: 1 per level, 3 levels (a cycle is a compact reference).
    expect(nestable(options([type('chain', [relation('next', ['chain']), relation('labels', ['tag'], true)]), tag]))).toBe(true);
    // Four multiple fields of leaves: exactly 100.
    const four = type(
      'four',
      ['a', 'b', 'c', 'd'].map((n) => relation(n, ['tag'], true)),
    );
    expect(nestable(options([four, tag]))).toBe(true);
  });

  it('expands breadth first where the budget could decide, for `*`, and for what the model makes large', () => {
    // A multiple relation to its own type: 25 + 25 x 25 + ... related entries.
    const node = type('node', [relation('many', ['node'], true)]);
    expect(nestable(options([person, tag, article, node]))).toBe(false);
    // Five multiple fields of leaves: 125.
    expect(
      nestable(
        options([
          type(
            'five',
            ['a', 'b', 'c', 'd', 'e'].map((n) => relation(n, ['tag'], true)),
          ),
          tag,
        ]),
      ),
    ).toBe(false);
    // Two levels of multiple fields: 25 x (1 + 25).
    const outer = type('outer', [relation('inner', ['inner'], true)]);
    const inner = type('inner', [relation('tags', ['tag'], true)]);
    expect(nestable(options([outer, inner, tag]))).toBe(false);
    // Every locale: each locale's references count.
    expect(nestable(options([person, tag, article], { locale: '*' }))).toBe(false);
    // A single field with many target types, each with single fields with many targets: small
    // counts, but a statement too large to write.
    const leaves = Array.from({ length: 15 }, (_, i) => type(`leaf${i}`, [field('x', 'text')]));
    const middles = Array.from({ length: 15 }, (_, i) =>
      type(`mid${i}`, [
        relation(
          'to',
          leaves.map((l) => l.name),
        ),
      ]),
    );
    const top = type('top', [
      relation(
        'to',
        middles.map((m) => m.name),
      ),
    ]);
    expect(nestable(options([top, ...middles, ...leaves]))).toBe(false);
  });

  it('counts only the types rendered, and relations in their own bucket', () => {
    const node = type('node', [relation('many', ['node'], true)]);
    // A list of articles in a workspace that also has `node`: articles never reach a node.
    expect(nestable(options([person, tag, article, node], { rootTypes: [article] }))).toBe(true);
    expect(nestable(options([person, tag, article, node], { rootTypes: [node] }))).toBe(false);
    // A relation names types of its own bucket: the `node` of another bucket is not its target.
    const elsewhere = type('node', [relation('many', ['node'], true)], 2);
    const pointing = type('pointing', [relation('to', ['node'])]);
    expect(nestable(options([pointing, elsewhere], { rootTypes: [pointing] }))).toBe(true);
  });
});
