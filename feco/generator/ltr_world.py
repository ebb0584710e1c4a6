"""Search logs whose feature values are real: a public LTR set's judged documents as products.

Monitoring tuned on generated features meets, on real logs, zero patterns no generator wrote:
whole queries zero or non-zero together, features that are zero at each query's minimum by
construction (LETOR's query-level normalisation), a catalogue that turns over. This world
draws search events from a LETOR 4.0 set read in place (``../shared/data/ltr``):

- an event is one of the set's queries, Zipf-distributed over them (each query's popularity
  drifting a little from week to week and on weekends), at a time of day with the diurnal
  and weekly shape of :mod:`feco.generator.calendar`, from a region. With ``weekend_heads``,
  weekends and holidays draw their head from other queries than weekdays do (a second
  popularity order), and with ``group_skew`` product groups hold the two heads unevenly: each
  query keeps its own rows, so a group's coverage and NULL share follow which queries it gets;
- its rows are 5–20 of the query's judged documents (all of them when it has fewer), in the
  order of a noisy production ranker of their relevance label, with the label as ``label``;
- a document is a product of its query's product group. A share of them is renewed every
  ``renewal_days`` (a new product id and first-seen date, the same real feature values), at a
  phase of its own, so ``product_age = new`` (first seen under 30 days ago) holds a different
  set of documents every month;
- the features are the document's values, untouched; incidents (the same specs as the
  generator's, over this world's feature names and sources) zero or NULL them.

The layout is the generator's: ``ds=…/hour=…/part-0.parquet``, ``_SUCCESS``, and the ground
truth in ``incidents.json``.

Coverage rule: LETOR 4.0 features are normalised per query to ``(x − min) / (max − min)``, so
0 is "at this query's minimum" (one document of every query at least, all of them when the
feature does not vary in the query) and a value is never negative. ``> 0`` and ``!= 0`` are
therefore the same rule; it counts documents above their query's minimum, which is what a
logging failure (a 0 written) takes away, and its level is stable per query. The features that
are 0 in every row (MQ2008's five IDF features, constant within a query, and the outlink
count) carry nothing to monitor and are left out. MQ2007-agg's features are ranks from 21
rankers with ``NULL`` for "not ranked": NULL is missing, never covered, and every rank is
positive, so ``> 0`` counts the documents a ranker ranked.
"""

from __future__ import annotations

import datetime as dt
import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa

from feco.errors import DataError, UsageError
from feco.evaluation.letor import read_letor
from feco.generator.behaviour import rank_lists
from feco.generator.calendar import WEEKDAY_VOLUME, DayPlan, plan_day
from feco.generator.catalogue import hash_ids, uniforms, week_bands, within_groups
from feco.generator.day import apply_rollout, check_volume, corrupt
from feco.generator.incidents import Incident, check_incidents, incident_mask
from feco.generator.schema import (
    GROUP_WEIGHTS,
    LABEL_FIELD,
    NEW_PRODUCT_DAYS,
    PRODUCT_GROUPS,
    REGION_WEIGHTS,
    REGIONS,
    ROW_FIELDS,
)
from feco.generator.traffic import choose, event_times
from feco.generator.world import Calendar, World
from feco.generator.writer import write_days, write_manifest
from feco.paper.datasets import default_root

