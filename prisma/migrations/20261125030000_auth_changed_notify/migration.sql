-- Every change to what an API key lookup reads (keys, their creators, workspaces) notifies
-- `auth_changed`, on which every server process drops its cache of key lookups
-- (server/src/http/auth-cache.ts). Statement-level: one notification per statement, and
-- PostgreSQL folds identical notifications of one transaction into one.
CREATE FUNCTION notify_auth_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('auth_changed', '');
  RETURN NULL;
END
$$;

CREATE TRIGGER api_keys_auth_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "api_keys"
  FOR EACH STATEMENT EXECUTE FUNCTION notify_auth_changed();
CREATE TRIGGER users_auth_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "users"
  FOR EACH STATEMENT EXECUTE FUNCTION notify_auth_changed();
CREATE TRIGGER workspaces_auth_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON "workspaces"
  FOR EACH STATEMENT EXECUTE FUNCTION notify_auth_changed();
