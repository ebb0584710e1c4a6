"""The false-page budget: from pages a week to each series' false-alarm rate and critical value.

A team states how many pages a week about nothing it will accept for the whole warehouse
(``[alerts] false_pages_per_week``). Every day the coverage rules judge N series, one per
(rule, feature, segment) that could page; a false incident costs two pages, its opening and
its resolution. Bonferroni's bound then gives each series a daily false-alarm rate of

    alpha = false_pages_per_week / (2 * 7 * N)

whatever the series' correlation: the expected number of false openings a week is at most
7 * N * alpha. A rule fires when its statistic, standardised by the series' own null spread
(estimated from the warehouse's clean history), is beyond the one-sided Student t quantile
t(1 - alpha, df), df being that spread's degrees of freedom: a spread learnt from 14 days is
itself uncertain, and a normal quantile would ignore it. docs/alerts.md sets out the model.
"""

from __future__ import annotations

import polars as pl

PAGES_PER_FALSE_INCIDENT = 2  # its opening and its resolution


def series_alpha(false_pages_per_week: float, n_series: int) -> float:
    """The daily false-alarm rate of each of ``n_series`` series under the budget.

    Examples
    --------
    >>> round(series_alpha(0.5, 1000), 8)
    3.571e-05
    """
    return false_pages_per_week / (PAGES_PER_FALSE_INCIDENT * 7 * max(n_series, 1))


def critical_value(alpha: float, df: pl.Expr) -> pl.Expr:
    """t(1 - alpha, df) per row; null where df is null or under 1 (no spread to judge by).

    Examples
    --------
    >>> frame = pl.DataFrame({"df": [1000.0, 20.0, None]})
    >>> frame.select(critical_value(1e-3, pl.col("df")).round(2))["df"].to_list()
    [3.1, 3.55, None]
    """
    def quantiles(column: pl.Series) -> pl.Series:
        # Here: listing incidents imports the rules, and SciPy (with NumPy) takes 0.5 s.
        import numpy as np
        from scipy import stats

        values = column.cast(pl.Float64).to_numpy()
        usable = np.isfinite(values) & (values >= 1)
        out = np.full(values.shape, np.nan)
        out[usable] = stats.t.isf(alpha, values[usable])
        return pl.Series(column.name, out).fill_nan(None)

    return df.map_batches(quantiles, return_dtype=pl.Float64)


def satterthwaite_df(parts: list[tuple[pl.Expr, pl.Expr]]) -> pl.Expr:
    """Degrees of freedom of a sum of variance estimates (variance, its df), Welch-Satterthwaite's
    approximation; a part with a null df is taken as known (its term drops out)."""
    total = pl.sum_horizontal([variance for variance, _ in parts])
    uncertain = pl.sum_horizontal([(variance ** 2 / df).fill_null(0.0) for variance, df in parts])
    return pl.when(uncertain > 0).then(total ** 2 / uncertain)
