#!/usr/bin/env node
/// <reference types="node" />
// The SDK's command line (`npx @workspace-api/sdk <command>`):
//   generate-types                 the TypeScript types of a workspace's content model
//   model pull | plan | apply      the content model as code
//   export | import                a workspace's archive
//   backup | restore               every workspace's archive
// Errors go to stderr with a non-zero exit: 1 when the work failed, 2 for a wrong invocation.
import { readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CliError } from './cli/fetch-model.js';
import { generateTypesCommand } from './cli/generate-types.js';
import { modelApply, modelPlan, modelPull, type ModelOptions } from './cli/model.js';
import type { Connection } from './cli/connection.js';
import { exportArchive, importArchive } from './cli/archive.js';
import { backup, restore } from './cli/backup.js';

const CONNECTION = `  --url        Server address, e.g. http://localhost:3000 (or WORKSPACE_API_URL)
  --token      The server's ADMIN_TOKEN (or WORKSPACE_API_ADMIN_TOKEN, which keeps it out of the process list)
  --workspace  Workspace name
  --timeout    Seconds to wait for each answer (default 30; 600 for model apply)
`;

const GENERATE_USAGE = `Usage: npx @workspace-api/sdk generate-types --url <server> --token <admin token> --workspace <name> --out <file>

Writes the TypeScript types of a workspace's content model (content types and contracts) to <file>,
read through the management API. The file is replaced atomically, and only when everything succeeded.

${CONNECTION}  --out        File to write, e.g. src/content.ts; "-" writes to standard output
`;

const MODEL_USAGE = `Usage: npx @workspace-api/sdk model pull  --url <server> --token <admin token> --workspace <name> --out <file>
       npx @workspace-api/sdk model plan  --url <server> --token <admin token> --workspace <name> --file <file> [--json]
       npx @workspace-api/sdk model apply --url <server> --token <admin token> --workspace <name> --file <file>
                                          [--version <plan version>] [--allow-destructive] [--types <file>] [--json]

The content model as code. pull writes the workspace's model snapshot (JSON; replaced atomically).
plan prints what applying a snapshot would change, each change marked destructive or not, and
changes nothing. apply plans the snapshot (or takes --version, the version a plan printed earlier)
and applies it in one transaction: refused when the model changed since the plan, and when the plan
is destructive unless --allow-destructive. --types rewrites the generated TypeScript types after.

${CONNECTION}  --out        pull: file to write; "-" writes to standard output
  --file       plan, apply: the snapshot to read; "-" reads standard input
`;

const ARCHIVE_USAGE = `Usage: npx @workspace-api/sdk export --url <server> --token <admin token> --workspace <name> --out <file.tar.gz>
       npx @workspace-api/sdk import --url <server> --token <admin token> --file <file.tar.gz> [--name <workspace>]

export writes a workspace's archive (every row and stored file, a checksum per part; see GET
/admin/v1/workspaces/{workspace}/export), streamed, to <file> once whole. import creates a workspace
from an archive, all or nothing, keeping every ID (named as archived, or --name). Progress goes to
standard error: one line rewritten in place on a terminal, a line per stage otherwise.

  --url        Server address, e.g. http://localhost:3000 (or WORKSPACE_API_URL)
  --token      The server's ADMIN_TOKEN (or WORKSPACE_API_ADMIN_TOKEN)
  --workspace  export: the workspace
  --out        export: the file to write
  --file       import: the archive to read
  --name       import: the new workspace's name (default the archive's)
  --passphrase-file  A file holding a passphrase (12 to 1024 printable ASCII characters; a final newline is not
               part of it). export: the archive then holds the webhooks' secrets, sealed with it
               (AES-256-GCM, scrypt); import: opens them (required for such an archive). Without
               it an archive holds no secrets, and an import gives each webhook a new one.
  --timeout    Seconds to wait for the server's answer to begin (default 600)
`;

