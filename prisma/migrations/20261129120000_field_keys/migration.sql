-- Content types change (PATCH .../content-types/{type}): fields are added, renamed, removed and
-- their rules changed while entries are written and read.
--
-- A field's key: where documents (entry_contents.data) keep its value. It is the field's name when
-- the field is added and never changes, so that a rename changes the definition alone, whatever
-- the number of entries (server/src/core/content/field-keys.ts maps names and keys).
ALTER TABLE "field_definitions" ADD COLUMN "key" TEXT;
UPDATE "field_definitions" SET "key" = "name";
ALTER TABLE "field_definitions" ALTER COLUMN "key" SET NOT NULL;
CREATE UNIQUE INDEX "field_definitions_content_type_id_key_key" ON "field_definitions"("content_type_id", "key");

-- A definition inserted without a key (SQL written by hand) gets its name.
CREATE FUNCTION field_definitions_key() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.key := coalesce(NEW.key, NEW.name);
  RETURN NEW;
END $$;
CREATE TRIGGER field_definitions_key BEFORE INSERT ON "field_definitions" FOR EACH ROW EXECUTE FUNCTION field_definitions_key();

-- A removed field's key: field_cleanup_step takes its values out of the documents in batches (the
-- `entries:field-cleanup` task), then marks it finished. The row stays: a key is never given to
-- another field of the type (a write begun before the removal may still add its value).
CREATE TABLE "field_removals" (
    "id" SERIAL NOT NULL,
    "content_type_id" INTEGER NOT NULL,
    "key" TEXT NOT NULL,
    "after_pk" INTEGER NOT NULL DEFAULT 0,
    "finished" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "field_removals_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "field_removals_content_type_id_idx" ON "field_removals"("content_type_id");
ALTER TABLE "field_removals" ADD CONSTRAINT "field_removals_content_type_id_fkey" FOREIGN KEY ("content_type_id") REFERENCES "content_types"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- The statement that writes a type's typed rows from changed documents, from its fields as they
-- are now (each read at its key).
CREATE FUNCTION typed_storage_upsert_sql(ct integer) RETURNS text LANGUAGE plpgsql STABLE AS $$
DECLARE
  t text := 'typed_' || ct;
  names text := '';
  vals text := '';
  sets text := '';
  f record;
BEGIN
  FOR f IN SELECT id, key, type, format, multiple FROM field_definitions WHERE content_type_id = ct ORDER BY position LOOP
    names := names || format(', %I', 'f' || f.id);
    vals := vals || ', ' || typed_value(f.type, f.format, f.multiple, f.key);
    sets := sets || format(', %1$I = EXCLUDED.%1$I', 'f' || f.id);
  END LOOP;
  RETURN format('INSERT INTO %I (entry_pk, locale, live, entry_id%s) SELECT n.entry_pk, n.locale, n.live, n.entry_id%s FROM changed n WHERE n.content_type_id = %s AND n.kind = ''typed''
            ON CONFLICT (entry_pk, locale) DO UPDATE SET live = EXCLUDED.live, entry_id = EXCLUDED.entry_id%s', t, names, vals, ct, sets);
END $$;

-- The sort indexes a type's fields want (typed_indexed) that its table lacks, or holds invalid (a
-- concurrent build that failed): each one's name and definition after `CREATE INDEX <name>`.
CREATE FUNCTION typed_storage_missing_indexes(ct integer) RETURNS TABLE (name text, definition text, invalid boolean) LANGUAGE sql STABLE AS $$
  SELECT i.name, format('ON %I (locale, %I %s NULLS LAST, entry_id)', 'typed_' || ct, 'f' || f.id, i.dir), x.indisvalid IS FALSE
    FROM field_definitions f
   CROSS JOIN LATERAL (VALUES ('typed_' || ct || '_f' || f.id || '_asc', 'ASC'), ('typed_' || ct || '_f' || f.id || '_desc', 'DESC')) i(name, dir)
    LEFT JOIN pg_index x ON x.indexrelid = to_regclass(i.name)
   WHERE f.content_type_id = ct AND typed_indexed(f.type, f.multiple, f.indexed) AND to_regclass('typed_' || ct) IS NOT NULL
     AND (x.indexrelid IS NULL OR NOT x.indisvalid)
$$;

-- A type's table follows its fields: a column for each field (NULL in every row: a new field's key
-- is in no document), none for a removed one, no sort index a field does not want, and the
-- upsert statement. Adding and dropping a column change the catalog alone. Locks the table
-- (ACCESS EXCLUSIVE) until the transaction ends: run it last. The sort indexes a field wants are
-- built by the caller (typed_storage_missing_indexes): after the commit, concurrently, so that no
-- read waits for a build over the type's rows.
CREATE FUNCTION typed_storage_alter(ct integer) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  t text := 'typed_' || ct;
  f record;
  c record;
