// The property names of one object inside a JSON text as written, duplicates included: a parsed
// body keeps only the last of equal names (`"a"` and `"\u0061"` alike), and some routes must refuse
// such repeats (the names of batch queries). Expects text that JSON.parse accepted.

/** Names of the object at `path` (property names from the root), in order, or undefined. */
export function keysAt(raw: string, path: string[]): string[] | undefined {
  // Per open container: whether it is an object, the name being read, and the path to it.
  const stack: { object: boolean; key?: string; path: string[] }[] = [];
  let found: string[] | undefined;
  let expectKey = false;
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i];
    if (ch === '"') {
      let j = i + 1;
      while (raw[j] !== '"') j += raw[j] === '\\' ? 2 : 1;
      const top = stack[stack.length - 1];
      if (top?.object && expectKey) {
        top.key = JSON.parse(raw.slice(i, j + 1)) as string;
        if (found && isPath(top.path, path)) found.push(top.key);
        expectKey = false;
      }
      i = j;
    } else if (ch === '{' || ch === '[') {
      const top = stack[stack.length - 1];
      const at = top ? [...top.path, top.object ? top.key! : '[]'] : [];
      stack.push({ object: ch === '{', path: at });
      if (ch === '{' && isPath(at, path)) found = [];
      expectKey = ch === '{';
    } else if (ch === '}' || ch === ']') {
      const closed = stack.pop()!;
      if (found && isPath(closed.path, path)) return found;
    } else if (ch === ',') expectKey = stack[stack.length - 1]?.object === true;
  }
  return found;
}

const isPath = (a: string[], b: string[]) => a.length === b.length && a.every((s, i) => s === b[i]);
