// Values of an answer that depend on when it is given (a file's temporary URLs, valid 600 s from
// then). A `Fresh` value serializes as its value at the time it was made; while a cached answer is
// being made (http/response-cache.ts) it serializes as a hole instead, which every answer served
// from the cache fills with the value at its own time.
import { randomBytes } from 'node:crypto';

/**
 * Holes of the serialization under way (`withHoles`), in the order the serializer met them. The
 * one piece of module state here, on purpose: it lives only inside one synchronous serialization
 * (reset in `finally`), which nothing else can interleave with, and `toJSON` has no other way in.
 */
let holes: Fresh[] | undefined;

/** Stands for a hole in JSON text: a NUL and a per-process secret, which no stored string can guess. */
const MARK = `\u0000fresh:${randomBytes(12).toString('hex')}`;
const MARK_JSON = JSON.stringify(MARK);

export class Fresh<T = unknown> {
  /** The last text given (an answer fills many holes with one value: a file shown by every entry of a page). */
  private last?: { time: number; text: string };

  constructor(
    private readonly now: Date,
    readonly at: (now: Date) => T,
  ) {}

  toJSON(): unknown {
    if (!holes) return this.at(this.now);
    holes.push(this);
    return MARK;
  }

  /** Its JSON text at `now`. */
  textAt(now: Date): string {
    if (this.last?.time !== now.getTime()) this.last = { time: now.getTime(), text: JSON.stringify(this.at(now)) };
    return this.last.text;
  }
}

/** JSON text with holes: the text around them (one more part than holes) and the values to fill. */
export interface HoledJson {
  parts: string[];
  /** Between two parts: the value to fill, or null where they only follow each other (a seam: see `holesIn`). */
  holes: (Fresh | null)[];
}

/** A hole's text at `now` (a seam's: none). */
const holeText = (hole: Fresh | null, now: Date) => (hole ? hole.textAt(now) : '');

/** Runs `serialize` (JSON.stringify or lib/exact-json's) with every `Fresh` value left as a hole. */
export function withHoles(serialize: () => string): HoledJson {
  holes = [];
  try {
    const text = serialize();
    const found = holes;
    const parts = found.length ? text.split(MARK_JSON) : [text];
    if (parts.length !== found.length + 1) throw new Error('fresh-json: the holes of a serialization do not match its marks');
    return { parts, holes: found };
  } finally {
    holes = undefined;
  }
}

/** The text with each hole filled by its value at `now`. */
export function fillHoles(json: HoledJson, now: Date): string {
  let out = json.parts[0];
  for (let i = 0; i < json.holes.length; i++) out += holeText(json.holes[i], now) + json.parts[i + 1];
  return out;
}

/**
 * The text with each hole filled at `now`, as its UTF-8 bytes, written part by part into a buffer
 * of `allocate`. For an answer: a page's text is hundreds of KB, and joined as one string V8
 * copies it to flatten it, the HTTP layer again to put the headers before it, and the socket once
 * more to encode it.
 */
export function filledBytes(json: HoledJson, now: Date, allocate: (size: number) => Buffer = (size) => Buffer.allocUnsafe(size)): Buffer {
  const out = allocate(jsonTextBytes(json, now));
  let at = out.write(json.parts[0], 0);
  for (let i = 0; i < json.holes.length; i++) {
    at += out.write(holeText(json.holes[i], now), at);
    at += out.write(json.parts[i + 1], at);
  }
  return out;
}

/** `json` with text before and after it (an envelope around JSON text built elsewhere). */
export const wrapJson = (before: string, json: HoledJson, after: string): HoledJson => concatJson([before, json, after]);

/** The bytes the holes of `json` take once filled at `now`. */
const holeBytes = (json: HoledJson, now: Date): number => json.holes.reduce((n, h) => n + Buffer.byteLength(holeText(h, now)), 0);

/** The bytes of `json` once its holes are filled at `now`. */
export const jsonTextBytes = (json: HoledJson, now: Date): number =>
  json.parts.reduce((n, p) => n + Buffer.byteLength(p), 0) + holeBytes(json, now);

/** Texts and JSON texts with holes, one after the other, as one. */
export function concatJson(pieces: (string | HoledJson)[]): HoledJson {
  const parts = [''];
  const holes: (Fresh | null)[] = [];
  for (const piece of pieces) {
    if (typeof piece === 'string') {
      parts[parts.length - 1] += piece;
      continue;
    }
    parts[parts.length - 1] += piece.parts[0];
    for (let i = 0; i < piece.holes.length; i++) {
      holes.push(piece.holes[i]);
      parts.push(piece.parts[i + 1]);
    }
  }
  return { parts, holes };
}

/** The marks around a hole in JSON text built by PostgreSQL (core/file-records.ts fileHole). */
export const HOLE_OPEN = '\x01';
export const HOLE_CLOSE = '\x02';

/**
 * JSON texts built elsewhere (by PostgreSQL), joined by `separator`, with holes marked
 * `\x01<mark>\x02` (control characters, which JSON text escapes inside every string, so no stored
 * value can forge one): each mark becomes the `Fresh` value or the text `fill` gives for it. Each
 * text after the first starts a part of its own (a seam between them), so that no part grows to
 * the size of all of them: written out, a part is copied whole (`filledBytes`).
 */
export function holesIn(texts: readonly string[], separator: string, fill: (mark: string) => Fresh | string): HoledJson {
  const parts = [''];
  const holes: (Fresh | null)[] = [];
  texts.forEach((text, i) => {
    // The separator a part of its own: appended to a text, it would make a string to copy whole.
    if (i > 0) {
      holes.push(null, null);
      parts.push(separator, '');
    }
    // indexOf, not a regular expression: a text is KBs with a few marks.
    let from = 0;
    for (;;) {
      const open = text.indexOf(HOLE_OPEN, from);
      const close = open < 0 ? -1 : text.indexOf(HOLE_CLOSE, open + 1);
      if (close < 0) break;
      const value = fill(text.slice(open + 1, close));
      parts[parts.length - 1] += text.slice(from, open);
      if (typeof value === 'string') parts[parts.length - 1] += value;
      else {
        holes.push(value);
        parts.push('');
      }
      from = close + 1;
    }
    parts[parts.length - 1] += text.slice(from);
  });
  return { parts, holes };
}