BEGIN
  IF to_regclass(t) IS NULL THEN RETURN; END IF;
  FOR f IN SELECT d.id, d.type, d.format, d.multiple FROM field_definitions d WHERE d.content_type_id = ct
            AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = to_regclass(t) AND a.attname = 'f' || d.id AND NOT a.attisdropped) LOOP
    EXECUTE format('ALTER TABLE %I ADD COLUMN %I %s%s', t, 'f' || f.id, typed_column_type(f.type, f.format, f.multiple),
                   CASE WHEN f.type IN ('text', 'relation') THEN ' COLLATE "C"' ELSE '' END);
  END LOOP;
  FOR c IN SELECT a.attname FROM pg_attribute a WHERE a.attrelid = to_regclass(t) AND a.attnum > 0 AND NOT a.attisdropped AND a.attname ~ '^f[0-9]+$'
            AND NOT EXISTS (SELECT 1 FROM field_definitions d WHERE d.content_type_id = ct AND 'f' || d.id = a.attname) LOOP
    EXECUTE format('ALTER TABLE %I DROP COLUMN %I', t, c.attname);
  END LOOP;
  FOR f IN SELECT id FROM field_definitions WHERE content_type_id = ct AND NOT typed_indexed(type, multiple, indexed) LOOP
    EXECUTE format('DROP INDEX IF EXISTS %I', t || '_f' || f.id || '_asc');
    EXECUTE format('DROP INDEX IF EXISTS %I', t || '_f' || f.id || '_desc');
  END LOOP;
  UPDATE typed_tables SET upsert_sql = typed_storage_upsert_sql(ct) WHERE content_type_id = ct;
END $$;

-- A new type's table reads its fields at their keys too (the same table as before otherwise).
CREATE OR REPLACE FUNCTION typed_storage_build(ct integer) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  t text := 'typed_' || ct;
  i record;
BEGIN
  IF to_regclass(t) IS NOT NULL THEN RETURN; END IF;
  -- entry_id: the ULID, the tie-breaker of every typed sort; live: not in Trash.
  EXECUTE format('CREATE TABLE %I (entry_pk integer NOT NULL, locale text NOT NULL, live boolean NOT NULL, entry_id text COLLATE "C" NOT NULL, PRIMARY KEY (entry_pk, locale))', t);
  INSERT INTO typed_tables (content_type_id, upsert_sql, delete_sql, base_sql) VALUES (
    ct,
    '',
    format('DELETE FROM %I t USING %%s n WHERE n.content_type_id = %s AND t.entry_pk = n.entry_pk AND t.locale = n.locale%%s', t, ct),
    -- The base locale's row of typed entries (a format string: where their ids come from).
    format('INSERT INTO %I (entry_pk, locale, live, entry_id) SELECT e.id, ''en-US'', e.deleted_at IS NULL, e.entry_id FROM %%s WHERE e.content_type_id = %s AND e.kind = ''typed'' ON CONFLICT DO NOTHING', t, ct));
  -- Its columns, upsert statement and sort indexes (the table is new: nothing waits for them).
  PERFORM typed_storage_alter(ct);
  FOR i IN SELECT * FROM typed_storage_missing_indexes(ct) LOOP
    EXECUTE format('CREATE INDEX %I %s', i.name, i.definition);
  END LOOP;
  -- A type with entries already (one that existed before typed storage) is filled in batches
  -- afterwards; a new one has none yet.
  UPDATE typed_tables SET backfill_after = 0 WHERE content_type_id = ct AND EXISTS (SELECT 1 FROM entries WHERE content_type_id = ct AND kind = 'typed');
END $$;

-- One batch of a removal's cleanup, in its own transaction: the removed key leaves the documents
-- of the type's next `batch` entries after `after_pk`, which then moves past them; the removal is
-- finished once none is left. Returns how many entries it went through: 0 when done, or when
-- another process is on this removal. Gives way to writes (lock_timeout, 55P03) and is run again.
CREATE FUNCTION field_cleanup_step(rid integer, batch integer) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  r record;
  hi integer;
  n integer;
BEGIN
  SELECT * INTO r FROM field_removals WHERE id = rid AND NOT finished FOR UPDATE SKIP LOCKED;
  IF NOT FOUND THEN RETURN 0; END IF;
  PERFORM set_config('lock_timeout', '100ms', true);
  SELECT max(id), count(*) INTO hi, n FROM (
    SELECT id FROM entries WHERE content_type_id = r.content_type_id AND id > r.after_pk ORDER BY id LIMIT batch) x;
  IF hi IS NULL THEN
    UPDATE field_removals SET finished = true WHERE id = rid;
    RETURN 0;
  END IF;
  UPDATE entry_contents SET data = data - r.key
   WHERE content_type_id = r.content_type_id AND kind = 'typed' AND entry_pk > r.after_pk AND entry_pk <= hi AND data ? r.key;
  UPDATE field_removals SET after_pk = hi WHERE id = rid;
  RETURN n;
END $$;
