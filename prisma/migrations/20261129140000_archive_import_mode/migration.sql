-- An archive's import (server/src/core/archive/import.ts) sets `wsapi.importing` for its own
-- transaction. Its rows then go in as they were exported: an entry keeps the `published_at` the
-- archive gives (the trigger would set it to `updated_at`), typed storage is filled once per
-- content type after the rows (typed_storage_refill: one set-based statement and one sort per
-- index, instead of a trigger per statement updating every index row by row), and one
-- notification at the end replaces one per row.
CREATE FUNCTION importing() RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT coalesce(current_setting('wsapi.importing', true), '') = 'on'
$$;

CREATE OR REPLACE FUNCTION entries_published_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF importing() THEN RETURN NEW; END IF;
  IF NEW.status <> 'published' THEN
    NEW.published_at := NULL;
  ELSIF TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM 'published' THEN
    NEW.published_at := NEW.updated_at;
  END IF;
  RETURN NEW;
END $$;

CREATE OR REPLACE FUNCTION typed_storage_sync() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  s record;
BEGIN
  IF importing() THEN RETURN NULL; END IF;
  FOR s IN SELECT t.upsert_sql, t.delete_sql, t.base_sql FROM typed_tables t WHERE t.content_type_id IN (SELECT DISTINCT content_type_id FROM changed) LOOP
    EXECUTE format(s.delete_sql, 'changed', ' AND n.kind <> ''typed''');
    EXECUTE s.upsert_sql;
    IF EXISTS (SELECT 1 FROM changed WHERE locale <> 'en-US') THEN
      EXECUTE format(s.base_sql, 'changed n JOIN entries e ON e.id = n.entry_pk AND n.locale <> ''en-US''');
    END IF;
  END LOOP;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION notify_content_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  r record;
  ws integer;
BEGIN
  IF importing() THEN RETURN NULL; END IF;
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

-- A content type's typed storage filled from all its entries at once (a type whose rows came in
-- while `wsapi.importing` was set): its sort indexes are dropped, the rows written, and the
-- indexes built again from the whole table.
CREATE FUNCTION typed_storage_refill(ct integer) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  s record;
  i record;
BEGIN
  SELECT * INTO s FROM typed_tables WHERE content_type_id = ct;
  IF NOT FOUND THEN RETURN; END IF;
  FOR i IN SELECT c.relname FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid WHERE x.indrelid = to_regclass('typed_' || ct) AND NOT x.indisprimary LOOP
    EXECUTE format('DROP INDEX %I', i.relname);
  END LOOP;
  EXECUTE format('DELETE FROM %I', 'typed_' || ct);
  EXECUTE format('WITH changed AS (SELECT * FROM entry_contents WHERE content_type_id = %s) ', ct) || s.upsert_sql;
  EXECUTE format(s.base_sql, format('(SELECT * FROM entries WHERE content_type_id = %s) e', ct));
  FOR i IN SELECT * FROM typed_storage_missing_indexes(ct) LOOP
    EXECUTE format('CREATE INDEX %I %s', i.name, i.definition);
  END LOOP;
END $$;
