// Turning model names (content types, buckets, fields, contracts: user input) into TypeScript
// that is always valid: identifiers are derived and made unique, everything else is quoted.

/** `value` as a string literal (JSON, plus the two line terminators JSON leaves raw). */
export function literal(value: string): string {
  return JSON.stringify(value)
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A property key: bare when it is an identifier (reserved words are valid keys), otherwise quoted. */
export function propertyKey(name: string): string {
  return IDENTIFIER.test(name) ? name : literal(name);
}

/** Text for a comment: quoted like a literal, so no newline, `*\/` or line terminator can end it. */
export function quoted(value: string): string {
  return literal(value).replace(/\*\//g, '*\\/');
}

/** Free text for a JSDoc comment (a description): one line, without a comment terminator. */
export function commentText(value: string): string {
  return value.replace(/[\r\n\u2028\u2029]+/g, ' ').replace(/\*\//g, '*\\/');
}

/**
 * PascalCase from any text: ASCII letters and digits only, a capital after every separator and
 * digit, never a leading digit (the same form json-schema-to-typescript gives its names, so it
 * leaves ours unchanged). Empty results become `X`.
 */
export function pascal(text: string): string {
  const words = text.split(/[^A-Za-z0-9]+/).filter(Boolean);
  const joined = words.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
  const capitalized = joined.replace(/[0-9]+[a-z]/g, (m) => m.toUpperCase()).replace(/^[0-9]+/, '');
  return capitalized === '' ? 'X' : capitalized[0].toUpperCase() + capitalized.slice(1);
}

/** Hands out unique names: a taken name gets the first free numeric suffix (2, 3, ...). */
export class NameAllocator {
  private readonly taken = new Set<string>();

  take(base: string): string {
    let name = base;
    for (let n = 2; this.taken.has(name); n++) name = `${base}${n}`;
    this.taken.add(name);
    return name;
  }
}

/** Code-unit order: the same on every machine and locale (`localeCompare` is not). */
export const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
