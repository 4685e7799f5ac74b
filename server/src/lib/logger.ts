// One-line JSON logs on stdout/stderr; `LOG_LEVEL=silent` for tests.
export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(level = process.env.LOG_LEVEL ?? 'info'): Logger {
  const write = (stream: NodeJS.WriteStream, lvl: string, msg: string, fields?: Record<string, unknown>) =>
    stream.write(JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields }) + '\n');
  return {
    info: (msg, fields) => level === 'info' && write(process.stdout, 'info', msg, fields),
    error: (msg, fields) => level !== 'silent' && write(process.stderr, 'error', msg, fields),
  };
}
