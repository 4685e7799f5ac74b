// The registry of scheduled tasks. `POST /admin/v1/tasks/{task}` runs one on demand; the
// scheduler (events and jobs) runs each on its cadence. Features register theirs in app.ts.
import type { AppContext } from './context';

export type Cadence = 'minutely' | 'hourly' | 'daily';

export interface Task {
  name: string;
  cadence: Cadence;
  /** Does one run and returns how many items it handled. */
  run(app: AppContext): Promise<number>;
}

export class TaskRegistry {
  private readonly tasks = new Map<string, Task>();

  register(task: Task): this {
    if (this.tasks.has(task.name)) throw new Error(`task ${task.name} registered twice`);
    this.tasks.set(task.name, task);
    return this;
  }

  get(name: string): Task | undefined {
    return this.tasks.get(name);
  }

  list(): Task[] {
    return [...this.tasks.values()];
  }
}
