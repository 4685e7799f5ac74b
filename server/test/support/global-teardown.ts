// Ends the pooler pass (support/pooler-pass.ts) when the run had one.
import { finishPoolerPass } from './pooler-pass';

export default async function globalTeardown(): Promise<void> {
  await finishPoolerPass();
}
