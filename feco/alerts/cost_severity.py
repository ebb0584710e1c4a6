"""Severity from cost: incidents ranked by what their coverage loss costs the ranker.

With ``[alerts.severity] by = "cost"`` (the default) and a model serving the day, the detect
step replays every incident with a live headline whose loss is new or has grown
(:mod:`feco.ranker.incident_cost`, the cost function the detect step hands in: the clean
days before its onset, the loss its segment shows today, several draws of the rows it hits),
stores the cost in ``incident_costs``, and tiers
the incident's drop and decay alerts by the loss the evidence supports
(:func:`costed_tier`): the tier their coverage drop gives (weighted by importance, feco.alerts.severity),
raised to the tier of the estimated loss when the cost's 95% interval excludes no loss, and
lowered to the tier of the interval's worse end when the interval rules more out. The worse
end alone never raises a tier: with a wide interval (few events, a feature hit in a few rows)
it reaches a tier that resampling noise, not the loss, put there. A feature with less than
1% of the model's SHAP never pages above its coverage tier on cost alone. Rules that say the
data broke keep their fixed tier (a column gone, values turned NULL, a configured floor, the
sampled volume). Every alert of a costed incident states the cost in its text, so its page
and the report do too.

The incident tracker runs twice: once to learn the day's incidents (segment, onset, alerts),
then with the tiers from cost, so that paging follows the cost. Without a model, with
``by = "importance"``, or for an incident with no clean day to replay, severity stays the
drop weighted by importance (:mod:`feco.alerts.severity`).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

import duckdb
import polars as pl

from feco.alerts.nesting import Nesting
from feco.alerts.rules import COSTED, registry, segment_name
from feco.alerts.severity import SEVERITY_NAME, SEVERITY_RANK
from feco.config import Config, CostTiers, Segments, SeveritySettings
from feco.warehouse import named_query

COST_SCHEMA = {
    "ds": pl.Date, "incident_id": pl.String, "run_id": pl.String, "segment_dim": pl.String,
    "segment_value": pl.String, "onset": pl.Date, "reference_start": pl.Date, "reference_end": pl.Date,
    "reference_days": pl.Int32, "features": pl.List(pl.String), "loss_shares": pl.List(pl.Float64),
    "loss_kinds": pl.List(pl.String), "events": pl.Int64, "ndcg8_before": pl.Float64,
    "d_ndcg4": pl.Float64, "d_ndcg4_low": pl.Float64, "d_ndcg4_high": pl.Float64,
    "d_ndcg8": pl.Float64, "d_ndcg8_low": pl.Float64, "d_ndcg8_high": pl.Float64, "severity": pl.String,
}
# A feature under this share of the model's SHAP never pages above its coverage tier on cost.
BARELY_USED = 0.01


def with_costs(ds: date, *, config: Config, alerts: pl.DataFrame, track: Callable[[pl.DataFrame], pl.DataFrame],
               cost: Callable[[pl.DataFrame], pl.DataFrame] | None,
               shares: dict[str, float]) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The day's alerts and incidents, with severity from cost, and the costs replayed today.

    ``track`` is the incident tracker as the detect step runs it (alerts in, incidents out);
    ``cost`` what the incidents' losses cost the model serving the day (incidents in, rows of
    ``COST_SCHEMA`` out: ``feco.ranker.incident_cost``), None without a model; ``shares`` each
    feature's SHAP share in that model. The caller hands them in: the alerts know nothing of
    the ranker.

    Examples
    --------
    As the detect step calls it (not run as a doctest: it needs a warehouse, samples and a model)::

        alerts, incidents, costs = with_costs(ds, config=config, alerts=alerts, track=track,
                                              cost=incident_cost(conn, ds, config=config), shares=shares)
    """
    incidents = track(alerts)
    if config.alerts.severity.by != "cost" or cost is None:
        return alerts, incidents, pl.DataFrame(schema=COST_SCHEMA)
    costs = cost(incidents)
    if costs.is_empty():
        return alerts, incidents, costs
    costed = with_cost_severity(alerts, incidents, costs, tiers=config.alerts.severity.tiers, shares=shares)
    tracked = track(costed)
    return costed, tracked, _held_by(costs.filter(pl.col("ds") == ds), incidents, tracked)


def clean_days(conn: duckdb.DuckDBPyConnection, features: list[str], segment: tuple[str, str], *, onset: date,
               after: date, settings: SeveritySettings, sampled: Callable[[date], bool] = lambda ds: True,
               segments: Segments | None = None) -> list[date]:
    """The last ``reference_days`` published days before ``onset`` (none the model trained on,
    within ``lookback_days``) on which none of ``features`` alerted in a segment holding
    ``segment`` or within it, oldest first; only days whose sample is still there (``sampled``:
    a retention policy may have removed older samples, whose rows no replay can read).
    ``segments``: the configured segments (an age band lies within its product age)."""
    nesting = Nesting(segments or Segments())
    found = named_query(conn, "replay_reference_days", {"onset": onset, "after": after, "features": features,
                                                        "lookback": settings.lookback_days})
    clean = [ds for ds, alerted in found.iter_rows()
             if not any(_nested(nesting, segment, (a["segment_dim"], a["segment_value"])) for a in alerted or [])
             and sampled(ds)]
    return sorted(clean[:settings.reference_days])


