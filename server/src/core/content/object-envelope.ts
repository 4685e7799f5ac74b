// Entries as the Objects API shows them: the envelope, Trash rows, revisions.
import type { components } from '@workspace-api/sdk/openapi';
import type { SqlRunner } from '../../db/database';
import { sql } from '../sql';
import { BASE_LOCALE, findEntries, type EntryRecord, type Sight } from './store';
import type { RevisionRow } from './revisions';
import { emptyRecord } from '../../lib/records';

type S = components['schemas'];

export interface EnvelopeOptions {
  /** A locale, or `*` for the base document plus every translation. */
  locale: string;
  /** `summary` omits the document (and loads none). */
  view: 'full' | 'summary';
  /** Query projection: the `data` to show instead of the stored document. */
  data?: (stored: unknown) => unknown;
}

export function presentObject(r: EntryRecord, o: EnvelopeOptions): S['ObjectEnvelope'] {
  const all = o.locale === '*';
  const locale = all ? BASE_LOCALE : o.locale;
  const envelope: S['ObjectEnvelope'] = {
    id: r.id,
    entry_id: r.entry_id,
    bucket_id: r.bucket_id,
    bucket: r.bucket,
    ref: r.ref,
    kind: 'entry',
    contract: r.contract,
    locale,
    locales: r.locales,
    status: r.status,
    lock_version: r.lock_version,
    created_at: r.created_at,
    updated_at: r.updated_at,
    validation: {
      mode: r.contract_mode ?? 'none',
      issues: r.validation_issues,
      checked_at: r.validation_checked_at,
      pending: r.validation_pending,
      failed: r.validation_failed,
    },
  };
  if (o.view === 'summary') return envelope;
  const stored = r.documents.get(locale) ?? null;
  envelope.data = (o.data ? o.data(stored) : stored) as S['ObjectEnvelope']['data'];
  if (all) {
    const translations = emptyRecord<Record<string, unknown>>();
    for (const [l, doc] of r.documents) if (l !== BASE_LOCALE) translations[l] = doc as Record<string, unknown>;
    envelope.translations = translations;
  }
  return envelope;
}

export const presentTrashRow = (r: EntryRecord): S['TrashRow'] => ({
  object_id: r.id,
  entry_id: r.entry_id,
  bucket_id: r.bucket_id,
  ref: r.ref,
  lock_version: r.lock_version,
  deleted_at: r.deleted_at!,
  expires_at: r.expires_at!,
});

export const presentRevision = (r: RevisionRow): S['Revision'] => ({
  id: r.id,
  object_id: r.object_id,
  entry_id: r.entry_id,
  event: r.event,
  restored_from: r.restored_from,
  actor: r.actor,
  source: r.source,
  created_at: r.created_at,
});

/** The full envelope (base language) of object `id`, as a write answers it; undefined when it is gone. */
export async function readEnvelope(
  db: SqlRunner,
  sight: Sight,
  id: number,
): Promise<{ envelope: S['ObjectEnvelope']; exact: boolean } | undefined> {
  const [entry] = await findEntries(db, sight, sql`e.id = ${id}`, { content: { kind: 'locale', locale: BASE_LOCALE } });
  return entry && { envelope: presentObject(entry, { locale: BASE_LOCALE, view: 'full' }), exact: entry.exact };
}