const BACKUP_USAGE = `Usage: npx @workspace-api/sdk backup  --url <server> --token <admin token> --out <directory>
       npx @workspace-api/sdk restore --url <server> --token <admin token> --from <directory> [--workspace <name>]...

backup writes every workspace of the server as an archive (as export does) into <directory>, then
backup.json, which lists each archive with its size and SHA-256: a directory without it is not a
whole backup. restore checks every archive against backup.json and that the server has none of
their workspaces, then imports them (all, or each --workspace given), keeping every ID; when one
fails, those it had restored are deleted again.

  --url        Server address, e.g. http://localhost:3000 (or WORKSPACE_API_URL)
  --token      The server's ADMIN_TOKEN (or WORKSPACE_API_ADMIN_TOKEN)
  --out        backup: the directory to write (new, or without a backup.json)
  --from       restore: the backup's directory
  --workspace  restore: only this workspace (repeat for more)
  --passphrase-file  As for export and import: seals, then opens, the webhooks' secrets
  --timeout    Seconds to wait for each answer to begin (default 600)
`;

const USAGE = `Usage: npx @workspace-api/sdk <command> ...

Commands:
  generate-types   Write the TypeScript types of a workspace's content model
  model pull       Write a workspace's content model snapshot
  model plan       Print what a snapshot would change
  model apply      Apply a snapshot
  export           Write a workspace's archive (rows and files)
  import           Create a workspace from an archive
  backup           Write every workspace's archive into a directory
  restore          Create the workspaces of a backup

Run a command with --help for its options.
`;

function usageError(message: string, usage: string): never {
  throw new CliError(`${message}\n\n${usage}`, 2);
}

/** Parses `args` with the connection options and `extra`; undefined after printing the usage for --help. */
function parse(args: string[], usage: string, extra: NonNullable<ParseArgsConfig['options']>, defaultTimeout = 30, needsWorkspace = true) {
  let values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        url: { type: 'string' },
        token: { type: 'string' },
        workspace: { type: 'string' },
        timeout: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        ...extra,
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    usageError(err instanceof Error ? err.message : String(err), usage);
  }
  if (values.help) {
    process.stdout.write(usage);
    return undefined;
  }
  const url = (values.url as string | undefined) ?? process.env.WORKSPACE_API_URL;
  const token = (values.token as string | undefined) ?? process.env.WORKSPACE_API_ADMIN_TOKEN;
  const workspace = values.workspace as string | undefined;
  if (!url) usageError('--url is required', usage);
  if (!token) usageError('--token is required', usage);
  if (!workspace && needsWorkspace) usageError('--workspace is required', usage);
  try {
    if (!/^https?:$/.test(new URL(url).protocol)) usageError(`--url must be an http or https address, not "${url}"`, usage);
  } catch (err) {
    if (err instanceof CliError) throw err;
    usageError(`--url is not a URL: "${url}"`, usage);
  }
  const timeoutSeconds = values.timeout === undefined ? defaultTimeout : Number(values.timeout);
  if (!(timeoutSeconds > 0)) usageError('--timeout must be a positive number of seconds', usage);
  const connection: Connection = { url, token, workspace: workspace ?? '', timeoutSeconds };
  return { connection, values: values as Record<string, string | boolean | undefined> };
}

async function generateTypes(args: string[]): Promise<void> {
  const parsed = parse(args, GENERATE_USAGE, { out: { type: 'string' } });
  if (!parsed) return;
  const out = parsed.values.out as string | undefined;
  if (!out) usageError('--out is required', GENERATE_USAGE);
  const { text, summary } = await generateTypesCommand({ ...parsed.connection, out });
  if (out === '-') process.stdout.write(text);
  process.stderr.write(`${summary}\n`);
}

