"""Roll-up: one headline per feature, rule and day, the other alerts grouped under it.

Segments form a hierarchy: ('all', 'all') → a dimension's values → crosses of them. When a
parent fires, its firing children are grouped under it. When the global segment fires and, in
some dimension, only one value fires while its siblings hardly moved, the incident is local:
that value becomes the headline (an incident in one region is reported as that region, not
diluted into the global number). Alerts left without a firing parent (say region=DE and
product_group=toys, the global number unmoved) are grouped under the one with the largest
drop: one headline per feature and day, with every place it showed listed under it.
"""

from __future__ import annotations

import polars as pl

GLOBAL = ("all", "all")
# How much less its siblings may have dropped for one firing value to count as "the" place.
LOCAL_SIBLING_SHARE = 0.5


def roll_up(alerts: pl.DataFrame, inputs: pl.DataFrame) -> pl.DataFrame:
    """Set ``status`` ('open' or 'grouped') and ``parent_id`` on alerts with ``alert_id``.

    ``inputs`` holds every evaluated segment with ``drop_rel_<rule>`` columns, so a firing
    value's siblings that did not fire can be compared with it.
    """
    parents: dict[str, str | None] = {}
    for _, group in alerts.group_by(["feature", "rule"], maintain_order=True):
        parents |= _parents_within(group, inputs)
    return alerts.with_columns(
        pl.col("alert_id").replace_strict(parents, default=None, return_dtype=pl.String).alias("parent_id"),
    ).with_columns(
        pl.when(pl.col("parent_id").is_null()).then(pl.lit("open")).otherwise(pl.lit("grouped")).alias("status")
    )


def _parents_within(group: pl.DataFrame, inputs: pl.DataFrame) -> dict[str, str | None]:
    ids = {(r["segment_dim"], r["segment_value"]): r["alert_id"] for r in group.iter_rows(named=True)}
    parent: dict[str, str | None] = {}
    for (dim, value), alert_id in ids.items():
        firing_parents = [ids[p] for p in _parent_segments(dim, value) if p in ids]
        parent[alert_id] = firing_parents[0] if firing_parents else ids.get(GLOBAL) if (dim, value) != GLOBAL else None
    local = _local_child(group, inputs) if GLOBAL in ids else None
    if local is not None:  # the local value heads the incident, the global number under it
        for alert_id, current in parent.items():
            if current == ids[GLOBAL] or alert_id == ids[GLOBAL]:
                parent[alert_id] = local
        parent[local] = None
    return _one_headline(parent, group)


def _one_headline(parent: dict[str, str | None], group: pl.DataFrame) -> dict[str, str | None]:
    """Group every headline but the one with the largest drop (then the fewest rows: the most
    localised) under it. The segment with the most rows is the one an outage elsewhere dents
    least: an 80% outage in one product group also takes 14% off head queries."""
    order = {r["alert_id"]: (abs(r["drop_rel"] if r["drop_rel"] is not None else r["drop_abs"] or 0.0),
                             -(r["n_rows"] or 0)) for r in group.iter_rows(named=True)}
    roots = [alert_id for alert_id, current in parent.items() if current is None]
    head = max(roots, key=lambda alert_id: (order[alert_id], alert_id))
    return {alert_id: (head if current is None and alert_id != head else current)
            for alert_id, current in parent.items()}


def _parent_segments(dim: str, value: str) -> list[tuple[str, str]]:
    if dim == "all":
        return []
    if " x " not in dim:
        return [GLOBAL]
    return list(zip(dim.split(" x "), value.split(" x ")))


def _local_child(group: pl.DataFrame, inputs: pl.DataFrame) -> str | None:
    rule = group["rule"][0]
    column = f"drop_rel_{rule}"
    if column not in inputs.columns:
        return None
    feature = group["feature"][0]
    best = None
    for single in group.filter(~pl.col("segment_dim").str.contains(" x ") & (pl.col("segment_dim") != "all")) \
            .partition_by("segment_dim"):
        if single.height != 1:
            continue
        row = single.row(0, named=True)
        siblings = inputs.filter(
            (pl.col("feature") == feature) & (pl.col("segment_dim") == row["segment_dim"])
            & (pl.col("segment_value") != row["segment_value"])
        ).get_column(column).drop_nulls()
        drop = row["drop_rel"] or 0.0
        if siblings.len() and siblings.max() < LOCAL_SIBLING_SHARE * drop and (best is None or drop > best[0]):
            best = (drop, row["alert_id"])
    return best[1] if best else None
