-- columns_absent: the optional log columns (feco.config.OPTIONAL_COLUMNS) a day's logs lacked,
-- by config key ('[logs] label') and the column looked for: what was not measured that day,
-- which `feco status` lists with the key that turns it on. A day table, written with its run.
CREATE TABLE IF NOT EXISTS columns_absent (
    ds DATE NOT NULL,
    config_key VARCHAR NOT NULL,
    column_name VARCHAR NOT NULL,
    PRIMARY KEY (ds, config_key)
);