async function model(args: string[]): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === undefined || sub === '--help' || sub === '-h') {
    process.stdout.write(MODEL_USAGE);
    return;
  }
  if (sub !== 'pull' && sub !== 'plan' && sub !== 'apply') usageError(`unknown model command "${sub}"`, MODEL_USAGE);
  const parsed = parse(
    rest,
    MODEL_USAGE,
    {
      out: { type: 'string' },
      file: { type: 'string' },
      version: { type: 'string' },
      types: { type: 'string' },
      json: { type: 'boolean' },
      'allow-destructive': { type: 'boolean' },
    },
    sub === 'apply' ? 600 : 30,
  );
  if (!parsed) return;
  const v = parsed.values;
  const file = (sub === 'pull' ? v.out : v.file) as string | undefined;
  if (!file) usageError(sub === 'pull' ? '--out is required' : '--file is required', MODEL_USAGE);
  const options: ModelOptions = {
    ...parsed.connection,
    file,
    version: v.version as string | undefined,
    allowDestructive: v['allow-destructive'] === true,
    types: v.types as string | undefined,
    json: v.json === true,
  };
  if (sub === 'pull') {
    const { text, summary } = await modelPull(options);
    if (file === '-') process.stdout.write(text);
    process.stderr.write(`${summary}\n`);
  } else if (sub === 'plan') process.stdout.write(await modelPlan(options));
  else await modelApply(options, (text) => process.stdout.write(text));
}

/** The passphrase in --passphrase-file (its final newline dropped). */
function passphraseFrom(file: string | boolean | undefined, usage: string): string | undefined {
  if (file === undefined) return undefined;
  if (typeof file !== 'string' || file === '') usageError('--passphrase-file needs a file', usage);
  let text: string;
  try {
    text = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
  } catch (err) {
    throw new CliError(`cannot read --passphrase-file ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  if (!/^[\x20-\x7e]{12,1024}$/.test(text)) usageError(`the passphrase in ${file} must be 12 to 1024 printable ASCII characters`, usage);
  return text;
}

async function archive(command: 'export' | 'import', args: string[]): Promise<void> {
  // An import names no workspace of the server yet: --workspace is not asked for.
  const parsed = parse(
    args,
    ARCHIVE_USAGE,
    { out: { type: 'string' }, file: { type: 'string' }, name: { type: 'string' }, 'passphrase-file': { type: 'string' } },
    600,
    command === 'export',
  );
  if (!parsed) return;
  const file = (command === 'export' ? parsed.values.out : parsed.values.file) as string | undefined;
  if (!file) usageError(command === 'export' ? '--out is required' : '--file is required', ARCHIVE_USAGE);
  const progress = { write: (text: string) => process.stderr.write(text), tty: process.stderr.isTTY === true };
  const options = {
    ...parsed.connection,
    file,
    name: parsed.values.name as string | undefined,
    passphrase: passphraseFrom(parsed.values['passphrase-file'], ARCHIVE_USAGE),
    progress,
  };
  process.stderr.write(`${await (command === 'export' ? exportArchive(options) : importArchive(options))}\n`);
}

async function backupOrRestore(command: 'backup' | 'restore', args: string[]): Promise<void> {
  const parsed = parse(
    args,
    BACKUP_USAGE,
    {
      out: { type: 'string' },
      from: { type: 'string' },
      workspace: { type: 'string', multiple: true },
      'passphrase-file': { type: 'string' },
    },
    600,
    false,
  );
  if (!parsed) return;
  const dir = (command === 'backup' ? parsed.values.out : parsed.values.from) as string | undefined;
  if (!dir) usageError(command === 'backup' ? '--out is required' : '--from is required', BACKUP_USAGE);
  const only = parsed.values.workspace as unknown as string[] | undefined;
  if (command === 'backup' && only) usageError('--workspace is for restore (backup takes every workspace)', BACKUP_USAGE);
  const progress = { write: (text: string) => process.stderr.write(text), tty: process.stderr.isTTY === true };
  const options = { ...parsed.connection, dir, only, passphrase: passphraseFrom(parsed.values['passphrase-file'], BACKUP_USAGE), progress };
  process.stderr.write(`${await (command === 'backup' ? backup(options) : restore(options))}\n`);
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  if (command === 'generate-types') return generateTypes(rest);
  if (command === 'model') return model(rest);
  if (command === 'export' || command === 'import') return archive(command, rest);
  if (command === 'backup' || command === 'restore') return backupOrRestore(command, rest);
  usageError(`unknown command "${command}"`, USAGE);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`error: ${message}\n`);
  process.exitCode = err instanceof CliError ? err.exitCode : 1;
});
