// Runs the fuzz cases of one operation against a test server and judges every answer:
//   - no 5xx;
//   - the status is documented for the operation and the body matches its schema (the contract
//     check of support/contract.ts: error bodies are `Error` or `ValidationError`);
//   - an input the spec refuses (or no valid credential) is never answered with success;
//   - a refused write changed nothing in the database (support/fuzz/state.ts).
import fc from 'fast-check';
import { loadDocument, readOperations, type OperationSpec } from '../../../src/http/spec';
import { checkResponse, ContractViolation } from '../contract';
import type { TestServer } from '../server';
import { ADMIN_TOKEN } from '../server';
import type { Receiver } from '../receiver';
import { bodyGenerators, planBytes, type BodyMutation, type Generator } from './body';
import { pathGenerators, queryGenerators, type PathMutation, type QueryMutation } from './params';
import { allowedTypes, bodyInfo, serialize, validateAt, validateParams, minimal, node, type JTree, type BodySpecInfo } from './schema';
import { settle, StateProbe, type Snapshot } from './state';
import { baselineQuery, buildTenant, create, paramKey, realPathValue, type Tenant, type World } from './world';
import { ConnectionReset, Sender, type Sent } from './send';
import { RESOURCE } from './resource';

/** A body at the size limit is answered within this, and `/health` asked meanwhile within HEALTH_MS (the fault they guard took 50 s). */
export const RESOURCE_ANSWER_MS = 3_000;
export const RESOURCE_HEALTH_MS = 1_000;

/** How the request authenticates. `right` is the operation's own credential (none for public routes). */
export type Credential =
  'right' | 'none' | 'garbage' | 'swapped' | 'foreign' | 'truncated' | 'extended' | 'basic' | 'empty-bearer' | 'weak';
export const WRONG_CREDENTIALS: Credential[] = ['garbage', 'swapped', 'foreign', 'truncated', 'extended', 'basic', 'empty-bearer', 'weak'];

export interface ValidRequest {
  target: 'none';
  category: 'credentials';
  label: string;
}
export type Mutation = BodyMutation | PathMutation | QueryMutation | ValidRequest;

export interface FuzzCase {
  credential: Credential;
  mutation: Mutation;
}

export interface Failure {
  operationId: string;
  /**
   * `5xx`; `contract` (undocumented status, body not matching its schema); `accepted-invalid`
   * (success for input the spec refuses); `state-changed` (a refused write changed the database);
   * `connection-dead` / `connection-reset` (an answer that kept the connection alive but left it
   * unusable); `transport` (no answer at all).
   */
  kind: string;
  category: string;
  /** Where the mutation aimed: a body path, `{param}`, a query parameter. */
  location: string;
  label: string;
  credential: Credential;
  method: string;
  url: string;
  requestHeaders: Record<string, string>;
  requestBody: string;
  status: number | undefined;
  responseBody: string;
  detail: string;
}

export interface FuzzOptions {
  seed: number;
  numRuns: number;
  /** Throw at the first failure, so that fast-check shrinks it and prints its counterexample. */
  failFast: boolean;
}

const WRITE_METHODS = new Set(['post', 'put', 'patch', 'delete']);
const WORLD_MAX_AGE_MS = 4 * 60_000; // signed links live 600 s

const preview = (s: string, max = 300) => (s.length > max ? `${s.slice(0, max)}… (${s.length} characters)` : s);
const printable = (b: Buffer | undefined) => (b === undefined ? '(none)' : preview(JSON.stringify(b.toString('utf8')).slice(1, -1), 300));

/** A 32-bit seed for one operation, from the run's seed and the operation's id. */
export function operationSeed(seed: number, operationId: string): number {
  let h = seed | 0;
  for (const ch of operationId) h = (Math.imul(h ^ ch.charCodeAt(0), 0x5bd1e995) + 0x6b43a9b5) | 0;
  return h;
}

