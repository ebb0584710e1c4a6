-- daily: feco_daily's days counted under $ds's coverage rule (a changed rule starts a new series).
-- Inputs: feco_daily, rule_starts. Params: none.
-- Output: the columns of feco_daily.
SELECT feco_daily.*
FROM feco_daily
LEFT JOIN rule_starts USING (feature)
WHERE rule_starts.rule_since IS NULL OR feco_daily.ds >= rule_starts.rule_since;
