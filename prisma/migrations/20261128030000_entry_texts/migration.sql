-- Rendered entries kept between answers (server/src/core/content/kept-texts.ts): each row is one
-- entry's delivery text as render.ts writes it (related entries expanded, files as holes), for one
-- variant (locale, delivery or not, the content types' definitions, the workspace's name, the
-- server's base URL), with `deps`: every entry ID its expansion may show or examine (the entry's
-- own, those of related entries to the depth rendered, every stored reference they hold, shown or
-- not) and `f:<id>` for every file it shows. A change to any of these rows deletes the texts that
-- name it, in the changing statement.
--
-- A text is kept by a statement whose snapshot may predate a change still uncommitted: so a
-- keeper first takes this table's advisory lock of the workspace exclusively (without waiting,
-- then reads in a new statement), and every change takes it shared before it deletes. A change
-- either holds it first (nothing is kept until it commits) or waits for the keeper to commit and
-- then deletes, in a new snapshot (READ COMMITTED, every write here), what the keeper wrote.
-- 280001: this lock's class (its second key is the workspace's id).
CREATE TABLE "entry_texts" (
    "entry_pk" INTEGER NOT NULL,
    "variant" TEXT NOT NULL,
    "workspace_id" INTEGER NOT NULL,
    "text" TEXT NOT NULL,
    "deps" TEXT[],

    CONSTRAINT "entry_texts_pkey" PRIMARY KEY ("entry_pk","variant")
);

CREATE INDEX "entry_texts_deps_idx" ON "entry_texts" USING GIN ("deps");
CREATE INDEX "entry_texts_workspace_id_idx" ON "entry_texts"("workspace_id");