export class FuzzHarness {
  /** Fuzz requests sent (setup requests and connection checks are counted apart). */
  requests = 0;
  setupRequests = 0;
  connectionChecks = 0;
  readonly statuses = new Map<number, number>();
  /** Bodies at the size limit: how many, the slowest answer and the slowest `/health` asked meanwhile. */
  readonly resource = { cases: 0, slowest: { ms: 0, what: '' }, slowestHealth: { ms: 0, what: '' }, peakRss: 0 };
  private world?: World;
  /**
   * The rows each tenant's resources are made of: a tenant is rebuilt when one of them is gone, or
   * when one changed and the tenant no longer answers its plain reads (see checkWorld).
   */
  private readonly tenantRows = new Map<Tenant, Map<string, string>>();
  private stale = { a: true, b: true };
  private broken?: Error;
  /** `operationId:param` of path parameters that name a resource (see calibrate). */
  private readonly identifying = new Set<string>();
  private readonly sender: Sender;
  /** The failure to record for the previous request if its connection turns out dead. */
  private previous?: (why: string) => Failure;

  /** A GET of the spec without parameters or credentials (the health check), to test a connection with. */
  private readonly healthPath?: string;

  private constructor(
    private readonly s: TestServer,
    private readonly receiver: Receiver,
    private readonly probe: StateProbe,
    operations: OperationSpec[],
  ) {
    this.sender = new Sender(new URL(s.url));
    this.healthPath = operations.find(
      (op) => op.method === 'get' && op.security === 'none' && !op.parameters.length && /health/.test(op.path),
    )?.path;
  }

  static async start(s: TestServer, receiver: Receiver): Promise<FuzzHarness> {
    return new FuzzHarness(s, receiver, await StateProbe.open(s), readOperations(loadDocument()));
  }

  close(): Promise<void> {
    this.sender.close();
    return this.probe.close();
  }

  /** The cases of an operation: every category of mutation its spec allows, and credential variations of a valid request. */
  cases(op: OperationSpec, seed: number): { arb: fc.Arbitrary<FuzzCase>; examples: FuzzCase[] } {
    const info = bodyInfo(op);
    const gens: Generator<Mutation>[] = [...bodyGenerators(op, info), ...pathGenerators(op), ...queryGenerators(op)];
    const wrong = WRONG_CREDENTIALS.filter((c) => this.credentialApplies(op, c));
    const valid: ValidRequest = { target: 'none', category: 'credentials', label: 'a valid request' };
    const credentialCase = fc.record({ credential: fc.constantFrom<Credential>('none', ...wrong), mutation: fc.constant<Mutation>(valid) });
    const credential = fc.oneof(
      { weight: 8, arbitrary: fc.constant<Credential>('right') },
      { weight: 1, arbitrary: fc.constant<Credential>('none') },
      { weight: 1, arbitrary: fc.constantFrom<Credential>(...wrong) },
    );
    // Each category weighs the same, whatever the number of locations the schema has.
    const byCategory = new Map<string, fc.Arbitrary<Mutation>[]>();
    // Bodies at the size limit run once each (examples below), not among the random cases: the run keeps its length.
    for (const g of gens) if (g.category !== RESOURCE) byCategory.set(g.category, [...(byCategory.get(g.category) ?? []), g.arb]);
    const mutated = [...byCategory.values()].map((arbs) => ({
      weight: 1,
      arbitrary: fc.record({ credential, mutation: arbs.length === 1 ? arbs[0] : fc.oneof(...arbs) }),
    }));
    const arb = fc.oneof({ weight: 2, arbitrary: credentialCase }, ...mutated);
    // Whatever the seed: every generator's fixed values (or one sample) with the right credential,
    // a valid request without and with wrong credentials.
    const examples: FuzzCase[] = [
      ...gens.flatMap((g, i) =>
        (g.all ?? [fc.sample(g.arb, { seed: seed + i, numRuns: 1 })[0]]).map((mutation) => ({
          credential: 'right' as Credential,
          mutation,
        })),
      ),
      { credential: 'none', mutation: valid },
      ...wrong
        .filter((c) => ['garbage', 'swapped', 'truncated', 'weak'].includes(c))
        .map((credential) => ({ credential, mutation: valid as Mutation })),
    ];
    return { arb, examples };
  }

  private credentialApplies(op: OperationSpec, c: Credential): boolean {
    if (c === 'foreign') return op.security === 'apiKey';
    if (c === 'weak') return op.security === 'apiKey' && (op.abilities.length > 0 || op.permissions.length > 0);
    return true;
  }

