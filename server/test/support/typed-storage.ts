// Typed storage checked against the documents it is built from, by a reading of its own: the
// triggers read documents into typed columns in SQL; this reads each document's values in
// TypeScript (what a field of its type can hold, by the API's stored forms) and compares them
// with the typed rows, so a row missing or left over, a value lost, changed or misread shows.
// A value of the wrong shape (written around the API) is none in typed storage, and every typed
// entry has a row for the base locale (en-US), empty without a document there. Every test
// server's close runs it (support/server.ts), so every suite's writes are checked.
import Decimal from 'decimal.js';
import { LosslessNumber, parse } from 'lossless-json';
import type { TestServer } from './server';

interface Field {
  id: number;
  name: string;
  /** Where documents keep its value (field-keys.ts). */
  key: string;
  type: string;
  format: string | null;
  multiple: boolean;
}

/** JSON text with every number kept as its text. */
const exactly = (text: string): unknown => parse(text, null, (n: string) => new LosslessNumber(n));

/** A canonical form for comparing: numbers by value, object keys sorted. */
function canonical(v: unknown): unknown {
  if (v instanceof LosslessNumber) return `#${new Decimal(v.toString()).toString()}`;
  if (Array.isArray(v)) return v.map(canonical);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
    );
  return v;
}

const isNumber = (v: unknown): v is LosslessNumber => v instanceof LosslessNumber;
function validDate(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m || m[1] === '0000') return false;
  const d = new Date(0);
  d.setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return d.getUTCMonth() === Number(m[2]) - 1 && d.getUTCDate() === Number(m[3]);
}

/** One stored value as typed storage must hold it (canonical), or null when the field's type cannot. */
function typedScalar(f: Field, v: unknown): unknown {
  switch (f.type) {
    case 'text':
    case 'relation':
      return typeof v === 'string' ? v : null;
    case 'boolean':
      return typeof v === 'boolean' ? v : null;
    case 'number':
      return isNumber(v) ? canonical(v) : null;
    case 'attachment':
      return isNumber(v) && /^\d+$/.test(v.toString()) && Number(v.toString()) >= 1 && Number(v.toString()) <= 2147483647
        ? canonical(v)
        : null;
    case 'json':
      return canonical(v);
    case 'date': {
      if (typeof v !== 'string') return null;
      if (f.format === 'time') return /^([01]\d|2[0-3]):[0-5]\d$/.test(v) ? `${v}:00` : null;
      if (f.format === 'datetime') {
        const m = /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?Z$/.exec(v);
        return m && validDate(m[1]) ? `${m[1]}T${m[2]}:${m[3]}:${m[4] ?? '00'}+00:00` : null;
      }
      return validDate(v) ? v : null;
    }
  }
  return null;
}

/** A field's value in a document as typed storage must hold it (missing and null: none). */
function expected(f: Field, doc: Record<string, unknown>): unknown {
  const v = Object.hasOwn(doc, f.key) ? doc[f.key] : undefined;
  if (v === undefined || v === null) return null;
  if (f.type === 'json') return canonical(v);
  if (!f.multiple) return typedScalar(f, v);
  return Array.isArray(v) ? v.map((x) => typedScalar(f, x)).filter((x) => x !== null) : null;
}

/** A typed column's value as read back (row_to_json: numbers as numbers, timestamps ISO with offset). */
const held = (v: unknown) => canonical(v);

/** Every difference between typed storage and the documents, as lines (none: in step). */
export async function typedStorageDifferences(s: TestServer): Promise<string[]> {
  const db = s.server.app.db;
  const types = (
    await db.query<{ id: number; fields: Field[] }>(
      `SELECT t.id, coalesce(json_agg(json_build_object('id', f.id, 'name', f.name, 'key', f.key, 'type', f.type, 'format', f.format, 'multiple', f.multiple) ORDER BY f.position) FILTER (WHERE f.id IS NOT NULL), '[]') AS fields
         FROM content_types t LEFT JOIN field_definitions f ON f.content_type_id = t.id GROUP BY t.id ORDER BY t.id`,
    )
  ).rows;
  const out: string[] = [];
  for (const type of types) {
    const table = `typed_${type.id}`;
    if (!(await db.query<{ ok: boolean }>(`SELECT to_regclass($1) IS NOT NULL AS ok`, [table])).rows[0].ok) {
      out.push(`content type ${type.id} has no table ${table}`);
      continue;
    }
    const docs = (
      await db.query<{ k: string; live: boolean; entry_id: string; data: string }>(
        `SELECT entry_pk || ' ' || locale AS k, live, entry_id, data::text AS data FROM entry_contents WHERE content_type_id = $1 AND kind = 'typed'`,
        [type.id],
      )
    ).rows;
    const rows = new Map(
      (
        await db.query<{ k: string; row: string }>(`SELECT entry_pk || ' ' || locale AS k, row_to_json(t)::text AS row FROM ${table} t`)
      ).rows.map((r) => [r.k, exactly(r.row) as Record<string, unknown>]),
    );
    for (const d of docs) {
      const row = rows.get(d.k);
      rows.delete(d.k);
      if (!row) {
        out.push(`${table} entry ${d.k}: no typed row`);
        continue;
      }
      if (row.live !== d.live || row.entry_id !== d.entry_id) out.push(`${table} entry ${d.k}: visibility columns differ`);
      const doc = exactly(d.data) as Record<string, unknown>;
      for (const f of type.fields) {
        const want = JSON.stringify(expected(f, doc));
        const got = JSON.stringify(held(row[`f${f.id}`]));
        if (want !== got) out.push(`${table} entry ${d.k}: field ${f.name}: ${got} <> ${want}`);
      }
    }
    // Every typed entry has its base locale's row, every field none where it has no document there.
    const entries = (
      await db.query<{ k: string; live: boolean; entry_id: string }>(
        `SELECT id || ' en-US' AS k, deleted_at IS NULL AS live, entry_id FROM entries WHERE content_type_id = $1 AND kind = 'typed'`,
        [type.id],
      )
    ).rows;
    const documented = new Set(docs.map((d) => d.k));
    for (const e of entries) {
      if (documented.has(e.k)) continue;
      const row = rows.get(e.k);
      rows.delete(e.k);
      if (!row) out.push(`${table} entry ${e.k}: no typed row for the base locale`);
      else if (row.live !== e.live || row.entry_id !== e.entry_id) out.push(`${table} entry ${e.k}: visibility columns differ`);
      else
        for (const f of type.fields)
          if (row[`f${f.id}`] !== null) out.push(`${table} entry ${e.k}: field ${f.name} holds a value without a document`);
    }
    for (const k of rows.keys()) out.push(`${table} entry ${k}: a typed row without a document`);
  }
  return out;
}
