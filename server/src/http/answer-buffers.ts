// Buffers for large answers' bytes (lib/fresh-json.ts filledBytes), reused once the answer is
// sent. A page of rendered entries is hundreds of KB: a fresh buffer for each cost page faults to
// map it and collections of the whole heap (V8 counts it as external memory). Kept per power of
// two of size, a few of each, within a total.
import type { ServerResponse } from 'node:http';

/** Smaller answers take a fresh buffer (Node's pool serves the smallest; the rest are cheap). */
const MIN_POOLED = 64 * 1024;
/** Larger answers are rare: their buffers are not kept. */
const MAX_POOLED = 8 * 1024 * 1024;
const PER_SIZE = 8;
const MAX_TOTAL = 32 * 1024 * 1024;

const free = new Map<number, Buffer[]>();
let kept = 0;

const classOf = (size: number) => 2 ** Math.ceil(Math.log2(size));

/**
 * A buffer of `size` bytes for the answer `res` sends, back among the free ones once `res` has
 * handed all its bytes to the socket ('finish'; an answer cut short keeps its buffer to itself).
 */
export function answerBuffer(res: ServerResponse, size: number): Buffer {
  if (size < MIN_POOLED || size > MAX_POOLED) return Buffer.allocUnsafe(size);
  const capacity = classOf(size);
  const list = free.get(capacity);
  let buffer = list?.pop();
  if (buffer) kept -= capacity;
  else buffer = Buffer.allocUnsafeSlow(capacity);
  const whole = buffer;
  res.once('finish', () => {
    if (kept + capacity > MAX_TOTAL) return;
    const back = free.get(capacity) ?? [];
    if (back.length >= PER_SIZE) return;
    back.push(whole);
    free.set(capacity, back);
    kept += capacity;
  });
  return buffer.subarray(0, size);
}
