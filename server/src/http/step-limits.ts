// A step counts against the rate limits of the route it stands for (its operation's
// `x-rate-limit`), for the key that started the execution and on the route's own counters (security
// review Hardening II, finding 5): a pipeline is no way around a limit, and what steps used is used
// for the route too. The entries quota is the documented exception (steps do not count against
// it; executePipeline's description). A step has no client address and no bearer credential of
// its own, so only rules per key or per body property can name it.
import type { AppContext } from '../context';
import { authorize, type ApiKeyPrincipal } from './auth';
import { HttpError, MESSAGES } from './errors';
import { rateLimitGroups, rateLimitKey } from './rate-limit';
import type { OperationSpec, RateLimitRule } from './spec';

/** Groups steps never count against, as documented. */
export const STEP_EXEMPT_GROUPS = new Set(['entries']);

const stepRules = (rules: RateLimitRule[]) =>
  rules.filter((r) => !STEP_EXEMPT_GROUPS.has(r.group) && (r.per === 'key' || r.per.startsWith('body.')));

/** The step's error past a limit: the route's 429, saying which limit it was (the step fails with it). */
function limited(app: AppContext, rule: RateLimitRule): HttpError {
  const per = rule.per === 'key' ? 'API key' : rule.per.slice('body.'.length);
  const points = rateLimitGroups(app.config)[rule.group];
  return new HttpError(429, {
    message: `${MESSAGES.tooManyRequests} The step counts against the ${rule.group} rate limit of its route (${points} per minute per ${per}), which is used up; the step did not run.`,
  });
}

/**
 * Counts one request of `op` for the step's key; throws its 429 past a limit. As the router
 * does, the route's rights are checked first (a refused step uses nothing up).
 */
export async function countStep(app: AppContext, op: OperationSpec, principal: ApiKeyPrincipal, body: unknown): Promise<void> {
  if (!app.rateLimits.enabled) return;
  const rules = stepRules(op.rateLimits);
  if (!rules.length) return;
  authorize(principal, op.abilities, op.permissions);
  const subject = { workspace: principal.workspace.name, keyId: principal.keyId, ip: '', authorization: '', body };
  for (const rule of rules) {
    const key = rateLimitKey(rule.per, subject);
    if (key === undefined) continue;
    try {
      await app.rateLimits.consume(rule.group, key);
    } catch (err) {
      if (err instanceof HttpError && err.status === 429) throw limited(app, rule);
      throw err;
    }
  }
}
