-- CreateTable
CREATE TABLE "entries" (
    "id" SERIAL NOT NULL,
    "entry_id" TEXT NOT NULL,
    "workspace_id" INTEGER NOT NULL,
    "bucket_id" INTEGER NOT NULL,
    "content_type_id" INTEGER,
    "kind" TEXT NOT NULL,
    "migrated" BOOLEAN NOT NULL DEFAULT false,
    "ref" TEXT NOT NULL,
    "live_ref" TEXT,
    "status" TEXT NOT NULL,
    "publish_at" TIMESTAMPTZ(6),
    "lock_version" INTEGER NOT NULL DEFAULT 0,
    "locales" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "contract_choice" TEXT NOT NULL DEFAULT 'auto',
    "contract_name" TEXT,
    "validation_issues" JSONB NOT NULL DEFAULT '[]',
    "validation_checked_at" TIMESTAMPTZ(6),
    "validation_pending" BOOLEAN NOT NULL DEFAULT false,
    "validation_failed" BOOLEAN NOT NULL DEFAULT false,
    "tags" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "updated_at" TIMESTAMPTZ(6) NOT NULL,
    "deleted_at" TIMESTAMPTZ(6),

    CONSTRAINT "entries_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "entry_contents" (
    "entry_pk" INTEGER NOT NULL,
    "locale" TEXT NOT NULL,
    "data" JSONB NOT NULL,

    CONSTRAINT "entry_contents_pkey" PRIMARY KEY ("entry_pk","locale")
);

-- CreateTable
CREATE TABLE "entry_revisions" (
    "id" SERIAL NOT NULL,
    "entry_pk" INTEGER NOT NULL,
    "event" TEXT NOT NULL,
    "restored_from" INTEGER,
    "actor" TEXT,
    "source" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "snapshot" JSONB NOT NULL,

    CONSTRAINT "entry_revisions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "reviews" (
    "id" SERIAL NOT NULL,
    "workspace_id" INTEGER NOT NULL,
    "entry_pk" INTEGER NOT NULL,
    "status" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,
    "resolved_at" TIMESTAMPTZ(6),

    CONSTRAINT "reviews_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "entries_entry_id_key" ON "entries"("entry_id");

-- CreateIndex
CREATE INDEX "entries_workspace_id_kind_status_id_idx" ON "entries"("workspace_id", "kind", "status", "id");

-- CreateIndex
CREATE INDEX "entries_workspace_id_deleted_at_idx" ON "entries"("workspace_id", "deleted_at");

-- CreateIndex
CREATE UNIQUE INDEX "entries_bucket_id_live_ref_key" ON "entries"("bucket_id", "live_ref");

-- CreateIndex
CREATE INDEX "entry_contents_data_idx" ON "entry_contents" USING GIN ("data" jsonb_path_ops);

-- CreateIndex
CREATE INDEX "entry_revisions_entry_pk_id_idx" ON "entry_revisions"("entry_pk", "id");

-- CreateIndex
CREATE INDEX "reviews_entry_pk_status_idx" ON "reviews"("entry_pk", "status");

-- AddForeignKey
ALTER TABLE "entries" ADD CONSTRAINT "entries_bucket_id_fkey" FOREIGN KEY ("bucket_id") REFERENCES "buckets"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "entry_contents" ADD CONSTRAINT "entry_contents_entry_pk_fkey" FOREIGN KEY ("entry_pk") REFERENCES "entries"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "entry_revisions" ADD CONSTRAINT "entry_revisions_entry_pk_fkey" FOREIGN KEY ("entry_pk") REFERENCES "entries"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "reviews" ADD CONSTRAINT "reviews_entry_pk_fkey" FOREIGN KEY ("entry_pk") REFERENCES "entries"("id") ON DELETE CASCADE ON UPDATE CASCADE;

