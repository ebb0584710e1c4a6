"""The segment dimensions, declared once: coverage is counted per value of each.

Everything that names the dimensions derives from ``DIMENSIONS``: the config's list of
dimensions and its ``[logs]`` column keys (``feco.config``), the columns coverage reads and
labels rows with (``feco.coverage``, ``sql/coverage/``), the compiled counts' groups
(``feco.coverage_kernel``) and the columns the ranker reads to label its rows
(``feco.ranker``). A dimension whose values are a log column's own is one line below and its
``[logs]`` key in configs/template.toml; a derived one also needs its values computed, in
``row_segments.sql`` and in ``coverage_kernel._groups``.

Each dimension is read at import: a test that adds one extends ``DIMENSIONS`` before feco's
other modules are imported.
"""

from __future__ import annotations

from dataclasses import dataclass

# How a dimension's values come from its column:
COLUMN = "column"  # the values as logged (text), NFC-normalised, NULL read 'unknown'
QUERY_BAND = "query_band"  # head, torso or tail by the query's share of the sampled events
PRODUCT_AGE = "product_age"  # new or established, by the product's first-seen date
AGE_BAND = "age_band"  # the age band of the first-seen date ([segments] age_band_days)


@dataclass(frozen=True)
class Dimension:
    """One segment dimension: its name (``segment_dim`` in coverage_states, the column
    row_segments.sql gives it), the ``[logs]`` key naming the team's column it comes from
    (whose default is the key itself), and how its values come from that column."""

    name: str
    source: str
    kind: str = COLUMN


# In the order of finest_counts' columns. product_age and age_band share their column.
DIMENSIONS = (
    Dimension("product_group", source="product_group"),
    Dimension("region", source="region"),
    Dimension("query_band", source="query", kind=QUERY_BAND),
    Dimension("product_age", source="product_first_seen", kind=PRODUCT_AGE),
    Dimension("age_band", source="product_first_seen", kind=AGE_BAND),
)


def names() -> tuple[str, ...]:
    """Every dimension's name, in declared order."""
    return tuple(dimension.name for dimension in DIMENSIONS)


def by_source() -> dict[str, tuple[str, ...]]:
    """The dimensions taken from each ``[logs]`` key's column, keys in declared order.

    Examples
    --------
    >>> by_source()["product_first_seen"]
    ('product_age', 'age_band')
    """
    sources: dict[str, tuple[str, ...]] = {}
    for dimension in DIMENSIONS:
        sources[dimension.source] = (*sources.get(dimension.source, ()), dimension.name)
    return sources


def source_columns(logs) -> list[str]:
    """The team's column behind every dimension (``logs``: the config's ``[logs]``), once each."""
    return list(dict.fromkeys(getattr(logs, source) for source in by_source()))
