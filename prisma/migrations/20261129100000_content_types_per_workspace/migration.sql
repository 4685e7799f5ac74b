-- A workspace holds at most 500 content types (MAX_CONTENT_TYPES in
-- server/src/core/content/content-types.ts, which a test reads against this one). Checked here,
-- under a lock of the workspace's row, so that concurrent creations cannot pass it together:
-- FOR NO KEY UPDATE, which the foreign keys of rows written meanwhile (KEY SHARE) do not wait for.
-- Past it: SQLSTATE WA001, answered as a 422 on `name`.
CREATE FUNCTION content_types_within_limit() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ws integer;
BEGIN
  SELECT w.id INTO ws FROM workspaces w JOIN buckets b ON b.workspace_id = w.id WHERE b.id = NEW.bucket_id FOR NO KEY UPDATE OF w;
  IF (SELECT count(*) FROM content_types c JOIN buckets b ON b.id = c.bucket_id WHERE b.workspace_id = ws) >= 500 THEN
    RAISE EXCEPTION 'the workspace holds 500 content types, the most it may' USING ERRCODE = 'WA001';
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER content_types_within_limit BEFORE INSERT ON "content_types" FOR EACH ROW EXECUTE FUNCTION content_types_within_limit();
