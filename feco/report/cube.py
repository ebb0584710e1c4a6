"""The coverage cube the page draws from, shipped once: features × segments × days.

Every chart of coverage (trends, siblings, cold start, regions) reads the same arrays, so
the page holds each number once. Shares travel as unsigned 16-bit basis points (0.01 points:
finer than any sampled coverage can be read) in base64, four bytes per three characters, about
a third of what JSON numbers take; ``MISSING`` marks a segment-day without that value.
"""

from __future__ import annotations

import base64

import numpy as np
import polars as pl

MISSING = 65535
SHARES = ("coverage", "coverage_ma7", "expected", "lower", "shap_share")


def pack_cube(coverage: pl.DataFrame, band: pl.DataFrame) -> dict:
    """The payload of the page's coverage charts.

    ``coverage`` has ds, feature, segment_dim, segment_value, n_rows, coverage, coverage_ma7
    and shap_share (the day's attribution, NULL where none); ``band`` the drop rule's
    expected and lower per ds, feature and segment it judged.
    Returns the axes (``days``, ``features``, ``segments`` as [dim, value]), each share as
    base64 uint16 basis points at index ``(feature * segments + segment) * days + day``, and
    ``rows`` (sampled rows per segment and day, uint32, 0 for none) at ``segment * days + day``.

    Examples
    --------
    >>> from datetime import date
    >>> frame = pl.DataFrame({"ds": [date(2026, 1, 1)], "feature": ["f"], "segment_dim": ["all"],
    ...                       "segment_value": ["all"], "n_rows": [10], "coverage": [0.5],
    ...                       "coverage_ma7": [0.5], "shap_share": [0.25]})
    >>> cube = pack_cube(frame, frame.select("ds", "feature", "segment_dim", "segment_value",
    ...                                      expected=pl.lit(0.6), lower=pl.lit(0.4)))
    >>> unpack(cube["coverage"], np.uint16).tolist(), cube["segments"]
    ([5000], [['all', 'all']])
    """
    days = coverage.get_column("ds").unique().sort()
    features = coverage.get_column("feature").unique().sort()
    segments = (coverage.select("segment_dim", "segment_value").unique()
                .sort(pl.col("segment_dim") != "all", "segment_dim", "segment_value"))
    keyed = (coverage.join(band, on=["ds", "feature", "segment_dim", "segment_value"], how="left")
             .join(_positions(days, "ds", "d"), on="ds")
             .join(_positions(features, "feature", "f"), on="feature")
             .join(segments.with_row_index("s"), on=["segment_dim", "segment_value"]))
    n_days, n_segments = days.len(), segments.height
    at = ((keyed["f"] * n_segments + keyed["s"]) * n_days + keyed["d"]).to_numpy()
    cube = {"days": [d.isoformat() for d in days], "features": features.to_list(),
            "segments": [list(row) for row in segments.iter_rows()]}
    for name in SHARES:
        grid = np.full(features.len() * n_segments * n_days, MISSING, dtype=np.uint16)
        values = keyed.get_column(name).cast(pl.Float64).fill_null(np.nan).to_numpy()
        known = ~np.isnan(values)
        grid[at[known]] = np.round(np.clip(values[known], 0, 1) * 10_000).astype(np.uint16)
        cube[name] = pack(grid)
    rows = np.zeros(n_segments * n_days, dtype=np.uint32)
    per_segment_day = keyed.group_by("s", "d").agg(pl.col("n_rows").max())
    rows[(per_segment_day["s"] * n_days + per_segment_day["d"]).to_numpy()] = per_segment_day["n_rows"].to_numpy()
    cube["rows"] = pack(rows)
    return cube


def heatmap_grids(cube: dict, coverage: pl.DataFrame, band: pl.DataFrame, *, min_rows: int) -> dict[str, dict]:
    """Per segment dimension, features × days: how far each cell's worst segment stood from
    what the drop rule expected, in units of the rule's margin (0: as expected, -1: at the
    line it fires below, positive: above). ``segment`` names that segment by its index in
    ``cube["segments"]``; cells the rule did not judge are None. ``unjudged`` lists a cell's
    segments with fewer than ``min_rows`` sampled rows (not judged), each as [its index in
    ``cube["segments"]``, its rows], so that a segment's value travels once, in the cube, however
    many cells it is unjudged in (None: all judged). Such a cell is never coloured healthy, only
    by a drop its judged segments show.

    Scaling by the margin colours a weekday dip the rule expects as ordinary, and makes a
    small segment's noise as pale as the rule finds it.
    """
    segment_index = pl.DataFrame(cube["segments"], schema=["segment_dim", "segment_value"], orient="row").with_row_index("s")
    scored = (coverage.join(band, on=["ds", "feature", "segment_dim", "segment_value"])
              .filter(pl.col("expected") > pl.col("lower"))
              .with_columns(((pl.col("coverage") - pl.col("expected")) / (pl.col("expected") - pl.col("lower"))).alias("score"))
              .sort("score").group_by("segment_dim", "feature", "ds", maintain_order=True).first()
              .join(segment_index, on=["segment_dim", "segment_value"]))
    small = (coverage.filter(pl.col("n_rows") < min_rows).join(segment_index, on=["segment_dim", "segment_value"])
             .sort("s").group_by("segment_dim", "feature", "ds")
             .agg(pl.concat_list(pl.col("s").cast(pl.Int64), "n_rows").alias("values")))
    day_of = {day: d for d, day in enumerate(cube["days"])}
    feature_of = {feature: f for f, feature in enumerate(cube["features"])}
    grids = {}
    for dim in segment_index.get_column("segment_dim").unique(maintain_order=True):
        z = [[None] * len(day_of) for _ in feature_of]
        worst = [[None] * len(day_of) for _ in feature_of]
        unjudged = [[None] * len(day_of) for _ in feature_of]
        for feature, ds, score, s in scored.filter(pl.col("segment_dim") == dim).select("feature", "ds", "score", "s").iter_rows():
            f, d = feature_of[feature], day_of[ds.isoformat()]
            z[f][d], worst[f][d] = round(score, 2), s
        for feature, ds, values in small.filter(pl.col("segment_dim") == dim).select("feature", "ds", "values").iter_rows():
            f, d = feature_of[feature], day_of[ds.isoformat()]
            unjudged[f][d] = values
            if z[f][d] is not None and z[f][d] > -1:  # the judged ones look fine; the others were not looked at
                z[f][d] = None
        grids[dim] = {"z": z, "segment": worst, "unjudged": unjudged}
    return grids


def _positions(values: pl.Series, name: str, index: str) -> pl.DataFrame:
    return values.to_frame(name).with_row_index(index)


def pack(values: np.ndarray) -> str:
    """Little-endian bytes in base64, what the page reads into a typed array."""
    return base64.b64encode(values.astype(values.dtype.newbyteorder("<")).tobytes()).decode("ascii")


def unpack(text: str, dtype: type) -> np.ndarray:
    """The inverse of ``pack``."""
    return np.frombuffer(base64.b64decode(text), dtype=np.dtype(dtype).newbyteorder("<"))