_FIELDS = ("body", "anchor", "title", "url", "whole")
# LETOR 4.0 (MQ2008) feature numbers: 1–5 TF, 6–10 IDF, 11–15 TF*IDF, 16–20 document length
# per field; 21–40 BM25, LMIR.ABS, LMIR.DIR, LMIR.JM, field after field; 41 PageRank,
# 42 inlinks, 43 outlinks, 44 slashes in the URL, 45 URL length, 46 child pages.
_MQ2008_NAMES = {
    **{1 + i: f"tf_{f}" for i, f in enumerate(_FIELDS)},
    **{11 + i: f"tfidf_{f}" for i, f in enumerate(_FIELDS)},
    **{16 + i: f"dl_{f}" for i, f in enumerate(_FIELDS)},
    **{21 + 4 * i + j: f"{score}_{f}" for i, f in enumerate(_FIELDS)
       for j, score in enumerate(("bm25", "lmabs", "lmdir", "lmjm"))},
    41: "pagerank", 42: "inlinks", 44: "url_slashes", 45: "url_length", 46: "child_pages",
}  # fmt: skip
# A source is what one upstream index or crawl job produces: each field's index, the link graph.
_MQ2008_SOURCES = {
    **{f: tuple(name for name in _MQ2008_NAMES.values() if name.endswith(f"_{f}")) for f in _FIELDS},
    "url": tuple(n for n in _MQ2008_NAMES.values() if n.endswith("_url")) + ("url_slashes", "url_length"),
    "links": ("pagerank", "inlinks", "child_pages"),
}


# Webis ClueWeb09 (README.md beside the files, its table's order): 4 fields x 9 retrieval
# scores, score after score (features 1-36), then URL length, slashes in the URL, PageRank,
# SpamRank, inlinks and outlinks (37-42).
_WEBIS_FIELDS = ("body", "title", "anchor", "main")
_WEBIS_SCORES = ("tf", "tfidf", "bm25", "f2exp", "f2log", "ql", "qljm", "pl2", "spl")
_WEBIS_NAMES = {
    **{1 + 4 * i + j: f"{score}_{f}" for i, score in enumerate(_WEBIS_SCORES) for j, f in enumerate(_WEBIS_FIELDS)},
    37: "url_length", 38: "url_slashes", 39: "pagerank", 40: "spamrank", 41: "inlinks", 42: "outlinks",
}  # fmt: skip
_WEBIS_SOURCES = {
    **{f: tuple(name for name in _WEBIS_NAMES.values() if name.endswith(f"_{f}")) for f in _WEBIS_FIELDS},
    "url": ("url_length", "url_slashes"),
    "links": ("pagerank", "spamrank", "inlinks", "outlinks"),
}


@dataclass(frozen=True)
class Dataset:
    """One LETOR set as this world reads it: its folder and files, feature names by number,
    sources."""

    folder: str
    names: dict[int, str]
    sources: dict[str, tuple[str, ...]]
    files: str = "S*.txt"  # LETOR 4.0's five partitions

    @property
    def features(self) -> tuple[str, ...]:
        return tuple(name for names in self.sources.values() for name in names)


DATASETS = {
    "mq2008": Dataset("mq2008", _MQ2008_NAMES, _MQ2008_SOURCES),
    "mq2007agg": Dataset(
        "mq2007_agg",
        {i: f"rank_{i:02d}" for i in range(1, 22)},
        {"rankers": tuple(f"rank_{i:02d}" for i in range(1, 22))},
    ),
    # Held out of every tuning round (bench/alert_seeds.toml): run only on a frozen method.
    "webis_clueweb09": Dataset("webis_clueweb09", _WEBIS_NAMES, _WEBIS_SOURCES, files="fold*.test.txt"),
}
_MIN_LIST, _MAX_LIST = 5, 20
_RANKER_LABEL_WEIGHT = 0.8
# Query popularity drifts: a weekly wave (weekend searches differ) and a slower one.
_DRIFT_PERIODS = (7.0, 29.0)


