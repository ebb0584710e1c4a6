-- loo: each day's leave-one-out residual from its weekday's median.
-- Each day's residual from the median of the other days of its weekday (of all the other
-- days without a weekly shape): a day is never its own yardstick, so its residual is 0 by
-- construction for none of them.
-- Inputs: series_days, possible_weeks. Params: none.
-- Output: the columns of series_days, weekly_possible, peers, position, peer_group, loo_residual.
SELECT days.*, weeks.series IS NOT NULL AS weekly_possible,
       days.value - list_aggregate(list_concat(list_slice(peers, 1, position - 1),
                                               list_slice(peers, position + 1, len(peers))), 'median') AS loo_residual
FROM (SELECT *,
             list(value ORDER BY value) OVER peers AS peers,
             row_number() OVER (peers ORDER BY value) AS position
      FROM (SELECT series_days.*, CASE WHEN weeks.series IS NULL THEN 0 ELSE isodow(series_days.ds) END AS peer_group
            FROM series_days
            LEFT JOIN possible_weeks AS weeks USING (feature, segment_dim, segment_value, series))
      WINDOW peers AS (PARTITION BY feature, segment_dim, segment_value, series, peer_group)) AS days
LEFT JOIN possible_weeks AS weeks USING (feature, segment_dim, segment_value, series);
