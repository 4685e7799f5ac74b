// Transactional email helper.
import type { components } from './generated/openapi.js';
import type { PublicClient } from './index.js';

export type EmailMessage = components['schemas']['EmailSend'];

/**
 * Queues a message (`POST /api/v1/{workspace}/emails`); `204` on success. The key needs the
 * ability `email:send` and its creator the permission `send-email`.
 */
function send(client: PublicClient, workspace: string, message: EmailMessage) {
  return client.POST('/api/v1/{workspace}/emails', { params: { path: { workspace } }, body: message });
}

export const emails = { send };
