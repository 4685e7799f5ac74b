-- Secrets kept where they should not be (security review "Hardening II", finding 9).

-- `redact` now means "still holds a one-time code": mails already emptied by SMTP delivery lose
-- the flag, so that the minutely redaction reads only mails that still hold one.
UPDATE "email_messages" SET "redact" = false WHERE "redact" AND "text" IS NULL AND "html" IS NULL;

-- CreateIndex
CREATE INDEX "email_messages_redact_created_at_idx" ON "email_messages"("redact", "created_at");

-- CreateIndex
CREATE INDEX "email_messages_created_at_idx" ON "email_messages"("created_at");

-- Request logs written before kept the token of tokenized downloads in their path
-- (`/api/v1/{workspace}/files/{file}/{uuid}/{token}`); the same pattern as http/request-log.ts.
UPDATE "request_logs"
   SET "path" = regexp_replace("path", '^(/api/v1/[^/]+/files/[^/]+/[^/]+/)[^/]+', '\1[redacted]', 'i')
 WHERE "path" ~* '^/api/v1/[^/]+/files/[^/]+/[^/]+/[^/]+';

-- Counters keyed by a download token or by any bearer sent (both expire within a minute).
DELETE FROM "rate_limits" WHERE "key" LIKE 'token-downloads:%' OR "key" LIKE 'auth-session-token:bearer:%';
