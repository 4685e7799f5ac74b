/** Resolves after `ms` milliseconds (the SDK's retry and polling back-off). */
export const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
