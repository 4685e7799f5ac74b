// JSON Pointer (RFC 6901) segments: `~` and `/` inside a name are escaped.
export const escapePointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
