"""Seeded coverage reductions: a share of a feature's covered values set to 0.

Coverage is the paper's indicator, the share of rows where the value is ``> 0``; null and NaN
are never covered. Exactly ``round(share * covered)`` covered rows are zeroed, chosen by a
seeded generator, so a reduction is reproducible and its measured size is known.
"""

from __future__ import annotations

import numpy as np
import polars as pl


def coverage_of(frame: pl.DataFrame, feature: str) -> float:
    """Share of rows whose ``feature`` is ``> 0`` (null and NaN count as not covered).

    Examples
    --------
    >>> import polars as pl
    >>> coverage_of(pl.DataFrame({"x": [0.0, 0.5, None, 2.0]}), "x")
    0.5
    """
    if frame.height == 0:
        return 0.0
    return float((frame.get_column(feature).fill_nan(None) > 0).fill_null(False).mean())


def reduce_coverage(frame: pl.DataFrame, feature: str, *, share: float, seed: int) -> pl.DataFrame:
    """A copy of ``frame`` with ``share`` of ``feature``'s covered values set to 0.

    Parameters
    ----------
    frame
        Rows to change; not modified.
    feature
        The column whose coverage drops.
    share
        Fraction of the covered rows to zero, in [0, 1]; 1 removes the feature entirely.
    seed
        Seed of the choice of rows.

    Examples
    --------
    >>> import polars as pl
    >>> frame = pl.DataFrame({"x": [0.0, 1.0, 2.0, 3.0, 4.0]})
    >>> coverage_of(reduce_coverage(frame, "x", share=0.5, seed=1), "x")
    0.4
    """
    if not 0 <= share <= 1:
        raise ValueError(f"share must be in [0, 1], got {share}")
    values = frame.get_column(feature)
    covered = np.flatnonzero((values.fill_nan(None) > 0).fill_null(False).to_numpy())
    chosen = np.random.default_rng(seed).choice(covered, size=round(share * len(covered)), replace=False)
    mask = np.zeros(frame.height, dtype=bool)
    mask[chosen] = True
    # Through polars, so nulls stay null (a numpy round trip would turn them into NaN).
    zeroed = pl.when(pl.lit(pl.Series(mask))).then(pl.lit(0, values.dtype)).otherwise(pl.col(feature))
    return frame.with_columns(zeroed.alias(feature))