@dataclass(frozen=True)
class LtrWorld:
    """The knobs of the LTR world.

    Parameters
    ----------
    dataset
        ``"mq2008"`` (46 dense features, 40 of them not always zero), ``"mq2007agg"``
        (21 rankers' ranks with NULLs) or ``"webis_clueweb09"`` (42 dense features of judged
        ClueWeb09 documents, the bench's held-out set).
    zipf_exponent
        Query popularity falls as ``rank ** -zipf_exponent`` over the set's queries.
    query_drift
        Standard deviation (log scale) of each query's popularity waves (weekly and ~monthly).
    renewing_share
        Share of documents whose product is renewed every ``renewal_days``; the others are
        established products.
    renewal_days
        How often a renewing document becomes a new product (more than 30 days, so it ages
        out of ``product_age = new`` before it renews).
    weekend_heads
        Share of a weekend's (and a holiday's) searches whose popularity follows a second,
        seeded order of the queries rather than the weekday's: at 0.8 most of a weekend's
        head queries are outside the weekday's head.
    weekend_turnover
        Share of that weekend order drawn anew each week (a weekend's head differs from the
        last weekend's too, as the weekend's own searches do).
    group_skew
        How unevenly product groups get queries: 0 draws each query's group by
        ``group_weights`` alone; above it, each group leans (by a seeded tilt) towards the
        weekday's head or the weekend's, so a weekend's or holiday's mix moves a group's
        coverage.
    group_weights, region_weights
        Traffic share of each product group (by query) and region, as in :class:`World`.
    calendar
        Weekends, growth, holidays and a rollout, as in :class:`World` (a mix's multiplier
        applies to the exponent of this world's Zipf weights).
    """

    dataset: str = "mq2008"
    zipf_exponent: float = 0.9
    query_drift: float = 0.3
    renewing_share: float = 0.5
    renewal_days: int = 60
    weekend_heads: float = 0.0
    weekend_turnover: float = 0.0
    group_skew: float = 0.0
    group_weights: tuple[float, ...] = GROUP_WEIGHTS
    region_weights: tuple[float, ...] = REGION_WEIGHTS
    calendar: Calendar = field(default_factory=Calendar)

    def __post_init__(self) -> None:
        if self.dataset not in DATASETS:
            raise UsageError(f"LTR dataset {self.dataset!r} is not one of: {', '.join(DATASETS)}")
        if not NEW_PRODUCT_DAYS < self.renewal_days <= 1_000:
            raise UsageError(f"renewal_days={self.renewal_days} must be in {NEW_PRODUCT_DAYS + 1}..1000")
        if not 0 <= self.renewing_share <= 1 or not 0 <= self.query_drift <= 2:
            raise UsageError("renewing_share must be in [0, 1] and query_drift in [0, 2]")
        if not 0 <= self.weekend_heads <= 1 or not 0 <= self.weekend_turnover <= 1 or not 0 <= self.group_skew <= 3:
            raise UsageError("weekend_heads and weekend_turnover must be in [0, 1] and group_skew in [0, 3]")
        # The zipf and weight checks are World's.
        World(zipf_exponent=self.zipf_exponent, group_weights=self.group_weights,
              region_weights=self.region_weights)
        if self.calendar.rollout and self.calendar.rollout[0] not in self.features:
            raise UsageError(f"rollout feature {self.calendar.rollout[0]!r} is not a feature of {self.dataset}")

    @property
    def sources(self) -> dict[str, tuple[str, ...]]:
        """The world's features by upstream source (the families incident specs name)."""
        return DATASETS[self.dataset].sources

    @property
    def features(self) -> tuple[str, ...]:
        return DATASETS[self.dataset].features


@dataclass(frozen=True)
class _Catalogue:
    """The set's rows grouped by query, with each query's and document's fixed attributes."""

    seed: int
    values: np.ndarray  # rows x features, float32, NaN = NULL
    label: np.ndarray
    doc: np.ndarray  # each row's document number
    offsets: np.ndarray  # a query's rows are offsets[q]:offsets[q + 1], q by popularity rank
    names: pa.Array  # query strings by popularity rank
    cdf: np.ndarray
    band: np.ndarray
    log_weight: np.ndarray
    off_log_weight: np.ndarray  # a weekend's and a holiday's popularity order (weekend_heads)
    waves: np.ndarray  # per query: amplitude and phase of each drift wave
    query_group: np.ndarray
    doc_group: np.ndarray
    doc_renews: np.ndarray
    doc_phase: np.ndarray
    doc_established: np.ndarray  # first-seen ordinal of an established document

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.offsets)