  /** Runs the operation's cases; returns the failures (all of them, or the first with failFast). */
  async fuzzOperation(op: OperationSpec, opts: FuzzOptions): Promise<Failure[]> {
    // A world that could not be built (or a server whose background work stopped) fails every
    // later operation at once instead of each waiting for it again.
    if (this.broken) throw new Error(`fuzz: not run, an earlier operation broke the test's setup: ${this.broken.message}`);
    const failures: Failure[] = [];
    const { arb, examples } = this.cases(op, opts.seed);
    await this.calibrate(op, failures);
    const property = fc.asyncProperty(arb, async (c) => {
      const { failures: found } = await this.runCase(op, c);
      failures.push(...found);
      if (opts.failFast && found.length) throw new Error(formatFailure(found[0]));
    });
    // Examples count within numRuns: they run first, then `numRuns` random cases.
    await fc.assert(property, {
      seed: opts.seed,
      numRuns: examples.length + opts.numRuns,
      examples: examples.map((e) => [e] as [FuzzCase]),
      endOnFailure: !opts.failFast,
    });
    return failures;
  }

  private async ensureWorld(): Promise<World> {
    try {
      return await this.buildWorld();
    } catch (err) {
      this.broken = err as Error;
      throw err;
    }
  }

  private async buildWorld(): Promise<World> {
    if (this.world && Date.now() - this.world.a.builtAt > WORLD_MAX_AGE_MS) this.stale.a = true;
    if (!this.world || this.stale.a || this.stale.b) {
      const build = async (old: Tenant | undefined, stale: boolean) => {
        if (old && !stale) return old;
        if (process.env.FUZZ_VERBOSE === '1') process.stderr.write(`fuzz: building a tenant${old ? ' again' : ''}\n`);
        const before = await this.probe.rows();
        // Setup is not under test: a request that fails there (a busy machine) is tried again.
        let t: Tenant | undefined;
        for (let attempt = 1; !t; attempt++) {
          try {
            t = await buildTenant(this.s.url, this.s.admin, this.receiver.url);
          } catch (err) {
            if (attempt === 3) throw err;
            await new Promise((r) => setTimeout(r, 1_000));
          }
        }
        this.setupRequests += t.requests;
        await this.settle();
        const rows = await this.probe.rows();
        for (const [k, h] of before) if (rows.get(k) === h) rows.delete(k);
        this.tenantRows.set(t, rows);
        if (old) this.tenantRows.delete(old);
        return t;
      };
      const a = await build(this.world?.a, this.stale.a);
      const b = await build(this.world?.b, this.stale.b);
      this.world = { a, b, webhookUrl: this.receiver.url };
      this.stale = { a: false, b: false };
    }
    return this.world;
  }

  private async settle(): Promise<void> {
    const t0 = Date.now();
    try {
      await settle(this.s, this.probe);
      if (process.env.FUZZ_VERBOSE === '1' && Date.now() - t0 > 200)
        process.stderr.write(`fuzz: waited ${Date.now() - t0} ms for the server's background work\n`);
    } catch (err) {
      this.broken = err as Error;
      throw err;
    }
  }

  /**
   * After a successful DELETE of a tenant's resource: a new one of the same kind takes its place
   * (instead of building the whole tenant again).
   */
  private async replaceDeleted(op: OperationSpec, m: Mutation): Promise<void> {
    if (!this.world) return;
    const last = /\{(\w+)\}$/.exec(op.path)?.[1];
    if (!last || last === 'workspace') return;
    let t: Tenant | undefined = this.world.a;
    if (m.target === 'path' && m.param === last) t = 'world' in m.value && m.value.world === 'foreign' ? this.world.b : undefined;
    const key = paramKey(op, last);
    if (!t || !Object.hasOwn(t.values, key)) return;
    const before = await this.probe.rows();
    delete t.values[key];
    this.setupRequests += await create(this.s.url, t, this.receiver.url, key);
    if (!Object.hasOwn(t.values, key)) return; // Not replaced: checkWorld rebuilds the tenant.
    await this.settle();
    const after = await this.probe.rows();
    const own = new Map<string, string>();
    for (const [k] of this.tenantRows.get(t) ?? []) if (before.has(k)) own.set(k, before.get(k)!);
    for (const [k, h] of after) if (!before.has(k)) own.set(k, h);
    this.tenantRows.set(t, own);
    if (process.env.FUZZ_VERBOSE === '1') process.stderr.write(`fuzz: replaced the deleted ${key} resource\n`);
  }

