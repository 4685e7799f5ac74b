// Transactional email: POST /emails (validation, rights, 204), the local outbox without SMTP,
// and delivery through a real SMTP server on loopback with the job queue's retries.
import { startTestServer, type TestServer } from './support/server';
import { client, request } from './support/http';
import { setupWorkspace, TIMESTAMP } from './support/fixtures';
import { eventually } from './support/receiver';
import { startSmtpSink, type SmtpSink } from './support/smtp';
import { MAX_EMAIL_ATTEMPTS } from '../src/core/email-queue';
import { deliverEmail } from '../src/email/deliver';
import { renderFieldErrors } from '../src/lib/field-errors';

let local: TestServer;
let smtp: TestServer;
let sink: SmtpSink;
/** What the SMTP server answers to the nth message it receives (undefined: accept). */
let reject: (attempt: number) => number | undefined = () => undefined;

beforeAll(async () => {
  sink = await startSmtpSink((n) => reject(n));
  [local, smtp] = await Promise.all([startTestServer(), startTestServer({ SMTP_URL: sink.url, EMAIL_RETRY_DELAY_SECONDS: '1' })]);
});
afterEach(() => {
  reject = () => undefined;
});
afterAll(async () => {
  await Promise.all([local?.close(), smtp?.close()]);
  await sink?.close();
});

const SENDER = ['send-email'];
const outbox = async (s: TestServer, ws: string) =>
  (await s.admin.get(`/admin/v1/workspaces/${ws}/outbox`)).body.data as Record<string, unknown>[];

async function sender(s: TestServer, opts: { permissions?: string[]; abilities?: string[] } = {}) {
  const { workspace, key } = await setupWorkspace(s.admin, {
    permissions: opts.permissions ?? SENDER,
    abilities: opts.abilities ?? ['email:send'],
  });
  return { ws: workspace.name, api: client(s.url, key.key) };
}

