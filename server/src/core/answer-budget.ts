// The byte budget of an answer (lib/byte-budget.ts): past `limit`, `invalid` on `field`, the
// request's knob for a smaller answer, saying how to turn it.
import { ByteBudget } from '../lib/byte-budget';
import { invalidAt } from './errors';

export const answerBudget = (limit: number, field: string, advice: string) =>
  new ByteBudget(limit, () =>
    invalidAt(field, 'The :attribute field gives a result larger than :limit bytes; :advice.', { limit, advice }),
  );
