"""Offline protocols for interaction logs: splits, candidate sets, baselines and segments.

An interaction log is a frame ``(user, item, timestamp[, rating])``
(:func:`feco.evaluation.io.read_interactions`). A protocol turns it into a :class:`Split`:
interactions to fit on, what each test user is known to have seen, and the held-out ground
truth as judgments ``(query, item, relevance)`` with the user as the query. Every choice
(tie rule for equal timestamps, rounding, minimum history, seeds) is a parameter and is
recorded in ``Split.protocol`` with the counts it produced.

- :func:`leave_one_out`: hide each user's newest positive interaction (users with at least
  two positives); the rest is training.
- :func:`personalize_split`: Amazon Personalize's split. A seeded 10% of users are test users
  whose interactions stay out of training; the oldest 90% of each test user's interactions
  are the input, the newest 10% the ground truth.
- :func:`split_at`: one global cut-off time; interactions before it train, after it judge.

:func:`candidates` fixes what every compared model ranks (items the user has not seen, or an
explicitly labelled "sampled negatives" problem); :func:`random_baseline` and
:func:`popularity_baseline` answer "is this better than chance?";
:func:`history_segments` groups users by history length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, date, datetime

import numpy as np
import polars as pl

from feco.errors import DataError, UsageError

TIES = ("item_asc", "item_desc", "random")
ROUNDINGS = ("ceil", "floor", "round")
SEGMENT_NAMES = ("cold_start", "sparse", "regular", "heavy")


@dataclass(frozen=True)
class Split:
    """The result of a protocol.

    Attributes
    ----------
    train
        Interactions a model may be fitted on.
    history
        ``(user, item)`` seen by each test user before the ground truth; candidates exclude
        them, and a model may use them as the user's input at inference.
    truth
        Judgments ``(query, item, relevance)``: the held-out items of each test user
        (``query`` is the user id), relevance 1.
    catalogue
        Every item of the log.
    protocol
        Name, parameters and counts, for reports.
    """

    train: pl.DataFrame
    history: pl.DataFrame
    truth: pl.DataFrame
    catalogue: pl.Series
    protocol: dict[str, object]


@dataclass(frozen=True)
class Candidates:
    """What every compared model ranks for each test user.

    Attributes
    ----------
    frame
        ``(query, item)``: one row per candidate.
    qrels
        The ground truth restricted to candidates (an item already seen cannot be a
        candidate; such ground-truth rows are counted in ``truth_seen_before``).
    problem
        One line naming the ranking problem; a sampled-negatives problem says it is a
        different, easier problem than ranking the catalogue.
    sampled_negatives
        ``None`` for the full catalogue, else the number of sampled negatives per user.
    truth_seen_before
        Ground-truth rows dropped because the user had seen the item before.
    """

    frame: pl.DataFrame
    qrels: pl.DataFrame
    problem: str
    sampled_negatives: int | None
    truth_seen_before: int


def leave_one_out(
    interactions: pl.DataFrame,
    *,
    ties: str = "item_asc",
    min_rating: float | None = None,
    seed: int = 0,
) -> Split:
    """Hide each user's newest positive interaction; users need at least two positives.

    Parameters
    ----------
    interactions
        ``(user, item, timestamp[, rating])``.
    ties
        Order of interactions with equal timestamps: ``"item_asc"`` (the larger item id
        counts as newer, so it is the one held out), ``"item_desc"``, or ``"random"``
        (seeded).
    min_rating
        Interactions rated at least this are positives; others only ever train. ``None``
        makes every interaction positive (implicit feedback).
    seed
        Seed for ``ties="random"``.

    Returns
    -------
    Split
        ``protocol`` counts users, test users, users skipped for having fewer than two
        positives, and ``tied_newest``: test users whose newest timestamp is shared, i.e.
        where the tie rule chose.

    Examples
    --------
    >>> import polars as pl
    >>> log = pl.DataFrame({"user": [1, 1, 1, 2], "item": [10, 11, 12, 10],
    ...                     "timestamp": [5, 9, 9, 3]})
    >>> split = leave_one_out(log)
    >>> split.truth.rows(), split.protocol["tied_newest"], split.protocol["skipped_users"]
    ([(1, 12, 1)], 1, 1)
    """
    log = _ordered(interactions, ties, seed)
    if min_rating is None:
        positive = pl.lit(True)
    else:
        if "rating" not in log.columns:
            raise DataError("min_rating needs a rating column in the interactions")
        positive = pl.col("rating") >= min_rating
    log = log.with_columns(positive.alias("_positive"))
    positives = log.filter("_positive").with_columns(
        pl.len().over("user").alias("_n"),
        pl.col("_order").rank("ordinal", descending=True).over("user").alias("_from_end"),
        (pl.col("timestamp") == pl.col("timestamp").max().over("user")).sum().over("user")
        .alias("_at_newest"),
    )
    held = positives.filter((pl.col("_n") >= 2) & (pl.col("_from_end") == 1))
    train = log.join(held.select("_order"), on="_order", how="anti")
    test_users = held.select("user")
    protocol = {
        "name": "leave-one-out",
        "held_out": "newest positive interaction",
        "ties": ties,
        "min_rating": min_rating,
        "seed": seed,
        "users": log.get_column("user").n_unique(),
        "test_users": held.height,
        "skipped_users": log.get_column("user").n_unique() - held.height,
        "tied_newest": int((held.get_column("_at_newest") > 1).sum()),
    }
    return _split(log, train, train.join(test_users, on="user"), held, protocol)


def personalize_split(
    interactions: pl.DataFrame,
    *,
    test_users: float = 0.1,
    truth_share: float = 0.1,
    rounding: str = "ceil",
    min_interactions: int = 2,
    ties: str = "item_asc",
    seed: int = 0,
) -> Split:
    """Amazon Personalize's split: held-out users, oldest 90% as input, newest 10% as truth.

    Parameters
    ----------
    interactions
        ``(user, item, timestamp[, rating])``; every interaction counts.
    test_users
        Share of all users drawn (seeded) as test users, ``round(test_users * users)``, at
        least 1, among users with at least ``min_interactions``; their interactions stay out
        of training.
    truth_share
        Share of each test user's interactions, newest first, held out as ground truth.
    rounding
        How ``truth_share * n`` becomes a count: ``"ceil"``, ``"floor"`` or ``"round"``
        (half to even); the count is then kept within ``1 .. n - 1`` so each test user has
        input and truth.
    min_interactions
        Users with fewer interactions are never test users (at least 2).
    ties
        Order of interactions with equal timestamps (see :func:`leave_one_out`).
    seed
        Seed for the test-user draw and ``ties="random"``.

    Returns
    -------
    Split
        ``history`` holds the test users' input interactions; ``protocol`` counts users,
        eligible and test users, truth rows, and ``tied_at_boundary``: test users whose last
        input and first truth interaction share a timestamp.

    Examples
    --------
    >>> import polars as pl
    >>> log = pl.DataFrame({"user": [1] * 10 + [2] * 3, "item": list(range(13)),
    ...                     "timestamp": list(range(13))})
    >>> split = personalize_split(log, test_users=0.5, seed=3)
    >>> split.protocol["test_users"], split.truth.height + split.history.height
    (1, 3)
    """
    if not 0 < test_users < 1 or not 0 < truth_share < 1:
        raise UsageError("test_users and truth_share must be between 0 and 1")
    if rounding not in ROUNDINGS:
        raise UsageError(f"rounding must be one of {', '.join(ROUNDINGS)}")
    if min_interactions < 2:
        raise UsageError("min_interactions must be at least 2 (one input, one truth)")
    log = _ordered(interactions, ties, seed)
    counts = log.group_by("user").agg(pl.len().alias("_n")).sort("user")
    eligible = counts.filter(pl.col("_n") >= min_interactions)
    n_test = min(max(1, round(test_users * counts.height)), eligible.height)
    if n_test == 0:
        raise DataError(f"no user has {min_interactions} interactions or more")
    rng = np.random.default_rng(seed)
    chosen = eligible.get_column("user").gather(
        np.sort(rng.choice(eligible.height, size=n_test, replace=False))
    )
    n = pl.col("_n")
    raw = truth_share * n
    rounded = {"ceil": raw.ceil(), "floor": raw.floor(), "round": raw.round(0)}[rounding]
    n_truth = pl.min_horizontal(pl.max_horizontal(rounded.cast(pl.Int64), 1), n - 1)
    test = (
        log.filter(pl.col("user").is_in(chosen.implode()))
        .join(counts, on="user")
        .with_columns(
            pl.col("_order").rank("ordinal").over("user").alias("_position"),
            n_truth.alias("_n_truth"),
        )
        .with_columns((pl.col("_position") > pl.col("_n") - pl.col("_n_truth")).alias("_truth"))
    )
    boundary = (
        test.filter(
            (pl.col("_position") - (pl.col("_n") - pl.col("_n_truth"))).is_in([0, 1])
        )
        .group_by("user")
        .agg(pl.col("timestamp").n_unique().alias("_distinct"))
    )
    truth_rows = test.filter("_truth")
    protocol = {
        "name": "personalize-temporal",
        "test_users_share": test_users,
        "truth_share": truth_share,
        "rounding": rounding,
        "min_interactions": min_interactions,
        "ties": ties,
        "seed": seed,
        "users": counts.height,
        "eligible_users": eligible.height,
        "test_users": n_test,
        "truth_rows": truth_rows.height,
        "tied_at_boundary": int((boundary.get_column("_distinct") == 1).sum()),
    }
    train = log.filter(~pl.col("user").is_in(chosen.implode()))
    return _split(log, train, test.filter(~pl.col("_truth")), truth_rows, protocol)


def split_at(
    interactions: pl.DataFrame,
    cutoff: datetime | date | str | int,
    *,
    min_history: int = 0,
) -> Split:
    """Split the whole log at one time: before ``cutoff`` trains, from ``cutoff`` on judges.

    Parameters
    ----------
    interactions
        ``(user, item, timestamp[, rating])``; integer timestamps are Unix seconds.
    cutoff
        A datetime, date, ISO date string (UTC midnight) or Unix seconds.
    min_history
        Users with fewer interactions before the cut-off are not test users. The default 0
        keeps new users (cold start) with an empty history.

    Returns
    -------
    Split
        ``protocol`` counts test users, those without any history (``cold_start_users``)
        and users left out by ``min_history``.

    Examples
    --------
    >>> import polars as pl
    >>> log = pl.DataFrame({"user": [1, 1, 2], "item": [5, 6, 5],
    ...                     "timestamp": [100, 200, 300]})
    >>> split = split_at(log, 150)
    >>> split.truth.sort("query").rows(), split.protocol["cold_start_users"]
    ([(1, 6, 1), (2, 5, 1)], 1)
    """
    log = _ordered(interactions, "item_asc", 0)
    bound = _cutoff_value(cutoff, log.schema["timestamp"])
    after = pl.col("timestamp") >= bound
    train = log.filter(~after)
    history_size = train.group_by("user").agg(pl.len().alias("_h"))
    future = log.filter(after).join(history_size, on="user", how="left").with_columns(
        pl.col("_h").fill_null(0)
    )
    kept = future.filter(pl.col("_h") >= min_history)
    users = kept.select("user").unique()
    protocol = {
        "name": "global-temporal",
        "cutoff": str(cutoff),
        "min_history": min_history,
        "users": log.get_column("user").n_unique(),
        "test_users": users.height,
        "cold_start_users": kept.filter(pl.col("_h") == 0).get_column("user").n_unique(),
        "excluded_users": future.get_column("user").n_unique() - users.height,
    }
    return _split(log, train, train.join(users, on="user"), kept, protocol)


def candidates(
    split: Split,
    *,
    catalogue: pl.Series | None = None,
    sampled_negatives: int | None = None,
    seed: int = 0,
) -> Candidates:
    """The items every compared model must rank for each test user.

    Parameters
    ----------
    split
        A protocol's result.
    catalogue
        Items that can be recommended; defaults to every item of the log.
    sampled_negatives
        ``None`` ranks every catalogue item the user has not seen. An integer ``N`` ranks
        each user's ground-truth items among ``N`` unseen items drawn at random (seeded): a
        different, easier problem whose scores are not comparable with the full catalogue's.
    seed
        Seed for the negative sample.

    Returns
    -------
    Candidates

    Examples
    --------
    >>> import polars as pl
    >>> log = pl.DataFrame({"user": [1, 1, 1], "item": [1, 2, 3], "timestamp": [1, 2, 3]})
    >>> pool = candidates(leave_one_out(log), catalogue=pl.Series([1, 2, 3, 4, 5]))
    >>> sorted(pool.frame.get_column("item").to_list()), pool.qrels.rows()
    ([3, 4, 5], [(1, 3, 1)])
    """
    items = (split.catalogue if catalogue is None else catalogue).unique().sort()
    items = items.cast(split.catalogue.dtype).alias("item")
    users = split.truth.select(pl.col("query").alias("user")).unique().sort("user")
    seen = split.history.select("user", "item").unique()
    pool = users.join(items.to_frame(), how="cross").join(seen, on=["user", "item"], how="anti")
    truth = split.truth.rename({"query": "user"})
    qrels = truth.join(pool, on=["user", "item"], how="semi")
    dropped = truth.height - qrels.height
    n_items = items.len()
    if sampled_negatives is None:
        problem = f"rank every catalogue item the user has not seen ({n_items} items)"
    else:
        if sampled_negatives < 1:
            raise UsageError("sampled_negatives must be a positive integer")
        rng = np.random.default_rng(seed)
        negatives = (
            pool.join(qrels.select("user", "item"), on=["user", "item"], how="anti")
            .with_columns(pl.Series("_key", rng.random(pool.height - qrels.height)))
            .filter(pl.col("_key").rank("ordinal").over("user") <= sampled_negatives)
            .select("user", "item")
        )
        pool = pl.concat([qrels.select("user", "item"), negatives]).sort("user", "item")
        problem = (
            f"rank the held-out items among {sampled_negatives} sampled negatives per user: "
            f"a different, easier problem than ranking all {n_items} catalogue items; "
            "its scores are not comparable with full-catalogue scores"
        )
    return Candidates(
        frame=pool.rename({"user": "query"}),
        qrels=qrels.rename({"user": "query"}),
        problem=problem,
        sampled_negatives=sampled_negatives,
        truth_seen_before=dropped,
    )


def random_baseline(pool: Candidates, *, seed: int = 0) -> pl.DataFrame:
    """A run scoring every candidate uniformly at random (seeded): the chance level.

    Examples
    --------
    >>> import polars as pl
    >>> log = pl.DataFrame({"user": [1, 1], "item": [1, 2], "timestamp": [1, 2]})
    >>> random_baseline(candidates(leave_one_out(log))).columns
    ['query', 'item', 'score']
    """
    rng = np.random.default_rng(seed)
    return pool.frame.with_columns(pl.Series("score", rng.random(pool.frame.height)))


def popularity_baseline(pool: Candidates, train: pl.DataFrame) -> pl.DataFrame:
    """A run scoring each candidate by its number of training interactions (most popular).

    Items never seen in training score 0; equal counts follow the evaluation's tie rule.

    Examples
    --------
    >>> import polars as pl
    >>> log = pl.DataFrame({"user": [1, 1, 2, 2], "item": [1, 2, 2, 3], "timestamp": [1, 2, 1, 2]})
    >>> split = leave_one_out(log)
    >>> popularity_baseline(candidates(split), split.train).sort("query", "item").rows()
    [(1, 2, 1.0), (1, 3, 0.0), (2, 1, 1.0), (2, 3, 0.0)]
    """
    counts = train.group_by("item").agg(pl.len().cast(pl.Float64).alias("score"))
    return pool.frame.join(counts, on="item", how="left").with_columns(
        pl.col("score").fill_null(0.0)
    )


def history_segments(
    split: Split, *, bounds: tuple[int, int, int] = (5, 20, 100)
) -> pl.DataFrame:
    """Segment test users by history length: cold start, sparse, regular, heavy.

    Parameters
    ----------
    split
        A protocol's result; history length is the number of ``split.history`` rows.
    bounds
        ``(a, b, c)``: cold start has fewer than ``a`` interactions, sparse ``a`` to
        ``b - 1``, regular ``b`` to ``c - 1``, heavy ``c`` or more.

    Returns
    -------
    polars.DataFrame
        ``query``, ``segment``, ``history`` for every test user; pass it to
        :meth:`feco.evaluation.Evaluation.by`.

    Examples
    --------
    >>> import polars as pl
    >>> log = pl.DataFrame({"user": [1] * 6 + [2] * 2, "item": list(range(8)),
    ...                     "timestamp": list(range(8))})
    >>> history_segments(leave_one_out(log)).sort("query").rows()
    [(1, 'sparse', 5), (2, 'cold_start', 1)]
    """
    if not 0 < bounds[0] < bounds[1] < bounds[2]:
        raise UsageError(f"segment bounds must increase from 1: {bounds}")
    sizes = split.history.group_by("user").agg(pl.len().alias("history"))
    users = split.truth.select(pl.col("query").alias("user")).unique()
    history = users.join(sizes, on="user", how="left").with_columns(pl.col("history").fill_null(0))
    h = pl.col("history")
    segment = (
        pl.when(h < bounds[0]).then(pl.lit(SEGMENT_NAMES[0]))
        .when(h < bounds[1]).then(pl.lit(SEGMENT_NAMES[1]))
        .when(h < bounds[2]).then(pl.lit(SEGMENT_NAMES[2]))
        .otherwise(pl.lit(SEGMENT_NAMES[3]))
    )
    return history.select(pl.col("user").alias("query"), segment.alias("segment"), "history")


def _ordered(interactions: pl.DataFrame, ties: str, seed: int) -> pl.DataFrame:
    """Check the log and add ``_order``: chronological position under the tie rule."""
    missing = [c for c in ("user", "item", "timestamp") if c not in interactions.columns]
    if missing:
        raise DataError(f"interactions lack column(s) {', '.join(missing)}")
    if ties not in TIES:
        raise UsageError(f"ties must be one of {', '.join(TIES)}, not {ties!r}")
    if ties == "random":
        key = pl.Series("_tie", np.random.default_rng(seed).random(interactions.height))
        log = interactions.with_columns(key)
        descending = [False, False, False]
    else:
        log = interactions.with_columns(pl.col("item").alias("_tie"))
        descending = [False, False, ties == "item_desc"]
    return (
        log.sort(["user", "timestamp", "_tie"], descending=descending)
        .with_row_index("_order")
        .drop("_tie")
    )


def _split(log, train, history, truth_rows, protocol) -> Split:
    private = [c for c in log.columns if c.startswith("_")]
    return Split(
        train=train.drop(private, strict=False),
        history=history.select("user", "item"),
        truth=truth_rows.select(
            pl.col("user").alias("query"), "item", pl.lit(1, pl.Int64).alias("relevance")
        ).sort("query", "item"),
        catalogue=log.get_column("item").unique().sort(),
        protocol=protocol,
    )


def _cutoff_value(cutoff, dtype: pl.DataType):
    if isinstance(cutoff, str):
        try:
            cutoff = datetime.fromisoformat(cutoff)
        except ValueError:
            raise UsageError(f"cut-off {cutoff!r} is not an ISO date or datetime") from None
    if isinstance(cutoff, date) and not isinstance(cutoff, datetime):
        cutoff = datetime(cutoff.year, cutoff.month, cutoff.day)
    if dtype.is_integer():
        if isinstance(cutoff, datetime):
            aware = cutoff if cutoff.tzinfo else cutoff.replace(tzinfo=UTC)
            return math.floor(aware.timestamp())
        return int(cutoff)
    if dtype == pl.Datetime or dtype == pl.Date:
        if not isinstance(cutoff, datetime):
            raise UsageError(f"cut-off {cutoff!r} must be a date for {dtype} timestamps")
        return cutoff
    raise DataError(f"timestamp column has type {dtype}; expected Unix seconds or datetimes")
