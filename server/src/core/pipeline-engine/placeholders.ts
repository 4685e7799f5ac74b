// Placeholders in a step's `with`: `{{input.<path>}}` and `{{steps.<id>.<path>}}` inside strings.
// Checked when a pipeline is saved (`placeholderErrors`: the syntax, and that a step names an
// earlier one) and resolved right before the step runs (`resolvePlaceholders`): a string that is
// exactly one placeholder becomes the value with its JSON type, placeholders inside a longer
// string become the value's text. Walks are iterative and lookups read own properties only, so
// `__proto__` or `constructor` in a path is an ordinary (usually missing) name.
import { addFieldError, fieldError, fieldErrors, type FieldErrors } from '../../lib/field-errors';
import { StepFailed } from './step-failed';

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;
/** A path's segments after the root (`steps.<id>` counts as the root). */
const MAX_SEGMENTS = 32;

export interface Reference {
  root: 'input' | 'steps';
  /** The step, for `steps.<id>`. */
  step?: string;
  path: string[];
}

/** `input.a.0`, `steps.find.data` -> a reference, or what is wrong with it. */
export function parseReference(text: string): Reference | string {
  const parts = text.split('.');
  if (parts.some((p) => p === '')) return 'must be dot-separated names, as in {{input.title}} or {{steps.<id>.data.0.id}}';
  if (parts.length > MAX_SEGMENTS + 2) return `must not have more than ${MAX_SEGMENTS} path segments`;
  if (parts[0] === 'input') return { root: 'input', path: parts.slice(1) };
  if (parts[0] === 'steps' && parts.length >= 2) return { root: 'steps', step: parts[1], path: parts.slice(2) };
  return 'must start with input or steps.<id>';
}

/** Whether a string holds a placeholder. */
export const hasPlaceholder = (s: string) => new RegExp(PLACEHOLDER.source).test(s);

/** Whether a value or anything in it is a string holding a placeholder. */
export function containsPlaceholder(value: unknown): boolean {
  const stack = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      if (hasPlaceholder(v)) return true;
    } else if (v !== null && typeof v === 'object') stack.push(...(Object.values(v) as unknown[]));
  }
  return false;
}

/** Each string of `value` with its path (keys are not templates). */
function strings(value: unknown): { path: string[]; text: string }[] {
  const out: { path: string[]; text: string }[] = [];
  const stack: [unknown, string[]][] = [[value, []]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') out.push({ path, text: v });
    else if (v !== null && typeof v === 'object') for (const [k, child] of Object.entries(v)) stack.push([child, [...path, k]]);
  }
  return out;
}

/**
 * Errors of the placeholders of a step's `with`, keyed `<prefix><path>`: malformed ones, other
 * roots than `input` and `steps`, and steps that are not among `earlier`.
 */
export function placeholderErrors(value: unknown, earlier: Set<string>, prefix: string): FieldErrors {
  const errors = fieldErrors();
  for (const { path, text } of strings(value)) {
    const key = `${prefix}${path.join('.')}`;
    for (const match of text.matchAll(PLACEHOLDER)) {
      const ref = parseReference(match[1]);
      const problem =
        typeof ref === 'string'
          ? `The placeholder ${match[0]} ${ref}.`
          : ref.root === 'steps' && !earlier.has(ref.step!)
            ? `The placeholder ${match[0]} names no earlier step (${ref.step}).`
            : undefined;
      if (problem) addFieldError(errors, key, fieldError('placeholder', 'The :attribute field is invalid: :problem', { problem }));
    }
  }
  return errors;
}

/** A placeholder that names nothing, or a resolved `with` over its size: the step fails with it. */
export class PlaceholderError extends StepFailed {}

export interface Scope {
  input: unknown;
  /** Outputs of the steps that ran, by step id. */
  outputs: Map<string, unknown>;
}

function lookup(scope: Scope, ref: Reference, shown: string): unknown {
  let value: unknown = ref.root === 'input' ? scope.input : scope.outputs.get(ref.step!);
  if (ref.root === 'steps' && !scope.outputs.has(ref.step!))
    throw new PlaceholderError(`The placeholder ${shown} names a step that has no output.`);
  for (const segment of ref.path) {
    if (Array.isArray(value) && /^\d+$/.test(segment) && Number(segment) < value.length) value = value[Number(segment)];
    else if (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.hasOwn(value, segment))
      value = (value as Record<string, unknown>)[segment];
    else throw new PlaceholderError(`The placeholder ${shown} names nothing (no ${segment}).`);
  }
  return value;
}

/** A value as it reads inside a longer string: strings as they are, other values as JSON. */
export const textOf = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** The placeholders of a string, in order. */
export const placeholdersOf = (s: string) => [...s.matchAll(PLACEHOLDER)];

/** What a placeholder names (saved pipelines were checked: a malformed one here is a literal). */
export function placeholderValue(scope: Scope, match: RegExpMatchArray): unknown {
  const ref = parseReference(match[1]);
  return typeof ref === 'string' ? match[0] : lookup(scope, ref, match[0]);
}

/**
 * `value` with its placeholders resolved, as a fresh copy. Throws PlaceholderError when one names
 * nothing or when the result would exceed `maxBytes` as JSON (counted while resolving, so a
 * placeholder repeated many times cannot build a huge value first).
 */
export function resolvePlaceholders(value: unknown, scope: Scope, maxBytes: number): unknown {
  let bytes = 0;
  const sizes = new Map<unknown, number>();
  const count = (v: unknown) => {
    let size = sizes.get(v);
    if (size === undefined) {
      size = Buffer.byteLength(JSON.stringify(v) ?? '');
      if (v !== null && typeof v === 'object') sizes.set(v, size);
    }
    bytes += size;
    if (bytes > maxBytes) throw new PlaceholderError(`The resolved with is larger than ${maxBytes} bytes.`);
  };
  const resolveString = (s: string): unknown => {
    const matches = placeholdersOf(s);
    if (!matches.length) return s;
    const values = matches.map((m) => placeholderValue(scope, m));
    if (matches.length === 1 && matches[0][0] === s) {
      count(values[0]);
      return values[0];
    }
    let i = 0;
    const out = s.replace(PLACEHOLDER, () => textOf(values[i++]));
    count(out);
    return out;
  };
  // Iterative copy: containers are rebuilt, strings resolved.
  const root: { v: unknown } = { v: undefined };
  const stack: [unknown, Record<string, unknown> | unknown[], string | number][] = [[value, root, 'v']];
  while (stack.length) {
    const [v, parent, key] = stack.pop()!;
    let out: unknown;
    if (typeof v === 'string') out = resolveString(v);
    else if (Array.isArray(v)) {
      out = new Array(v.length);
      v.forEach((item, i) => stack.push([item, out as unknown[], i]));
    } else if (v !== null && typeof v === 'object') {
      out = {};
      for (const [k, item] of Object.entries(v)) stack.push([item, out as Record<string, unknown>, k]);
    } else {
      out = v;
      count(v);
    }
    // defineProperty: `__proto__` stays an own key, as JSON.parse makes it.
    Object.defineProperty(parent, key, { value: out, enumerable: true, writable: true, configurable: true });
  }
  // Values taken whole are shared with the outputs they came from: hand out a copy.
  return structuredClone(root.v);
}