def generate_ltr_logs(
    out: str | os.PathLike[str],
    *,
    start: dt.date,
    days: int,
    events_per_day: int = 40_000,
    seed: int = 0,
    world: LtrWorld = LtrWorld(),
    incidents: Sequence[Incident] = (),
    new_region_launch: dt.date | None = None,
    root: Path | None = None,
    progress: Callable[[dt.date], None] | None = None,
) -> list[Path]:
    """Generate ``days`` days of search logs from an LTR set's real feature values.

    Parameters
    ----------
    out
        Root folder of the logs; created if missing.
    start, days, events_per_day, seed, new_region_launch, progress
        As for :func:`feco.generator.generate_logs`.
    world
        The dataset and the world's knobs (see :class:`LtrWorld`).
    incidents
        Incidents over ``world.features`` (:func:`parse_incident` with
        ``families=world.sources``).
    root
        Where the LTR sets live; ``../shared/data/ltr`` beside the repository by default.

    Returns
    -------
    list of Path
        The files written.
    """
    if days < 1:
        raise UsageError(f"days must be at least 1, got {days}")
    check_volume(events_per_day=events_per_day, seed=seed)
    check_incidents(incidents, families=world.sources)
    catalogue = _catalogue(world, seed, root or default_root())
    launch = start + dt.timedelta(days=days // 3) if new_region_launch is None else new_region_launch
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    write_manifest(target, {
        "seed": seed, "events_per_day": events_per_day, "start": start.isoformat(), "days": days,
        "new_region_launch": launch.isoformat(), "incidents": [i.to_dict() for i in incidents],
        "ltr_world": {key: list(v) if isinstance(v, tuple) else v for key, v in asdict(world).items()
                      if key != "calendar"} | ({"calendar": world.calendar.to_dict()} if world.calendar != Calendar() else {}),
        "features": list(world.features), "sources": {k: list(v) for k, v in world.sources.items()},
    })  # fmt: skip
    calendar_world = World(region_weights=world.region_weights, calendar=world.calendar)

    def hours_of(ds: dt.date) -> Callable[[int], pa.Table]:
        plan = plan_day(ds, events_per_day=events_per_day, seed=seed, new_region_launch=launch, world=calendar_world)
        return functools.partial(_hour_table, plan, catalogue, world, incidents)

    return write_days(target, start=start, days=days, hours_of=hours_of, progress=progress)


def segment_shares(world: LtrWorld, seed: int, *, root: Path | None = None) -> dict[tuple[str, str], float]:
    """Each segment's expected share of the rows: product groups follow the query mix (a
    query's documents are of its group), regions and query bands their weights, new products
    the renewing documents' month in ``renewal_days``. The new region (BR) is left out."""
    catalogue = _catalogue(world, seed, root or default_root())
    lengths = np.arange(_MIN_LIST, _MAX_LIST + 1)
    rows_per_event = np.minimum(lengths[None, :], catalogue.sizes[:, None]).mean(axis=1)
    rows = np.diff(np.r_[0.0, catalogue.cdf]) * rows_per_event
    groups = np.bincount(catalogue.query_group, weights=rows, minlength=len(PRODUCT_GROUPS)) / rows.sum()
    new = world.renewing_share * NEW_PRODUCT_DAYS / world.renewal_days
    return {
        **{("product_group", g): float(share) for g, share in zip(PRODUCT_GROUPS, groups)},
        **{("region", r): w for r, w in zip(REGIONS, world.region_weights)},
        ("query_band", "head"): 0.5, ("query_band", "torso"): 0.3, ("query_band", "tail"): 0.2,
        ("product_age", "new"): new, ("product_age", "established"): 1 - new,
    }  # fmt: skip


def ltr_schema(world: LtrWorld) -> pa.Schema:
    """The columns of the LTR world's logs: the generator's, without ``logged_in``."""
    return pa.schema([*ROW_FIELDS, LABEL_FIELD, *(pa.field(name, pa.float32()) for name in world.features)])


@functools.lru_cache(maxsize=4)
def _catalogue(world: LtrWorld, seed: int, root: Path) -> _Catalogue:
    dataset = DATASETS[world.dataset]
    frame = _read(root / dataset.folder, dataset)
    rng = np.random.default_rng(np.random.SeedSequence([seed, 22]))
    # Popularity ranks are a seeded permutation of the queries.
    qids = frame["qid"].unique(maintain_order=True).to_numpy()
    by_rank = qids[rng.permutation(len(qids))]
    rank_of = pl.DataFrame({"qid": by_rank, "rank": np.arange(len(qids))})
    frame = frame.with_row_index("line").join(rank_of, on="qid").sort("rank", "line")
    sizes = frame.group_by("rank", maintain_order=True).len()["len"].to_numpy().astype(np.int64)
    weights = 1.0 / (np.arange(len(qids)) + 1.0) ** world.zipf_exponent
    weights /= weights.sum()
    cdf = np.cumsum(weights)
    docs = (frame["docid"].rank("dense") - 1).to_numpy().astype(np.int64)
    doc_u = uniforms(hash_ids(np.arange(docs.max() + 1), seed=seed, stream=22))
    # Their own stream, so worlds without weekend heads or skew draw what they always drew.
    off_rng = np.random.default_rng(np.random.SeedSequence([seed, 23]))
    off_log_weight = np.log(weights)[off_rng.permutation(len(qids))]
    tilt = off_rng.uniform(-1.0, 1.0, len(world.group_weights))
    query_group = _query_groups(rng.random(len(qids)), np.log(weights), off_log_weight, world, tilt)
    first_row = np.unique(docs, return_index=True)[1]  # a document's group is its first query's
    doc_group = np.empty(docs.max() + 1, dtype=np.int8)
    doc_group[docs[first_row]] = query_group[frame["rank"].to_numpy()[first_row]]
    return _Catalogue(
        seed=seed,
        values=frame.select(dataset.features).fill_null(np.nan).to_numpy().astype(np.float32),
        label=frame["label"].to_numpy().astype(np.int8),
        doc=docs,
        offsets=np.r_[0, np.cumsum(sizes)],
        names=pa.array([f"q{q}" for q in by_rank], type=pa.string()),
        cdf=cdf,
        band=week_bands(weights, query_group, world.calendar.usual_week(WEEKDAY_VOLUME)),
        log_weight=np.log(weights),
        off_log_weight=off_log_weight,
        waves=rng.random((len(qids), 2 * len(_DRIFT_PERIODS))),
        query_group=query_group,
        doc_group=doc_group,
        doc_renews=doc_u[0] < world.renewing_share,
        doc_phase=(doc_u[1] * world.renewal_days).astype(np.int64),
        doc_established=(dt.date(2000, 1, 1).toordinal() + doc_u[2] * 1_500).astype(np.int64),
    )


def _query_groups(uniform: np.ndarray, log_weight: np.ndarray, off_log_weight: np.ndarray, world: LtrWorld,
                  tilt: np.ndarray) -> np.ndarray:
    """Each query's product group, drawn from ``uniform``: by ``group_weights``, each group's
    weight moved by ``exp(group_skew * tilt * lean)``, where a query's lean is how much more
    popular it is on weekdays than at weekends (standardised log weights)."""
    def standard(x: np.ndarray) -> np.ndarray:
        return (x - x.mean()) / x.std()

    lean = (standard(log_weight) - standard(off_log_weight)) / 2
    shares = np.asarray(world.group_weights)[None, :] * np.exp(world.group_skew * lean[:, None] * tilt[None, :])
    cdf = np.cumsum(shares, axis=1)
    # As traffic.choose draws, row by row: without skew the groups are choose's.
    return (cdf / cdf[:, -1:] <= uniform[:, None]).sum(axis=1).astype(np.int8)


def _read(folder: Path, dataset: Dataset) -> pl.DataFrame:
    files = sorted(folder.glob(dataset.files))
    if not files:
        raise DataError(f"no LETOR files {dataset.files} in {folder}")
    frame = read_letor(files, dtype=pl.Float32)
    renamed = {f"f{number}": name for number, name in dataset.names.items()}
    return frame.rename(renamed).select("qid", "label", "docid", *dataset.features)


def _query_cdf(catalogue: _Catalogue, world: LtrWorld, ds: dt.date) -> np.ndarray:
    """The day's query mix: the Zipf weights (at weekends and on holidays partly in their own
    order), their exponent moved by the calendar (weekends, holidays, a group's own weekend),
    moved by each query's drift waves."""
    day = ds.toordinal()
    drift = np.zeros(len(catalogue.log_weight))
    for i, period in enumerate(_DRIFT_PERIODS):
        amplitude, phase = catalogue.waves[:, 2 * i], catalogue.waves[:, 2 * i + 1]
        drift += amplitude * np.sin(2 * np.pi * (day / period + phase))
    mix, group_mix = world.calendar.mix(ds)
    weights = np.exp(_day_log_weight(catalogue, world, ds) * mix + world.query_drift * np.sqrt(2.0) * drift)
    if group_mix is not None:
        weights = within_groups(weights, catalogue.query_group, np.asarray(group_mix))
    cdf = np.cumsum(weights)
    return cdf / cdf[-1]


def _day_log_weight(catalogue: _Catalogue, world: LtrWorld, ds: dt.date) -> np.ndarray:
    """Each query's log popularity on ``ds``: the weekday order's, or at weekends and on
    holidays a blend of it (``1 - weekend_heads``), the weekend order and the week's own order
    (``weekend_turnover`` of the weekend's part)."""
    off_day = ds.weekday() >= 5 or world.calendar.is_holiday(ds)
    if not off_day or world.weekend_heads == 0:
        return catalogue.log_weight
    year, week, _ = ds.isocalendar()
    weeks_own = catalogue.log_weight[np.random.default_rng([catalogue.seed, 23, year, week]).permutation(
        len(catalogue.log_weight))]
    heads, turnover = world.weekend_heads, world.weekend_turnover
    parts = [(1 - heads, catalogue.log_weight), (heads * (1 - turnover), catalogue.off_log_weight),
             (heads * turnover, weeks_own)]
    return np.logaddexp.reduce([np.log(share) + log_weight for share, log_weight in parts if share > 0])


def _hour_table(
    plan: DayPlan, catalogue: _Catalogue, world: LtrWorld, incidents: Sequence[Incident], hour: int
) -> pa.Table:
    rng = np.random.default_rng(plan.hour_seeds[hour])
    event_ts, event_id = event_times(plan, hour, rng)
    n_events = len(event_ts)
    query = np.searchsorted(_query_cdf(catalogue, world, plan.ds), rng.random(n_events)).astype(np.int64)
    region = choose(rng, plan.region_shares, n_events)
    event_index, rows = _shown_documents(query, catalogue, rng)
    order, position = rank_lists(event_index, _RANKER_LABEL_WEIGHT * catalogue.label[rows], rng)
    rows = rows[order]  # event_index is unchanged by the order: it sorts within events
    product_id, first_seen = _products(catalogue.doc[rows], catalogue, world, plan.ds)
    group = catalogue.doc_group[catalogue.doc[rows]]
    segments = {
        "product_group": group,
        "region": region[event_index],
        "query_band": catalogue.band[query[event_index]],
        "product_age": (plan.ds.toordinal() - first_seen >= NEW_PRODUCT_DAYS).astype(np.int8),
    }
    values = _logged_values(catalogue.values[rows], world, plan, hour, segments, incidents)
    columns = [
        pa.array(event_ts[event_index], type=pa.timestamp("us", tz="UTC")),
        pa.array(event_id[event_index], type=pa.int64()),
        pa.array(position, type=pa.int16()),
        pa.array(product_id, type=pa.int64()),
        pa.array(np.asarray(PRODUCT_GROUPS, dtype=object)[group], type=pa.string()),
        pa.array(np.asarray(REGIONS, dtype=object)[region[event_index]], type=pa.string()),
        catalogue.names.take(pa.array(query[event_index])),
        pa.array(first_seen - dt.date(1970, 1, 1).toordinal(), type=pa.int32()).cast(pa.date32()),
        pa.array(catalogue.label[rows], type=pa.int8()),
        *(pa.array(v, type=pa.float32(), mask=m) for v, m in values),
    ]
    return pa.Table.from_arrays(columns, schema=ltr_schema(world))


def _shown_documents(
    query: np.ndarray, catalogue: _Catalogue, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Each event's shown rows: 5–20 of its query's documents at random (all when fewer).

    Returns the event of each shown row (non-decreasing) and the row in the catalogue.
    """
    sizes = catalogue.sizes[query]
    wanted = np.minimum(rng.integers(_MIN_LIST, _MAX_LIST + 1, len(query)), sizes)
    candidate_event = np.repeat(np.arange(len(query)), sizes)
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    within = np.arange(len(candidate_event)) - np.repeat(starts, sizes)
    candidate_row = catalogue.offsets[query][candidate_event] + within
    # Sorting by event plus a uniform key shuffles each event's candidates in one pass.
    shuffled = np.argsort(candidate_event + rng.random(len(candidate_event)), kind="stable")
    keep = within < wanted[candidate_event]  # the first `wanted` of each event after the shuffle
    return candidate_event[keep], candidate_row[shuffled][keep]


def _products(
    doc: np.ndarray, catalogue: _Catalogue, world: LtrWorld, ds: dt.date
) -> tuple[np.ndarray, np.ndarray]:
    """Product id and first-seen ordinal of each shown document on ``ds``.

    A renewing document is a new product every ``renewal_days`` from its own phase on; its
    generation is part of the product id.
    """
    day = ds.toordinal() + catalogue.doc_phase[doc]
    generation = day // world.renewal_days
    renews = catalogue.doc_renews[doc]
    first_seen = np.where(renews, generation * world.renewal_days - catalogue.doc_phase[doc],
                          catalogue.doc_established[doc])
    product_id = doc * 10_000 + np.where(renews, generation % 10_000, 0)
    return product_id, first_seen


def _logged_values(
    values: np.ndarray,
    world: LtrWorld,
    plan: DayPlan,
    hour: int,
    segments: dict[str, np.ndarray],
    incidents: Sequence[Incident],
) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """Each feature's (values, NULL mask) with the active incidents applied."""
    columns = {}
    for j, name in enumerate(world.features):
        column = values[:, j]
        missing = np.isnan(column)
        columns[name] = (np.where(missing, np.float32(0.0), column), ~missing if missing.any() else None)
    for index, incident in enumerate(incidents):
        if incident.share_on(plan.ds) == 0:
            continue
        rng = np.random.default_rng(np.random.SeedSequence([plan.seed, plan.ds.toordinal(), hour, 1 + index]))
        hit = incident_mask(incident, plan.ds, segments, rng=rng)
        for feature in incident.features:
            columns[feature] = corrupt(*columns[feature], hit=hit, kind=incident.kind)
    columns = apply_rollout(columns, segments["region"], plan=plan, hour=hour)
    return [(v, None if valid is None else ~valid) for v, valid in columns.values()]
