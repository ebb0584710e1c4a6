-- noise_marks: the series (rule, feature, segment) whose pages people marked noise in the
-- $spread_days days before $ds, by the days the incident paged (its opening, escalations,
-- growth: the headline that paged, never the wall clock of the mark), for the budget
-- (feco.alerts.detect: such a series is judged at alpha / (1 + noise_marks)).
-- Inputs: incidents, incident_actions. Params: $ds, $spread_days.
-- Output: rule, feature, segment_dim, segment_value, noise_marks (incidents marked noise).
WITH marked AS (
    SELECT DISTINCT incident_id FROM incident_actions WHERE action = 'noise'
),

paged AS (
    SELECT DISTINCT incidents.incident_id, incidents.headline_rule AS rule, incidents.feature,
           incidents.headline_dim AS segment_dim, incidents.headline_value AS segment_value
    FROM incidents
    JOIN marked ON marked.incident_id = incidents.incident_id
    WHERE incidents.event IN ('opened', 'escalated', 'grew')
      AND incidents.headline_rule IS NOT NULL
      AND incidents.ds >= $ds - to_days($spread_days)
      AND incidents.ds < $ds
)

SELECT rule, feature, segment_dim, segment_value, count(DISTINCT incident_id) AS noise_marks
FROM paged
GROUP BY rule, feature, segment_dim, segment_value
ORDER BY rule, feature, segment_dim, segment_value;
