-- band_order: the age bands, youngest first.
-- Inputs: none. Params: $age_bands.
-- Output: band, position.
SELECT unnest($age_bands) AS band, unnest(range(len($age_bands))) AS position;
