-- schema_views: a digest of the views this warehouse's views were last created from (their
-- SQL in sql/schema, with the moving-average window filled in), so that a reader with another
-- feco or another moving_average_days knows they must be created again before it queries.
-- Inputs: written by feco.warehouse.create_schema. Columns: digest, created_at (wall clock,
-- metadata only). One row.
CREATE TABLE IF NOT EXISTS schema_views (
    digest VARCHAR NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
