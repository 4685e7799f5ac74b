// Operator tools: scheduled tasks on demand and the test clock.
import { handlers } from '../http/handlers';
import { invalid, notFound } from '../http/errors';
import { formatTimestamp } from '../lib/time';
import type { AppContext } from '../context';

function requireTestClock(app: AppContext): void {
  if (!app.config.testClock) throw notFound();
}

/**
 * The test clock stays where every stored timestamp can follow it: the years 0001 to 9998 (a
 * clock at the end of 9999 would date links and schedules into the year 10000).
 */
const clockInRange = (at: Date) => at.getUTCFullYear() >= 1 && at.getUTCFullYear() <= 9998;
const CLOCK_RANGE = 'The test clock must stay within the years 0001 to 9998.';

export const operationHandlers = handlers({
  async runTask({ params }, app) {
    const task = app.tasks.get(params.task);
    if (!task) throw notFound();
    const processed = await task.run(app);
    return { status: 200, body: { task: task.name, processed } };
  },

  async getClock(_req, app) {
    requireTestClock(app);
    return { status: 200, body: { now: formatTimestamp(app.clock.now()) } };
  },

  async setClock({ body }, app) {
    requireTestClock(app);
    let now: Date;
    if (body.now !== undefined) {
      const target = new Date(body.now);
      if (Number.isNaN(target.getTime())) throw invalid('now', 'The :attribute field must be a valid date-time.');
      if (!clockInRange(target)) throw invalid('now', CLOCK_RANGE);
      now = await app.clock.setNow(target);
    } else {
      const seconds = body.advance_seconds ?? 0;
      if (!clockInRange(new Date(app.clock.now().getTime() + seconds * 1000))) throw invalid('advance_seconds', CLOCK_RANGE);
      now = await app.clock.advance(seconds);
    }
    return { status: 200, body: { now: formatTimestamp(now) } };
  },

  async resetClock(_req, app) {
    requireTestClock(app);
    return { status: 200, body: { now: formatTimestamp(await app.clock.reset()) } };
  },
});
