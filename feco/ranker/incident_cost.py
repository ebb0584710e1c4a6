"""What an incident's coverage loss costs the ranker serving the day, replayed: the cost
function the detect step (``feco.tasks``) hands to :func:`feco.alerts.cost_severity.with_costs`,
so the alerts need nothing of the ranker.

Each incident with a live headline is replayed when its loss is new, has grown by
``REPLAY_AGAIN`` or the model changed (:mod:`feco.ranker.replay`: the clean days before its
onset, the loss its segment shows today, several draws of the rows it hits); otherwise its
last cost stands.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from datetime import date
from pathlib import Path

import duckdb
import polars as pl

from feco.alerts.cost_severity import COST_SCHEMA, clean_days, cost_tiers, model_label
from feco.config import Config
from feco.ranker.store import current_model
from feco.sample_folder import is_sampled
from feco.warehouse import named_query

# A loss share this much above the one last replayed is replayed again (a growing decay):
# below it the tier would hardly move, and a replay costs seconds at the paper's scale.
REPLAY_AGAIN = 0.05


def incident_cost(conn: duckdb.DuckDBPyConnection, ds: date, *,
                  config: Config) -> Callable[[pl.DataFrame], pl.DataFrame] | None:
    """What the day's incidents cost the model serving ``ds`` (:func:`incident_costs` on it),
    None when no model serves the day."""
    model = current_model(conn, ds)
    if model is None:
        return None
    return lambda incidents: incident_costs(conn, ds, config=config, incidents=incidents, model=model)


def incident_costs(conn: duckdb.DuckDBPyConnection, ds: date, *, config: Config, incidents: pl.DataFrame,
                   model: dict) -> pl.DataFrame:
    """The cost of each incident with a live headline on ``ds``: replayed today when its loss
    is new, has grown by ``REPLAY_AGAIN`` or the model changed, else the last one replayed
    (rows of earlier days). Incidents without a clean day to replay have none."""
    from feco.ranker.daily import load_model

    live = incidents.filter(pl.col("headline_alert_id").is_not_null() & pl.col("feature").is_not_null())
    last = {row["incident_id"]: row for row in named_query(
        conn, "incident_last_costs", {"ds": ds, "ids": live.get_column("incident_id").to_list()}).iter_rows(named=True)}
    ranker = functools.cache(lambda: load_model(Path(model["artifact"])))  # once, and only if a replay runs
    costs = [_cost(conn, ds, incident, config=config, model=model, ranker=ranker, prior=last.get(incident["incident_id"]))
             for incident in live.iter_rows(named=True)]
    return pl.DataFrame([cost for cost in costs if cost], schema=COST_SCHEMA)


def _cost(conn: duckdb.DuckDBPyConnection, ds: date, incident: dict, *, config: Config, model: dict,
          ranker: Callable, prior: dict | None) -> dict | None:
    """One incident's cost on ``ds``: replayed, or ``prior`` when its loss has not grown; None
    when there is nothing to replay (no clean day, no loss today, no event with a relevant row)."""
    from feco.ranker.replay import DRAWS, IN_SEGMENT, reference_rows, replay_cost

    settings = config.alerts.severity
    # A source outage's incident lists several features: they are lost and replayed together.
    features = list(incident.get("features") or [incident["feature"]])
    segment = (incident["segment_dim"], incident["segment_value"])
    days = clean_days(conn, features, segment, onset=incident["opened_ds"], after=model["train_end"] or date.min,
                      settings=settings, sampled=lambda day: is_sampled(day, config.paths.samples),
                      segments=config.segments)
    losses = observed_losses(conn, ds, features, segment, days)
    if prior and (not losses or (prior["run_id"] == model["run_id"] and not _grown(losses, prior))):
        return prior
    if not losses:
        return None
    model_features = ranker().features
    reference = reference_rows(days, config, segment, events=settings.events, seed=settings.seed,
                               features=model_features, label=model_label(model, config))
    cost = replay_cost(reference, ranker(), losses, seed=settings.seed, resamples=settings.resamples,
                       rows=reference.get_column(IN_SEGMENT).to_numpy(), draws=DRAWS)
    if not cost.events:
        return None
    return {"ds": ds, "incident_id": incident["incident_id"], "run_id": model["run_id"],
            "segment_dim": segment[0], "segment_value": segment[1], "onset": incident["opened_ds"],
            "reference_start": days[0], "reference_end": days[-1], "reference_days": len(days),
            "features": [loss.feature for loss in losses], "loss_shares": [loss.share for loss in losses],
            "loss_kinds": [loss.kind for loss in losses], **cost.as_row(),
            "severity": cost_tiers(cost.as_row(), settings.tiers)[0]}


def observed_losses(conn: duckdb.DuckDBPyConnection, ds: date, features: list[str], segment: tuple[str, str],
                    days: list[date]) -> list:
    """What each feature lost in ``segment`` on ``ds`` against ``days``: the share of its
    covered rows (pooled over the days) no longer covered, and whether they turned NULL (the
    share of present rows fell by more than half the covered share) or zero."""
    from feco.ranker.perturb import Loss

    if not days:
        return []
    counts = named_query(conn, "incident_losses", {"ds": ds, "reference": days, "features": features,
                                                   "segment_dim": segment[0], "segment_value": segment[1]})
    losses = []
    for row in counts.iter_rows(named=True):
        if not (row["day_rows"] and row["ref_rows"] and row["ref_covered"]):
            continue
        before, after = row["ref_covered"] / row["ref_rows"], row["day_covered"] / row["day_rows"]
        share = round(min(1.0, 1 - after / before), 4)  # rounded: the replay's seed reads the share
        if share > 0:
            nulled = row["ref_present"] / row["ref_rows"] - row["day_present"] / row["day_rows"]
            losses.append(Loss(row["feature"], share, "null" if nulled > (before - after) / 2 else "zero"))
    return losses


def _grown(losses: list, prior: dict) -> bool:
    replayed = dict(zip(prior["features"], prior["loss_shares"]))
    return any(loss.share > replayed.get(loss.feature, 0.0) + REPLAY_AGAIN for loss in losses)