  /**
   * After a successful write: a tenant that lost one of its rows is rebuilt; one whose rows only
   * changed (a suspended workspace, a moved lock version, background rechecks) is rebuilt when its
   * plain reads no longer succeed.
   */
  private async checkWorld(): Promise<void> {
    if (!this.world) return;
    const rows = await this.probe.rows();
    const check = async (t: Tenant) => {
      const own = [...(this.tenantRows.get(t) ?? new Map<string, string>())];
      if (own.some(([k]) => !rows.has(k))) return false;
      if (own.every(([k, h]) => rows.get(k) === h)) return true;
      const healthy = await this.healthy(t);
      if (healthy) this.tenantRows.set(t, new Map(own.map(([k]) => [k, rows.get(k)!])));
      return healthy;
    };
    this.stale = { a: !(await check(this.world.a)), b: !(await check(this.world.b)) };
  }

  /** Whether a tenant's resources still answer: the item GET of each of them, and a GET with its key. */
  private async healthy(t: Tenant): Promise<boolean> {
    for (const op of healthChecks()) {
      const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => realPathValue(t, op, name));
      const token = op.security === 'adminToken' ? ADMIN_TOKEN : op.security === 'apiKey' ? t.key : undefined;
      this.setupRequests++;
      const res = await fetch(`${this.s.url}${path}`, { headers: token ? { Authorization: `Bearer ${token}` } : {}, redirect: 'manual' });
      await res.arrayBuffer();
      if (res.status >= 400) return false;
    }
    return true;
  }

  private authorization(op: OperationSpec, world: World, c: Credential): string | undefined {
    const right = op.security === 'adminToken' ? ADMIN_TOKEN : op.security === 'apiKey' ? world.a.key : undefined;
    switch (c) {
      case 'right':
        return right === undefined ? undefined : `Bearer ${right}`;
      case 'none':
        return undefined;
      case 'garbage':
        return 'Bearer fuzz-wrong-token';
      case 'swapped':
        return `Bearer ${op.security === 'adminToken' ? world.a.key : ADMIN_TOKEN}`;
      case 'foreign':
        return `Bearer ${world.b.key}`;
      case 'truncated':
        return `Bearer ${(right ?? ADMIN_TOKEN).slice(0, -1)}`;
      case 'extended':
        return `Bearer ${right ?? ADMIN_TOKEN}x`;
      case 'basic':
        return `Basic ${Buffer.from(`fuzz:${right ?? ADMIN_TOKEN}`).toString('base64')}`;
      case 'empty-bearer':
        return 'Bearer ';
      case 'weak':
        return `Bearer ${world.a.weakKey}`;
    }
  }

  /**
   * Which path parameters name a resource: a well-formed value that names nothing must not
   * succeed there (informative parameters, such as an image's file name, accept anything).
   */
  private async calibrate(op: OperationSpec, failures: Failure[]): Promise<void> {
    for (const p of op.parameters.filter((q) => q.in === 'path')) {
      const integer = allowedTypes(node(p.schemaPointer)).has('integer');
      const raw = integer ? '2000000000' : 'fuzz-names-nothing';
      const probe: PathMutation = {
        target: 'path',
        category: 'path-param',
        label: `{${p.name}} = ${JSON.stringify(raw)} (calibration)`,
        param: p.name,
        value: { raw },
        namesNothing: false,
      };
      const r = await this.runCase(op, { credential: 'right', mutation: probe });
      failures.push(...r.failures);
      if (r.status !== undefined && r.status >= 400) this.identifying.add(`${op.operationId}:${p.name}`);
    }
  }

  /** Sends one case and judges the answer. */
  async runCase(op: OperationSpec, c: FuzzCase): Promise<{ failures: Failure[]; status?: number }> {
    const world = await this.ensureWorld();
    const info = bodyInfo(op);
    const m = c.mutation;
    const reasons: string[] = [];

    // Path.
    const decoded: Record<string, string> = {};
    const path = op.path.replace(/\{(\w+)\}/g, (_all, name: string) => {
      let raw = realPathValue(world.a, op, name);
      if (m.target === 'path' && m.param === name) {
        const v = m.value;
        if ('raw' in v) raw = v.raw;
        else if (v.world === 'foreign') raw = realPathValue(world.b, op, name);
        else if (/^\d+$/.test(raw)) raw = String(Number(raw) + (v.world === 'plus1' ? 1 : -1));
        if (m.namesNothing && this.identifying.has(`${op.operationId}:${name}`)) reasons.push(`{${name}} names no resource`);
      }
      try {
        decoded[name] = decodeURIComponent(raw);
      } catch {
        decoded[name] = raw;
      }
      return raw;
    });

    // Query.
    const query = this.query(op, world, m);

    // Parameters as the spec types them.
    const values: Record<string, unknown> = Object.create(null);
    for (const [k, v] of new URLSearchParams(query)) values[k] = Object.hasOwn(values, k) ? ([] as unknown[]).concat(values[k], v) : v;
    Object.assign(values, decoded);
    const params = validateParams(op, values);
    if (!params.valid) reasons.push(`parameters: ${params.reason}`);

    // Credentials.
    const authorization = this.authorization(op, world, c.credential);
    if (op.security !== 'none' && c.credential !== 'right' && (c.credential !== 'weak' || this.credentialApplies(op, 'weak'))) {
      reasons.push(`credential: ${c.credential}`);
    }

    // Body.
    const ser = (t: JTree) => serialize(t, (key) => this.worldValue(world, key));
    let bytes: Buffer | undefined;
    let contentType: string | null | undefined;
    let chunked = false;
    if (m.target === 'body') {
      bytes = planBytes(m.plan, ser);
      contentType = m.contentType === undefined ? (bytes !== undefined ? 'application/json' : null) : m.contentType;
      chunked = m.chunked === true;
      if (m.invalid) reasons.push(`body: ${m.invalid}`);
    } else if (info.jsonPointer) {
      bytes = Buffer.from(ser(minimal(node(info.jsonPointer))));
      contentType = 'application/json';
    }
    if (info.mediaTypes.length)
      reasons.push(...this.judgeBody(op, info, bytes, contentType, m.target === 'body' && m.plan.kind === 'none'));

    const headers: Record<string, string> = { Accept: 'application/json' };
    if (authorization !== undefined) headers.Authorization = authorization;
    if (contentType !== null && contentType !== undefined) headers['Content-Type'] = contentType;
    const method = op.method.toUpperCase();
    const url = `${this.s.url}${path}${query ? `?${query}` : ''}`;
    const write = WRITE_METHODS.has(op.method);

    const before: Snapshot | undefined = write ? await this.probe.snapshot() : undefined;
    const failure = (kind: string, status: number | undefined, responseBody: string, detail: string): Failure => ({
      operationId: op.operationId,
      kind,
      category: m.category,
      location: locationOf(m),
      label: m.label,
      credential: c.credential,
      method,
      url: preview(url, 200),
      requestHeaders: headers.Authorization ? { ...headers, Authorization: headers.Authorization.replace(/(\S{6})\S+/, '$1…') } : headers,
      requestBody: printable(bytes),
      status,
      responseBody: preview(responseBody, 500),
      detail,
    });

    this.requests++;
    const t0 = Date.now();
    const failures: Failure[] = [];
    const pathAndQuery = `${path}${query ? `?${query}` : ''}`;
    let res: Sent;
    const health = m.category === RESOURCE ? this.healthWhileInFlight() : undefined;
    try {
      try {
        res = await this.sender.send(method, pathAndQuery, headers, bytes, chunked);
      } catch (err) {
        if (!(err instanceof ConnectionReset)) throw err;
        // The previous answer left a dead connection behind: that request's problem, not this one's.
        if (this.previous) failures.push(this.previous(err.message));
        res = await this.sender.send(method, pathAndQuery, headers, bytes, chunked, true);
      }
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (process.env.FUZZ_VERBOSE === '1')
        process.stderr.write(`${op.operationId} [${m.category}] ${m.label} (${c.credential}) -> ${e.code ?? ''} ${e.message}\n`);
      this.previous = undefined;
      return { failures: [...failures, failure('transport', undefined, '', `no answer: ${e.code ?? ''} ${e.message}`)] };
    }
    this.previous = (why) =>
      failure(
        'connection-reset',
        res.status,
        res.text,
        `answered with Connection: ${res.headers.connection ?? '(none)'}, then the next request on that connection failed (${why})`,
      );
    // A refused body may have been left unread: is the connection the answer kept alive usable?
    if (bytes !== undefined && res.status >= 400 && res.headers.connection !== 'close' && this.healthPath) {
      this.connectionChecks++;
      const dead = await this.sender.checkConnection(this.healthPath);
      if (dead)
        failures.push(
          failure(
            'connection-dead',
            res.status,
            res.text,
            `answered with Connection: ${res.headers.connection ?? '(none)'} but left the connection dead: ${dead}`,
          ),
        );
      this.previous = undefined;
    }
    if (health)
      failures.push(
        ...(await this.judgeResource(Date.now() - t0, await health, `${op.operationId} ${m.label}`)).map((d) =>
          failure('resource', res.status, res.text, d),
        ),
      );
    const text = res.text;
    const status = res.status;
    if (process.env.FUZZ_VERBOSE === '1')
      process.stderr.write(
        `${op.operationId} [${m.category}] ${m.label} (${c.credential}) -> ${status} ${Date.now() - t0}ms ${preview(text, 160)}\n`,
      );
    this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    const type = typeof res.headers['content-type'] === 'string' ? res.headers['content-type'] : null;
    let body: unknown = text;
    if (type?.includes('json') && text) {
      try {
        body = JSON.parse(text);
      } catch {
        failures.push(failure('contract', status, text, `the ${type} body is not JSON`));
      }
    }
    if (status >= 500) failures.push(failure('5xx', status, text, `server error`));
    else {
      try {
        checkResponse(method, url, status, type, body);
      } catch (err) {
        if (!(err instanceof ContractViolation)) throw err;
        failures.push(failure('contract', status, text, err.message.split('\n')[0]));
      }
    }
    if (status < 400 && reasons.length)
      failures.push(failure('accepted-invalid', status, text, `answered ${status} to an input the spec refuses: ${reasons.join('; ')}`));

    if (write && before) {
      if (status >= 300) {
        const after = await this.probe.snapshot();
        const changed = StateProbe.diff(before, after);
        if (changed.length) {
          failures.push(failure('state-changed', status, text, `a refused write changed the database: ${changed.join('; ')}`));
          await this.settle();
          await this.checkWorld();
        }
      } else {
        // A write that succeeded may have removed or changed what the next cases rely on.
        if (op.path === '/admin/v1/clock') {
          this.setupRequests++;
          await this.s.admin.delete('/admin/v1/clock');
        }
        await this.settle();
        if (op.method === 'delete') await this.replaceDeleted(op, m);
        await this.checkWorld();
      }
    }
    return { failures, status };
  }

  /** How long `/health` takes when asked on a connection of its own while a big body is being handled. */
  private async healthWhileInFlight(): Promise<number> {
    await new Promise((r) => setTimeout(r, 20));
    const t0 = Date.now();
    await fetch(`${this.s.url}${this.healthPath ?? '/health'}`).then((r) => r.arrayBuffer());
    return Date.now() - t0;
  }

  /** Records a body-at-the-limit case; its problems when it or `/health` took too long. */
  private judgeResource(answerMs: number, healthMs: number, what: string): string[] {
    const r = this.resource;
    r.cases++;
    if (answerMs > r.slowest.ms) r.slowest = { ms: answerMs, what };
    if (healthMs > r.slowestHealth.ms) r.slowestHealth = { ms: healthMs, what };
    r.peakRss = Math.max(r.peakRss, process.memoryUsage().rss);
    const problems: string[] = [];
    if (answerMs > RESOURCE_ANSWER_MS) problems.push(`a body at the size limit took ${answerMs} ms (bound ${RESOURCE_ANSWER_MS} ms)`);
    if (healthMs > RESOURCE_HEALTH_MS) problems.push(`/health asked meanwhile took ${healthMs} ms (bound ${RESOURCE_HEALTH_MS} ms)`);
    return problems;
  }

  private worldValue(world: World, key: string): JTree {
    if (key === 'user_id') return world.a.userId;
    if (key === 'webhook_url') return world.webhookUrl;
    throw new Error(`fuzz: no world value ${key}`);
  }

  private query(op: OperationSpec, world: World, m: Mutation): string {
    const pairs = baselineQuery(world.a, op)
      .split('&')
      .filter(Boolean)
      .map((p) => [p.split('=')[0], p.slice(p.split('=')[0].length + 1)] as [string, string]);
    let out = pairs;
    if (m.target === 'query' && m.set) {
      const { name, raw } = m.set;
      out = pairs.filter(([k]) => k !== name);
      if (raw !== null) out.push([name, raw]);
    }
    const parts = out.map(([k, v]) => `${k}=${v}`);
    if (m.target === 'query' && m.extra) parts.push(m.extra);
    return parts.join('&');
  }

  /** Why the spec refuses a body, or nothing when it accepts it (or cannot say). */
  private judgeBody(
    op: OperationSpec,
    info: BodySpecInfo,
    bytes: Buffer | undefined,
    contentType: string | null | undefined,
    absent: boolean,
  ): string[] {
    const media = (contentType ?? '').split(';')[0].trim().toLowerCase();
    const hasBytes = bytes !== undefined && bytes.length > 0;
    if (!hasBytes) {
      // No body, or an empty one: the server reads it as `{}` when the body is required.
      if (!info.jsonPointer || !op.bodyRequired) return op.bodyRequired && absent ? ['no body'] : [];
      const v = validateAt(info.jsonPointer, {});
      return v.valid ? [] : [`empty body: ${v.reason}`];
    }
    const jsonish = media === 'application/json' || media.endsWith('+json');
    if (!jsonish && !info.mediaTypes.includes(media))
      return [`content type ${contentType === null ? '(none)' : JSON.stringify(contentType)}`];
    const reasons: string[] = [];
    if (!op.streamingBody && bytes.length > op.bodyLimit) reasons.push(`${bytes.length} bytes over x-body-limit ${op.bodyLimit}`);
    if (jsonish && info.jsonPointer) {
      let value: unknown;
      try {
        value = JSON.parse(bytes.toString('utf8').replace(/^\ufeff/, ''));
        if (!isWellFormedUtf8(bytes)) reasons.push('not UTF-8');
      } catch {
        reasons.push('not JSON');
        return reasons;
      }
      const v = validateAt(info.jsonPointer, value);
      if (!v.valid) reasons.push(`body: ${v.reason}`);
    }
    return reasons;
  }
}

