-- schema_version: the versions of the schema this warehouse has been brought to, so that
-- opening it for writing runs only the migrations (sql/migrations/NNN_*.sql) it lacks.
-- Inputs: written by feco.warehouse.create_schema. Columns: version (1: the first release,
-- which stored no version; NNN: after migration NNN; the current one is the largest),
-- applied_at (wall clock of the upgrade, metadata only).
CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER NOT NULL PRIMARY KEY,
    applied_at TIMESTAMPTZ NOT NULL
);
