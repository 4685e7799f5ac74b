// The contract test: every response a test sees is checked against the bundled spec. The status
// must be documented for the operation the request matched, and a JSON body must match its
// schema; an unmatched route must be the documented 404. A mismatch fails the test that made
// the request.
import { loadDocument, readOperations, type OperationSpec } from '../../src/http/spec';
import { SpecValidator } from '../../src/http/validation';

const doc = loadDocument();
const operations = readOperations(doc);
const validator = new SpecValidator(doc);

const escape = (s: string) => s.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
const matchers = operations.map((op) => ({
  op,
  re: new RegExp(
    '^' +
      op.path
        .split(/\{\w+\}/)
        .map(escape)
        .join('[^/]+') +
      '$',
  ),
}));

export function matchOperation(method: string, pathname: string): OperationSpec | undefined {
  const m = method.toLowerCase();
  // Prefer literal matches (`/admin/v1/clock`) over templated ones.
  const found = matchers.filter((x) => x.op.method === m && x.re.test(pathname));
  return found.sort((a, b) => (a.op.path.match(/\{/g)?.length ?? 0) - (b.op.path.match(/\{/g)?.length ?? 0))[0]?.op;
}

export class ContractViolation extends Error {}

/** Throws a ContractViolation when the response does not match the spec. */
export function checkResponse(method: string, url: string, status: number, contentType: string | null, body: unknown): void {
  const { pathname } = new URL(url);
  const op = matchOperation(method, pathname);
  if (!op) {
    const ok = status === 404 && typeof body === 'object' && body !== null && (body as { message?: unknown }).message === 'Not Found';
    if (!ok)
      throw new ContractViolation(`${method} ${pathname} matches no documented route but answered ${status} ${JSON.stringify(body)}`);
    return;
  }
  const problems = validator.validateResponse(op, status, contentType ?? undefined, structuredClone(body));
  if (problems.length) throw new ContractViolation(`${method} ${pathname}: ${problems.join('; ')}\nbody: ${JSON.stringify(body)}`);
}

/** A fetch that checks every response it returns (for the SDK's `fetch` option). */
export const contractFetch: typeof fetch = async (input, init) => {
  const request = new Request(input, init);
  const response = await fetch(request);
  const text = await response.clone().text();
  const type = response.headers.get('content-type');
  checkResponse(request.method, request.url, response.status, type, type?.includes('json') && text ? JSON.parse(text) : text);
  return response;
};
