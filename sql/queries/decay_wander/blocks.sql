-- blocks: each series' whole weeks of normal days with $min_rows rows, 7-day blocks counted back
-- from the day before $ds (a risen series from its rise on), and their mean coverage and ratio
-- to the rest of traffic.
-- Inputs: wander_days, risen, abnormal_days. Params: $ds, $min_rows.
-- Output: feature, segment_dim, segment_value, block, week_coverage, week_ratio.
SELECT counted.feature, counted.segment_dim, counted.segment_value,
       date_diff('day', counted.ds, $ds - INTERVAL 1 DAY) // 7 AS block,
       avg(counted.coverage) AS week_coverage, avg(counted.rest_ratio) AS week_ratio
FROM wander_days AS counted
LEFT JOIN risen USING (feature, segment_dim, segment_value)
LEFT JOIN abnormal_days AS own
    ON own.ds = counted.ds AND own.feature = counted.feature
   AND own.segment_dim = counted.segment_dim AND own.segment_value = counted.segment_value
LEFT JOIN abnormal_days AS everywhere
    ON everywhere.ds = counted.ds AND everywhere.feature = counted.feature AND everywhere.segment_dim = 'all'
WHERE counted.n_rows >= $min_rows
  AND own.ds IS NULL AND everywhere.ds IS NULL AND (risen.since IS NULL OR counted.ds >= risen.since)
GROUP BY ALL
-- whole weeks only: a part week carries its weekdays' levels
HAVING count(*) = 7;
