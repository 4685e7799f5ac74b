// Transactional email through the public API: the message queued from the workspace's sender
// (core/email-queue.ts), in the caller's unit of work when there is one (a pipeline step's).
import { queueEmail, type EmailMessage } from '../email-queue';
import type { OperationContext } from './context';

export const sendEmail = (cx: OperationContext, message: EmailMessage): Promise<void> =>
  queueEmail(cx.core, { workspaceId: cx.workspace.id, message });
