// One interface over the two supported engines: a PostgreSQL server (DATABASE_URL) and the
// embedded PostgreSQL (PGlite in DATA_DIR). Everything above this module is engine-agnostic.
import { createHash, randomUUID } from 'node:crypto';
import path from 'node:path';
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Client, Pool, types as pgTypes, type PoolClient, type QueryResult as PgResult } from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { PrismaPg } from '@prisma/adapter-pg';
import { PGlite, type Results } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaClient } from '../generated/prisma/client';
import { pgliteSeedDir } from '../paths';
import { DEFAULT_SHARED_BUFFERS_MB } from '../config';
import { quoteIdent } from '../lib/sql-identifier';
import { sqlState } from '../lib/sql-state';
import { ShapedStatements } from './shaped-statements';

export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

/** A place to run SQL: the database itself or one transaction on it. */
export interface SqlRunner {
  /**
   * Runs one statement. `prepare` names it on a PostgreSQL server: each connection parses and
   * plans it once and then only binds values. `true`: one of the few fixed statements every
   * request runs. `'bounded'`: a statement whose text a request shapes (a query's filter and
   * sort), which each connection keeps within bounds (db/shaped-statements.ts).
   */
  query<T = Record<string, unknown>>(text: string, values?: unknown[], prepare?: Prepare): Promise<QueryResult<T>>;
  /** Runs a script of several statements (no parameters). */
  exec(sql: string): Promise<void>;
  /**
   * Runs `copy`, a `COPY … FROM STDIN` statement, with `source`'s bytes as its input; answers the
   * rows copied. The bytes go to the database as they come (on the embedded database: in
   * pieces cut after newlines, so for input of one row per line).
   */
  copyIn(copy: string, source: AsyncIterable<Buffer>): Promise<number>;
  /**
   * Runs `copy`, a `COPY … TO STDOUT` statement, writing its output to `sink` as it comes (on the
   * embedded database: once whole, so a caller bounds what one call copies).
   */
  copyOut(copy: string, sink: NodeJS.WritableStream): Promise<void>;
  /** Like `exec`, returning the rows of the script's last statement (pg-boss runs scripts). */
  execReturning<T = Record<string, unknown>>(sql: string): Promise<QueryResult<T>>;
}

export interface Database extends SqlRunner {
  kind: 'postgres' | 'pglite';
  /**
   * For writes a crash may lose (rate-limit counters): on a PostgreSQL server a small pool of its
   * own with `synchronous_commit=off`, so such a write does not wait for the WAL flush of its
   * commit. The embedded database uses itself.
   */
  relaxed: SqlRunner;
  prisma: PrismaClient;
  /** Runs `fn` in one transaction on one connection (commit on success, rollback on throw). */
  transaction<T>(fn: (tx: SqlRunner) => Promise<T>): Promise<T>;
  /**
   * Calls `onNotify` with its payload for each notification on `channel` (PostgreSQL `LISTEN`;
   * not for the pings of `Listener.confirm`), and `onListening`
   * with true once listening and false when listening stopped (a lost connection, retried until
   * `stop`): notifications may have been missed until it is true again. On the embedded
   * database a notification arrives before the statement that sent it resolves.
   */
  listen(channel: string, onNotify: (payload: string) => void, onListening: (listening: boolean) => void): Listener;
  close(): Promise<void>;
}

