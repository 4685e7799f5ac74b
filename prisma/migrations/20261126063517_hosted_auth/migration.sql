-- CreateTable
CREATE TABLE "app_users" (
    "id" SERIAL NOT NULL,
    "workspace_id" INTEGER NOT NULL,
    "email" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "app_users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "auth_otps" (
    "id" SERIAL NOT NULL,
    "workspace_id" INTEGER NOT NULL,
    "email" TEXT NOT NULL,
    "salt" TEXT NOT NULL,
    "otp_hash" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,
    "used_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "auth_otps_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "auth_codes" (
    "id" SERIAL NOT NULL,
    "workspace_id" INTEGER NOT NULL,
    "app_user_id" INTEGER NOT NULL,
    "selector" TEXT NOT NULL,
    "verifier_hash" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,
    "used_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "auth_codes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "auth_tokens" (
    "id" SERIAL NOT NULL,
    "workspace_id" INTEGER NOT NULL,
    "app_user_id" INTEGER NOT NULL,
    "selector" TEXT NOT NULL,
    "verifier_hash" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,
    "revoked_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "auth_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "app_users_workspace_id_email_key" ON "app_users"("workspace_id", "email");

-- CreateIndex
CREATE UNIQUE INDEX "auth_otps_workspace_id_email_key" ON "auth_otps"("workspace_id", "email");

-- CreateIndex
CREATE UNIQUE INDEX "auth_codes_selector_key" ON "auth_codes"("selector");

-- CreateIndex
CREATE INDEX "auth_codes_expires_at_idx" ON "auth_codes"("expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "auth_tokens_selector_key" ON "auth_tokens"("selector");

-- CreateIndex
CREATE INDEX "auth_tokens_expires_at_idx" ON "auth_tokens"("expires_at");