let healthCheckOps: OperationSpec[] | undefined;

/**
 * GETs that show whether a tenant still works: for each kind of resource, the first GET whose
 * path ends with it; the first GET of the workspace alone with each kind of credential (public
 * routes without credentials are left out).
 */
function healthChecks(): OperationSpec[] {
  if (healthCheckOps) return healthCheckOps;
  const gets = readOperations(loadDocument()).filter(
    (o) => o.method === 'get' && o.security !== 'none' && !o.parameters.some((p) => p.in === 'query' && p.required),
  );
  const out = new Map<string, OperationSpec>();
  for (const op of gets) {
    const params = op.parameters.filter((p) => p.in === 'path').map((p) => p.name);
    if (params.length === 1 && params[0] === 'workspace' && !out.has(`workspace:${op.security}`)) out.set(`workspace:${op.security}`, op);
    const last = /\{(\w+)\}$/.exec(op.path)?.[1];
    if (last && last !== 'workspace' && !out.has(paramKey(op, last))) out.set(paramKey(op, last), op);
  }
  healthCheckOps = [...out.values()];
  return healthCheckOps;
}

function locationOf(m: Mutation): string {
  switch (m.target) {
    case 'body':
      return m.label.includes(': ') ? m.label.split(': ')[0] : '(body)';
    case 'path':
      return `{${m.param}}`;
    case 'query':
      return m.set?.name ?? m.label;
    case 'none':
      return '-';
  }
}

function isWellFormedUtf8(b: Buffer): boolean {
  return Buffer.from(b.toString('utf8'), 'utf8').equals(b);
}

export function formatFailure(f: Failure): string {
  return [
    `${f.kind} on ${f.operationId}: ${f.detail}`,
    `  case: [${f.category}] ${f.label}, credential ${f.credential}`,
    `  request: ${f.method} ${f.url}`,
    `  headers: ${JSON.stringify(f.requestHeaders)}`,
    `  body: ${f.requestBody}`,
    `  answer: ${f.status ?? '(none)'} ${f.responseBody}`,
  ].join('\n');
}

/** Failures that share operation, kind, category, location and status, once each with a count. */
export function distinctFailures(failures: Failure[]): { failure: Failure; count: number }[] {
  const groups = new Map<string, { failure: Failure; count: number }>();
  for (const f of failures) {
    const key = [f.operationId, f.kind, f.category, f.location, f.status].join('|');
    const g = groups.get(key);
    if (g) g.count++;
    else groups.set(key, { failure: f, count: 1 });
  }
  return [...groups.values()];
}
