-- A typed entry's rows leave typed storage with the entry. The rows follow documents
-- (typed_storage_unsync), but the base locale's row of an entry without an en-US document has
-- none: deleting such an entry (written only in de-DE, say) removed its documents and left that
-- row behind, counted by queries and aggregates of the type ever after. Deleting entries now
-- deletes every row of theirs, once per statement and content type.
CREATE FUNCTION typed_storage_entries_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  ct integer;
BEGIN
  FOR ct IN SELECT DISTINCT g.content_type_id FROM gone g WHERE g.content_type_id IS NOT NULL AND g.kind = 'typed' LOOP
    IF to_regclass('typed_' || ct) IS NOT NULL THEN
      EXECUTE format('DELETE FROM %I t USING gone g WHERE t.entry_pk = g.id AND g.content_type_id = $1', 'typed_' || ct) USING ct;
    END IF;
  END LOOP;
  RETURN NULL;
END $$;
CREATE TRIGGER typed_storage_entries_deleted AFTER DELETE ON "entries" REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION typed_storage_entries_deleted();

-- Rows already left behind by such deletes.
DO $$
DECLARE
  ct integer;
BEGIN
  FOR ct IN SELECT content_type_id FROM typed_tables LOOP
    EXECUTE format('DELETE FROM %I t WHERE NOT EXISTS (SELECT 1 FROM entries e WHERE e.id = t.entry_pk)', 'typed_' || ct);
  END LOOP;
END $$;
