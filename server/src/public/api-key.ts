// The calling API key as the server sees it.
import { handlers } from '../http/handlers';
import type { components } from '@workspace-api/sdk/openapi';

type S = components['schemas'];

export const apiKeyInfoHandlers = handlers({
  async getCurrentApiKey({ principal }) {
    const p = principal!;
    return {
      status: 200,
      body: {
        id: p.keyId,
        name: p.keyName,
        workspace: p.workspace.name,
        abilities: p.abilities as S['Ability'][],
        origins: p.origins,
        user: { id: p.user.id, email: p.user.email, permissions: p.user.permissions as S['Permission'][] },
      },
    };
  },
});
