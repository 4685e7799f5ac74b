/// <reference types="node" />
// `generate-types`: reads a workspace's content model through the management API, generates the
// TypeScript module (the same generator as `GET /admin/v1/workspaces/{workspace}/types.ts`) and
// writes it atomically. Nothing is written unless every step succeeded.
import { generateTypes } from '../typegen/index.js';
import { writeFileAtomic } from './atomic-write.js';
import { fetchContentModel } from './fetch-model.js';
import { adminClientOf, talking, type Connection } from './connection.js';

export interface GenerateTypesOptions extends Connection {
  /** A file path, or `-` for standard output. */
  out: string;
}

export async function generateTypesCommand(options: GenerateTypesOptions): Promise<{ text: string; summary: string }> {
  const model = await talking(options, () => fetchContentModel(adminClientOf(options), options.url, options.workspace));
  const text = await generateTypes(model);
  if (options.out !== '-') writeFileAtomic(options.out, text);
  const hash = /^\/\/ Content hash: (\S+)$/m.exec(text)?.[1] ?? '';
  const counts = `${model.contentTypes.length} content type${model.contentTypes.length === 1 ? '' : 's'}, ${model.contracts.length} contract${model.contracts.length === 1 ? '' : 's'}`;
  return {
    text,
    summary: `${options.out === '-' ? 'generated' : `wrote ${options.out}`}: workspace "${options.workspace}", ${counts} (${hash})`,
  };
}
