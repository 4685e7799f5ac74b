#!/usr/bin/env node
/// <reference types="node" />
// The SDK's command line (`npx @workspace-api/sdk <command>`). One command so far:
//   generate-types --url <server> --token <ADMIN_TOKEN> --workspace <name> --out <file>
// Errors go to stderr with a non-zero exit: 1 when the work failed, 2 for a wrong invocation.
import { parseArgs } from 'node:util';
import { CliError } from './cli/fetch-model.js';
import { generateTypesCommand } from './cli/generate-types.js';

const USAGE = `Usage: npx @workspace-api/sdk generate-types --url <server> --token <admin token> --workspace <name> --out <file>

Writes the TypeScript types of a workspace's content model (content types and contracts) to <file>,
read through the management API. The file is replaced atomically, and only when everything succeeded.

  --url        Server address, e.g. http://localhost:3000 (or WORKSPACE_API_URL)
  --token      The server's ADMIN_TOKEN (or WORKSPACE_API_ADMIN_TOKEN, which keeps it out of the process list)
  --workspace  Workspace name
  --out        File to write, e.g. src/content.ts; "-" writes to standard output
  --timeout    Seconds to wait for each answer (default 30)
`;

function usageError(message: string): never {
  throw new CliError(`${message}\n\n${USAGE}`, 2);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  if (command !== 'generate-types') usageError(`unknown command "${command}"`);
  let values;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        url: { type: 'string' },
        token: { type: 'string' },
        workspace: { type: 'string' },
        out: { type: 'string' },
        timeout: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    usageError(err instanceof Error ? err.message : String(err));
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const url = values.url ?? process.env.WORKSPACE_API_URL;
  const token = values.token ?? process.env.WORKSPACE_API_ADMIN_TOKEN;
  if (!url) usageError('--url is required');
  if (!token) usageError('--token is required');
  if (!values.workspace) usageError('--workspace is required');
  if (!values.out) usageError('--out is required');
  try {
    if (!/^https?:$/.test(new URL(url).protocol)) usageError(`--url must be an http or https address, not "${url}"`);
  } catch (err) {
    if (err instanceof CliError) throw err;
    usageError(`--url is not a URL: "${url}"`);
  }
  const timeoutSeconds = values.timeout === undefined ? 30 : Number(values.timeout);
  if (!(timeoutSeconds > 0)) usageError('--timeout must be a positive number of seconds');

  const { text, summary } = await generateTypesCommand({ url, token, workspace: values.workspace, out: values.out, timeoutSeconds });
  if (values.out === '-') process.stdout.write(text);
  process.stderr.write(`${summary}\n`);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`error: ${message}\n`);
  process.exitCode = err instanceof CliError ? err.exitCode : 1;
});
