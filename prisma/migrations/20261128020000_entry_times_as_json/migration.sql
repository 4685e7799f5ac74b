-- Every rendered entry (core/content/render-text.ts) and every projected one (query/projection)
-- shows its publish_at, created_at and updated_at in the wire format: kept here, written once
-- when the row is written, instead of formatted by to_char at each read (three per entry, related
-- ones too: 8 % of the statement of a page of 50 articles with their authors and tags).
--
-- IMMUTABLE, which to_char is not in general: its output depends on the session only through
-- locale-dependent patterns (TM...), and this one has none; AT TIME ZONE 'UTC' fixes the zone.
CREATE FUNCTION "iso_json"(ts timestamptz) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT to_char(ts AT TIME ZONE 'UTC', '\"YYYY-MM-DD"T"HH24:MI:SS.US"Z"\"') $$;

ALTER TABLE "entries"
  ADD COLUMN "publish_at_json" text GENERATED ALWAYS AS ("iso_json"("publish_at")) STORED,
  ADD COLUMN "created_at_json" text GENERATED ALWAYS AS ("iso_json"("created_at")) STORED,
  ADD COLUMN "updated_at_json" text GENERATED ALWAYS AS ("iso_json"("updated_at")) STORED;
