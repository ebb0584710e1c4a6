-- false_pages: the false-page budget as measured on this warehouse's own pages, per week
-- (Monday) over the $weeks weeks up to $last_ds: the pages (messages sent or due) of the
-- incidents people marked noise, and of those over within a day that nothing changed
-- (resolved by their coverage no later than the day after they opened, never escalated
-- nor grown, not resolved by hand), by the week each opened.
-- Inputs: incident_summary, incident_messages, incident_actions. Params: $last_ds, $weeks.
-- Output: week, false_pages, marked_noise (incidents), over_in_a_day (incidents).
WITH pages AS (
    SELECT incident_id, count(*) AS pages, bool_or(event IN ('escalated', 'grew')) AS changed
    FROM incident_messages
    GROUP BY incident_id
),

noise AS (
    SELECT DISTINCT incident_id FROM incident_actions WHERE action = 'noise'
),

false_incidents AS (
    SELECT date_trunc('week', s.opened_ds)::DATE AS week, pages.pages, noise.incident_id IS NOT NULL AS noise
    FROM incident_summary AS s
    JOIN pages ON pages.incident_id = s.incident_id
    LEFT JOIN noise ON noise.incident_id = s.incident_id
    WHERE noise.incident_id IS NOT NULL
       OR (s.resolved_ds <= s.opened_ds + 1 AND NOT pages.changed AND s.resolved_by IS NULL)
),

weeks AS (
    SELECT unnest(generate_series(date_trunc('week', $last_ds::DATE) - to_weeks($weeks - 1),
                                  date_trunc('week', $last_ds::DATE), INTERVAL 7 DAY))::DATE AS week
)

SELECT weeks.week,
       coalesce(sum(f.pages), 0)::BIGINT AS false_pages,
       count(*) FILTER (WHERE f.noise) AS marked_noise,
       count(*) FILTER (WHERE NOT f.noise) AS over_in_a_day
FROM weeks
LEFT JOIN false_incidents AS f ON f.week = weeks.week
GROUP BY weeks.week
ORDER BY weeks.week;
