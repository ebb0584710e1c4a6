-- unseen_levels: the levels of age bands no earlier day had.
-- An age band of ds that no earlier day had (the first batch of new products since the
-- history began) at the levels of the nearest band seen, the younger on a tie: products a
-- day old taken for the youngest seen, a guess nearer than leaving their rows out; on a
-- batch's second day the younger band held the same products the day before.
-- Inputs: band_days, band_order, seen_levels. Params: $ds.
-- Output: feature, dim, band, level, missing_level.
SELECT today.feature, 'age_band' AS dim, today.band,
       arg_min(seen.level, abs(seen_order.position - today_order.position) * 2
                           - CAST(seen_order.position < today_order.position AS INTEGER)) AS level,
       arg_min(seen.missing_level, abs(seen_order.position - today_order.position) * 2
                                   - CAST(seen_order.position < today_order.position AS INTEGER)) AS missing_level
FROM (SELECT DISTINCT feature, band FROM band_days WHERE ds = $ds AND dim = 'age_band') AS today
JOIN band_order AS today_order ON today_order.band = today.band
JOIN seen_levels AS seen ON seen.feature = today.feature AND seen.dim = 'age_band'
JOIN band_order AS seen_order ON seen_order.band = seen.band
ANTI JOIN seen_levels AS own ON own.feature = today.feature AND own.dim = 'age_band' AND own.band = today.band
GROUP BY today.feature, today.band;