export interface Listener {
  /**
   * Resolves once every process listening on the channel (in this database) has handled a
   * notification sent now, so has run `onNotify` for every change committed before the call; or
   * after `timeoutMs`, when a listener does not answer (a process hung or gone).
   */
  confirm(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export type Prepare = boolean | 'bounded';

/** A prepared statement's name, from its text (the same statement gets the same name everywhere). */
const statementName = (text: string) => `s_${createHash('sha1').update(text).digest('hex')}`;

/** node-postgres's record of what a connection has prepared (it skips Parse for names in it). */
interface PgConnection {
  parsedStatements: Record<string, string>;
  submittedNamedStatements?: Record<string, string>;
}
type PgClient = Pick<Client, 'query'> & { connection: PgConnection };

/** Per connection, the request-shaped statements it holds (db/shaped-statements.ts). */
const shapedStatements = new WeakMap<object, ShapedStatements>();

/**
 * Runs a request-shaped statement on `client`: prepared when the connection keeps it
 * (ShapedStatements: seen before, not too long, within the connection's bounds, the least
 * recently used deallocated first), else unnamed, its plan let go after the run.
 */
async function queryShaped(client: PgClient, text: string, values: unknown[] | undefined): Promise<PgResult> {
  const name = statementName(text);
  let held = shapedStatements.get(client);
  if (!held) shapedStatements.set(client, (held = new ShapedStatements()));
  const admission = held.admit(name, text.length);
  if (!admission.prepare) return client.query(text, values);
  for (const oldest of admission.evict) {
    await client.query(`DEALLOCATE ${oldest}`);
    delete client.connection.parsedStatements[oldest];
    if (client.connection.submittedNamedStatements) delete client.connection.submittedNamedStatements[oldest];
  }
  return client.query({ name, text, values });
}

// int8 arrives as a string from pg; our bigint columns (counters, offsets) fit in a double.
pgTypes.setTypeParser(20, (v) => Number(v));

function normalizeRows<T>(rows: T[]): T[] {
  // PGlite returns int8 as BigInt; make both engines hand back numbers.
  for (const row of rows as Record<string, unknown>[]) {
    for (const key of Object.keys(row)) if (typeof row[key] === 'bigint') row[key] = Number(row[key]);
  }
  return rows;
}

/**
 * Lifts the statement timeout for the rest of the transaction `tx` is in, for work that must
 * finish however long it takes (migrations, waiting for the migration lock). `SET LOCAL`: it ends
 * with the transaction, so it never stays on a pooled connection (nor, behind a transaction-mode
 * pooler, reaches another client's transaction). The embedded database has no timeout to lift.
 */
export async function withoutStatementTimeout(tx: SqlRunner): Promise<void> {
  await tx.query("SELECT set_config('statement_timeout', '0', true)");
}

/**
 * The session settings every connection of a pool starts with, as startup parameters: the
 * server applies them when it opens the connection, before any statement, so they hold on
 * whichever connection a statement lands on (a new one after a reconnect too) at no round trip.
 * `statement_timeout` (0: none) stops a statement that runs longer: a request holds a connection
 * and a core for at most that long (the 57014 it raises is answered in http/errors.ts).
 */
/** The planner settings of the request pool (why: see openPostgres). */
const SESSION_SETTINGS = ['max_parallel_workers_per_gather=0', 'random_page_cost=1.1', 'jit=off'];

/**
 * Behind a transaction-mode pooler no startup parameter reaches the server: the settings this
 * server would set (and the statement timeout) that the server's connections do not have, as
 * `name=value` (empty when all hold).
 */
export async function sessionSettingsDiffer(db: SqlRunner, statementTimeoutMs: number): Promise<string[]> {
  const wanted = sessionSettings(statementTimeoutMs).map((s) => s.split('='));
  const { rows } = await db.query<{ name: string; setting: string }>(`SELECT name, setting FROM pg_settings WHERE name = ANY($1::text[])`, [
    wanted.map(([n]) => n),
  ]);
  const have = new Map(rows.map((r) => [r.name, r.setting]));
  return wanted.filter(([n, v]) => have.get(n) !== v).map(([n, v]) => `${n}=${v}`);
}

const sessionSettings = (statementTimeoutMs: number) => [...SESSION_SETTINGS, `statement_timeout=${statementTimeoutMs}`];

/**
 * The settings as a pooler's `connect_query` (PgBouncer runs it on each server connection it
 * opens): what the start-up log suggests behind a pooler. Without them the planner compiles
 * (JIT) the larger delivery statements, seconds each.
 */
export const sessionConnectQuery = (statementTimeoutMs: number) =>
  sessionSettings(statementTimeoutMs)
    .map((s) => s.split('='))
    .map(([name, value]) => `SET ${name} = ${value}`)
    .join('; ');

const sessionOptions = (settings: string[], statementTimeoutMs: number) =>
  [...settings, `statement_timeout=${statementTimeoutMs}`].map((s) => `-c ${s}`).join(' ');

/**
 * `pooled`: `url` is a transaction-mode pooler, which hands each transaction (each statement
 * outside one) to any of its server connections: statements go unnamed (a named one may not
 * exist on the next connection) and the pool sends no startup parameters (a pooler refuses
 * them): the session settings are then the server's own (`ALTER ROLE … SET`, or the pooler's
 * `connect_query`), which `sessionSettingsDiffer` reports at start. `directUrl` carries LISTEN.
 */
async function openPostgres(
  url: string,
  poolSize: number,
  statementTimeoutMs: number,
  session: { pooled: boolean; directUrl: string },
): Promise<Database> {
  // A server that does not answer must not hold requests forever: give up connecting after 5 s
  // (the request then gets 503, see lib/sql-state.ts `isDependencyDown`).
  const pool = new Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: 5_000,
    // Many short requests at once: a parallel scan for one of them takes cores from the others.
    // Random reads cost little more than sequential ones on SSDs and in cache (PostgreSQL's
    // default of 4 is for spinning disks): index lookups per matching row beat scanning a table.
    // No JIT: compiling an aggregate over 100,000 rows cost 630 ms of a 2 s request, for
    // statements that run once each (measured with EXPLAIN ANALYZE in the entries-query bench).
    ...(session.pooled ? {} : { options: sessionOptions(SESSION_SETTINGS, statementTimeoutMs) }),
  });
  // An idle connection dropped by the server (restart, failover) is replaced on the next query;
  // without a listener the error would end the process.
  pool.on('error', () => undefined);
  const prisma = new PrismaClient({ adapter: new PrismaPg(pool) });
  const listeners = new Set<{ stop(): Promise<void> }>();
  // (Behind a pooler, relaxed writes commit as the server's settings say.)
  const relaxedPool = new Pool({
    connectionString: url,
    max: Math.min(2, poolSize),
    connectionTimeoutMillis: 5_000,
    ...(session.pooled ? {} : { options: sessionOptions(['synchronous_commit=off'], statementTimeoutMs) }),
  });
  relaxedPool.on('error', () => undefined);
  /** `work` on one connection: a transaction's, or one taken from the pool for it. */
  const onOneConnection = async <T>(client: Pool | PoolClient, work: (c: PoolClient) => Promise<T>): Promise<T> => {
    if (!(client instanceof Pool)) return work(client);
    const taken = await client.connect();
    try {
      return await work(taken);
    } finally {
      taken.release();
    }
  };
  /** A request-shaped statement (see queryShaped). */
  const shaped = (client: Pool | PoolClient, text: string, values: unknown[] | undefined): Promise<PgResult> =>
    onOneConnection(client, (c) => queryShaped(c as unknown as PgClient, text, values));
  const runner = (client: Pool | PoolClient): SqlRunner => ({
    async query<T>(text: string, values?: unknown[], prepare?: Prepare) {
      // Behind a pooler every statement goes unnamed (see openPostgres).
      const res =
        session.pooled || !prepare
          ? await client.query(text, values as unknown[])
          : prepare === 'bounded'
            ? await shaped(client, text, values)
            : await client.query({ name: statementName(text), text, values: values as unknown[] });
      return { rows: res.rows as T[], rowCount: res.rowCount ?? res.rows.length };
    },
    async exec(sql) {
      await client.query(sql);
    },
    copyIn: (copy, source) =>
      onOneConnection(client, async (c) => {
        const stream = c.query(copyFrom(copy));
        await pipeline(Readable.from(source, { objectMode: false }), stream);
        return stream.rowCount;
      }),
    copyOut: (copy, sink) => onOneConnection(client, (c) => pipeline(c.query(copyTo(copy)), sink)),
    async execReturning(sql) {
      const res = (await client.query(sql)) as unknown as PgResult | PgResult[];
      const last = Array.isArray(res) ? res[res.length - 1] : res;
      return { rows: (last?.rows ?? []) as never[], rowCount: last?.rowCount ?? 0 };
    },
  });
  return {
    kind: 'postgres',
    prisma,
    ...runner(pool),
    relaxed: runner(relaxedPool),
    async transaction(fn) {
      const client = await pool.connect();
      // A connection lost while the work waits between statements (a stream's next chunk, say)
      // is an 'error' event on the checked-out client: without a listener it would end the
      // process. Its next statement fails anyway; the client is then discarded, not pooled.
      let lost: Error | undefined;
      const onError = (err: Error) => (lost = err);
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const result = await fn(runner(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.off('error', onError);
        client.release(lost);
      }
    },
    listen(channel, onNotify, onListening) {
      const listener = listenPostgres(session.directUrl, channel, onNotify, onListening);
      listeners.add(listener);
      return listener;
    },
    async close() {
      await Promise.all([...listeners].map((l) => l.stop()));
      await prisma.$disconnect();
      await pool.end();
      await relaxedPool.end();
    },
  };
}

/** The bytes of one COPY on the embedded database (see its copyIn). */
const COPY_PIECE = 256 * 1024;

/** How often a listening connection proves it is alive (a silently dropped one would miss notifications). */
const LISTEN_HEARTBEAT_MS = 5_000;

/** How listening connections name themselves (per channel), so that `confirm` counts those of its channel. */
const listenerName = (channel: string) => `workspace-api listener ${channel}`;

/**
 * LISTEN on a connection of its own, reconnecting with backoff (1 s doubling to 30 s).
 *
 * `confirm` pings every listener: it counts the listening connections of this database, notifies
 * `ping:<nonce>` on the channel, and waits until as many of them have answered on `<channel>_ack`.
 * Each listener answers only after its `onNotify` has run, and PostgreSQL delivers notifications in
 * commit order, so every process has then handled each change committed before the ping.
 */
function listenPostgres(
  url: string,
  channel: string,
  onNotify: (payload: string) => void,
  onListening: (listening: boolean) => void,
): Listener {
  const ackChannel = `${channel}_ack`;
  /** Pings of this process awaiting answers: answers so far, and how many listeners were counted. */
  const pings = new Map<string, { answers: number; expected: number; done(): void }>();
  let stopped = false;
  let client: Client | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let retry: NodeJS.Timeout | undefined;
  let delay = 1_000;
  const lost = () => {
    if (!client) return;
    const dead = client;
    client = undefined;
    clearInterval(heartbeat);
    onListening(false);
    dead.end().catch(() => undefined);
    retryLater();
  };
  const retryLater = () => {
    if (!stopped) (retry = setTimeout(() => void connect(), delay)).unref();
    delay = Math.min(delay * 2, 30_000);
  };
  const check = (ping: { answers: number; expected: number; done(): void }) => ping.answers >= ping.expected && ping.done();
  const connect = async () => {
    const c = new Client({
      connectionString: url,
      keepAlive: true,
      connectionTimeoutMillis: 5_000,
      application_name: listenerName(channel),
    });
    c.on('error', () => undefined);
    try {
      await c.connect();
      await c.query(`LISTEN ${quoteIdent(channel)}; LISTEN ${quoteIdent(ackChannel)}`);
    } catch {
      c.end().catch(() => undefined);
      return retryLater();
    }
    if (stopped) return void c.end().catch(() => undefined);
    client = c;
    delay = 1_000;
    c.on('notification', (n) => {
      if (n.channel === channel) {
        // A ping is answered after every notification before it was handled (they come in order).
        if (n.payload?.startsWith('ping:')) c.query('SELECT pg_notify($1, $2)', [ackChannel, n.payload.slice(5)]).catch(lost);
        else onNotify(n.payload ?? '');
      } else if (n.channel === ackChannel && n.payload) {
        const ping = pings.get(n.payload);
        if (ping) {
          ping.answers++;
          check(ping);
        }
      }
    });
    c.on('error', lost);
    c.on('end', lost);
    heartbeat = setInterval(() => void c.query('SELECT 1').catch(lost), LISTEN_HEARTBEAT_MS);
    heartbeat.unref();
    onListening(true);
  };
  void connect();
  return {
    async confirm(timeoutMs = 2_000) {
      const c = client;
      // Not listening: this process caches nothing, and cannot hear answers; other processes
      // still hear the change itself.
      if (!c) return;
      const nonce = randomUUID();
      const answeredAll = new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          pings.delete(nonce);
          resolve();
        };
        const timer = setTimeout(done, timeoutMs);
        pings.set(nonce, { answers: 0, expected: Infinity, done });
      });
      try {
        const { rows } = await c.query<{ listeners: number }>(
          `SELECT (SELECT count(*)::int FROM pg_stat_activity WHERE datname = current_database() AND application_name = $3) AS listeners,
                  pg_notify($1, $2)`,
          [channel, `ping:${nonce}`, listenerName(channel)],
        );
        const ping = pings.get(nonce);
        // Answers may have come before the count.
        if (ping) {
          ping.expected = rows[0].listeners;
          check(ping);
        }
      } catch {
        pings.get(nonce)?.done();
      }
      await answeredAll;
    },
    async stop() {
      stopped = true;
      clearTimeout(retry);
      clearInterval(heartbeat);
      for (const ping of [...pings.values()]) ping.done();
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
    },
  };
}