def cost_tiers(cost: dict, tiers: CostTiers) -> tuple[str, str]:
    """The tiers a cost allows: at least the tier of the estimated NDCG@8 loss when the 95%
    interval excludes no loss (its better end is a loss too), else low; at most the tier of
    the interval's worse end.

    Examples
    --------
    A barely-used feature's 90% loss in a small region (−0.0039, −0.0086 to +0.0001): the
    interval's worse end alone reached high; the evidence supports no loss:

    >>> cost_tiers({"d_ndcg8": -0.0039, "d_ndcg8_low": -0.0086, "d_ndcg8_high": 0.0001}, CostTiers())
    ('low', 'high')
    >>> cost_tiers({"d_ndcg8": -0.0062, "d_ndcg8_low": -0.0081, "d_ndcg8_high": -0.0043}, CostTiers())
    ('high', 'high')
    """
    floor = -(cost["d_ndcg8"] or 0.0) if (cost["d_ndcg8_high"] or 0.0) < 0 else 0.0
    return _tier(floor, tiers), _tier(-(cost["d_ndcg8_low"] or 0.0), tiers)


def costed_tier(coverage: str, allowed: tuple[str, str], *, share: float | None) -> str:
    """A drop or decay alert's tier from its coverage tier (``coverage``: the drop weighted by
    importance) and what its incident's cost allows (:func:`cost_tiers`): the coverage tier
    within that band, and never above it for a feature with less than ``BARELY_USED`` of the
    model's SHAP (``share``).

    Examples
    --------
    >>> costed_tier("critical", ("low", "high"), share=0.06)  # a 90% drop, a cost that rules out more than high
    'high'
    >>> costed_tier("low", ("medium", "high"), share=0.2)     # a clear loss lifts a mild drop
    'medium'
    >>> costed_tier("low", ("medium", "high"), share=0.0033)  # ... but not a barely-used feature's
    'low'
    """
    floor, cap = (SEVERITY_RANK[tier] for tier in allowed)
    rank = min(max(SEVERITY_RANK[coverage], floor), cap)
    if share is not None and share < BARELY_USED:
        rank = min(rank, SEVERITY_RANK[coverage])
    return SEVERITY_NAME[rank]


def _tier(loss: float, tiers: CostTiers) -> str:
    return next((name for name in ("critical", "high", "medium") if loss >= getattr(tiers, name)), "low")


def with_cost_severity(alerts: pl.DataFrame, incidents: pl.DataFrame, costs: pl.DataFrame, *, tiers: CostTiers,
                       shares: dict[str, float]) -> pl.DataFrame:
    """``alerts`` with each costed incident's drop and decay alerts tiered by :func:`costed_tier`
    (``shares``: each feature's SHAP share in the serving model) and its cost at the end of
    every attached alert's text."""
    cost_of = {row["incident_id"]: row for row in costs.iter_rows(named=True)}
    attached = {alert_id: cost_of[incident_id]
                for incident_id, alert_ids in incidents.select("incident_id", "alert_ids").iter_rows()
                if incident_id in cost_of for alert_id in alert_ids}
    tiers_of = {alert_id: costed_tier(severity, cost_tiers(attached[alert_id], tiers), share=shares.get(feature))
                for alert_id, severity, feature in alerts.select("alert_id", "severity", "feature").iter_rows()
                if alert_id in attached}
    texts = {alert_id: "; " + describe_cost(cost) for alert_id, cost in attached.items()}
    costed = pl.col("alert_id").is_in(list(attached))
    return alerts.with_columns(
        pl.when(costed & pl.col("rule").is_in(registry.names(COSTED)))
        .then(pl.col("alert_id").replace_strict(tiers_of, default=None)).otherwise(pl.col("severity")).alias("severity"),
        pl.when(costed).then(pl.col("detail") + pl.col("alert_id").replace_strict(texts, default=""))
        .otherwise(pl.col("detail")).alias("detail"))


def describe_cost(cost: dict) -> str:
    """'costs an estimated -0.012 NDCG@8 in region=DE (-0.016 to -0.008)'.

    Examples
    --------
    >>> describe_cost({"d_ndcg8": -0.0121, "d_ndcg8_low": -0.0163, "d_ndcg8_high": -0.0079,
    ...                "segment_dim": "region", "segment_value": "DE"})
    'costs an estimated -0.012 NDCG@8 in region=DE (-0.016 to -0.008)'
    """
    return (f"costs an estimated {cost['d_ndcg8']:+.3f} NDCG@8 in {segment_name(cost)} "
            f"({cost['d_ndcg8_low']:+.3f} to {cost['d_ndcg8_high']:+.3f})")


def model_label(model: dict, config: Config) -> str:
    """The label a model's NDCG is taken on: a team model's own (``[ranker.model] label``),
    else ``[logs] label``."""
    import json

    return json.loads(model["params"])["label"] if model["kind"] == "external" else config.logs.label


def _nested(nesting: Nesting, a: tuple[str, str], b: tuple[str, str]) -> bool:
    return nesting.contains(a, b) or nesting.contains(b, a)


def _held_by(costs: pl.DataFrame, before: pl.DataFrame, after: pl.DataFrame) -> pl.DataFrame:
    """The costs keyed by the incidents of the second tracking: the one holding the headline
    alert of the incident the cost was replayed for (the same incident, unless the tiers from
    cost moved a new one's headline)."""
    holder = {alert_id: incident_id for incident_id, alert_ids in after.select("incident_id", "alert_ids").iter_rows()
              for alert_id in alert_ids}
    renamed = {incident_id: holder.get(headline, incident_id)
               for incident_id, headline in before.select("incident_id", "headline_alert_id").iter_rows()}
    return costs.with_columns(pl.col("incident_id").replace(renamed))
