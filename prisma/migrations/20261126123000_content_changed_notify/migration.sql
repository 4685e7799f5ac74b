-- Delivery answers are cached per process (server/src/http/response-cache.ts): every change to
-- what they read notifies `content_changed`, and every process drops them on it. Row triggers,
-- so that statements changing nothing (a periodic task finding no work) drop nothing; PostgreSQL
-- folds the equal notifications of a transaction into one, delivered at commit. TRUNCATE has no
-- rows: once per statement. The channel is the trigger's argument.
CREATE FUNCTION notify_trigger_channel() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify(TG_ARGV[0], '');
  RETURN NULL;
END
$$;

DO $$
DECLARE
  t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['entries', 'entry_contents', 'files', 'workspaces', 'buckets', 'content_types', 'field_definitions'] LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %I FOR EACH ROW EXECUTE FUNCTION notify_trigger_channel(%L)', t || '_content_changed', t, 'content_changed');
  END LOOP;
  FOREACH t IN ARRAY ARRAY['entries', 'entry_contents', 'files'] LOOP
    EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION notify_trigger_channel(%L)', t || '_content_truncated', t, 'content_changed');
  END LOOP;
END
$$;
