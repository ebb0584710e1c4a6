-- ranker_team_versions: each version of the team's own model (kind 'external'), in the order
-- they serve: the day it is valid from (the configured valid_from for the first, the first day
-- published with the file's new bytes for one changed in place since) and the days it scored.
-- Inputs: model_runs, ranker_daily. Params: none.
-- Output: version, valid_from, days_scored, first_scored, last_scored (NULL before it scores).
SELECT m.version, m.valid_from, count(d.ds) AS days_scored, min(d.ds) AS first_scored, max(d.ds) AS last_scored
FROM model_runs AS m
LEFT JOIN ranker_daily AS d ON d.run_id = m.run_id AND d.segment_dim = 'all'
WHERE m.kind = 'external'
GROUP BY m.version, m.valid_from
ORDER BY m.valid_from, first_scored NULLS LAST, m.version;
