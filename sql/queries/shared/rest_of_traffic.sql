-- rest_of_traffic: each day's segments with the coverage of the rest of traffic that day (the
-- global counts less the segment's: NULL for all traffic) and their ratio to it.
-- Inputs: daily. Params: none.
-- Output: the columns of daily, rest_coverage, rest_ratio.
SELECT *, coverage / nullif(rest_coverage, 0) AS rest_ratio
FROM (SELECT *,
             (any_value(n_covered) FILTER (WHERE segment_dim = 'all') OVER same_day - n_covered)
                 / nullif(any_value(n_rows) FILTER (WHERE segment_dim = 'all') OVER same_day - n_rows, 0)
                 AS rest_coverage
      FROM daily
      WINDOW same_day AS (PARTITION BY ds, feature));
