-- Delivery list pages of one content type read its entries in id order (core/operations/entries.ts):
-- without this index a page walked every entry of the workspace created before the type's first.
CREATE INDEX "entries_content_type_id_id_idx" ON "entries"("content_type_id", "id");
