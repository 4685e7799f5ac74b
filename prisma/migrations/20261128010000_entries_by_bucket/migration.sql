-- The Objects API's list pages of one bucket read its entries in id order (core/operations/objects.ts):
-- without this index a page walked every entry of the workspace, of every bucket, after the cursor.
CREATE INDEX "entries_bucket_id_id_idx" ON "entries"("bucket_id", "id");
