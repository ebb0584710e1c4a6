-- sampled_volume: the day's sampled events against the days before it, for the volume guard.
-- Inputs: sample_windows. Params: $ds, $baseline_days.
-- Output: events (sampled on ds), baseline (median of the daily sampled events over the
-- previous $baseline_days calendar days), baseline_days, windows_missing (windows of ds that
-- read an hour without logs: a day sampled with --allow-incomplete).
WITH daily AS (
    SELECT ds, sum(events_sampled)::BIGINT AS events,
           count(*) FILTER (WHERE len(hours_missing) > 0) AS windows_missing
    FROM sample_windows
    WHERE ds <= $ds AND ds >= $ds - to_days($baseline_days)
    GROUP BY ds
)
SELECT (SELECT events FROM daily WHERE ds = $ds) AS events,
       (SELECT median(events) FROM daily WHERE ds < $ds) AS baseline,
       (SELECT count(*) FROM daily WHERE ds < $ds) AS baseline_days,
       coalesce((SELECT windows_missing FROM daily WHERE ds = $ds), 0) AS windows_missing;
