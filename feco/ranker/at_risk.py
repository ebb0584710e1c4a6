"""NDCG at risk: what the day's coverage is costing the serving model, every day.

The FeCo paper leaves joining coverage and NDCG in one metric as future work. feco's answer:
each day, every coverage deficit of the model's features against the day's reference days (the
share of covered rows lost, per feature and region, NULL or zero as they were lost) is applied
together to clean events of those days and the events are scored with the model serving the
day, as an incident is replayed (:mod:`feco.ranker.replay`); the expected NDCG@8 change is the
NDCG at risk, with a 95% interval over events and draws of the rows hit. It is there on days
with no incident: it answers "what is today's data costing us".

- Reference days: the last ``[alerts.severity] reference_days`` published days before the day
  (within ``lookback_days``, after the model's last training day when known) on which no
  feature alerted in any segment: clean traffic and the coverage it had.
- A deficit is replayed when it is more than ``[alerts.drop] k`` (3) standard errors of the
  day's coverage (the spread of its windows): sampling noise alone leaves half the features a
  little below their reference every day, and replayed together those deficits cost as much
  as an incident (-0.001 to -0.004 NDCG@8 on the demo's clean days).
- Deficits are measured per value of the ``[ranker] segments`` (region), and each event loses
  its own region's; a deficit beyond noise in all traffic is lost in every region at the
  region's measured share. All traffic's value is the mean over all events. A deficit confined
  to some products of a region is applied across the region's rows at the region's (smaller)
  share. A feature whose coverage rose loses nothing: coverage above normal is not a gain.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import duckdb
import numpy as np
import polars as pl

from feco.alerts.cost_severity import clean_days, model_label
from feco.config import Config
from feco.evaluation import evaluate_labelled
from feco.ranker.daily import load_model
from feco.ranker.model import TrainedRanker, predict_scores
from feco.ranker.perturb import Loss, apply_losses
from feco.ranker.replay import DRAWS, reference_rows, resampled_means
from feco.ranker.store import current_model
from feco.sample_folder import is_sampled
from feco.warehouse import named_query, replace_rows

AT_RISK_SCHEMA = {"ds": pl.Date, "run_id": pl.String, "segment_dim": pl.String, "segment_value": pl.String,
                  "reference_start": pl.Date, "reference_end": pl.Date, "reference_days": pl.Int32,
                  "features": pl.List(pl.String), "loss_shares": pl.List(pl.Float64), "events": pl.Int64,
                  "draws": pl.Int32, "ndcg8_sum": pl.Float64, "d_ndcg8_sum": pl.Float64,
                  "d_ndcg8_low": pl.Float64, "d_ndcg8_high": pl.Float64}


def store_ndcg_at_risk(conn: duckdb.DuckDBPyConnection, ds: date, *, config: Config) -> dict:
    """Replace the day's ``ndcg_at_risk`` rows through ``conn`` (inside the caller's
    transaction: ``feco.tasks.publish``); the day's rows are cleared when no model serves it or
    no clean day precedes it.

    Returns
    -------
    dict
        ``ds``, ``reference_days`` and, when computed, all traffic's ``d_ndcg8`` with its
        interval.

    Examples
    --------
    With the demo's warehouse and samples (not run as a doctest)::

        with open_configured(config) as conn:
            store_ndcg_at_risk(conn, date(2026, 11, 17), config=config)
        # {'ds': '2026-11-17', 'reference_days': 6, 'd_ndcg8': -0.0012, 'd_ndcg8_low': -0.0019, ...}
    """
    rows = ndcg_at_risk(conn, ds, config=config)
    replace_rows(conn, [("ndcg_at_risk", "ds = $ds", {"ds": ds}, rows)])
    result = {"ds": ds.isoformat(), "reference_days": int(rows["reference_days"].max() or 0)}
    overall = rows.filter(pl.col("segment_dim") == "all")
    if overall.height:
        row = overall.row(0, named=True)
        result |= {"d_ndcg8": row["d_ndcg8_sum"] / row["events"] if row["events"] else None,
                   "d_ndcg8_low": row["d_ndcg8_low"], "d_ndcg8_high": row["d_ndcg8_high"]}
    return result


def ndcg_at_risk(conn: duckdb.DuckDBPyConnection, ds: date, *, config: Config) -> pl.DataFrame:
    """The day's ``ndcg_at_risk`` rows: all traffic and each ``[ranker] segments`` value.

    Examples
    --------
    With the demo's warehouse and samples (not run as a doctest)::

        ndcg_at_risk(conn, date(2026, 11, 17), config=config).select("segment_value", "d_ndcg8_sum", "events")
    """
    run = current_model(conn, ds)
    if run is None:
        return pl.DataFrame(schema=AT_RISK_SCHEMA)
    settings = config.alerts.severity
    features = list(config.logs.features)
    days = clean_days(conn, features, ("all", "all"), onset=ds, after=run["train_end"] or date.min, settings=settings,
                      sampled=lambda day: is_sampled(day, config.paths.samples))
    if not days:
        return pl.DataFrame(schema=AT_RISK_SCHEMA)
    model = load_model(Path(run["artifact"]))
    used = [f for f in features if f in model.features]
    dims = list(config.ranker.segments)
    cells = [("all", "all")]
    if dims:
        cells += named_query(conn, "ndcg_at_risk_segments", {"ds": ds, "dims": dims}).rows()
    def counts(cell):
        return named_query(conn, "ndcg_at_risk_losses", {"ds": ds, "reference": days, "features": used,
                                                         "segment_dim": cell[0], "segment_value": cell[1]})

    z = config.alerts.drop.k
    overall = deficits(counts(("all", "all")), z=z)
    # A deficit real in all traffic is lost in every region, at the region's own measured share.
    losses = {("all", "all"): overall} | {cell: deficits(counts(cell), z=z, real={loss.feature for loss in overall})
                                           for cell in cells[1:]}
    if not any(losses.values()):  # nothing below its reference beyond the day's noise: nothing at risk
        return _frame(ds, run, days, [(*cell, [], [], 0, 0.0, 0.0, 0.0, 0.0) for cell in cells])
    reference = reference_rows(days, config, ("all", "all"), events=settings.events, seed=settings.seed,
                               features=model.features, label=model_label(run, config), labels=dims)
    before, changes, values = _changes(reference, model, losses, dims, seed=settings.seed, draws=DRAWS)
    picked = np.random.default_rng(settings.seed).integers(0, DRAWS, size=settings.resamples)
    rows = []
    for cell in cells:
        inside = np.ones(len(before), dtype=bool) if cell[0] == "all" else values[cell[0]] == cell[1]
        rows.append(_row(cell, changes[:, inside], before[inside], picked, losses[cell], seed=settings.seed))
    return _frame(ds, run, days, rows)


def deficits(counts: pl.DataFrame, *, z: float, real: set[str] = frozenset()) -> list[Loss]:
    """The losses the day's coverage shows against its reference (``ndcg_at_risk_losses``
    rows): the share of covered rows lost, for each feature whose coverage fell by more than
    ``z`` standard errors of the day's (a smaller deficit is the day's sampling noise) or, for
    the features in ``real`` (a deficit shown elsewhere), fell at all; turned NULL when the
    share of present values fell by more than half of it, else zero.

    Examples
    --------
    >>> counts = pl.DataFrame({"feature": ["ctr", "rating", "noise"], "day_rows": [1000] * 3,
    ...                        "day_present": [1000, 600, 1000], "day_covered": [50, 450, 480],
    ...                        "day_se": [0.01, 0.02, 0.01], "ref_rows": [5000] * 3,
    ...                        "ref_present": [5000, 5000, 5000], "ref_covered": [2500, 4500, 2500]})
    >>> deficits(counts, z=3.0)
    [Loss(feature='ctr', share=0.9, kind='zero'), Loss(feature='rating', share=0.5, kind='null')]
    """
    losses = []
    for row in counts.iter_rows(named=True):
        if not (row["day_rows"] and row["ref_rows"] and row["ref_covered"]):
            continue
        before, after = row["ref_covered"] / row["ref_rows"], row["day_covered"] / row["day_rows"]
        noise = 0.0 if row["feature"] in real else z * (row["day_se"] or 0.0)
        if before - after <= noise or after >= before:
            continue
        share = round(1 - after / before, 4)  # rounded: the replay's seed reads the share
        nulled = row["ref_present"] / row["ref_rows"] - row["day_present"] / row["day_rows"]
        losses.append(Loss(row["feature"], share, "null" if nulled > (before - after) / 2 else "zero"))
    return losses


def _frame(ds: date, run: dict, days: list[date], rows: list[tuple]) -> pl.DataFrame:
    frame = pl.DataFrame(rows, schema={k: v for k, v in AT_RISK_SCHEMA.items()
                                       if k not in ("ds", "run_id", "reference_start", "reference_end",
                                                    "reference_days", "draws")}, orient="row")
    return frame.with_columns(pl.lit(ds).alias("ds"), pl.lit(run["run_id"]).alias("run_id"),
                              pl.lit(days[0]).alias("reference_start"), pl.lit(days[-1]).alias("reference_end"),
                              pl.lit(len(days)).alias("reference_days"), pl.lit(DRAWS).alias("draws")
                              ).select(list(AT_RISK_SCHEMA)).cast(AT_RISK_SCHEMA)


def _changes(reference: pl.DataFrame, model: TrainedRanker, losses: dict[tuple[str, str], list[Loss]],
             dims: list[str], *, seed: int, draws: int) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Each evaluated event's NDCG@8 before, its change in each draw (draws x events) with
    every region's losses applied to its rows (all traffic's when no segment is scored), and
    each event's value of each segment dimension."""
    before = _per_event(reference, model)
    ndcg8 = before.get_column("ndcg8").to_numpy()
    values = {dim: before.get_column(f"segment:{dim}").to_numpy() for dim in dims}
    lossy = [(cell, found) for cell, found in losses.items() if found and (cell[0] != "all" or not dims)]
    if not lossy:  # nothing below its reference: nothing to score again
        return ndcg8, np.zeros((draws, len(ndcg8))), values
    after = []
    for k in range(draws):
        frame = reference
        for (dim, value), found in lossy:
            rows = np.ones(frame.height, dtype=bool) if dim == "all" else \
                (frame.get_column(f"segment:{dim}") == value).to_numpy()
            frame = apply_losses(frame, found, seed=seed + k, part="test", rows=rows)
        after.append(_per_event(frame, model).get_column("ndcg8").to_numpy())
    return ndcg8, np.stack(after) - ndcg8, values


