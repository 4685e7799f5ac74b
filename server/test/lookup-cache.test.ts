// The per-process cache of lookups (core/lookup-cache.ts): what it keeps and when it lets go.
// The database side (trigger, LISTEN, several processes) is tested in multi-process.test.ts.
import { LookupCache } from '../src/core/lookup-cache';
import type { Database } from '../src/db/database';

/** A database whose notifications and listening state the test drives. */
function channel() {
  const hooks: { notify?: (payload?: string) => void; state?: (on: boolean) => void } = {};
  const db = {
    listen(_channel: string, onNotify: (payload?: string) => void, onListening: (on: boolean) => void) {
      hooks.notify = onNotify;
      hooks.state = onListening;
      return { stop: async () => undefined };
    },
  } as unknown as Database;
  return { db, hooks };
}

describe('LookupCache', () => {
  it('keeps nothing until it listens, then keeps a lookup until a change is heard', async () => {
    const { db, hooks } = channel();
    const cache = new LookupCache<string>();
    cache.listen(db);
    let loads = 0;
    const load = async () => `row ${++loads}`;
    expect(await cache.get('k', load)).toBe('row 1');
    expect(await cache.get('k', load)).toBe('row 2');
    hooks.state!(true);
    expect(await cache.get('k', load)).toBe('row 3');
    expect(await cache.get('k', load)).toBe('row 3');
    hooks.notify!();
    expect(await cache.get('k', load)).toBe('row 4');
    // The listening connection lost: every request reads the database again.
    hooks.state!(false);
    expect(await cache.get('k', load)).toBe('row 5');
    expect(await cache.get('k', load)).toBe('row 6');
  });

  it('keeps entries within a weight budget, the oldest going first, and none heavier than it', async () => {
    const { db, hooks } = channel();
    const cache = new LookupCache<string>(100, 60_000, { weigh: (v) => v.length, max: 10 });
    cache.listen(db, 'some_channel');
    hooks.state!(true);
    let loads = 0;
    const get = (key: string, value: string) => cache.get(key, async () => (loads++, value));
    await get('a', 'aaaa');
    await get('b', 'bbbb');
    await get('a', 'x');
    await get('b', 'x');
    expect(loads).toBe(2);
    // 4 + 4 + 4 > 10: `a`, the oldest, goes.
    await get('c', 'cccc');
    await get('b', 'x');
    await get('c', 'x');
    expect(loads).toBe(3);
    await get('a', 'aaaa');
    expect(loads).toBe(4);
    // Heavier than the whole budget: answered, not kept, nothing else dropped for it.
    expect(await get('big', 'x'.repeat(11))).toBe('x'.repeat(11));
    await get('big', 'x'.repeat(11));
    await get('a', 'x');
    expect(loads).toBe(6);
  });

  it('weighs an entry with its key, and lets expired entries go when it keeps another', async () => {
    const { db, hooks } = channel();
    const cache = new LookupCache<string>(100, 50, { weigh: (v, key) => key.length + v.length, max: 100 });
    cache.listen(db, 'some_channel');
    hooks.state!(true);
    await cache.get('key-a', async () => 'aaaa');
    await cache.get('key-b', async () => 'bbbb');
    expect(cache.kept()).toEqual([
      { key: 'key-a', value: 'aaaa', weight: 9 },
      { key: 'key-b', value: 'bbbb', weight: 9 },
    ]);
    await new Promise((r) => setTimeout(r, 60));
    await cache.get('key-c', async () => 'cccc');
    expect(cache.kept()).toEqual([{ key: 'key-c', value: 'cccc', weight: 9 }]);
  });

  it('does not keep a lookup that began before a change and ended after it', async () => {
    const { db, hooks } = channel();
    const cache = new LookupCache<string>();
    cache.listen(db);
    hooks.state!(true);
    let release!: () => void;
    const slow = cache.get('k', () => new Promise<string>((resolve) => (release = () => resolve('old'))));
    hooks.notify!();
    release();
    expect(await slow).toBe('old');
    expect(await cache.get('k', async () => 'new')).toBe('new');
  });

  it("drops only the changed workspace's entries (and those of no workspace) on a notification naming it", async () => {
    const { db, hooks } = channel();
    const cache = new LookupCache<string>(100, 60_000, { weigh: (v) => v.length, max: 100 });
    cache.listen(db, 'some_channel');
    hooks.state!(true);
    const fill = async () => {
      await cache.get('a1', async () => 'one', '1');
      await cache.get('b1', async () => 'one', '1');
      await cache.get('a2', async () => 'two', '2');
      await cache.get('any', async () => 'all');
    };
    await fill();
    hooks.notify!('2');
    expect(cache.kept().map((k) => k.key)).toEqual(['a1', 'b1']);
    await fill();
    hooks.notify!('1');
    expect(cache.kept().map((k) => k.key)).toEqual(['a2']);
    expect(cache.kept().reduce((n, k) => n + k.weight, 0)).toBe(3);
    await fill();
    // Any other payload (none, TRUNCATE's): everything.
    for (const payload of ['', 'x', '0', '01', '__proto__']) {
      await fill();
      hooks.notify!(payload);
      expect(cache.kept()).toEqual([]);
    }
  });

  it('keeps a lookup that began before a change of another workspace, not one of its own or of every workspace', async () => {
    const { db, hooks } = channel();
    const cache = new LookupCache<string>();
    cache.listen(db);
    hooks.state!(true);
    const slow = (key: string, scope?: string) => {
      let release!: () => void;
      const got = cache.get(key, () => new Promise<string>((resolve) => (release = () => resolve('old'))), scope);
      return { got, release: () => release() };
    };
    const [own, other, any] = [slow('own', '1'), slow('other', '2'), slow('any')];
    hooks.notify!('1');
    for (const l of [own, other, any]) l.release();
    await Promise.all([own.got, other.got, any.got]);
    expect(cache.kept().map((k) => k.key)).toEqual(['other']);
    const late = slow('late', '2');
    hooks.notify!('');
    late.release();
    await late.got;
    expect(cache.kept()).toEqual([]);
  });

  it('keeps no undefined answer, and at most its size, oldest out first', async () => {
    const { db, hooks } = channel();
    const cache = new LookupCache<string>(2);
    cache.listen(db);
    hooks.state!(true);
    expect(await cache.get('missing', async () => undefined)).toBeUndefined();
    expect(await cache.get('missing', async () => 'found')).toBe('found');
    await cache.get('a', async () => 'a1');
    await cache.get('b', async () => 'b1');
    expect(await cache.get('missing', async () => 'again')).toBe('again');
    expect(await cache.get('b', async () => 'b2')).toBe('b1');
  });
});

describe('LookupCache followers', () => {
  it('are driven by the listening cache: kept while it listens, dropped on its notifications', async () => {
    const { db, hooks } = channel();
    const keys = new LookupCache<string>();
    const types = keys.follower<string>();
    keys.listen(db);
    let loads = 0;
    const load = async () => `types ${++loads}`;
    expect(await types.get('b', load)).toBe('types 1');
    expect(await types.get('b', load)).toBe('types 2');
    hooks.state!(true);
    expect(await types.get('b', load)).toBe('types 3');
    expect(await types.get('b', load)).toBe('types 3');
    hooks.notify!();
    expect(await types.get('b', load)).toBe('types 4');
    hooks.state!(false);
    expect(await types.get('b', load)).toBe('types 5');
  });
});
