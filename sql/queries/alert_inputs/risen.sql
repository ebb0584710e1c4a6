-- risen: a rise held above the reference for $follow_days days, which the decay's reference
-- follows.
-- Where every day of a run of $follow_days consecutive days (before ds, after the reference)
-- was above the reference by both margins, per series: a launch or a rollout filling in, a
-- level the decay's reference follows up. The latest such run's mean, and the day the
-- first such run ended (when the reference moved).
-- Inputs: reference, recent. Params: $follow_days, $follow_relative, $follow_absolute, $ds,
-- $ref_end.
-- Output: feature, segment_dim, segment_value, risen_reference, risen_rest_reference, risen_since.
SELECT feature, segment_dim, segment_value,
       arg_max(block_mean, ds) FILTER (WHERE coverage_rose) AS risen_reference,
       arg_max(block_ratio_mean, ds) FILTER (WHERE ratio_rose) AS risen_rest_reference,
       min(ds) FILTER (WHERE coverage_rose) AS risen_since
FROM (SELECT *,
             block_days = $follow_days AND block_min >= reference * (1 + $follow_relative)
                 AND block_min >= reference + $follow_absolute AS coverage_rose,
             block_days = $follow_days AND block_ratio_min >= rest_reference * (1 + $follow_relative) AS ratio_rose
      FROM (SELECT recent.ds, recent.feature, recent.segment_dim, recent.segment_value, reference.reference,
                   reference.rest_reference,
                   count(*) OVER block AS block_days,
                   min(recent.coverage) OVER block AS block_min, avg(recent.coverage) OVER block AS block_mean,
                   min(recent.coverage / nullif(recent.rest_coverage, 0)) OVER block AS block_ratio_min,
                   avg(recent.coverage / nullif(recent.rest_coverage, 0)) OVER block AS block_ratio_mean
            FROM recent
            JOIN reference USING (feature, segment_dim, segment_value)
            WHERE recent.ds < $ds AND recent.ds > $ref_end
            WINDOW block AS (PARTITION BY recent.feature, recent.segment_dim, recent.segment_value
                             ORDER BY recent.ds
                             RANGE BETWEEN INTERVAL ($follow_days - 1) DAY PRECEDING AND CURRENT ROW)))
GROUP BY ALL;
