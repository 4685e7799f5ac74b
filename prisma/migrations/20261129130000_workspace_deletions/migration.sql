-- Deleting a workspace (DELETE /admin/v1/workspaces/{workspace}): it is hidden from every route
-- and its keys and sessions go at once; a job deletes the rest in steps, its progress kept in a
-- row that outlives the workspace (server/src/core/workspace-deletion.ts).

-- AlterTable
ALTER TABLE "workspaces" ADD COLUMN     "deleting" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "workspace_deletions" (
    "id" SERIAL NOT NULL,
    "workspace_id" INTEGER NOT NULL,
    "name" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'running',
    "removed" JSONB NOT NULL DEFAULT '{}',
    "error" TEXT,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "finished_at" TIMESTAMPTZ(6),

    CONSTRAINT "workspace_deletions_pkey" PRIMARY KEY ("id")
);

