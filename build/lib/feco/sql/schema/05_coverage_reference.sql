-- coverage_reference: frozen reference statistics for '> reference_mean|median' rules.
-- Computed once over the configured reference period's samples and kept with that period,
-- so changing the period adds a new version instead of silently moving old thresholds.
CREATE TABLE IF NOT EXISTS coverage_reference (
    feature VARCHAR NOT NULL,
    statistic VARCHAR NOT NULL,
    period_start DATE NOT NULL,
    period_end DATE NOT NULL,
    value DOUBLE NOT NULL,
    PRIMARY KEY (feature, statistic, period_start, period_end)
);
