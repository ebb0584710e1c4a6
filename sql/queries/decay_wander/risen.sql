-- risen: the series whose decay reference followed a rise, and the day the rise had held.
-- Inputs: none. Params: $risen_features, $risen_dims, $risen_values, $risen_since (parallel lists).
-- Output: feature, segment_dim, segment_value, since.
SELECT unnest($risen_features) AS feature, unnest($risen_dims) AS segment_dim,
       unnest($risen_values) AS segment_value, unnest($risen_since) AS since;
