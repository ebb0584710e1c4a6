-- columns_absent: the optional log columns the last published day's logs lacked, by config key
-- ('[logs] label', feco.config.OPTIONAL_COLUMNS): what `feco status` lists as not measured.
-- Inputs: columns_absent, runs. Output: config_key, column_name.
SELECT config_key, column_name
FROM columns_absent
WHERE ds = (SELECT max(ds) FROM runs)
ORDER BY config_key;