/**
 * A new embedded database starts as a copy of the seed (dist/pglite-seed/: initdb and migrations
 * done at build time), made beside `dir` and renamed into place so that a start cut off midway
 * leaves no half database. Copying the files takes about 0.25 s where loading the same data as a
 * tar through PGlite took 2 s and initdb 4.5 s; later migrations are applied on top as usual.
 */
function seedDataDir(dir: string): void {
  if (existsSync(path.join(dir, 'PG_VERSION')) || !existsSync(pgliteSeedDir)) return;
  // An empty directory (an operator's mount) is replaced; one with other files is left to PGlite.
  if (existsSync(dir) && readdirSync(dir).length) return;
  const next = `${dir}.seeding`;
  rmSync(next, { recursive: true, force: true });
  cpSync(pgliteSeedDir, next, { recursive: true });
  rmSync(dir, { recursive: true, force: true });
  renameSync(next, dir);
}

/** The embedded database in `dataDir/pgdata`; `sharedBuffersMb`: PostgreSQL's buffer pool there. */
export async function openPglite(dataDir: string, sharedBuffersMb = DEFAULT_SHARED_BUFFERS_MB): Promise<Database> {
  const dir = path.join(dataDir, 'pgdata');
  seedDataDir(dir);
  mkdirSync(dir, { recursive: true });
  // PGlite zeroes its shared memory byte by byte at every start: about 6 ms per MB of buffer pool
  // here (PostgreSQL's usual 128 MB took 0.8 s of a 1.1 s open).
  const startParams = [...PGlite.defaultStartParams, '-c', `shared_buffers=${sharedBuffersMb}MB`];
  const pg = await PGlite.create(dir, { startParams });
  const prisma = new PrismaClient({ adapter: new PrismaPGlite(pg) });
  type PgliteLike = Pick<PGlite, 'query' | 'exec'>;
  const prepared = preparedStatements(pg);
  // Statements asked to be prepared are, outside transactions (see preparedStatements).
  const runner = (client: PgliteLike, prepares = false): SqlRunner => ({
    async query<T>(text: string, values?: unknown[], prepare?: boolean | 'bounded') {
      const res = prepares && prepare ? await prepared.query<T>(text, values) : await client.query<T>(text, values as unknown[]);
      return { rows: normalizeRows(res.rows), rowCount: res.affectedRows ?? res.rows.length };
    },
    async exec(sql: string) {
      await client.exec(sql);
    },
    async copyIn(copy: string, source: AsyncIterable<Buffer>) {
      // PGlite reads a COPY's input from the blob it is given, as the file /dev/blob, which it
      // holds in its WebAssembly memory (grown for good): the input goes in pieces of about
      // COPY_PIECE bytes, cut after a newline (so for input of one row per line).
      const statement = copy.replace(/\bFROM STDIN\b/, "FROM '/dev/blob'");
      let copied = 0;
      const send = async (piece: Buffer[]) => {
        if (!piece.length) return;
        try {
          copied += (await client.query(statement, [], { blob: new Blob(piece as Uint8Array<ArrayBuffer>[]) })).affectedRows ?? 0;
        } catch (err) {
          // Its context names the line in this piece: name it in the whole input, as a server would.
          const where = (err as { where?: unknown }).where;
          if (typeof where === 'string')
            (err as { where: string }).where = where.replace(/\bline (\d+)/, (_, n: string) => `line ${copied + Number(n)}`);
          throw err;
        }
      };
      let held: Buffer[] = [];
      let bytes = 0;
      for await (const chunk of source) {
        held.push(chunk);
        bytes += chunk.length;
        const cut = chunk.lastIndexOf(0x0a);
        if (bytes < COPY_PIECE || cut < 0) continue;
        const rest = chunk.subarray(cut + 1);
        held[held.length - 1] = chunk.subarray(0, cut + 1);
        await send(held);
        held = rest.length ? [rest] : [];
        bytes = rest.length;
      }
      await send(held);
      return copied;
    },
    async copyOut(copy: string, sink: NodeJS.WritableStream) {
      // PGlite writes a COPY's output to the file /dev/blob, answered as a blob.
      const { blob } = await client.query(copy.replace(/\bTO STDOUT\b/, "TO '/dev/blob'"));
      await pipeline(Readable.from([Buffer.from(await (blob ?? new Blob()).arrayBuffer())]), sink);
    },
    async execReturning<T>(sql: string) {
      const results = await client.exec(sql);
      const last = results[results.length - 1];
      return { rows: normalizeRows((last?.rows ?? []) as T[]), rowCount: last?.affectedRows ?? last?.rows.length ?? 0 };
    },
  });
  const db: Database = {
    kind: 'pglite',
    prisma,
    ...runner(pg, true),
    relaxed: runner(pg),
    transaction: (fn) => pg.transaction((tx) => fn(runner(tx))),
    listen(channel, onNotify, onListening) {
      // One process owns the embedded database: its own statements are the only changes.
      const unsubscribe = pg.listen(channel, (payload) => onNotify(payload)).then((off) => (onListening(true), off));
      // Its notifications arrive before the statement resolves: confirmed already.
      return { confirm: async () => undefined, stop: async () => (await unsubscribe)() };
    },
    async close() {
      await prisma.$disconnect();
      await pg.close();
    },
  };
  return db;
}

