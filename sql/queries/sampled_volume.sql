-- sampled_volume: the day's sampled events against the days before it, for the volume guard.
-- Inputs: sample_windows. Params: $ds, $baseline_days.
-- Output: events (sampled on ds), baseline (the lower of the median of the daily sampled
-- events over the previous $baseline_days calendar days and the median of the same weekday's
-- over the previous four weeks: a weekend with half the weekdays' traffic is the usual
-- weekend, not a collapse; a lone holiday among the same weekdays raises neither median),
-- baseline_days (the previous days counted), windows_missing (windows of ds that read an hour
-- without logs: a day sampled with --allow-incomplete).
WITH daily AS (
    SELECT ds, sum(events_sampled)::BIGINT AS events,
           count(*) FILTER (WHERE len(hours_missing) > 0) AS windows_missing
    FROM sample_windows
    WHERE ds <= $ds AND ds >= $ds - to_days(greatest($baseline_days, 28))
    GROUP BY ds
)
SELECT (SELECT events FROM daily WHERE ds = $ds) AS events,
       (SELECT least(recent, coalesce(same_weekday, recent))
        FROM (SELECT median(events) FILTER (WHERE ds >= $ds - to_days($baseline_days)) AS recent,
                     median(events) FILTER (WHERE isodow(ds) = isodow($ds)) AS same_weekday
              FROM daily WHERE ds < $ds)) AS baseline,
       (SELECT count(*) FROM daily WHERE ds < $ds AND ds >= $ds - to_days($baseline_days)) AS baseline_days,
       coalesce((SELECT windows_missing FROM daily WHERE ds = $ds), 0) AS windows_missing;
