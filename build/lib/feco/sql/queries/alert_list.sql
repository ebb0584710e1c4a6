-- alert_list: stored alerts for `feco alerts`, each headline followed by what is grouped under it.
-- Inputs: alerts. Params: $since, $until (NULL: no end), $all (include grouped and suppressed;
-- otherwise headlines, open or ongoing).
-- Output: ds, status, severity, rule, feature, segment_dim, segment_value, observed,
-- baseline, threshold, drop_abs, drop_rel, std_error, importance, detail, alert_id, parent_id.
SELECT ds, status, severity, rule, feature, segment_dim, segment_value, observed, baseline,
       threshold, drop_abs, drop_rel, std_error, importance, detail, alert_id, parent_id
FROM alerts
WHERE ds >= $since
  AND ($until IS NULL OR ds <= $until)
  AND ($all OR status IN ('open', 'ongoing'))
ORDER BY ds,
         coalesce(parent_id, alert_id),
         parent_id IS NOT NULL,
         CASE severity WHEN 'critical' THEN 0 WHEN 'high' THEN 1 WHEN 'medium' THEN 2 WHEN 'low' THEN 3 ELSE 4 END,
         feature, segment_dim, segment_value;
