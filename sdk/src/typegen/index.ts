// The content-model type generator: a pure function from a workspace's content model (content
// types and contracts as the management API returns them) to one TypeScript module. The CLI
// (`generate-types`) and the server (`GET /admin/v1/workspaces/{workspace}/types.ts`) both call
// it, so the same model gives the same bytes.
import { compileContracts } from './contracts.js';
import { modelHash, normalizeModel, type ContentModel } from './model.js';
import { assembleModule } from './module.js';

export type { ContentModel, ContentTypeModel, ContractModel, FieldModel } from './model.js';
export { canonicalJson, modelHash, normalizeModel } from './model.js';

/** The generated module's text (deterministic: sorted, with the model's hash in its header). */
export async function generateTypes(model: ContentModel): Promise<string> {
  const normalized = normalizeModel(model);
  const hash = await modelHash(normalized);
  const contracts = await compileContracts(normalized.contracts);
  return assembleModule(normalized, hash, contracts);
}
