-- incident_list: incidents tracked on any day from $since to $until, for `feco alerts`, most
-- severe first, then the largest.
-- Inputs: incident_summary. Params: $since, $until (NULL: no end).
-- Output: every incident_summary column.
SELECT *
FROM incident_summary
WHERE last_ds >= $since
  AND ($until IS NULL OR opened_ds <= $until)
ORDER BY severity_rank DESC, rows_lost DESC, alerts DESC, feature, segment_dim, segment_value;
