// Contract schemas: JSON Schema draft 2020-12 checked and compiled by Ajv, and the folder
// prefixes contracts apply to. Shared by the management API (saving contracts) and the entry core
// (validating content).
import type Ajv2020 from 'ajv/dist/2020';
import { allErrorsAjv } from '../lib/ajv';

/** An Ajv for contract schemas: full JSON Schema 2020-12 with formats, unknown keywords tolerated. */
export function contractAjv(): Ajv2020 {
  return allErrorsAjv({ strict: false });
}

/** The schema's problems as messages, or none. */
export function schemaProblems(schema: object): string[] {
  const ajv = contractAjv();
  if (!ajv.validateSchema(schema))
    return (ajv.errors ?? []).map((e) => `The schema is not a valid JSON Schema: ${e.instancePath || '/'} ${e.message}.`);
  try {
    ajv.compile(schema);
    return [];
  } catch (err) {
    return [`The schema cannot be compiled: ${(err as Error).message}.`];
  }
}

/** A folder path without leading or trailing slashes; empty means none. */
export function normalizePrefix(prefix: string | null | undefined): string | null {
  const trimmed = (prefix ?? '').replace(/^\/+|\/+$/g, '');
  return trimmed === '' ? null : trimmed;
}
