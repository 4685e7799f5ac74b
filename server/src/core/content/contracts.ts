// Contracts of JSON entries: which contract governs an entry (its selection, or Automatic), and
// validation of every saved language against it. Validators are compiled once per contract
// version (id and updated_at) and kept in a bounded per-process cache.
import type { ErrorObject, ValidateFunction } from 'ajv';
import { contractAjv } from '../contract-schema';
import { sql, type Sql } from '../sql';
import { fieldErrors, MAX_ERROR_PATHS, type FieldErrors } from '../../lib/field-errors';
import { toFieldErrors } from '../../lib/schema-errors';
import { escapePointer } from '../../lib/json-pointer';

export type ContractChoice = { choice: 'auto' } | { choice: 'none' } | { choice: 'named'; name: string };

/** What a write resolved: the governing contract, if any. */
export interface EffectiveContract {
  id: number;
  name: string;
  mode: 'enforce' | 'report';
  schema: object;
  version: string;
}

export interface ValidationIssue {
  path: string;
  message: string;
  keyword: string;
}

/**
 * The effective contract of the entry aliased `e` as a LATERAL subquery: the named one, or for
 * Automatic the contracts of the entry's bucket or of every bucket whose prefix is unset or holds
 * the ref (folder semantics): bucket-specific first, then the longest prefix.
 */
export function effectiveContractJoin(e: Sql): Sql {
  return sql`LEFT JOIN LATERAL (
      SELECT c.id, c.name, c.mode, c.schema, c.updated_at::text AS version FROM contracts c
       WHERE c.workspace_id = ${e}.workspace_id
         AND CASE ${e}.contract_choice
               WHEN 'named' THEN c.name = ${e}.contract_name
               WHEN 'auto' THEN (c.bucket_id IS NULL OR c.bucket_id = ${e}.bucket_id)
                            AND (c.prefix IS NULL OR ${e}.ref = c.prefix OR starts_with(${e}.ref, c.prefix || '/'))
               ELSE false END
       ORDER BY (c.bucket_id IS NOT NULL) DESC, length(coalesce(c.prefix, '')) DESC, c.id
       LIMIT 1) ct ON true`;
}

/** The effective contract of an address that is about to be written (same rules, from values). */
export function effectiveContractOf(workspaceId: number, bucketId: number, ref: string, selection: ContractChoice): Sql {
  const e = sql`(SELECT ${workspaceId}::int AS workspace_id, ${bucketId}::int AS bucket_id, ${ref}::text AS ref,
                        ${selection.choice}::text AS contract_choice, ${selection.choice === 'named' ? selection.name : null}::text AS contract_name) e`;
  return sql`SELECT ct.id, ct.name, ct.mode, ct.schema, ct.version FROM ${e} ${effectiveContractJoin(sql`e`)} WHERE ct.id IS NOT NULL`;
}

const CACHE_SIZE = 256;

/** Compiled validators, one per contract version; the oldest is dropped past CACHE_SIZE. */
export class ContractValidators {
  private readonly cache = new Map<string, { validate: ValidateFunction; schema: object }>();
  private readonly ajv = contractAjv();

  get(contract: EffectiveContract): ValidateFunction {
    const key = `${contract.id}:${contract.version}`;
    let entry = this.cache.get(key);
    if (!entry) {
      // Each version compiles on its own Ajv entry; no `$id` may clash across versions.
      const { $id: _ignored, ...schema } = contract.schema as Record<string, unknown>;
      entry = { validate: this.ajv.compile(schema), schema };
      this.cache.set(key, entry);
      if (this.cache.size > CACHE_SIZE) {
        const [oldest, evicted] = this.cache.entries().next().value!;
        this.cache.delete(oldest);
        // Ajv keeps every compiled schema too: drop it with ours, so the cache stays bounded.
        this.ajv.removeSchema(evicted.schema);
      }
    }
    return entry.validate;
  }
}

/** Where a language's document sits in a write body: `data`, or `translations.<locale>`. */
const bodyPath = (locale: string) => (locale === 'en-US' ? ['data'] : ['translations', locale]);

export interface LanguageCheck {
  /** Errors keyed by request path (`data.title`, `translations.de-DE.title`). */
  errors: FieldErrors;
  /** The same problems as stored diagnostics, JSON Pointers from the envelope. */
  issues: ValidationIssue[];
}

/** Validates every language of an entry's content. */
export function checkLanguages(validate: ValidateFunction, contents: Map<string, object>): LanguageCheck {
  const errors = fieldErrors();
  const issues: ValidationIssue[] = [];
  for (const [locale, data] of contents) {
    if (validate(data)) continue;
    const found: ErrorObject[] = validate.errors ?? [];
    const prefix = bodyPath(locale);
    Object.assign(errors, toFieldErrors(found, prefix.join('.'), prefix));
    // Stored diagnostics are bounded like a `422`'s report: the first MAX_ERROR_PATHS problems.
    for (const err of found.slice(0, MAX_ERROR_PATHS - issues.length)) {
      const pointer = `/${prefix.map(escapePointer).join('/')}${err.instancePath}`;
      const missing =
        err.keyword === 'required' ? `/${escapePointer(String((err.params as { missingProperty: string }).missingProperty))}` : '';
      issues.push({ path: pointer + missing, message: err.message ?? 'is invalid', keyword: err.keyword });
    }
  }
  return { errors, issues };
}