describe('POST /emails without SMTP_URL', () => {
  it('answers 204 with no body and keeps the message in the local outbox, newest first', async () => {
    const { ws, api } = await sender(local);
    const first = await api.post(`/api/v1/${ws}/emails`, { to: 'ada@example.com', subject: 'Hello', text: 'Hi Ada' });
    expect(first.status).toBe(204);
    expect(first.text).toBe('');
    expect((await local.admin.patch(`/admin/v1/workspaces/${ws}`, { mail_from: 'team@acme.example' })).status).toBe(200);
    const second = await api.post(`/api/v1/${ws}/emails`, {
      to: ['a@example.com', 'b@example.com'],
      subject: 'Both',
      html: '<p>Hi</p>',
      reply_to: 'help@acme.example',
    });
    expect(second.status).toBe(204);
    expect(await outbox(local, ws)).toEqual([
      {
        id: expect.any(Number),
        kind: 'email',
        from: 'team@acme.example',
        to: ['a@example.com', 'b@example.com'],
        reply_to: 'help@acme.example',
        subject: 'Both',
        text: null,
        html: '<p>Hi</p>',
        status: 'stored',
        attempts: 0,
        last_error: null,
        created_at: expect.stringMatching(TIMESTAMP),
        sent_at: null,
      },
      // Before the workspace had a sender: the server's MAIL_FROM (no-reply@ the BASE_URL host).
      expect.objectContaining({
        from: 'no-reply@127.0.0.1',
        to: ['ada@example.com'],
        subject: 'Hello',
        text: 'Hi Ada',
        html: null,
        status: 'stored',
      }),
    ]);
    expect((await local.admin.get(`/admin/v1/workspaces/${ws}/outbox?limit=1`)).body.data).toHaveLength(1);
  });

  const fifty = Array.from({ length: 51 }, (_, i) => `r${i}@example.com`);
  it.each([
    [{ subject: 'x', text: 'y' }, 'to'],
    [{ to: 'not-an-address', subject: 'x', text: 'y' }, 'to'],
    [{ to: ['a@example.com', 'b@example.com', 'c@example.com', 'bad address'], subject: 'x', text: 'y' }, 'to.3'],
    [{ to: [], subject: 'x', text: 'y' }, 'to'],
    [{ to: fifty, subject: 'x', text: 'y' }, 'to'],
    [{ to: 'a@example.com\r\nBcc: victim@example.com', subject: 'x', text: 'y' }, 'to'],
    [{ to: 'a@example.com', text: 'y' }, 'subject'],
    [{ to: 'a@example.com', subject: '', text: 'y' }, 'subject'],
    [{ to: 'a@example.com', subject: 'x'.repeat(999), text: 'y' }, 'subject'],
    [{ to: 'a@example.com', subject: 'Hi\r\nBcc: victim@example.com', text: 'y' }, 'subject'],
    [{ to: 'a@example.com', subject: 'Hi\nthere', text: 'y' }, 'subject'],
    [{ to: 'a@example.com', subject: 'x' }, 'text,html'],
    [{ to: 'a@example.com', subject: 'x', text: '' }, 'text'],
    [{ to: 'a@example.com', subject: 'x', text: 'y', reply_to: 'nope' }, 'reply_to'],
    [{ to: 'a@example.com', subject: 'x', text: 'y', cc: 'b@example.com' }, 'cc'],
    [{ to: 'a@example.com', subject: 'x\u0000', text: 'y' }, 'subject'],
  ])('refuses %p with 422 on %s and queues nothing', async (body, key) => {
    const { ws, api } = await sender(local);
    const res = await api.post(`/api/v1/${ws}/emails`, body);
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(key.split(','));
    expect(res.body.message).toMatch(res.body.errors[key.split(',')[0]][0]);
    expect(await outbox(local, ws)).toEqual([]);
  });

  it('gives one clear message per field', async () => {
    const { ws, api } = await sender(local);
    const res = await api.post(`/api/v1/${ws}/emails`, { to: 'nope', subject: 'x' });
    expect(res.body.errors).toEqual({
      to: ['The to field must be a valid email address.'],
      text: ['The text field is required.'],
      html: ['The html field is required.'],
    });
  });

  it('refuses malformed, oversized and non-JSON bodies', async () => {
    const { ws, api } = await sender(local);
    const path = `/api/v1/${ws}/emails`;
    expect((await api.post(path, undefined, { raw: '{"to":', headers: { 'Content-Type': 'application/json' } })).status).toBe(400);
    expect(
      (await api.post(path, undefined, { raw: 'to=a', headers: { 'Content-Type': 'application/x-www-form-urlencoded' } })).status,
    ).toBe(415);
    const big = await api.post(path, { to: 'a@example.com', subject: 'x', text: 'y'.repeat(1_100_000) });
    expect(big.status).toBe(413);
    const long = await api.post(path, { to: 'a@example.com', subject: 'x', text: 'y'.repeat(262_145) });
    expect(long.status).toBe(422);
    expect(Object.keys(long.body.errors)).toEqual(['text']);
    expect(await outbox(local, ws)).toEqual([]);
  });

  it('needs the ability email:send (or *) and the creator permission send-email', async () => {
    const body = { to: 'a@example.com', subject: 'x', text: 'y' };
    const noAbility = await sender(local, { abilities: ['files:write'] });
    const noPermission = await sender(local, { permissions: ['create-file'] });
    const wildcard = await sender(local, { abilities: ['*'] });
    for (const { ws, api } of [noAbility, noPermission]) {
      const res = await api.post(`/api/v1/${ws}/emails`, body);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ message: 'This API key is not permitted to perform this action' });
      expect(await outbox(local, ws)).toEqual([]);
    }
    expect((await wildcard.api.post(`/api/v1/${wildcard.ws}/emails`, body)).status).toBe(204);
    expect((await request(local.url, 'POST', `/api/v1/${wildcard.ws}/emails`, { body })).status).toBe(403);
    // A suspended workspace refuses.
    await local.admin.patch(`/admin/v1/workspaces/${wildcard.ws}`, { suspended: true });
    const suspended = await wildcard.api.post(`/api/v1/${wildcard.ws}/emails`, body);
    expect(suspended.status).toBe(403);
    expect(suspended.body).toEqual({ message: 'Workspace suspended' });
    expect(await outbox(local, wildcard.ws)).toHaveLength(1);
  });

  it('logs the request like every public request', async () => {
    const { ws, api } = await sender(local);
    await api.post(`/api/v1/${ws}/emails`, { to: 'a@example.com', subject: 'x', text: 'y' });
    const logs = (await local.admin.get(`/admin/v1/workspaces/${ws}/request-logs`)).body.data;
    expect(logs[0]).toMatchObject({ method: 'POST', path: `/api/v1/${ws}/emails`, status: 204, response_size: 0 });
  });

  it('validates a message for other callers (pipelines) with the same error map', () => {
    const pointer = local.server.app.operations.spec('sendEmail').jsonBodyPointer!;
    const validateEmail = (value: unknown) => renderFieldErrors(local.server.app.operations.validator.errorsAt(pointer, value));
    expect(validateEmail({ to: 'a@example.com', subject: 'x', text: 'y' })).toEqual({});
    expect(validateEmail({ to: ['a@example.com', 'bad'], subject: 'a\nb', html: 'y' })).toEqual({
      'to.1': ['The to.1 field must be a valid email address.'],
      subject: ['The subject field format is invalid.'],
    });
  });
});