def _per_event(frame: pl.DataFrame, model: TrainedRanker) -> pl.DataFrame:
    """NDCG@8 of each event with a relevant row (feco's convention) and its segment values, in
    event order."""
    scored = frame.select("qid", "label", pl.Series("score", predict_scores(model, frame)))
    per_query = evaluate_labelled(scored, metrics=["ndcg@8"]).per_query.filter(pl.col("ndcg@8").is_not_null())
    labels = frame.group_by("qid").agg(pl.col(c).first() for c in frame.columns if c.startswith("segment:"))
    return (per_query.select(pl.col("query").alias("qid"), pl.col("ndcg@8").alias("ndcg8"))
            .join(labels, on="qid", how="left").sort("qid"))


def _row(cell: tuple[str, str], changes: np.ndarray, before: np.ndarray, picked: np.ndarray, losses: list[Loss], *,
         seed: int) -> tuple:
    """One segment's row: its losses, events, sums and the interval of its mean change."""
    events = changes.shape[1]
    low = high = None
    if events:
        low, high = np.percentile(resampled_means(changes, picked, rng=np.random.default_rng(seed)), [2.5, 97.5])
    return (cell[0], cell[1], [loss.feature for loss in losses], [loss.share for loss in losses], events,
            float(before.sum()), float(changes.mean(axis=0).sum()) if events else 0.0,
            None if low is None else float(low), None if high is None else float(high))
