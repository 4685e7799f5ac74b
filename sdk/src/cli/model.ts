/// <reference types="node" />
// `model pull`, `model plan` and `model apply`: the content model as code, through the management
// API's model routes. `pull` writes the snapshot (atomically); `plan` prints what a snapshot file
// would change; `apply` plans it (or takes the version of a plan made earlier, `--version`) and
// applies it, destructive changes only with `--allow-destructive`, then rewrites the generated
// types when `--types` names their file.
import { readFileSync } from 'node:fs';
import type { components } from '../generated/openapi.js';
import { writeFileAtomic } from './atomic-write.js';
import { adminClientOf, talking, type Connection } from './connection.js';
import { CliError, dataOf, requireWorkspace } from './fetch-model.js';
import { generateTypesCommand } from './generate-types.js';

type S = components['schemas'];

export interface ModelOptions extends Connection {
  /** pull: the file to write (`-`: standard output); plan and apply: the snapshot to read (`-`: standard input). */
  file: string;
  /** apply: the version a plan answered (default: plan now). */
  version?: string;
  allowDestructive?: boolean;
  /** apply: the generated types' file, rewritten after the apply. */
  types?: string;
  /** plan and apply: print the answer as JSON. */
  json?: boolean;
}

const MARK: Record<S['ModelChange']['action'], string> = { create: '+', delete: '-', update: '~', rename: '~', replace: '±' };

/** A plan's changes, one per line. */
export function formatChanges(changes: S['ModelChange'][]): string {
  return changes.map((c) => `  ${MARK[c.action]} ${c.summary}${c.destructive ? '  [destructive]' : ''}\n`).join('');
}

function readSnapshot(file: string): S['ModelInput'] {
  let text: string;
  try {
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  try {
    return JSON.parse(text) as S['ModelInput'];
  } catch (err) {
    throw new CliError(`${file} is not JSON: ${(err as Error).message}`);
  }
}

export async function modelPull(o: ModelOptions): Promise<{ text: string; summary: string }> {
  const admin = adminClientOf(o);
  const model = await talking(o, async () => {
    await requireWorkspace(admin, o.url, o.workspace);
    return dataOf(
      await admin.GET('/admin/v1/workspaces/{workspace}/model', { params: { path: { workspace: o.workspace } } }),
      'the model',
      o.workspace,
    );
  });
  const text = `${JSON.stringify(model, null, 2)}\n`;
  if (o.file !== '-') writeFileAtomic(o.file, text);
  const types = model.buckets.reduce((n, b) => n + b.content_types.length, 0);
  return {
    text,
    summary: `${o.file === '-' ? 'read' : `wrote ${o.file}`}: workspace "${o.workspace}", ${model.buckets.length} buckets, ${types} content types (version ${model.version})`,
  };
}

async function plan(o: ModelOptions, model: S['ModelInput']): Promise<S['ModelPlan']> {
  const admin = adminClientOf(o);
  return talking(o, async () => {
    await requireWorkspace(admin, o.url, o.workspace);
    return dataOf(
      await admin.POST('/admin/v1/workspaces/{workspace}/model/plan', { params: { path: { workspace: o.workspace } }, body: model }),
      'the model',
      o.workspace,
      'planning the model',
    );
  });
}

const planText = (o: ModelOptions, p: S['ModelPlan']) =>
  p.changes.length
    ? `Plan for workspace "${o.workspace}" at version ${p.version}: ${p.changes.length} change${p.changes.length === 1 ? '' : 's'}${p.destructive ? ', destructive' : ''}\n${formatChanges(p.changes)}`
    : `Workspace "${o.workspace}" is the snapshot already (version ${p.version}): nothing to change.\n`;

export async function modelPlan(o: ModelOptions): Promise<string> {
  const p = await plan(o, readSnapshot(o.file));
  return o.json ? `${JSON.stringify(p, null, 2)}\n` : planText(o, p);
}

/**
 * Plans (unless given a version) and applies; `print` gets each part as soon as it is known, so a
 * failure after the plan (or after the apply, writing the types) still shows what happened.
 */
export async function modelApply(o: ModelOptions, print: (text: string) => void): Promise<void> {
  const model = readSnapshot(o.file);
  let version = o.version;
  if (version === undefined) {
    const p = await plan(o, model);
    if (!o.json) print(planText(o, p));
    if (!p.changes.length && !o.types) {
      if (o.json) print(`${JSON.stringify({ version: p.version, changes: [] }, null, 2)}\n`);
      return;
    }
    if (p.destructive && !o.allowDestructive)
      throw new CliError('the plan is destructive: nothing applied. Run again with --allow-destructive to apply it.');
    version = p.version;
  }
  const admin = adminClientOf(o);
  const applied = await talking(o, async () =>
    dataOf(
      await admin.POST('/admin/v1/workspaces/{workspace}/model/apply', {
        params: { path: { workspace: o.workspace } },
        body: { version: version, model, allow_destructive: o.allowDestructive ?? false },
      }),
      'the model',
      o.workspace,
      'applying the model',
    ),
  ).catch((err: unknown) => {
    // No answer: the transaction may have committed all the same.
    if (err instanceof CliError && err.message.startsWith('no answer'))
      throw new CliError(`${err.message}: the model may have been applied; run model plan to see`);
    throw err;
  });
  print(
    o.json
      ? `${JSON.stringify(applied, null, 2)}\n`
      : `Applied ${applied.changes.length} change${applied.changes.length === 1 ? '' : 's'}: workspace "${o.workspace}" is at version ${applied.version}.\n`,
  );
  if (o.types) {
    const { summary } = await generateTypesCommand({ ...o, out: o.types }).catch((err: unknown) => {
      throw new CliError(`the model was applied, but writing the types failed: ${err instanceof Error ? err.message : String(err)}`);
    });
    if (!o.json) print(`${summary}\n`);
  }
}
