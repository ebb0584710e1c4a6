-- rule_changes: the features whose coverage rule changed on or after $since (their latest
-- change), for `feco status`: their series restarted there.
-- Inputs: feature_rules. Params: $since.
-- Output: feature, rule_since (the first day counted under the new rule), rule, previous_rule,
-- days (days counted under it since, ds on or after rule_since).
SELECT feature, rule_since, max(rule) AS rule, previous_rule, count(*) AS days
FROM feature_rules
WHERE previous_rule IS NOT NULL AND rule_since >= $since
GROUP BY feature, rule_since, previous_rule
QUALIFY rule_since = max(rule_since) OVER (PARTITION BY feature)
ORDER BY rule_since DESC, feature;
