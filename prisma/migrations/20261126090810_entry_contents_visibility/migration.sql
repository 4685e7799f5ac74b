-- Each document carries its entry's visibility columns (and ULID), so that a query's candidate
-- scan (a GIN containment test, say) reads documents alone instead of looking up the entry row
-- of every candidate. Triggers keep the copies: filled on insert, followed on every change.
ALTER TABLE "entry_contents" ADD COLUMN     "bucket_id" INTEGER,
ADD COLUMN     "content_type_id" INTEGER,
ADD COLUMN     "entry_id" TEXT,
ADD COLUMN     "kind" TEXT,
ADD COLUMN     "live" BOOLEAN,
ADD COLUMN     "workspace_id" INTEGER;

UPDATE "entry_contents" c
   SET "workspace_id" = e."workspace_id", "bucket_id" = e."bucket_id", "content_type_id" = e."content_type_id",
       "kind" = e."kind", "live" = e."deleted_at" IS NULL, "entry_id" = e."entry_id"
  FROM "entries" e WHERE e."id" = c."entry_pk";

ALTER TABLE "entry_contents" ALTER COLUMN "bucket_id" SET NOT NULL,
ALTER COLUMN "entry_id" SET NOT NULL,
ALTER COLUMN "kind" SET NOT NULL,
ALTER COLUMN "live" SET NOT NULL,
ALTER COLUMN "workspace_id" SET NOT NULL;

-- CreateIndex
CREATE INDEX "entry_contents_workspace_id_kind_content_type_id_idx" ON "entry_contents"("workspace_id", "kind", "content_type_id");

-- Writers insert (entry_pk, locale, data): the rest comes from the entry row.
CREATE FUNCTION entry_contents_visibility() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  SELECT e.workspace_id, e.bucket_id, e.content_type_id, e.kind, e.deleted_at IS NULL, e.entry_id
    INTO NEW.workspace_id, NEW.bucket_id, NEW.content_type_id, NEW.kind, NEW.live, NEW.entry_id
    FROM entries e WHERE e.id = NEW.entry_pk;
  RETURN NEW;
END $$;

CREATE TRIGGER entry_contents_visibility BEFORE INSERT OR UPDATE OF entry_pk ON "entry_contents"
  FOR EACH ROW EXECUTE FUNCTION entry_contents_visibility();

-- An entry moved, converted, trashed or restored: its documents follow.
CREATE FUNCTION entries_visibility_to_contents() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE entry_contents
     SET workspace_id = NEW.workspace_id, bucket_id = NEW.bucket_id, content_type_id = NEW.content_type_id,
         kind = NEW.kind, live = NEW.deleted_at IS NULL, entry_id = NEW.entry_id
   WHERE entry_pk = NEW.id;
  RETURN NULL;
END $$;

CREATE TRIGGER entries_visibility_to_contents
  AFTER UPDATE OF workspace_id, bucket_id, content_type_id, kind, deleted_at, entry_id ON "entries"
  FOR EACH ROW
  WHEN (OLD.workspace_id IS DISTINCT FROM NEW.workspace_id OR OLD.bucket_id IS DISTINCT FROM NEW.bucket_id
        OR OLD.content_type_id IS DISTINCT FROM NEW.content_type_id OR OLD.kind IS DISTINCT FROM NEW.kind
        OR (OLD.deleted_at IS NULL) <> (NEW.deleted_at IS NULL) OR OLD.entry_id IS DISTINCT FROM NEW.entry_id)
  EXECUTE FUNCTION entries_visibility_to_contents();
