-- report_tables: the relations the warehouse holds, so the report can leave out the sections
-- whose results do not exist yet (ranker runs, sampling studies).
-- Inputs: information_schema.tables. Params: none.
-- Output: table_name.
SELECT table_name
FROM information_schema.tables
WHERE table_schema = 'main'
ORDER BY table_name;
