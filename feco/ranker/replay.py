"""What a coverage loss costs the ranker, replayed: the FeCo paper's test-only experiment on
the pipeline's own traffic.

A day's measured NDCG moves by more than most incidents cost (the demo's region DE: ±0.03
on clean days), so feco measures the cost directly instead: take clean traffic of the
incident's segment (events sampled on the days before it began), apply the loss the incident
shows (the share of each feature's covered rows lost there, turned to 0 or NULL as they
were), score both with the model that serves the day, and take the mean NDCG@4/8 change over
the events with a 95% percentile bootstrap interval. The events are the same before and
after, so the interval is the paired one: far narrower than a comparison of two days.

Which rows of the segment lose their values is itself a draw: one draw of a 0.9 loss and one of
0.892 moved the demo's DE estimate from -0.0041 to -0.0029. An incident is replayed with
``DRAWS`` draws: its cost is their mean, and its interval resamples the draw with the events.

The loss goes through :func:`feco.ranker.perturb.apply_losses`, the path the coverage-drop
experiment's cells take, with the same seeds: replaying a test-only cell of the grid with one
draw gives its NDCG change exactly (tests/ranker/test_replay.py, on MQ2008 Fold1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import date

import numpy as np
import polars as pl

from feco.config import Config
from feco.evaluation import evaluate_labelled
from feco.ranker.daily import ltr_rows
from feco.ranker.model import TrainedRanker, predict_scores
from feco.ranker.perturb import Loss, apply_losses
from feco.ranker.rows import chosen_events
from feco.sample_folder import sample_files
from feco.stats import bootstrap_means

METRICS = ("ndcg4", "ndcg8")
IN_SEGMENT = "in_segment"
# Draws of the rows a loss hits, for an incident's cost and the NDCG at risk: five put the
# spread of which rows lose coverage into the interval at five scorings of the reference.
DRAWS = 5


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
                rows: np.ndarray | None = None, resamples: int = 1_000, draws: int = 1) -> Cost:
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
        test-mode cell; draw k takes ``seed + k``) and the bootstrap's resamples.
    rows
        Boolean mask of the rows that may lose coverage (the incident's segment, when it is
        a segment of products: its events are scored whole); default all.
    draws
        Draws of the rows that lose their values: the change is the mean over them, and each
        resample of the interval takes one draw (at random) as well as resampling the events,
        so the interval holds which rows a loss hits as well as which events were replayed.
        One draw is the experiment's cell exactly.

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
    >>> replay_cost(frame, model, [Loss("unused", 1.0)], seed=1, draws=5).d_ndcg8
    0.0
    """
    if reference.is_empty():
        return Cost(0, *[None] * 7)
    before = _per_event(reference, model)
    if not len(before["ndcg8"]):
        return Cost(0, *[None] * 7)
    after = [_per_event(apply_losses(reference, losses, seed=seed + k, part="test", rows=rows), model)
             for k in range(draws)]
    rng = np.random.default_rng(seed)
    deltas = {m: np.stack([a[m] - before[m] for a in after]) for m in METRICS}
    picked = rng.integers(0, draws, size=resamples)  # one draw a resample, the same for both metrics
    intervals = {m: np.percentile(resampled_means(d, picked, rng=np.random.default_rng(seed)), [2.5, 97.5]).tolist()
                 for m, d in deltas.items()}
    return Cost(len(before["ndcg8"]), float(before["ndcg8"].mean()),
                *[value for m in METRICS for value in (float(deltas[m].mean()), *intervals[m])])


def resampled_means(deltas: np.ndarray, picked: np.ndarray, *, rng: np.random.Generator) -> np.ndarray:
    """Each resample's mean: draw ``picked[b]``'s per-event changes (a row of ``deltas``) at
    resampled events.

    Examples
    --------
    >>> deltas = np.array([[0.0, -0.1, -0.2], [-0.1, -0.1, -0.1]])
    >>> means = resampled_means(deltas, np.array([0, 1, 1, 0]), rng=np.random.default_rng(0))
    >>> means.shape, bool(np.allclose(means[1:3], -0.1))
    ((4,), True)
    """
    means = np.empty(len(picked))
    for draw in np.unique(picked):
        at = np.flatnonzero(picked == draw)
        means[at] = bootstrap_means(deltas[draw], resamples=len(at), rng=rng)
    return means


def _per_event(frame: pl.DataFrame, model: TrainedRanker) -> dict[str, np.ndarray]:
    """NDCG@4/8 of each event with a relevant row (feco's convention), in event order."""
    scored = frame.select("qid", "label", pl.Series("score", predict_scores(model, frame)))
    per_query = (evaluate_labelled(scored, metrics=["ndcg@4", "ndcg@8"]).per_query
                 .filter(pl.col("ndcg@8").is_not_null()).sort("query"))
    return {"ndcg4": per_query.get_column("ndcg@4").to_numpy(), "ndcg8": per_query.get_column("ndcg@8").to_numpy()}


def reference_rows(days: Sequence[date], config: Config, segment: tuple[str, str], *, events: int, seed: int,
                   features: list[str] | None = None, label: str | None = None,
                   labels: Sequence[str] = ()) -> pl.DataFrame:
    """LTR rows of at most ``events`` events of ``segment`` sampled on ``days`` (a seeded
    choice, about as many each day), with the boolean column ``in_segment`` (the rows of the
    segment; for a segment of products, an event's other rows are not in it) and the segment
    ``labels`` asked for (``segment:<dim>``). ``features`` and ``label``: the model's columns
    (default the ``[logs]`` ones).

    Only some row groups of each day are read and only the chosen events' rows kept
    (:func:`feco.ranker.rows.chosen_events`), so a paper-scale day (20M sampled rows) never
    sits in memory whole.

    Examples
    --------
    With the demo's config and samples (not run as a doctest: it needs sampled days)::

        reference_rows([date(2026, 11, 14), date(2026, 11, 15)], config, ("region", "DE"), events=2000, seed=1)
    """
    logs = config.logs
    if not days:
        return pl.DataFrame(schema={"qid": pl.Int64, "label": pl.Int64, IN_SEGMENT: pl.Boolean})
    features = list(logs.features) if features is None else features
    schema = sample_files(days[0], config.paths.samples).schema
    columns = [c for c in dict.fromkeys([logs.event_id, label or logs.label, config.ranker.position, *features])
               if c in schema]
    found = chosen_events(days, config, columns, events=events, seed=seed, segment=segment, labels=labels)
    # Event ids are unique within a day only: number the events of all days apart.
    numbered = found.with_columns(pl.struct("feco_day", logs.event_id).rank("dense").cast(pl.Int64).alias(logs.event_id))
    keep = {IN_SEGMENT: IN_SEGMENT, **{f"segment:{d}": f"segment:{d}" for d in labels}}
    return ltr_rows(numbered, config, keep=keep, features=[f for f in features if f in schema], label=label)
