// The documented answer of a rate-limited request.
export function expectLimited(res: { status: number; body: unknown; headers: Headers }) {
  expect(res.status).toBe(429);
  expect(res.body).toEqual({ message: 'Too Many Attempts.' });
  const retry = Number(res.headers.get('retry-after'));
  expect(retry).toBeGreaterThanOrEqual(1);
  expect(retry).toBeLessThanOrEqual(60);
}
