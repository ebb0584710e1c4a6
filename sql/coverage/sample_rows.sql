-- sample_rows: a day's sampled rows read from its local sample files, with their window.
-- Used by feco.sample_folder.SampleFiles.register for samples on a local disk (coverage and the
-- query bands; DuckDB's own Parquet reader streams them).
-- Params: $files, the day's sample files (…/ds=…/window=N/part-0.parquet).
-- Output: every column of the files, and "window" (SMALLINT) from the file's folder name.
-- Hive partitioning is off: other key=value folders above the samples (ds=…, or the team's
-- own) must not become columns.
SELECT * EXCLUDE (feco_sample_file),
       CAST(regexp_extract(feco_sample_file, '/window=(\d+)/[^/]*$', 1) AS SMALLINT) AS "window"
FROM read_parquet($files, filename = 'feco_sample_file', hive_partitioning = false);
