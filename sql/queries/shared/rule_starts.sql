-- rule_starts: the day from which each feature's coverage rule on $ds counts.
-- Inputs: feature_rules. Params: $ds.
-- Output: feature, rule_since (NULL: no change of rule).
SELECT feature, rule_since FROM feature_rules WHERE ds = $ds;