-- The changed rows of a statement trigger's event `op`, as a query of its transition tables
-- (which only the trigger's own function can read).
CREATE FUNCTION entry_texts_rows(op text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE op WHEN 'INSERT' THEN 'SELECT * FROM new_rows' WHEN 'DELETE' THEN 'SELECT * FROM old_rows'
         ELSE 'SELECT * FROM old_rows UNION ALL SELECT * FROM new_rows' END
$$;

-- Takes the lock of the workspaces `ws` (sorted) shared, to the transaction's end.
CREATE FUNCTION entry_texts_lock(ws int[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  w int;
BEGIN
  FOREACH w IN ARRAY ws LOOP
    PERFORM pg_advisory_xact_lock_shared(280001, w);
  END LOOP;
END
$$;

-- Statement triggers with the changed rows: `TG_ARGV[0]` is what a row is named by in `deps`
-- (an entry's or a document's `entry_id`, a file's `f:<id>`). Each changed workspace's lock is
-- taken shared (in order: no two changes wait for each other on it), then the texts naming a
-- changed row are deleted (their names gathered only when the workspaces have texts: a bulk
-- insert into a workspace with none does not gather its rows' IDs).
CREATE FUNCTION entry_texts_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ws int[];
  names text[];
  rows text := entry_texts_rows(TG_OP);
BEGIN
  EXECUTE format('SELECT array_agg(DISTINCT r.workspace_id ORDER BY r.workspace_id) FROM (%s) r', rows) INTO ws;
  IF ws IS NULL THEN RETURN NULL; END IF;
  PERFORM entry_texts_lock(ws);
  IF EXISTS (SELECT 1 FROM entry_texts k WHERE k.workspace_id = ANY(ws)) THEN
    EXECUTE format('SELECT array_agg(DISTINCT %s) FROM (%s) r', TG_ARGV[0], rows) INTO names;
    DELETE FROM entry_texts k WHERE k.deps && names;
  END IF;
  RETURN NULL;
END
$$;

CREATE FUNCTION entry_texts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM entry_texts;
  RETURN NULL;
END
$$;

CREATE TRIGGER entries_texts_inserted AFTER INSERT ON entries REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION entry_texts_changed('r.entry_id');
CREATE TRIGGER entries_texts_updated AFTER UPDATE ON entries REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION entry_texts_changed('r.entry_id');
CREATE TRIGGER entries_texts_deleted AFTER DELETE ON entries REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION entry_texts_changed('r.entry_id');
CREATE TRIGGER entry_contents_texts_inserted AFTER INSERT ON entry_contents REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION entry_texts_changed('r.entry_id');
CREATE TRIGGER entry_contents_texts_updated AFTER UPDATE ON entry_contents REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION entry_texts_changed('r.entry_id');
CREATE TRIGGER entry_contents_texts_deleted AFTER DELETE ON entry_contents REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION entry_texts_changed('r.entry_id');
-- A new file has an id no text names.
CREATE TRIGGER files_texts_updated AFTER UPDATE ON files REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION entry_texts_changed('''f:'' || r.id');
CREATE TRIGGER files_texts_deleted AFTER DELETE ON files REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION entry_texts_changed('''f:'' || r.id');
CREATE TRIGGER entries_texts_truncated AFTER TRUNCATE ON entries FOR EACH STATEMENT EXECUTE FUNCTION entry_texts_truncated();
CREATE TRIGGER entry_contents_texts_truncated AFTER TRUNCATE ON entry_contents FOR EACH STATEMENT EXECUTE FUNCTION entry_texts_truncated();
CREATE TRIGGER files_texts_truncated AFTER TRUNCATE ON files FOR EACH STATEMENT EXECUTE FUNCTION entry_texts_truncated();

-- A workspace's texts of earlier content type definitions are of variants no answer asks for
-- again: dropped when they change. (Of an earlier workspace name too, but those go as its
-- entries change.) The lock as a change of rows takes it: a keeper holding it could otherwise wait
-- for a deleted row of this transaction while this transaction waits for it in a later change.
CREATE FUNCTION entry_texts_of_workspaces_dropped() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ws int[];
  rows text := entry_texts_rows(TG_OP);
BEGIN
  EXECUTE format('SELECT array_agg(DISTINCT x ORDER BY x) FROM (SELECT %s AS x FROM (%s) r) y WHERE x IS NOT NULL', TG_ARGV[0], rows) INTO ws;
  IF ws IS NULL THEN RETURN NULL; END IF;
  PERFORM entry_texts_lock(ws);
  DELETE FROM entry_texts WHERE workspace_id = ANY(ws);
  RETURN NULL;
END
$$;

CREATE TRIGGER content_types_texts_inserted AFTER INSERT ON content_types REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION entry_texts_of_workspaces_dropped('(SELECT b.workspace_id FROM buckets b WHERE b.id = r.bucket_id)');
CREATE TRIGGER content_types_texts_updated AFTER UPDATE ON content_types REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION entry_texts_of_workspaces_dropped('(SELECT b.workspace_id FROM buckets b WHERE b.id = r.bucket_id)');
CREATE TRIGGER content_types_texts_deleted AFTER DELETE ON content_types REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION entry_texts_of_workspaces_dropped('(SELECT b.workspace_id FROM buckets b WHERE b.id = r.bucket_id)');
CREATE TRIGGER field_definitions_texts_inserted AFTER INSERT ON field_definitions REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION entry_texts_of_workspaces_dropped('(SELECT b.workspace_id FROM content_types t JOIN buckets b ON b.id = t.bucket_id WHERE t.id = r.content_type_id)');
CREATE TRIGGER field_definitions_texts_updated AFTER UPDATE ON field_definitions REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION entry_texts_of_workspaces_dropped('(SELECT b.workspace_id FROM content_types t JOIN buckets b ON b.id = t.bucket_id WHERE t.id = r.content_type_id)');
CREATE TRIGGER field_definitions_texts_deleted AFTER DELETE ON field_definitions REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION entry_texts_of_workspaces_dropped('(SELECT b.workspace_id FROM content_types t JOIN buckets b ON b.id = t.bucket_id WHERE t.id = r.content_type_id)');
