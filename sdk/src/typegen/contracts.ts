// Contract types from their JSON Schemas, by json-schema-to-typescript (a maintained converter,
// not ours). Every contract's names are confined to it: its type is `<Prefix>Contract`, every
// named part of its schema `<Prefix>_<Name>`, so contracts cannot collide with each other or with
// the content types' names (which never hold `_` nor end in `Contract`).
import type { ContractModel } from './model.js';
import { NameAllocator, commentText, literal, pascal } from './names.js';

export interface CompiledContract {
  contract: ContractModel;
  /** The contract's data type. */
  typeName: string;
  /** Its declarations (the data type and the named parts of its schema). */
  code: string;
}

const SCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies'];
const SCHEMA_LISTS = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'items'];
const SCHEMA_ONE = [
  'not',
  'if',
  'then',
  'else',
  'items',
  'additionalItems',
  'additionalProperties',
  'contains',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
];
// The converter's own keywords inject TypeScript (`tsType`) or runtime enums, and `$id`s move
// the base of `$ref`s; a stored contract means none of them.
const DROPPED = ['tsType', 'tsEnumNames', 'extends', '$id', 'id', '$dynamicRef', '$recursiveRef', '$anchor', '$dynamicAnchor'];
const ROOT = 'x-workspace-api-root';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A copy of a schema the converter can read without leaving the document: references that are
 * not JSON Pointers into it (other documents, URLs, anchors) become "any value", so nothing is
 * ever fetched or read from disk.
 */
function localOnly(schema: unknown): unknown {
  if (!isObject(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (DROPPED.includes(key)) continue;
    if (key === '$ref' && (typeof value !== 'string' || !(value === '#' || value.startsWith('#/')))) continue;
    let copy = value;
    if (SCHEMA_MAPS.includes(key) && isObject(value)) copy = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, localOnly(v)]));
    else if (SCHEMA_LISTS.includes(key) && Array.isArray(value)) copy = value.map(localOnly);
    else if (SCHEMA_ONE.includes(key)) copy = localOnly(value);
    Object.defineProperty(out, key, { value: copy, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * Indents the converter's unformatted output (we do not run Prettier: its version would decide
 * the bytes). Only leading whitespace changes; strings and comments are skipped when counting
 * brackets.
 */
export function indentCode(code: string): string {
  const out: string[] = [];
  let depth = 0;
  let inComment = false;
  for (const raw of code.split('\n')) {
    const line = raw.trim();
    if (line === '') {
      if (out.length && out[out.length - 1] !== '') out.push('');
      continue;
    }
    const startsInComment = inComment;
    let level = depth;
    for (let i = 0; i < line.length; i++) {
      const c = line[i];
      if (inComment) {
        if (c === '*' && line[i + 1] === '/') {
          inComment = false;
          i++;
        }
      } else if (c === '/' && line[i + 1] === '*') {
        inComment = true;
        i++;
      } else if (c === '"' || c === "'") {
        for (i++; i < line.length && line[i] !== c; i++) if (line[i] === '\\') i++;
      } else if ('{[('.includes(c)) depth++;
      else if ('}])'.includes(c)) depth--;
    }
    if (!startsInComment && '}])'.includes(line[0])) level--;
    // Comment continuation lines (` * ...`) keep their one-space offset.
    out.push('  '.repeat(Math.max(0, level)) + (startsInComment ? ' ' : '') + line);
  }
  while (out.length && out[out.length - 1] === '') out.pop();
  return out.join('\n');
}

const declared = (code: string) =>
  [...code.matchAll(/^export (?:declare )?(?:interface|type|const enum|enum) ([A-Za-z_$][\w$]*)/gm)].map((m) => m[1]);

function unconverted(typeName: string, contract: ContractModel, reason: string): string {
  return `/** Contract ${literal(contract.name)}: its schema could not be converted (${commentText(reason)}), so its data is \`unknown\`. */\nexport type ${typeName} = unknown;`;
}

/** Types for the contracts (already sorted by name), in that order. */
export async function compileContracts(contracts: ContractModel[]): Promise<CompiledContract[]> {
  if (!contracts.length) return [];
  // Loaded on first use: the converter (and Prettier, which it loads) stays out of start-up.
  const { compile } = await import('json-schema-to-typescript');
  const prefixes = new NameAllocator();
  const result: CompiledContract[] = [];
  for (const contract of contracts) {
    const prefix = prefixes.take(pascal(contract.name));
    const typeName = `${prefix}Contract`;
    const schema = localOnly(contract.schema) as Record<string, unknown>;
    schema[ROOT] = true;
    let code: string;
    try {
      const generated = await compile(schema, typeName, {
        bannerComment: '',
        format: false,
        cwd: '/',
        additionalProperties: true,
        strictIndexSignatures: false,
        unknownAny: true,
        $refOptions: { resolve: { external: false } },
        // The root is the contract's type; every other named schema is prefixed with it.
        customName: (s, definitionKey) => {
          if ((s as Record<string, unknown>)[ROOT] === true) return typeName;
          const name =
            typeof s.title === 'string' && s.title ? s.title : (definitionKey ?? (typeof s.$id === 'string' ? s.$id : undefined));
          return name ? `${prefix}_${pascal(name)}` : undefined;
        },
      });
      const names = declared(generated);
      const confined = names.includes(typeName) && names.every((n) => n === typeName || n.startsWith(`${prefix}_`));
      code = confined ? indentCode(generated) : unconverted(typeName, contract, 'names outside the contract');
    } catch (err) {
      // Messages may hold paths of the machine; the error's name is the same everywhere.
      code = unconverted(typeName, contract, err instanceof Error ? err.name : 'error');
    }
    result.push({ contract, typeName, code });
  }
  return result;
}
