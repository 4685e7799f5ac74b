// A name written into SQL text as a quoted identifier (a channel, a table): the one place of
// PostgreSQL's quoting rule, for names that are not bound parameters.
export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;
