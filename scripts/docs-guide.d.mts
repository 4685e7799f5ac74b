// Types of scripts/docs-guide.mjs for the tests that import it (server/test/docs.test.ts).
export function slug(heading: string): string;
export function guidePages(root: string): string[];
export function renderGuide(root: string): string;
