"""Seeded coverage reductions: a share of a feature's covered values set to 0 (or NULL).

Coverage is the paper's indicator, the share of rows where the value is ``> 0``; null and NaN
are never covered. Exactly ``round(share * covered)`` covered rows lose their value, chosen by
a seeded generator, so a reduction is reproducible and its measured size is known.
:func:`apply_losses` is the one path every coverage loss takes: the experiment's cells
(:mod:`feco.paper.experiment`) and the replay of an incident (:mod:`feco.ranker.replay`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import polars as pl


@dataclass(frozen=True)
class Loss:
    """``share`` of ``feature``'s covered rows lost: their value turned to 0 (``zero``) or
    NULL (``null``, a logging bug)."""

    feature: str
    share: float
    kind: Literal["zero", "null"] = "zero"


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


def apply_losses(frame: pl.DataFrame, losses: Sequence[Loss], *, seed: int, part: str = "test",
                 rows: np.ndarray | None = None) -> pl.DataFrame:
    """A copy of ``frame`` with every loss applied, each feature's rows chosen by its own seed
    from ``seed``, the feature, the share and ``part`` (the data part: ``train``, ``valid``,
    ``test``), so a cell of the experiment and a replay of the same loss pick the same rows.

    ``rows``: a boolean mask of the rows that may lose coverage (a segment's rows; default all).

    Examples
    --------
    >>> import polars as pl
    >>> frame = pl.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "y": [1.0, 1.0, 0.0, 1.0]})
    >>> lost = apply_losses(frame, [Loss("x", 0.5), Loss("y", 1.0, "null")], seed=1)
    >>> coverage_of(lost, "x"), lost.get_column("y").null_count()
    (0.5, 3)
    """
    for loss in losses:
        frame = reduce_coverage(frame, loss.feature, share=loss.share, to=loss.kind, rows=rows,
                                seed=loss_seed(seed, loss.feature, loss.share, part))
    return frame


def loss_seed(seed: int, feature: str, share: float, part: str) -> int:
    """One independent, reproducible seed per (seed, feature, share, part of the data)."""
    return int.from_bytes(hashlib.sha256(f"{seed}|{feature}|{share:g}|{part}".encode()).digest()[:8], "big")


def reduce_coverage(frame: pl.DataFrame, feature: str, *, share: float, seed: int,
                    to: Literal["zero", "null"] = "zero", rows: np.ndarray | None = None) -> pl.DataFrame:
    """A copy of ``frame`` with ``share`` of ``feature``'s covered values set to 0 (or NULL).

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
    to
        What a lost value becomes: ``zero`` or ``null``.
    rows
        Boolean mask of the rows that may lose coverage; default all.

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
    covered = (values.fill_nan(None) > 0).fill_null(False).to_numpy()
    covered = np.flatnonzero(covered if rows is None else covered & rows)
    chosen = np.random.default_rng(seed).choice(covered, size=round(share * len(covered)), replace=False)
    mask = np.zeros(frame.height, dtype=bool)
    mask[chosen] = True
    # Through polars, so nulls stay null (a numpy round trip would turn them into NaN).
    lost = pl.lit(None if to == "null" else 0, values.dtype)
    return frame.with_columns(pl.when(pl.lit(pl.Series(mask))).then(lost).otherwise(pl.col(feature)).alias(feature))
