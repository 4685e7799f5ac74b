-- An import (`wsapi.importing`, see 20261129140000_archive_import_mode) fires no per-row trigger
-- on the rows it brings by the hundred thousand: a WHEN clause skips the call (and, for an AFTER
-- trigger, the event it would queue per row). Their functions returned at once for an import
-- already; the embedded database spent a fifth of an import's rows phase calling them.
-- `entry_contents_visibility` copies an entry's bucket, type, kind and liveness onto its
-- contents: an archive brings them as exported, and the import checks that they agree
-- (server/src/core/archive/references.ts).
DROP TRIGGER entries_published_at ON entries;
CREATE TRIGGER entries_published_at BEFORE INSERT OR UPDATE OF status ON entries
  FOR EACH ROW WHEN (NOT importing()) EXECUTE FUNCTION entries_published_at();

DROP TRIGGER entries_content_changed ON entries;
CREATE TRIGGER entries_content_changed AFTER INSERT OR DELETE OR UPDATE ON entries
  FOR EACH ROW WHEN (NOT importing()) EXECUTE FUNCTION notify_content_changed();

DROP TRIGGER entry_contents_visibility ON entry_contents;
CREATE TRIGGER entry_contents_visibility BEFORE INSERT OR UPDATE OF entry_pk ON entry_contents
  FOR EACH ROW WHEN (NOT importing()) EXECUTE FUNCTION entry_contents_visibility();

DROP TRIGGER entry_contents_content_changed ON entry_contents;
CREATE TRIGGER entry_contents_content_changed AFTER INSERT OR DELETE OR UPDATE ON entry_contents
  FOR EACH ROW WHEN (NOT importing()) EXECUTE FUNCTION notify_content_changed();

DROP TRIGGER files_content_changed ON files;
CREATE TRIGGER files_content_changed AFTER INSERT OR DELETE OR UPDATE ON files
  FOR EACH ROW WHEN (NOT importing()) EXECUTE FUNCTION notify_content_changed();
