// Placeholders in an `http.request` step's `url` (security review Hardening II, finding 4): the
// operator's template fixes where a request goes; an execution's values only fill in names. Each
// value is percent-encoded as by encodeURIComponent, so in the path it stays inside one segment
// (`/`, `\`, `?`, `#`, `%` are encoded) and in the query or fragment inside one value (`&`, `=`,
// `+`, `#`). Encoding cannot disarm a dot segment: URL parsers (fetch's too) read `..`, `%2E%2E`
// and `.%2e` alike and climb. So a path segment that a placeholder helped make and that is `.`
// or `..` fails the step, and so does a resolved URL that does not start with the template's text
// before its first placeholder (normalized), a check that holds whatever the encoding missed.
import { PlaceholderError, placeholdersOf, placeholderValue, resolvePlaceholders, textOf, type Scope } from './placeholders';
import { PIPELINE_LIMITS, type PipelineStep } from './step-types';

/** `.` and `..` as the WHATWG URL parser reads them (`%2e` is a dot). */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/** The URL's href, or undefined when it does not parse (allowedUrl then refuses it). */
function href(url: string): string | undefined {
  try {
    return new URL(url).href;
  } catch {
    return undefined;
  }
}

function encoded(value: unknown): string {
  try {
    return encodeURIComponent(textOf(value));
  } catch {
    // Lone surrogates: inputs and outputs holding them are refused before, this is a safety net.
    throw new PlaceholderError('A placeholder of the url resolves to text that is not valid Unicode.');
  }
}

/** The URL template with its placeholders resolved and encoded; throws PlaceholderError (the step fails). */
export function resolveUrl(template: string, scope: Scope, maxBytes: number): string {
  const matches = placeholdersOf(template);
  if (!matches.length) return template;
  // Where the scan is: a `?` ends the path, a `#` the query (http URLs: `\` separates segments too).
  let part: 'path' | 'query' | 'fragment' = 'path';
  let segment = '';
  let filled = false;
  let dot: string | undefined;
  let out = '';
  const endSegment = () => {
    if (filled && dot === undefined && DOT_SEGMENT.test(segment)) dot = segment;
    segment = '';
    filled = false;
  };
  const literal = (text: string) => {
    for (const ch of text) {
      if (part === 'path') {
        if ('/\\?#'.includes(ch)) endSegment();
        else segment += ch;
        if (ch === '?') part = 'query';
        else if (ch === '#') part = 'fragment';
      } else if (part === 'query' && ch === '#') part = 'fragment';
    }
    out += text;
  };
  let at = 0;
  for (const m of matches) {
    literal(template.slice(at, m.index));
    const value = encoded(placeholderValue(scope, m));
    if (part === 'path') {
      segment += value;
      filled = true;
    }
    out += value;
    // Bounded while it grows (the schema's 2048 characters are checked after resolution).
    if (out.length > maxBytes) throw new PlaceholderError(`The resolved with is larger than ${maxBytes} bytes.`);
    at = m.index + m[0].length;
  }
  literal(template.slice(at));
  if (part === 'path') endSegment();

  const prefix = href(template.slice(0, matches[0].index));
  const resolved = href(out);
  if (prefix !== undefined && resolved !== undefined && !resolved.startsWith(prefix)) {
    throw new PlaceholderError(`The resolved url leaves ${prefix}, the part of the url before its first placeholder.`);
  }
  if (dot !== undefined)
    throw new PlaceholderError(
      `The url path segment ${JSON.stringify(dot)} is made with a placeholder and is a dot segment (. or ..), which is refused.`,
    );
  return out;
}

/** A step's `with` with its placeholders resolved: an `http.request` URL as above, the rest as values. */
export function resolveStepWith(step: PipelineStep, scope: Scope): Record<string, unknown> {
  const w = step.with as Record<string, unknown>;
  const max = PIPELINE_LIMITS.resolvedBytes;
  if (step.type !== 'http.request' || typeof w.url !== 'string') return resolvePlaceholders(w, scope, max) as Record<string, unknown>;
  const url = resolveUrl(w.url, scope, max);
  const rest = resolvePlaceholders({ ...w, url: '' }, scope, max - Buffer.byteLength(url)) as Record<string, unknown>;
  return { ...rest, url };
}
