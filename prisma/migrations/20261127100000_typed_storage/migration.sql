-- Typed storage: the field values of each content type's entries in a table of their own,
-- `typed_<content type id>`, one row per entry and locale, a column `f<field id>` per field with
-- the PostgreSQL type of its values. The jsonb document (entry_contents) stays the one source of
-- truth; the table is its typed projection, written by triggers in the same statement as the
-- document, so that every write path (creates, updates, batches, restores, conversion, locale
-- changes, SQL run by hand) keeps it in step and no write needs another round trip. Queries of
-- typed entries filter, sort and aggregate on these columns (server/src/core/query/typed.ts).

-- Every typed entry also has a row for the base locale (en-US), its fields NULL while it has no
-- document there: a query of the base locale then reads every entry of the type from the table
-- alone, its empty filters and aggregates included (in another locale, an entry without a
-- document is found through `entries`).

-- A field's `indexed` as given at creation (NULL: the default, see typed_indexed).
ALTER TABLE "field_definitions" ADD COLUMN "indexed" BOOLEAN;

-- What each content type's table is and how a changed document reaches it. `backfill_after`
-- (NULL once complete): the table is still being filled from the documents stored before it
-- existed, and holds every entry up to that id (typed_storage_fill); queries read documents
-- until it is complete.
CREATE TABLE "typed_tables" (
    "content_type_id" INTEGER NOT NULL,
    "upsert_sql" TEXT NOT NULL,
    "delete_sql" TEXT NOT NULL,
    "base_sql" TEXT NOT NULL,
    "backfill_after" INTEGER,
    CONSTRAINT "typed_tables_pkey" PRIMARY KEY ("content_type_id")
);
ALTER TABLE "typed_tables" ADD CONSTRAINT "typed_tables_content_type_id_fkey" FOREIGN KEY ("content_type_id") REFERENCES "content_types"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Values as the API stores them (field-values.ts): dates `YYYY-MM-DD`, datetimes in UTC
-- `YYYY-MM-DDTHH:mm:ssZ` (minute precision in older data), times `HH:mm`. Anything else (data
-- written around the API) reads as NULL instead of failing the write: a cast that could raise
-- is only reached by text already known to be valid.
CREATE FUNCTION typed_date(v text) RETURNS date LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN v ~ '^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$' AND left(v, 4) <> '0000'
               AND substr(v, 9, 2)::int <= extract(day FROM make_date(left(v, 4)::int, substr(v, 6, 2)::int, 1) + interval '1 month - 1 day')
              THEN v::date END
$$;

CREATE FUNCTION typed_timestamptz(v text) RETURNS timestamptz LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN v ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9])?Z$' AND typed_date(left(v, 10)) IS NOT NULL
              THEN v::timestamptz END
$$;

CREATE FUNCTION typed_time(v text) RETURNS time LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE WHEN v ~ '^([01][0-9]|2[0-3]):[0-5][0-9]$' THEN v::time END
$$;

-- The column type of a field, and its value read from a document `d` (a jsonb expression).
CREATE FUNCTION typed_column_type(ftype text, fformat text, multiple boolean) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE ftype
           WHEN 'text' THEN 'text'
           WHEN 'number' THEN 'numeric'
           WHEN 'boolean' THEN 'boolean'
           WHEN 'json' THEN 'jsonb'
           WHEN 'relation' THEN 'text'
           WHEN 'attachment' THEN 'integer'
           WHEN 'date' THEN CASE fformat WHEN 'datetime' THEN 'timestamptz' WHEN 'time' THEN 'time' ELSE 'date' END
         END || CASE WHEN multiple AND ftype <> 'json' THEN '[]' ELSE '' END
$$;

