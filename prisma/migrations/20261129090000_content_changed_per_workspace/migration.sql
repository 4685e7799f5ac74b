-- `content_changed` names the workspace that changed: each process then drops only that
-- workspace's kept answers (server/src/http/response-cache.ts), where an empty payload dropped
-- every workspace's. Still row triggers, whose equal notifications (one workspace's) PostgreSQL
-- folds into one per transaction. A row whose workspace cannot be told any more (a content type
-- whose bucket went in the same statement) and TRUNCATE notify '' (every workspace).
CREATE FUNCTION notify_content_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r record;
  ws integer;
BEGIN
  IF TG_OP = 'DELETE' THEN r := OLD; ELSE r := NEW; END IF;
  -- Branches, not one CASE: a record's field is only named where its table has it.
  IF TG_TABLE_NAME = 'workspaces' THEN
    ws := r.id;
  ELSIF TG_TABLE_NAME = 'content_types' THEN
    ws := (SELECT b.workspace_id FROM buckets b WHERE b.id = r.bucket_id);
  ELSIF TG_TABLE_NAME = 'field_definitions' THEN
    ws := (SELECT b.workspace_id FROM content_types c JOIN buckets b ON b.id = c.bucket_id WHERE c.id = r.content_type_id);
  ELSE
    ws := r.workspace_id;
  END IF;
  PERFORM pg_notify('content_changed', coalesce(ws::text, ''));
  RETURN NULL;
END
$$;

DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['entries', 'entry_contents', 'files', 'workspaces', 'buckets', 'content_types', 'field_definitions'] LOOP
    EXECUTE format('DROP TRIGGER %I ON %I', t || '_content_changed', t);
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %I FOR EACH ROW EXECUTE FUNCTION notify_content_changed()', t || '_content_changed', t);
  END LOOP;
END
$$;
