-- AlterTable
ALTER TABLE "entries" ADD COLUMN     "published_at" TIMESTAMPTZ(6);

-- CreateTable
CREATE TABLE "idempotency_records" (
    "api_key_id" INTEGER NOT NULL,
    "bucket_id" INTEGER NOT NULL,
    "key" VARCHAR(128) NOT NULL,
    "request_hash" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "response" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "idempotency_records_pkey" PRIMARY KEY ("api_key_id","bucket_id","key")
);

-- CreateIndex
CREATE INDEX "idempotency_records_created_at_idx" ON "idempotency_records"("created_at");

-- Every write path (single and batch writes, scheduled publication, restores) keeps it: the time
-- of the latest move to published, null while a draft. Existing published entries get updated_at.
UPDATE "entries" SET "published_at" = "updated_at" WHERE "status" = 'published';

CREATE FUNCTION entries_published_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status <> 'published' THEN
    NEW.published_at := NULL;
  ELSIF TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM 'published' THEN
    NEW.published_at := NEW.updated_at;
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER entries_published_at BEFORE INSERT OR UPDATE OF status ON "entries"
  FOR EACH ROW EXECUTE FUNCTION entries_published_at();
