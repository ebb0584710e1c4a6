-- schema_migrations: the ledger of migrations (sql/migrations/NNN_what.sql) this warehouse
-- holds, by name, so that opening it for writing applies every one it lacks whatever their
-- numbers (migrations land from branches out of number order) and refuses a warehouse holding
-- one this feco does not know (written by a newer feco).
-- Inputs: written by feco.warehouse.create_schema. Columns: migration (the file's stem, such
-- as '010_sample_windows_window_index'), applied_at (wall clock of the upgrade, metadata only;
-- a new warehouse records every migration it was created with).
CREATE TABLE IF NOT EXISTS schema_migrations (
    migration VARCHAR NOT NULL PRIMARY KEY,
    applied_at TIMESTAMPTZ NOT NULL
);
