-- Kept entry texts get a byte budget per workspace (KEPT_TEXTS_MB, server/src/core/content/kept-texts.ts):
-- each text's bytes and the order it was kept in, so that a keep deletes the workspace's oldest
-- texts beyond the budget, read off (workspace_id, kept).
-- DropIndex
DROP INDEX "entry_texts_workspace_id_idx";

-- AlterTable
ALTER TABLE "entry_texts" ADD COLUMN     "bytes" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "kept" BIGSERIAL NOT NULL;

-- CreateIndex
CREATE INDEX "entry_texts_workspace_id_kept_idx" ON "entry_texts"("workspace_id", "kept");


UPDATE "entry_texts" SET "bytes" = octet_length("text");
