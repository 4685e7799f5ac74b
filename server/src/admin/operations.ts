// Operator tools: scheduled tasks on demand and the test clock.
import { handlers } from '../http/handlers';
import { invalid, notFound } from '../http/errors';
import { formatTimestamp } from '../lib/time';
import type { AppContext } from '../context';

function requireTestClock(app: AppContext): void {
  if (!app.config.testClock) throw notFound();
}

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
      if (Number.isNaN(target.getTime())) throw invalid('now', 'The now field must be a valid date-time.');
      now = await app.clock.setNow(target);
    } else {
      now = await app.clock.advance(body.advance_seconds ?? 0);
    }
    return { status: 200, body: { now: formatTimestamp(now) } };
  },

  async resetClock(_req, app) {
    requireTestClock(app);
    return { status: 200, body: { now: formatTimestamp(await app.clock.reset()) } };
  },
});
