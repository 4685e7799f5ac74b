// A plan's steps as the changes it answers (`ModelChange`): what each does to which part of the
// model, whether it deletes something, and how many entries it touches, counted in a fixed
// number of statements whatever the number of steps.
import type { components } from '@workspace-api/sdk/openapi';
import type { SqlRunner } from '../../db/database';
import { rows, sql } from '../sql';
import type { Step } from './diff';

type Change = components['schemas']['ModelChange'];

/** Entries a step touches, by what it names (`locale:de-DE`, `bucket:blog`, `type:blog/post`, `field:blog/post#key`, `contract:name`). */
export type Touched = (what: string) => number;

const typeName = (bucket: string, type: string) => `${bucket}/${type}`;

/** Counts what the steps touch: at most five statements, one per kind of count. */
export async function touchedBy(tx: SqlRunner, workspaceId: number, steps: Step[]): Promise<Touched> {
  const counts = new Map<string, number>();
  const put = (found: { what: string; n: number }[]) => found.forEach((f) => counts.set(f.what, f.n));
  const locales = steps.flatMap((s) => (s.kind === 'locales' ? s.removed : []));
  const buckets = steps.flatMap((s) => (s.kind === 'bucket.delete' ? [s.bucket] : []));
  const types = steps.flatMap((s) => (s.kind === 'type.delete' || (s.kind === 'type.change' && s.nameField) ? [[s.bucket, s.type]] : []));
  const fields = steps.flatMap((s) =>
    s.kind === 'type.change' ? s.fields.flatMap((f) => (f.key === undefined ? [] : [[s.bucket, s.type, f.key]])) : [],
  );
  const contracts = steps.flatMap((s) => (s.kind === 'contract.delete' ? [s.name] : s.kind === 'contract.save' ? [s.input.name] : []));
  const column = (list: string[][], i: number) => list.map((l) => l[i]);
  if (locales.length) {
    put(
      await rows(
        tx,
        sql`SELECT 'locale:' || c.locale AS what, count(DISTINCT c.entry_pk)::int AS n FROM entry_contents c JOIN entries e ON e.id = c.entry_pk
             WHERE e.workspace_id = ${workspaceId}::int AND c.locale = ANY(${locales}::text[]) GROUP BY c.locale`,
      ),
    );
  }
  if (buckets.length) {
    put(
      await rows(
        tx,
        sql`SELECT 'bucket:' || b.name AS what, count(*)::int AS n FROM buckets b JOIN entries e ON e.bucket_id = b.id
             WHERE b.workspace_id = ${workspaceId}::int AND b.name = ANY(${buckets}::text[]) GROUP BY b.name`,
      ),
    );
  }
  const ofType = sql`JOIN buckets b ON b.workspace_id = ${workspaceId}::int AND b.name = p.bucket
                     JOIN content_types t ON t.bucket_id = b.id AND t.name = p.type
                     JOIN entries e ON e.content_type_id = t.id AND e.kind = 'typed'`;
  if (types.length) {
    put(
      await rows(
        tx,
        sql`SELECT 'type:' || p.bucket || '/' || p.type AS what, count(*)::int AS n
              FROM unnest(${column(types, 0)}::text[], ${column(types, 1)}::text[]) AS p(bucket, type) ${ofType} GROUP BY p.bucket, p.type`,
      ),
    );
  }
  if (fields.length) {
    put(
      await rows(
        tx,
        sql`SELECT 'field:' || p.bucket || '/' || p.type || '#' || p.key AS what, count(DISTINCT e.id)::int AS n
              FROM unnest(${column(fields, 0)}::text[], ${column(fields, 1)}::text[], ${column(fields, 2)}::text[]) AS p(bucket, type, key) ${ofType}
              JOIN entry_contents c ON c.entry_pk = e.id AND coalesce(c.data -> p.key, 'null'::jsonb) <> 'null'::jsonb
             GROUP BY p.bucket, p.type, p.key`,
      ),
    );
  }
  if (contracts.length) {
    // The objects a contract's change marks for a recheck (revalidate.ts markForRevalidation).
    put(
      await rows(
        tx,
        sql`SELECT 'contract:' || n.name AS what, count(e.id)::int AS n FROM unnest(${contracts}::text[]) AS n(name)
              JOIN entries e ON e.workspace_id = ${workspaceId}::int AND e.kind = 'json' AND e.deleted_at IS NULL
                            AND (e.contract_choice = 'auto' OR (e.contract_choice = 'named' AND e.contract_name = n.name))
             GROUP BY n.name`,
      ),
    );
  }
  return (what) => counts.get(what) ?? 0;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The changes a plan answers for its steps, in their order. */
export function describeSteps(steps: Step[], touched: Touched): Change[] {
  const out: Change[] = [];
  const add = (
    kind: Change['kind'],
    action: Change['action'],
    target: string,
    summary: string,
    entries = 0,
    destructive = action === 'delete' || action === 'replace',
  ) => out.push({ kind, action, target, destructive, entries, summary });
  for (const s of steps) {
    switch (s.kind) {
      case 'locales':
        for (const l of s.added) add('locale', 'create', l, `Add locale ${l}.`);
        for (const l of s.removed) {
          const n = touched(`locale:${l}`);
          add(
            'locale',
            'delete',
            l,
            `Remove locale ${l}: ${plural(n, 'entry has', 'entries have')} a text in it, kept but no longer served.`,
            n,
          );
        }
        if (!s.added.length && !s.removed.length)
          add('locale', 'update', s.locales.join(', '), `Order the locales ${s.locales.join(', ')}.`);
        break;
      case 'bucket.create':
        add('bucket', 'create', s.bucket, `Create bucket ${s.bucket}.`);
        break;
      case 'type.create':
        add(
          'content_type',
          'create',
          typeName(s.bucket, s.type.name),
          `Create content type ${typeName(s.bucket, s.type.name)} with ${plural(s.type.fields.length, 'field')}.`,
        );
        break;
      case 'type.change': {
        const type = typeName(s.bucket, s.type);
        for (const f of s.fields) {
          const target = `${type}.${f.name}`;
          const n = f.key === undefined ? 0 : touched(`field:${type}#${f.key}`);
          const holding = `${plural(n, 'entry holds', 'entries hold')} a value`;
          if (f.action === 'create') add('field', 'create', target, `Add field ${target}.`);
          else if (f.action === 'rename')
            add('field', 'rename', target, `Rename field ${target} to ${f.to} (${holding}; values are kept).`, n);
          else if (f.action === 'update')
            add('field', 'update', target, `Change field ${target}: ${f.details.join(', ')} (${holding}).`, n);
          else if (f.action === 'replace')
            add(
              'field',
              'replace',
              target,
              `Replace field ${target} with another ${f.to === f.name ? 'of that name' : `named ${f.to}`} (${f.details.join(', ')}): the values of ${plural(n, 'entry', 'entries')} are removed.`,
              n,
            );
          else add('field', 'delete', target, `Remove field ${target}: the values of ${plural(n, 'entry', 'entries')} are removed.`, n);
        }
        if (s.nameField) {
          const n = touched(`type:${type}`);
          add(
            'content_type',
            'update',
            type,
            `Name the entries of ${type} by field ${s.nameField.to}${s.nameField.from ? ` (was ${s.nameField.from})` : ''}: ${plural(n, 'entry', 'entries')}.`,
            n,
          );
        }
        if (s.reordered) add('content_type', 'update', type, `Order the fields of ${type} as listed.`);
        break;
      }
      case 'type.delete': {
        const type = typeName(s.bucket, s.type);
        const n = touched(`type:${type}`);
        add('content_type', 'delete', type, `Delete content type ${type} with its ${plural(n, 'entry', 'entries')}.`, n);
        break;
      }
      case 'bucket.delete': {
        const n = touched(`bucket:${s.bucket}`);
        add(
          'bucket',
          'delete',
          s.bucket,
          `Delete bucket ${s.bucket} with its content types, contracts and ${plural(n, 'entry or object', 'entries and objects')}.`,
          n,
        );
        break;
      }
      case 'contract.delete': {
        const n = touched(`contract:${s.name}`);
        add('contract', 'delete', s.name, `Delete contract ${s.name} (${plural(n, 'object')} rechecked).`, n);
        break;
      }
      case 'contract.save': {
        const n = touched(`contract:${s.input.name}`);
        add(
          'contract',
          s.replacing === undefined ? 'create' : 'update',
          s.input.name,
          `${s.replacing === undefined ? 'Create' : 'Change'} contract ${s.input.name} (${plural(n, 'object')} rechecked).`,
          n,
        );
        break;
      }
      case 'webhook.delete':
        add('webhook', 'delete', s.url, `Delete the webhook to ${s.url} with its delivery log.`);
        break;
      case 'webhook.update':
        add(
          'webhook',
          'update',
          s.url,
          `Change the webhook to ${s.url}: events ${s.events.join(', ')}${s.secret !== undefined ? ', a new secret' : ''}.`,
        );
        break;
      case 'webhook.create':
        add('webhook', 'create', s.url, `Create a webhook to ${s.url} for ${s.events.join(', ')}.`);
        break;
      case 'pipeline.delete':
        add('pipeline', 'delete', s.name, `Delete pipeline ${s.name}.`);
        break;
      case 'pipeline.save':
        add(
          'pipeline',
          s.replacing === undefined ? 'create' : 'update',
          s.input.name,
          `${s.replacing === undefined ? 'Create' : 'Change'} pipeline ${s.input.name}.`,
        );
        break;
    }
  }
  return out;
}
