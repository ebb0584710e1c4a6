-- 025: feature_status.rule, the coverage rule each day was counted under, so that a changed
-- rule restarts the feature's series instead of mixing two definitions in its moving average
-- and alert history. Existing rows get NULL (not recorded): they join the rule of the days
-- around them.
ALTER TABLE feature_status ADD COLUMN IF NOT EXISTS rule VARCHAR;