CREATE FUNCTION typed_scalar(ftype text, fformat text, v text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  -- `v` is a jsonb expression; the result reads it as the field's type, NULL where it is not.
  SELECT CASE ftype
           WHEN 'text' THEN format('CASE WHEN jsonb_typeof(%1$s) = ''string'' THEN %1$s #>> ''{}'' END', v)
           WHEN 'relation' THEN format('CASE WHEN jsonb_typeof(%1$s) = ''string'' THEN %1$s #>> ''{}'' END', v)
           WHEN 'number' THEN format('CASE WHEN jsonb_typeof(%1$s) = ''number'' THEN (%1$s)::numeric END', v)
           WHEN 'boolean' THEN format('CASE WHEN jsonb_typeof(%1$s) = ''boolean'' THEN (%1$s)::boolean END', v)
           WHEN 'attachment' THEN format('CASE WHEN jsonb_typeof(%1$s) = ''number'' AND (%1$s)::numeric BETWEEN 1 AND 2147483647 AND scale((%1$s)::numeric) = 0 THEN (%1$s)::int END', v)
           WHEN 'date' THEN format('CASE WHEN jsonb_typeof(%1$s) = ''string'' THEN %2$s(%1$s #>> ''{}'') END', v,
                                   CASE fformat WHEN 'datetime' THEN 'typed_timestamptz' WHEN 'time' THEN 'typed_time' ELSE 'typed_date' END)
         END
$$;

CREATE FUNCTION typed_value(ftype text, fformat text, multiple boolean, name text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE
           WHEN ftype = 'json' THEN format('n.data -> %L', name)
           -- A multiple field: its elements of the field's type, in order (others left out).
           WHEN multiple THEN format('CASE WHEN jsonb_typeof(n.data -> %1$L) = ''array'' THEN ARRAY(SELECT x FROM (SELECT %2$s AS x, o FROM jsonb_array_elements(n.data -> %1$L) WITH ORDINALITY AS a(e, o)) y WHERE x IS NOT NULL ORDER BY o)::%3$s END',
                                     name, typed_scalar(ftype, fformat, 'a.e'), typed_column_type(ftype, fformat, true))
           ELSE typed_scalar(ftype, fformat, format('(n.data -> %L)', name))
         END
$$;

-- Creates the table of a content type from its field definitions (and fills it from the
-- documents already stored): a content type is created with its table.
-- Whether a field's column has sort indexes: single number and date fields unless `indexed` is
-- false, single text fields when it is true (server/src/core/query/typed.ts reads the same rule).
CREATE FUNCTION typed_indexed(ftype text, multiple boolean, indexed boolean) RETURNS boolean LANGUAGE sql IMMUTABLE AS $$
  SELECT NOT multiple AND CASE ftype WHEN 'number' THEN coalesce(indexed, true) WHEN 'date' THEN coalesce(indexed, true) WHEN 'text' THEN coalesce(indexed, false) ELSE false END
$$;

CREATE FUNCTION typed_storage_build(ct integer) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  t text := 'typed_' || ct;
  cols text := '';
  names text := '';
  vals text := '';
  sets text := '';
  f record;
BEGIN
  IF to_regclass(t) IS NOT NULL THEN RETURN; END IF;
  FOR f IN SELECT id, name, type, format, multiple FROM field_definitions WHERE content_type_id = ct ORDER BY position LOOP
    cols := cols || format(', %I %s%s', 'f' || f.id, typed_column_type(f.type, f.format, f.multiple),
                           CASE WHEN f.type IN ('text', 'relation') THEN ' COLLATE "C"' ELSE '' END);
    names := names || format(', %I', 'f' || f.id);
    vals := vals || ', ' || typed_value(f.type, f.format, f.multiple, f.name);
    sets := sets || format(', %1$I = EXCLUDED.%1$I', 'f' || f.id);
  END LOOP;
  -- entry_id: the ULID, the tie-breaker of every typed sort; live: not in Trash.
  EXECUTE format('CREATE TABLE %I (entry_pk integer NOT NULL, locale text NOT NULL, live boolean NOT NULL, entry_id text COLLATE "C" NOT NULL%s, PRIMARY KEY (entry_pk, locale))', t, cols);
  -- Sorts read a page off an index: number, date and datetime fields get one per direction
  -- (missing values last either way, ties by ULID).
  FOR f IN SELECT id FROM field_definitions WHERE content_type_id = ct AND typed_indexed(type, multiple, indexed) LOOP
    EXECUTE format('CREATE INDEX %I ON %I (locale, %I ASC NULLS LAST, entry_id)', t || '_f' || f.id || '_asc', t, 'f' || f.id);
    EXECUTE format('CREATE INDEX %I ON %I (locale, %I DESC NULLS LAST, entry_id)', t || '_f' || f.id || '_desc', t, 'f' || f.id);
  END LOOP;
  INSERT INTO typed_tables (content_type_id, upsert_sql, delete_sql, base_sql) VALUES (
    ct,
    format('INSERT INTO %I (entry_pk, locale, live, entry_id%s) SELECT n.entry_pk, n.locale, n.live, n.entry_id%s FROM changed n WHERE n.content_type_id = %s AND n.kind = ''typed''
            ON CONFLICT (entry_pk, locale) DO UPDATE SET live = EXCLUDED.live, entry_id = EXCLUDED.entry_id%s', t, names, vals, ct, sets),
    format('DELETE FROM %I t USING %%s n WHERE n.content_type_id = %s AND t.entry_pk = n.entry_pk AND t.locale = n.locale%%s', t, ct),
    -- The base locale's row of typed entries (a format string: where their ids come from).
    format('INSERT INTO %I (entry_pk, locale, live, entry_id) SELECT e.id, ''en-US'', e.deleted_at IS NULL, e.entry_id FROM %%s WHERE e.content_type_id = %s AND e.kind = ''typed'' ON CONFLICT DO NOTHING', t, ct));
  -- A type with entries already (one that existed before this migration) is filled in batches
  -- afterwards; a new one has none yet.
  UPDATE typed_tables SET backfill_after = 0 WHERE content_type_id = ct AND EXISTS (SELECT 1 FROM entries WHERE content_type_id = ct AND kind = 'typed');
END $$;

-- One batch of a table's backfill, in its own transaction: the typed rows of the next `batch`
-- typed entries after `backfill_after`, which then moves past them (NULL when none is left).
-- Returns how many entries it filled: 0 when the table is complete, or when another process is
-- filling it. The batch's entries and documents are locked first, so that what it reads stays
-- current until it commits (a write to them waits, then goes through the triggers); it gives
-- way (lock_timeout, SQLSTATE 55P03) rather than hold up a write, and is simply run again.
CREATE FUNCTION typed_storage_fill(ct integer, batch integer) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  s record;
  hi integer;
  n integer;
BEGIN
  SELECT * INTO s FROM typed_tables WHERE content_type_id = ct AND backfill_after IS NOT NULL FOR UPDATE SKIP LOCKED;
  IF NOT FOUND THEN RETURN 0; END IF;
  PERFORM set_config('lock_timeout', '100ms', true);
  SELECT max(id), count(*) INTO hi, n FROM (
    SELECT id FROM entries WHERE content_type_id = ct AND kind = 'typed' AND id > s.backfill_after ORDER BY id LIMIT batch FOR SHARE) x;
  IF hi IS NULL THEN
    UPDATE typed_tables SET backfill_after = NULL WHERE content_type_id = ct;
    RETURN 0;
  END IF;
  PERFORM 1 FROM entry_contents WHERE content_type_id = ct AND entry_pk > s.backfill_after AND entry_pk <= hi FOR SHARE;
  -- The trigger's own statements, on the batch's documents and entries.
  EXECUTE format('WITH changed AS (SELECT * FROM entry_contents WHERE content_type_id = %s AND entry_pk > %s AND entry_pk <= %s) ', ct, s.backfill_after, hi) || s.upsert_sql;
  EXECUTE format(s.base_sql, format('(SELECT * FROM entries WHERE id > %s AND id <= %s) e', s.backfill_after, hi));
  UPDATE typed_tables SET backfill_after = hi WHERE content_type_id = ct;
  RETURN n;
END $$;

-- Content types are cached with whether their table is complete: its completion drops the caches.
CREATE TRIGGER typed_tables_lookups_changed AFTER UPDATE ON "typed_tables" FOR EACH ROW
  WHEN ((OLD.backfill_after IS NULL) <> (NEW.backfill_after IS NULL)) EXECUTE FUNCTION notify_auth_changed();

-- Created when the content type's transaction commits: its fields are inserted after it.
CREATE FUNCTION typed_storage_created() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF EXISTS (SELECT 1 FROM content_types WHERE id = NEW.id) THEN PERFORM typed_storage_build(NEW.id); END IF;
  RETURN NULL;
END $$;
CREATE CONSTRAINT TRIGGER typed_storage_created AFTER INSERT ON "content_types" DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION typed_storage_created();

CREATE FUNCTION typed_storage_dropped() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('DROP TABLE IF EXISTS %I', 'typed_' || OLD.id);
  RETURN NULL;
END $$;
CREATE TRIGGER typed_storage_dropped AFTER DELETE ON "content_types" FOR EACH ROW EXECUTE FUNCTION typed_storage_dropped();

-- Documents written: their typed rows follow, one statement per content type the write touched.
-- A document of an entry that is no longer typed (converted to a JSON entry) leaves its table.
-- Every typed entry is written with a document; one written in another locale only gets its
-- base locale's row here (an entry with an en-US document has it from that document).
CREATE FUNCTION typed_storage_sync() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  s record;
BEGIN
  FOR s IN SELECT t.upsert_sql, t.delete_sql, t.base_sql FROM typed_tables t WHERE t.content_type_id IN (SELECT DISTINCT content_type_id FROM changed) LOOP
    EXECUTE format(s.delete_sql, 'changed', ' AND n.kind <> ''typed''');
    EXECUTE s.upsert_sql;
    IF EXISTS (SELECT 1 FROM changed WHERE locale <> 'en-US') THEN
      EXECUTE format(s.base_sql, 'changed n JOIN entries e ON e.id = n.entry_pk AND n.locale <> ''en-US''');
    END IF;
  END LOOP;
  RETURN NULL;
END $$;

-- Documents removed: their rows go, but an entry still typed keeps its base locale's row, its
-- fields NULL (a document written next in the same transaction fills it again).
CREATE FUNCTION typed_storage_unsync() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  s record;
BEGIN
  FOR s IN SELECT t.delete_sql, t.base_sql FROM typed_tables t WHERE t.content_type_id IN (SELECT DISTINCT content_type_id FROM removed) LOOP
    EXECUTE format(s.delete_sql, 'removed', '');
    EXECUTE format(s.base_sql, 'removed n JOIN entries e ON e.id = n.entry_pk AND n.locale = ''en-US''');
  END LOOP;
  RETURN NULL;
END $$;

-- An entry trashed, restored or no longer typed: its rows follow (those with documents follow
-- through them too; the base locale's row may have none).
CREATE FUNCTION typed_storage_entry_changed() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  t text := 'typed_' || NEW.content_type_id;
BEGIN
  IF NEW.content_type_id IS NULL OR to_regclass(t) IS NULL THEN RETURN NULL; END IF;
  IF NEW.kind <> 'typed' THEN
    EXECUTE format('DELETE FROM %I WHERE entry_pk = $1', t) USING NEW.id;
  ELSE
    EXECUTE format('UPDATE %I SET live = $2, entry_id = $3 WHERE entry_pk = $1', t) USING NEW.id, NEW.deleted_at IS NULL, NEW.entry_id;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER typed_storage_entry_changed AFTER UPDATE OF kind, deleted_at, entry_id ON "entries" FOR EACH ROW
  WHEN (OLD.kind IS DISTINCT FROM NEW.kind OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL) OR OLD.entry_id IS DISTINCT FROM NEW.entry_id)
  EXECUTE FUNCTION typed_storage_entry_changed();

CREATE TRIGGER typed_storage_inserted AFTER INSERT ON "entry_contents" REFERENCING NEW TABLE AS changed
  FOR EACH STATEMENT EXECUTE FUNCTION typed_storage_sync();
CREATE TRIGGER typed_storage_updated AFTER UPDATE ON "entry_contents" REFERENCING NEW TABLE AS changed
  FOR EACH STATEMENT EXECUTE FUNCTION typed_storage_sync();
CREATE TRIGGER typed_storage_deleted AFTER DELETE ON "entry_contents" REFERENCING OLD TABLE AS removed
  FOR EACH STATEMENT EXECUTE FUNCTION typed_storage_unsync();

-- The content types that exist already get their tables now, empty: the `entries:typed-storage`
-- task fills them from their documents (server/src/core/entries/typed-storage.ts).
SELECT typed_storage_build(id) FROM content_types ORDER BY id;
