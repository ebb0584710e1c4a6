-- status_days: what the warehouse holds, for `feco status`.
-- Inputs: runs, sample_windows, feature_status. Output: one row: days, first_ds, last_ds,
-- last_published_at, events_sampled (all days), features_missing (feature-days missing from
-- the logs), short_windows (windows that had fewer events than wanted, their logs complete),
-- missing_windows (windows reading an hour that had no log rows in the window, sampled with
-- --allow-incomplete) and missing_days (the days that had any), rows_null_event_id and
-- rows_null_timestamp (log rows left out of every sample for a NULL event id or timestamp,
-- all days), null_days (the days that had any), rows_outside_day (log rows left out of every
-- sample for a timestamp on another day than their folder's, all days) and outside_days (the
-- days that had any), days_read_earlier (days whose logs were read from a table at another
-- snapshot or version than $table_version, the table's current one; NULL for logs in a folder)
-- and versions_read_earlier (those snapshots or versions, in the order of their first day).
SELECT count(*) AS days,
       min(ds) AS first_ds,
       max(ds) AS last_ds,
       max(published_at) AS last_published_at,
       coalesce(sum(events_sampled), 0) AS events_sampled,
       (SELECT count(*) FROM feature_status WHERE status <> 'ok') AS features_missing,
       (SELECT count(*) FROM sample_windows
        WHERE events_sampled < $events_per_window AND coalesce(len(hours_missing), 0) = 0) AS short_windows,
       (SELECT count(*) FROM sample_windows WHERE len(hours_missing) > 0) AS missing_windows,
       (SELECT list(DISTINCT ds ORDER BY ds) FROM sample_windows WHERE len(hours_missing) > 0) AS missing_days,
       (SELECT coalesce(sum(rows_null_event_id), 0) FROM sample_windows) AS rows_null_event_id,
       (SELECT coalesce(sum(rows_null_timestamp), 0) FROM sample_windows) AS rows_null_timestamp,
       (SELECT list(DISTINCT ds ORDER BY ds) FROM sample_windows
        WHERE rows_null_event_id > 0 OR rows_null_timestamp > 0) AS null_days,
       (SELECT coalesce(sum(rows_outside_day), 0) FROM sample_windows) AS rows_outside_day,
       (SELECT list(DISTINCT ds ORDER BY ds) FROM sample_windows WHERE rows_outside_day > 0) AS outside_days,
       (SELECT list(DISTINCT ds ORDER BY ds) FROM sample_windows
        WHERE table_version <> $table_version) AS days_read_earlier,
       (SELECT list(table_version ORDER BY first_ds)
        FROM (SELECT table_version, min(ds) AS first_ds FROM sample_windows
              WHERE table_version <> $table_version GROUP BY table_version)) AS versions_read_earlier
FROM runs;
