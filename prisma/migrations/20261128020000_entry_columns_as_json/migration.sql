-- Every rendered entry (core/content/render-text.ts, query/project.ts) shows its ID, tags,
-- locales and times as JSON: kept here, written once when the row is written, instead of built
-- at each read by to_json and to_char (seven calls per entry, related ones too: about 20 % of the
-- statement of a page of 50 articles with their authors and tags).
--
-- IMMUTABLE, which to_char and to_json are not in general: to_char's output depends on the
-- session only through locale-dependent patterns (TM...), which this one has none of, and AT TIME
-- ZONE 'UTC' fixes the zone; to_json of text and text[] depends on nothing but its argument.
CREATE FUNCTION "iso_json"(ts timestamptz) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT to_char(ts AT TIME ZONE 'UTC', '\"YYYY-MM-DD"T"HH24:MI:SS.US"Z"\"') $$;
CREATE FUNCTION "text_json"(t text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT to_json(t)::text $$;
CREATE FUNCTION "text_array_json"(a text[]) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT to_json(coalesce(a, '{}'))::text $$;

ALTER TABLE "entries"
  ADD COLUMN "entry_id_json" text GENERATED ALWAYS AS ("text_json"("entry_id")) STORED,
  ADD COLUMN "tags_json" text GENERATED ALWAYS AS ("text_array_json"("tags")) STORED,
  ADD COLUMN "locales_json" text GENERATED ALWAYS AS ("text_array_json"("locales")) STORED,
  ADD COLUMN "publish_at_json" text GENERATED ALWAYS AS ("iso_json"("publish_at")) STORED,
  ADD COLUMN "created_at_json" text GENERATED ALWAYS AS ("iso_json"("created_at")) STORED,
  ADD COLUMN "updated_at_json" text GENERATED ALWAYS AS ("iso_json"("updated_at")) STORED;