/** node-postgres's conversion of a parameter to its text form, and its quoting of a literal. */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- an internal module of pg, without types
const pgUtils = require('pg/lib/utils') as { prepareValue(v: unknown): string | Buffer | null; escapeLiteral(s: string): string };

/** A parameter as a literal of its text form (an untyped literal: the prepared statement's parameter type reads it). */
function literal(value: unknown): string {
  const text = pgUtils.prepareValue(value);
  if (text === null) return 'NULL';
  return Buffer.isBuffer(text) ? `'\\x${text.toString('hex')}'` : pgUtils.escapeLiteral(text);
}

/**
 * Prepared statements on the embedded database, which plans in WebAssembly at several times a
 * server's cost (a rendered read spends more planning than executing). PGlite's protocol has no
 * named statements, so they are SQL's: `PREPARE` once per session, then `EXECUTE` with the
 * parameters as literals of the text node-postgres would send (EXECUTE takes no bound
 * parameters). Which are kept is ShapedStatements' choice (its plans are this process's memory);
 * the others run as they come. A statement PREPARE refuses (a parameter of no inferable type) is
 * run as it comes. Only used outside transactions: a refused PREPARE inside one would abort it.
 */
function preparedStatements(pg: Pick<PGlite, 'query' | 'exec'>) {
  const shaped = new ShapedStatements();
  // Per statement kept, whether PREPARE took it (settled once; requests asking meanwhile wait for it).
  const ready = new Map<string, Promise<boolean>>();
  const query = async <T>(text: string, values: unknown[], retried = false): Promise<Results<T>> => {
    const name = statementName(text);
    const admission = shaped.admit(name, text.length);
    if (!admission.prepare) return pg.query<T>(text, values);
    let prepared = ready.get(name);
    if (!prepared) {
      // The least recently used go first (their names taken out now, their DEALLOCATE in turn).
      const gone = admission.evict.map((oldest) => ({ oldest, was: ready.get(oldest) }));
      for (const { oldest } of gone) ready.delete(oldest);
      prepared = (async () => {
        // (Already gone is as good.)
        for (const { oldest, was } of gone) if (await was) await pg.exec(`DEALLOCATE ${oldest}`).catch(() => undefined);
        // Already prepared (the same text under its hash) counts as prepared.
        return pg.exec(`PREPARE ${name} AS ${text}`).then(
          () => true,
          (err: unknown) => sqlState(err) === '42P05',
        );
      })();
      ready.set(name, prepared);
    }
    const literals = values.map(literal);
    // NUL cannot stand in SQL text: such a value goes as a parameter, refused as it would be.
    if (!(await prepared) || literals.some((l) => l.includes('\0'))) return pg.query<T>(text, values);
    try {
      return await pg.query<T>(literals.length ? `EXECUTE ${name}(${literals.join(', ')})` : `EXECUTE ${name}`);
    } catch (err) {
      // Deallocated meanwhile by another request's eviction: prepared again once seen again.
      if (retried || sqlState(err) !== '26000') throw err;
      ready.delete(name);
      shaped.forget(name);
      return query<T>(text, values, true);
    }
  };
  return { query: <T>(text: string, values: unknown[] = []) => query<T>(text, values) };
}

/**
 * `databaseStatementTimeoutMs`: the pools' statement timeout (unset or 0: none, as for the
 * migration CLI). The embedded database has none: PGlite accepts `statement_timeout` but never
 * fires it (its single-threaded WebAssembly build has no timer signal to cancel a statement),
 * so there the query-shape bounds (core/content/query/paths.ts) are what limit a query's work.
 */
export async function openDatabase(opts: {
  databaseUrl?: string;
  dataDir: string;
  databasePoolSize?: number;
  databaseStatementTimeoutMs?: number;
  databasePooler?: 'none' | 'transaction';
  databaseDirectUrl?: string;
  embeddedSharedBuffersMb?: number;
}): Promise<Database> {
  if (!opts.databaseUrl) return openPglite(opts.dataDir, opts.embeddedSharedBuffersMb);
  const session = { pooled: opts.databasePooler === 'transaction', directUrl: opts.databaseDirectUrl ?? opts.databaseUrl };
  return openPostgres(opts.databaseUrl, opts.databasePoolSize ?? 10, opts.databaseStatementTimeoutMs ?? 0, session);
}
