"""What a coverage loss costs the ranker, replayed: the FeCo paper's test-only experiment on
the pipeline's own traffic.

A day's measured NDCG moves by more than most incidents cost (the demo's region DE: ±0.03
on clean days), so feco measures the cost directly instead: take clean traffic of the
incident's segment (events sampled on the days before it began), apply the loss the incident
shows (the share of each feature's covered rows lost there, turned to 0 or NULL as they
were), score both with the model that serves the day, and take the mean NDCG@4/8 change over
the events with a 95% percentile bootstrap interval. The events are the same before and
after, so the interval is the paired one: far narrower than a comparison of two days.

The loss goes through :func:`feco.ranker.perturb.apply_losses`, the path the coverage-drop
experiment's cells take, with the same seeds: replaying a test-only cell of the grid gives
its NDCG change exactly (tests/ranker/test_replay.py, on MQ2008 Fold1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import date

import numpy as np
import polars as pl
import pyarrow as pa

from feco.config import Config
from feco.coverage import band_histories, segment_rows
from feco.evaluation import evaluate_labelled
from feco.ranker.claims import bootstrap_means
from feco.ranker.daily import ltr_rows
from feco.ranker.model import TrainedRanker, predict_scores
from feco.ranker.perturb import Loss, apply_losses
from feco.sampling import sample_files

METRICS = ("ndcg4", "ndcg8")
IN_SEGMENT = "in_segment"


@dataclass(frozen=True)
class Cost:
    """The NDCG change a loss causes: means over ``events`` (those with a relevant row) and
    their 95% bootstrap intervals; None for a reference without such events."""

    events: int
    ndcg8_before: float | None
    d_ndcg4: float | None
    d_ndcg4_low: float | None
    d_ndcg4_high: float | None
    d_ndcg8: float | None
    d_ndcg8_low: float | None
    d_ndcg8_high: float | None

    def as_row(self) -> dict:
        return asdict(self)


def replay_cost(reference: pl.DataFrame, model: TrainedRanker, losses: Sequence[Loss], *, seed: int,
                rows: np.ndarray | None = None, resamples: int = 1_000) -> Cost:
    """Score ``reference`` as it is and with ``losses`` applied; the change with its interval.

    Parameters
    ----------
    reference
        LTR rows (``qid``, ``label``, the model's features), rows of an event together.
    losses
        What is lost, one :class:`~feco.ranker.perturb.Loss` per feature (an outage of a
        source loses several features at once).
    seed
        Chooses the rows that lose their values (as the experiment's ``seed`` does for a
        test-mode cell) and the bootstrap's resamples.
    rows
        Boolean mask of the rows that may lose coverage (the incident's segment, when it is
        a segment of products: its events are scored whole); default all.

    Examples
    --------
    >>> from feco.ranker.model import train_ranker
    >>> frame = pl.DataFrame({"qid": [1, 1, 2, 2, 3, 3], "label": [0, 1, 1, 0, 0, 1],
    ...                       "x": [0.1, 0.9, 0.8, 0.2, 0.3, 0.7], "unused": [1.0] * 6})
    >>> model = train_ranker(frame, features=["x", "unused"], num_boost_round=5,
    ...                      params={"objective": "lambdarank", "min_data_in_leaf": 1, "verbose": -1})
    >>> cost = replay_cost(frame, model, [Loss("x", 1.0)], seed=1)
    >>> cost.events, cost.ndcg8_before, round(cost.d_ndcg8, 4)
    (3, 1.0, -0.123)
    >>> replay_cost(frame, model, [Loss("unused", 1.0)], seed=1).d_ndcg8
    0.0
    """
    if reference.is_empty():
        return Cost(0, *[None] * 7)
    before = _per_event(reference, model)
    after = _per_event(apply_losses(reference, losses, seed=seed, part="test", rows=rows), model)
    deltas = {m: after[m] - before[m] for m in METRICS}
    if not len(deltas["ndcg8"]):
        return Cost(0, *[None] * 7)
    intervals = {m: np.percentile(bootstrap_means(d, resamples=resamples, rng=np.random.default_rng(seed)),
                                  [2.5, 97.5]).tolist()
                 for m, d in deltas.items()}
    return Cost(len(deltas["ndcg8"]), float(before["ndcg8"].mean()),
                *[value for m in METRICS for value in (float(deltas[m].mean()), *intervals[m])])


def _per_event(frame: pl.DataFrame, model: TrainedRanker) -> dict[str, np.ndarray]:
    """NDCG@4/8 of each event with a relevant row (feco's convention), in event order."""
    scored = frame.select("qid", "label", pl.Series("score", predict_scores(model, frame)))
    per_query = (evaluate_labelled(scored, metrics=["ndcg@4", "ndcg@8"]).per_query
                 .filter(pl.col("ndcg@8").is_not_null()).sort("query"))
    return {"ndcg4": per_query.get_column("ndcg@4").to_numpy(), "ndcg8": per_query.get_column("ndcg@8").to_numpy()}


def reference_rows(days: Sequence[date], config: Config, segment: tuple[str, str], *, events: int,
                   seed: int) -> pl.DataFrame:
    """LTR rows of at most ``events`` events of ``segment`` sampled on ``days`` (a seeded
    choice when there are more), with the boolean column ``in_segment`` (the rows of the
    segment; for a segment of products, an event's other rows are not in it).

    Two reads a day, so a paper-scale day (20M sampled rows) never sits in memory whole: the
    segment's columns of every row first, then only the chosen events' rows.

    Examples
    --------
    With the demo's config and samples (not run as a doctest: it needs sampled days)::

        reference_rows([date(2026, 11, 14), date(2026, 11, 15)], config, ("region", "DE"), events=2000, seed=1)
    """
    event_id = config.logs.event_id
    histories = band_histories(days, config) if "query_band" in segment[0].split(" x ") else {}
    found = [_segment_events(ds, config, segment, histories.get(ds)) for ds in days]
    pool = pl.concat([ids.filter(inside).unique().sort().to_frame().with_columns(pl.lit(k).alias("day"))
                      for k, (ids, inside) in enumerate(found)])
    if pool.height > events:
        pool = pool.sample(events, seed=seed)
    frames = []
    for k, (ds, (ids, inside)) in enumerate(zip(days, found)):
        chosen = ids.is_in(pool.filter(pl.col("day") == k).get_column(event_id).implode()).to_numpy()
        if not chosen.any():
            continue
        rows = _rows_kept(ds, config, chosen).with_columns(pl.Series(IN_SEGMENT, inside[chosen]))
        # Event ids are unique within a day only: number the day's events apart from the others'.
        frames.append(rows.with_columns(pl.col(event_id).rank("dense").cast(pl.Int64) + k * 10**9))
    if not frames:
        return pl.DataFrame(schema={"qid": pl.Int64, "label": pl.Int64, IN_SEGMENT: pl.Boolean})
    return ltr_rows(pl.concat(frames, how="diagonal_relaxed"), config, keep={IN_SEGMENT: IN_SEGMENT})


def _segment_events(ds: date, config: Config, segment: tuple[str, str],
                    history: pl.DataFrame | None) -> tuple[pl.Series, np.ndarray]:
    """Every sampled row's event id on ``ds`` (in file order) and whether the row is in
    ``segment`` (``history``: the day's band history, for a segment of query bands)."""
    logs = config.logs
    files = sample_files(ds, config.paths.samples)
    sources = [logs.event_id, logs.query, logs.product_group, logs.region, logs.product_first_seen]
    keys = files.read(columns=[c for c in dict.fromkeys(sources) if c in files.schema])
    if segment[0] == "all":
        return keys.get_column(logs.event_id), np.ones(keys.height, dtype=bool)
    labels = segment_rows(keys, ds=ds, config=config, band_history=history)
    dims = segment[0].split(" x ")
    inside = labels.select(pl.concat_str(dims, separator=" x ") == segment[1]).to_series().to_numpy()
    return keys.get_column(logs.event_id), inside


def _rows_kept(ds: date, config: Config, keep: np.ndarray) -> pl.DataFrame:
    """The day's sampled rows (file order) where ``keep`` is true, read a batch at a time."""
    kept, offset = [], 0
    for batch in sample_files(ds, config.paths.samples).batches():
        wanted = keep[offset:offset + batch.num_rows]
        offset += batch.num_rows
        if wanted.any():
            kept.append(pl.from_arrow(batch.filter(pa.array(wanted))))
    return pl.concat(kept, how="diagonal_relaxed")
