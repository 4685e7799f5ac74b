-- AlterTable
ALTER TABLE "idempotency_records" ALTER COLUMN "response" SET DATA TYPE JSON;

