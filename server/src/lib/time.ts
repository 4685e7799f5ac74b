/** The wire format of timestamps: UTC, microseconds, `Z` (JavaScript dates carry milliseconds). */
export function formatTimestamp(date: Date): string {
  return date.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
