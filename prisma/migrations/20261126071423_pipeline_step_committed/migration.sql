-- AlterTable
ALTER TABLE "pipeline_step_runs" ADD COLUMN     "committed" JSONB;

