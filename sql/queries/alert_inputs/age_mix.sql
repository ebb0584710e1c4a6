-- age_mix: the mixes by age band alone.
-- Inputs: mixes. Params: none.
-- Output: ds, feature, segment_dim, segment_value, mix.
SELECT ds, feature, segment_dim, segment_value, mix FROM mixes WHERE dim = 'age_band';
