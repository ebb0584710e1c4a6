-- schema_version: how releases before the migration ledger (schema_migrations) told a
-- warehouse's schema: they applied only the migrations numbered above the largest version
-- here and refuse a warehouse whose version is above every migration they know. feco keeps
-- writing one row, feco.warehouse.LEDGER_VERSION, above every such number, so that those
-- releases refuse a warehouse upgraded past them instead of failing on it.
-- Inputs: written by feco.warehouse.create_schema. Columns: version, applied_at (wall clock,
-- metadata only).
CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER NOT NULL PRIMARY KEY,
    applied_at TIMESTAMPTZ NOT NULL
);