describe('delivery through SMTP_URL', () => {
  const sent = (ws: string) => eventually(async () => (await outbox(smtp, ws)).find((m) => m.status !== 'queued'));

  it('sends the message from the workspace sender after the response', async () => {
    const { ws, api } = await sender(smtp);
    await smtp.admin.patch(`/admin/v1/workspaces/${ws}`, { mail_from: 'news@acme.example' });
    const subject = `Shipped ${ws}`;
    const res = await api.post(`/api/v1/${ws}/emails`, {
      to: ['ada@example.com', 'bob@example.com'],
      subject,
      text: 'On its way.',
      html: '<b>On its way.</b>',
      reply_to: 'help@acme.example',
    });
    expect(res.status).toBe(204);
    const done = await sent(ws);
    expect(done).toMatchObject({ status: 'sent', attempts: 1, last_error: null, sent_at: expect.stringMatching(TIMESTAMP) });
    const mail = sink.mails.find((m) => m.raw.includes(subject))!;
    expect(mail.from).toBe('news@acme.example');
    expect(mail.to).toEqual(['ada@example.com', 'bob@example.com']);
    expect(mail.raw).toMatch(/^From: news@acme\.example\r?$/m);
    expect(mail.raw).toMatch(/^To: ada@example\.com, bob@example\.com\r?$/m);
    expect(mail.raw).toMatch(/^Reply-To: help@acme\.example\r?$/m);
    expect(mail.raw).toMatch(new RegExp(`^Subject: ${subject}\\r?$`, 'm'));
    expect(mail.raw).toContain('On its way.');
    expect(mail.raw).toContain('<b>On its way.</b>');
  });

  it('retries a temporary refusal through the job queue and records the attempts', async () => {
    const { ws, api } = await sender(smtp);
    const start = sink.attempts;
    reject = (n) => (n === start + 1 ? 451 : undefined);
    const subject = `Retry ${ws}`;
    expect((await api.post(`/api/v1/${ws}/emails`, { to: 'ada@example.com', subject, text: 'again' })).status).toBe(204);
    const done = await sent(ws);
    expect(done).toMatchObject({ status: 'sent', attempts: 2, last_error: null });
    expect(sink.mails.filter((m) => m.raw.includes(subject))).toHaveLength(1);
  });

  it('sends hosted-authentication codes the same way and keeps no code once sent', async () => {
    const { ws } = await sender(smtp);
    await smtp.admin.patch(`/admin/v1/workspaces/${ws}`, { auth_enabled: true, mail_from: 'login@acme.example' });
    const email = `${ws}@example.com`;
    expect((await request(smtp.url, 'POST', `/api/v1/${ws}/auth/login`, { body: { email } })).status).toBe(204);
    const done = await sent(ws);
    expect(done).toMatchObject({ kind: 'auth-otp', status: 'sent', from: 'login@acme.example', to: [email], text: null, html: null });
    const mail = sink.mails.find((m) => m.to[0] === email)!;
    const otp = /is (\d{6})\./.exec(mail.raw)![1];
    const verified = await request(smtp.url, 'POST', `/api/v1/${ws}/auth/verify`, { body: { email, otp } });
    expect(verified.status).toBe(200);
  });

  it('records a permanent refusal as failed without retrying', async () => {
    const { ws, api } = await sender(smtp);
    reject = () => 550;
    const subject = `Refused ${ws}`;
    expect((await api.post(`/api/v1/${ws}/emails`, { to: 'ada@example.com', subject, text: 'no' })).status).toBe(204);
    const done = await sent(ws);
    expect(done).toMatchObject({ status: 'failed', attempts: 1, last_error: expect.stringContaining('550'), sent_at: null });
    expect(sink.mails.filter((m) => m.raw.includes(subject))).toEqual([]);
  });

  it('gives up after the last attempt: failed, and not thrown for another retry', async () => {
    const { ws } = await sender(smtp);
    reject = () => 451;
    const app = smtp.server.app;
    // A message on its last attempt (inserted directly, so that no queued job races this call).
    const { rows } = await app.db.query<{ id: number }>(
      `INSERT INTO email_messages (workspace_id, kind, "from", "to", subject, text, status, attempts, created_at, updated_at)
       SELECT id, 'email', 'a@acme.example', ARRAY['ada@example.com'], 'Last', 'x', 'queued', $2, now(), now() FROM workspaces WHERE name = $1 RETURNING id`,
      [ws, MAX_EMAIL_ATTEMPTS - 1],
    );
    await expect(deliverEmail(app, rows[0].id)).resolves.toBeUndefined();
    expect((await outbox(smtp, ws))[0]).toMatchObject({
      status: 'failed',
      attempts: MAX_EMAIL_ATTEMPTS,
      last_error: expect.stringContaining('451'),
    });
    // A duplicate job of a finished message does nothing.
    const before = sink.attempts;
    await deliverEmail(app, rows[0].id);
    expect(sink.attempts).toBe(before);
  });
});
