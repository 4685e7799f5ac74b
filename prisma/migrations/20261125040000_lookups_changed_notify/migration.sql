-- Content types are cached per process too (server/src/core/lookup-cache.ts): changes to buckets,
-- content types and field definitions notify the same channel as keys, users and workspaces.
CREATE TRIGGER buckets_lookups_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "buckets"
  FOR EACH STATEMENT EXECUTE FUNCTION notify_auth_changed();
CREATE TRIGGER content_types_lookups_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "content_types"
  FOR EACH STATEMENT EXECUTE FUNCTION notify_auth_changed();
CREATE TRIGGER field_definitions_lookups_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "field_definitions"
  FOR EACH STATEMENT EXECUTE FUNCTION notify_auth_changed();
