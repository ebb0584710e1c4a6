"""Scenario families for the alert bench: worlds and incident schedules drawn from a seed.

Each family is a function of a seed that draws its world's parameters and a random schedule
of incidents from that seed; nothing is placed by hand, so a method tuned on some seeds meets
new worlds on others. Every scenario runs 56 days from a Monday (the traffic families' from the
Thursday or Friday after: early weekends): the first 14 are clean (the decay rule's reference,
the drop rule's warm-up, the paging warm-up), incidents fall in the 42 days after, each on
features of its own, and most feature-days stay clean.

| family | world | incidents beyond the common mix |
|---|---|---|
| base | the generator's default | — |
| zipf | query popularity ~ rank^-s, s drawn in 0.6–1.1 | — |
| churn | 15–30% of impressions on new products arriving in batches every 7–30 days, ageing out fast, each batch with its own coverage | more in product_age |
| sizes | product groups and regions from ~1% to ~50% of traffic | — |
| outage | the default | 2–3 source outages of 3–8 features of one family, decays in small segments |
| ltr | MQ2008's real feature values (feco.generator.ltr_world), Zipf over its 784 queries, a catalogue renewed every 45–120 days | sources are the index fields and the link graph |
| weekday | the default, with a calendar: weekends at 50–70% of a weekday's searches with a flatter query mix, three product groups (one of the largest) searched far deeper in their tail at weekends (their own weekday pattern), 0–4% growth a week | — |
| holiday | weekday's calendar and one or two holidays after the warm-up at 2–3× the searches with a much flatter mix | — |
| rollout | weekday's calendar, a feature rolled out region by region over 5–9 days from 20–35% to all of its rows, the new region launched after the warm-up | — |
| nullfill | MQ2007-agg's real ranks with their NULLs, weekday's calendar | failures writing zeros over NULLs (values and NULLs), and their recovery |
| calendar | MQ2008's real values with all of it: weekends, growth, a holiday, a rollout, a region launched after the warm-up | — |
| crossing | weekday's calendar | 1–2 features failing twice: a decay in a wide segment (≥ 30% of rows) and, while it lasts, a target step of the same feature in a segment of another dimension |
| traffic | MQ2008's real values (or ``traffic@<dataset>``'s) with today's traffic: weekends and a holiday at ~2.5× the searches draw 50–80% of their searches in another order of the queries (their head is other queries; 20–50% of that order drawn anew each week), product groups lean towards one head or the other, the run starts on a Thursday or Friday (its 2nd–4th Saturdays scored, the 3rd paged on two known) | — |
| traffic_nulls | traffic's world on MQ2007-agg's ranks with their NULLs (a group's NULL share follows its queries) | failures writing zeros over NULLs |

The dataset is a parameter of the ``traffic`` families: ``traffic@webis_clueweb09`` is the same
family on the Webis ClueWeb09 features, the dataset held out of tuning (bench/alert_seeds.toml's
``[held_out_dataset]``).

The common mix: target steps (20–100% in segments of at least ~7% of the rows, all traffic
included), other steps (10–19%, or in segments under 5%), decays (30–80% reached over 7–21
days), a source outage and a one-day NULL blip. The calendar families model what a team's
traffic does (bench/alerts_sweep.py scores false pages from day 7, the first two weeks apart).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date, timedelta

import numpy as np

from feco.generator import FEATURE_FAMILIES, World, parse_incident
from feco.generator.ltr_world import LtrWorld
from feco.generator.ltr_world import segment_shares as ltr_segment_shares
from feco.generator.schema import GROUP_WEIGHTS, PRODUCT_GROUPS, REGIONS
from feco.generator.world import Calendar

START = date(2026, 1, 5)  # a Monday
DAYS = 56
CLEAN_DAYS = 14
NEW_REGION_LAUNCH = 10
TARGET_SHARE = 0.2
TARGET_TRAFFIC = 0.07  # drawn above the 5% the scorer measures, so the segment qualifies


@dataclass
class Scenario:
    """One (family, seed): the world to generate and the incidents to inject."""

    family: str
    seed: int
    world: World | LtrWorld
    specs: list[str] = field(default_factory=list)
    start: date = START
    days: int = DAYS
    clean_days: int = CLEAN_DAYS
    launch_day: int = NEW_REGION_LAUNCH

    @property
    def is_ltr(self) -> bool:
        return isinstance(self.world, LtrWorld)

    @property
    def sources(self) -> dict[str, tuple[str, ...]]:
        return self.world.sources if self.is_ltr else FEATURE_FAMILIES

    @property
    def features(self) -> tuple[str, ...]:
        return tuple(name for names in self.sources.values() for name in names)

    @property
    def new_region_launch(self) -> date:
        return self.start + timedelta(days=self.launch_day)

    @property
    def rolled_out(self) -> str | None:
        """The feature a calendar rolls out, which no incident may use."""
        rollout = self.world.calendar.rollout
        return rollout[0] if rollout else None

    def incidents(self) -> list:
        return [parse_incident(spec, families=self.sources) for spec in self.specs]


@dataclass(frozen=True)
class Mix:
    """How many incidents of each kind a scenario draws (ranges are inclusive)."""

    target_steps: tuple[int, int] = (3, 5)
    other_steps: tuple[int, int] = (1, 3)
    decays: tuple[int, int] = (1, 2)
    small_decays: tuple[int, int] = (0, 0)
    outages: tuple[int, int] = (1, 1)
    null_blips: tuple[int, int] = (1, 1)
    fills: tuple[int, int] = (0, 0)  # failures writing zeros over NULLs
    crossings: tuple[int, int] = (0, 0)  # a feature's decay, then its step in a segment crossing the decay's
    favour: str | None = None  # a segment dim drawn three times as often


def base(seed: int) -> Scenario:
    return _scheduled("base", seed, World(), Mix())


def zipf(seed: int) -> Scenario:
    rng = _rng("zipf", seed)
    return _scheduled("zipf", seed, World(zipf_exponent=round(rng.uniform(0.6, 1.1), 3)), Mix())


def churn(seed: int) -> Scenario:
    rng = _rng("churn", seed)
    world = World(new_share=round(rng.uniform(0.15, 0.3), 3), lifetime_days=round(rng.uniform(60, 240), 1),
                  launch_every_days=int(rng.choice([7, 10, 14, 30])), cohort_spread=round(rng.uniform(0.15, 0.4), 3))
    return _scheduled("churn", seed, world, Mix(favour="product_age"))


def sizes(seed: int) -> Scenario:
    rng = _rng("sizes", seed)
    world = World(group_weights=_spread_weights(rng, 10), region_weights=_spread_weights(rng, 6))
    return _scheduled("sizes", seed, world, Mix())


def outage(seed: int) -> Scenario:
    mix = Mix(target_steps=(1, 2), other_steps=(1, 1), decays=(0, 1), small_decays=(1, 2), outages=(2, 3))
    return _scheduled("outage", seed, World(), mix)


def ltr(seed: int) -> Scenario:
    rng = _rng("ltr", seed)
    world = LtrWorld(zipf_exponent=round(rng.uniform(0.6, 1.1), 3), query_drift=round(rng.uniform(0.1, 0.4), 3),
                     renewing_share=round(rng.uniform(0.3, 0.7), 3), renewal_days=int(rng.integers(45, 121)))
    return _scheduled("ltr", seed, world, Mix())


def weekday(seed: int) -> Scenario:
    rng = _rng("weekday", seed)
    return _scheduled("weekday", seed, World(calendar=_weekly(rng, groups=len(PRODUCT_GROUPS))), Mix())


def holiday(seed: int) -> Scenario:
    rng = _rng("holiday", seed)
    calendar = _with_holidays(_weekly(rng, groups=len(PRODUCT_GROUPS)), rng, count=int(rng.integers(1, 3)))
    return _scheduled("holiday", seed, World(calendar=calendar), Mix())


def rollout(seed: int) -> Scenario:
    rng = _rng("rollout", seed)
    calendar = _with_rollout(_weekly(rng, groups=len(PRODUCT_GROUPS)), rng, FEATURE_FAMILIES["personalisation"])
    return _scheduled("rollout", seed, World(calendar=calendar), Mix(), launch=int(rng.integers(CLEAN_DAYS, 30)))


def nullfill(seed: int) -> Scenario:
    rng = _rng("nullfill", seed)
    world = LtrWorld(dataset="mq2007agg", zipf_exponent=round(rng.uniform(0.6, 1.1), 3),
                     query_drift=round(rng.uniform(0.1, 0.4), 3), calendar=_weekly(rng, groups=len(PRODUCT_GROUPS)))
    mix = Mix(target_steps=(2, 3), other_steps=(0, 1), fills=(2, 3))
    return _scheduled("nullfill", seed, world, mix)


def crossing(seed: int) -> Scenario:
    rng = _rng("crossing", seed)
    return _scheduled("crossing", seed, World(calendar=_weekly(rng, groups=len(PRODUCT_GROUPS))), Mix(crossings=(1, 2)))


def calendar(seed: int) -> Scenario:
    rng = _rng("calendar", seed)
    weekly = _with_holidays(_weekly(rng, groups=len(PRODUCT_GROUPS)), rng, count=1)
    probe = LtrWorld()
    world = LtrWorld(zipf_exponent=round(rng.uniform(0.6, 1.1), 3), query_drift=round(rng.uniform(0.1, 0.4), 3),
                     renewing_share=round(rng.uniform(0.3, 0.7), 3), renewal_days=int(rng.integers(45, 121)),
                     calendar=_with_rollout(weekly, rng, probe.sources["links"] + probe.sources["url"]))
    return _scheduled("calendar", seed, world, Mix(), launch=int(rng.integers(CLEAN_DAYS, 30)))


def traffic(seed: int, dataset: str = "mq2008") -> Scenario:
    return _todays_traffic("traffic", seed, dataset, Mix())


def traffic_nulls(seed: int, dataset: str = "mq2007agg") -> Scenario:
    return _todays_traffic("traffic_nulls", seed, dataset, Mix(target_steps=(2, 3), other_steps=(0, 1), fills=(1, 2)))


def _todays_traffic(family: str, seed: int, dataset: str, mix: Mix) -> Scenario:
    """Weekends and a holiday whose head is other queries, groups holding the heads unevenly,
    and early weekends. Drawn from the family and seed alone: on another dataset the same seed
    draws the same knobs."""
    rng = _rng(family, seed)
    start = START + timedelta(days=int(rng.integers(3, 5)))  # a Thursday or a Friday
    weekly = replace(_with_holidays(_weekly(rng, groups=len(PRODUCT_GROUPS)), rng, count=1, start=start),
                     holiday_volume=round(float(rng.uniform(2.3, 2.7)), 2))
    world = LtrWorld(dataset=dataset, zipf_exponent=round(rng.uniform(0.7, 1.1), 3),
                     query_drift=round(rng.uniform(0.1, 0.3), 3), renewing_share=round(rng.uniform(0.3, 0.7), 3),
                     renewal_days=int(rng.integers(45, 121)), weekend_heads=round(float(rng.uniform(0.5, 0.8)), 2),
                     group_skew=round(float(rng.uniform(0.5, 1.5)), 2),
                     weekend_turnover=round(float(rng.uniform(0.2, 0.5)), 2), calendar=weekly)
    return _scheduled(f"{family}@{dataset}" if dataset != DATASET_OF[family] else family, seed, world, mix,
                      start=start)


LTR_FAMILIES = ("ltr", "nullfill", "calendar", "traffic", "traffic_nulls")  # they read a LETOR set in ../shared/data
FAMILIES: dict[str, Callable[[int], Scenario]] = {
    "base": base, "zipf": zipf, "churn": churn, "sizes": sizes, "outage": outage, "ltr": ltr,
    "weekday": weekday, "holiday": holiday, "rollout": rollout, "nullfill": nullfill, "calendar": calendar,
    "crossing": crossing, "traffic": traffic, "traffic_nulls": traffic_nulls,
}  # fmt: skip
# The families that take a dataset (``family@dataset``), and the one each tunes on.
DATASET_OF = {"traffic": "mq2008", "traffic_nulls": "mq2007agg"}


def scenario(family: str, seed: int) -> Scenario:
    """The scenario of ``family`` (or ``family@dataset`` for those of DATASET_OF) and ``seed``."""
    name, _, dataset = family.partition("@")
    if name not in FAMILIES or (dataset and name not in DATASET_OF):
        raise SystemExit(f"unknown family {family!r}; choose from {', '.join(FAMILIES)} "
                         f"(with @<dataset>: {', '.join(DATASET_OF)})")
    return FAMILIES[name](seed, dataset) if dataset else FAMILIES[name](seed)


def segment_shares(scenario: Scenario) -> dict[tuple[str, str], float]:
    """Each segment's expected share of the rows in the scenario's world (BR, launched during
    the run, is left out)."""
    if scenario.is_ltr:
        return ltr_segment_shares(scenario.world, scenario.seed)
    world = scenario.world
    return {
        **{("product_group", g): w for g, w in zip(PRODUCT_GROUPS, world.group_weights)},
        **{("region", r): w for r, w in zip(REGIONS, world.region_weights)},
        ("query_band", "head"): 0.5, ("query_band", "torso"): 0.3, ("query_band", "tail"): 0.2,
        ("product_age", "new"): world.new_share, ("product_age", "established"): 1 - world.new_share,
    }  # fmt: skip


# --- drawing the schedule -------------------------------------------------------------


def _rng(family: str, seed: int, stream: int = 0) -> np.random.Generator:
    return np.random.default_rng([zlib.crc32(family.encode()), seed, stream])


def _spread_weights(rng: np.random.Generator, count: int) -> tuple[float, ...]:
    """Weights from about 1% to about 50%, in a random order, summing to 1."""
    largest, smallest = rng.uniform(0.38, 0.5), rng.uniform(0.008, 0.015)
    middle = np.exp(rng.uniform(np.log(0.01), np.log(0.3), count - 2))
    middle *= (1.0 - largest - smallest) / middle.sum()
    weights = rng.permutation(np.r_[largest, smallest, middle])
    rounded = np.round(weights / weights.sum(), 6)
    rounded[np.argmax(rounded)] += 1.0 - rounded.sum()  # sum to 1 within World's tolerance
    return tuple(float(w) for w in rounded)


def _scheduled(family: str, seed: int, world, mix: Mix, *, launch: int = NEW_REGION_LAUNCH,
               start: date = START) -> Scenario:
    scenario = Scenario(family, seed, world, start=start, launch_day=launch)
    scenario.specs = _Schedule(scenario, mix, _rng(family, seed, 1)).draw()
    return scenario


# --- drawing the calendar -------------------------------------------------------------


def _weekly(rng: np.random.Generator, *, groups: int) -> Calendar:
    """Weekends at 50-70% of a weekday's searches with a flatter query mix, three product groups
    (one of the three largest among them) searched far deeper in their tail at weekends (their
    coverage falls by a quarter to a third there, the rest of traffic's much less), and growth."""
    own = np.ones(groups)
    largest = np.argsort(GROUP_WEIGHTS)[::-1][:3]
    picked = {int(rng.choice(largest))}
    while len(picked) < 3:
        picked.add(int(rng.integers(groups)))
    own[sorted(picked)] = np.round(rng.uniform(0.25, 0.55, 3), 2)
    return Calendar(weekend_volume=round(float(rng.uniform(0.5, 0.7)), 2),
                    weekly_growth=round(float(rng.uniform(0.0, 0.04)), 3),
                    weekend_mix=round(float(rng.uniform(0.6, 0.85)), 2), weekend_groups=tuple(float(m) for m in own))


def _with_holidays(calendar: Calendar, rng: np.random.Generator, *, count: int, start: date = START) -> Calendar:
    """Holidays on days after the warm-up, at 2–3× the searches with a much flatter mix."""
    days = sorted(int(d) for d in rng.choice(np.arange(CLEAN_DAYS + 2, DAYS - 2), count, replace=False))
    return replace(calendar, holidays=tuple((start + timedelta(days=d)).isoformat() for d in days),
                   holiday_volume=round(float(rng.uniform(2.0, 3.0)), 2),
                   holiday_mix=round(float(rng.uniform(0.4, 0.6)), 2))


def _with_rollout(calendar: Calendar, rng: np.random.Generator, features: tuple[str, ...]) -> Calendar:
    """One of ``features`` rolled out region by region after the warm-up."""
    feature = features[int(rng.integers(len(features)))]
    first_day = START + timedelta(days=int(rng.integers(CLEAN_DAYS + 2, 40)))
    return replace(calendar, rollout=(feature, first_day.isoformat(), int(rng.integers(5, 10)),
                                      round(float(rng.uniform(0.2, 0.35)), 2)))


class _Schedule:
    """Draws incidents one at a time, each on features no other incident uses."""

    def __init__(self, scenario: Scenario, mix: Mix, rng: np.random.Generator):
        self.scenario, self.mix, self.rng = scenario, mix, rng
        self.places = segment_shares(scenario)
        self.free = [f for f in scenario.features if f != scenario.rolled_out]
        self.specs: list[str] = []

    def draw(self) -> list[str]:
        counts = {kind: int(self.rng.integers(low, high + 1)) for kind, (low, high) in (
            ("outage", self.mix.outages), ("crossing", self.mix.crossings), ("decay", self.mix.decays), ("small_decay", self.mix.small_decays),
            ("target", self.mix.target_steps), ("other", self.mix.other_steps), ("blip", self.mix.null_blips),
            ("fill", self.mix.fills))}
        for kind, count in counts.items():  # outages first: they need several free features of one source
            for _ in range(count):
                getattr(self, f"_{kind}")()
        return self.specs

    def _target(self) -> None:
        segment = self._segment(lambda share: share >= TARGET_TRAFFIC, all_traffic=0.25)
        self._add(self._features(1), share=self._uniform(TARGET_SHARE, 1.0), days=int(self.rng.integers(1, 6)),
                  segment=segment)

    def _other(self) -> None:
        if self.rng.random() < 0.5:  # a small drop anywhere
            segment = self._segment(lambda share: share >= TARGET_TRAFFIC, all_traffic=0.25)
            share = self._uniform(0.1, 0.19)
        else:  # a big one in a small segment
            segment = self._segment(lambda share: 0.01 <= share < 0.05, all_traffic=0.0)
            share = self._uniform(0.3, 1.0)
        self._add(self._features(1), share=share, days=int(self.rng.integers(1, 6)), segment=segment)

    def _crossing(self) -> None:
        """A decay of a feature in a wide segment and, while it lasts, a step of the same feature
        in a segment of another dimension (rows of both): two failures, each to be paged."""
        features, days = self._features(1), int(self.rng.integers(14, 22))
        segment = self._segment(lambda share: share >= 0.3, all_traffic=0.0)
        start = self._add(features, share=self._uniform(0.4, 0.8), days=days, segment=segment, shape="decay",
                          keep=True)
        step_days = int(self.rng.integers(1, 6))
        self._add(features, share=self._uniform(TARGET_SHARE, 1.0), days=step_days,
                  segment=self._segment(lambda share: share >= TARGET_TRAFFIC, all_traffic=0.0,
                                        other_than=segment.split(":")[0]),
                  start=start + timedelta(days=int(self.rng.integers(5, days - step_days))))

    def _decay(self) -> None:
        segment = self._segment(lambda share: share >= 0.1, all_traffic=0.4)
        self._add(self._features(1), share=self._uniform(0.3, 0.8), days=int(self.rng.integers(7, 22)),
                  segment=segment, shape="decay")

    def _small_decay(self) -> None:
        segment = self._segment(lambda share: 0.03 <= share < 0.1, all_traffic=0.0)
        self._add(self._features(1), share=self._uniform(0.3, 0.8), days=int(self.rng.integers(7, 22)),
                  segment=segment, shape="decay")

    def _outage(self) -> None:
        sources = [name for name, members in self.scenario.sources.items()
                   if sum(f in self.free for f in members) >= 3]
        if not sources:
            return
        source = sources[int(self.rng.integers(len(sources)))]
        free = [f for f in self.scenario.sources[source] if f in self.free]
        count = int(self.rng.integers(3, min(9, len(free)) + 1))
        features = [free[i] for i in sorted(self.rng.choice(len(free), count, replace=False))]
        segment = self._segment(lambda share: share >= TARGET_TRAFFIC, all_traffic=0.2)
        self._add(features, share=self._uniform(0.5, 1.0), days=int(self.rng.integers(1, 4)), segment=segment)

    def _blip(self) -> None:
        segment = self._segment(lambda share: share >= TARGET_TRAFFIC, all_traffic=0.4)
        self._add(self._features(1), share=self._uniform(0.3, 1.0), days=1, segment=segment, kind="null")

    def _fill(self) -> None:
        segment = self._segment(lambda share: share >= TARGET_TRAFFIC, all_traffic=0.3)
        self._add(self._features(1), share=self._uniform(0.5, 1.0), days=int(self.rng.integers(1, 5)),
                  segment=segment, kind="zero_fill")

    def _features(self, count: int) -> list[str]:
        chosen = self.rng.choice(len(self.free), count, replace=False)
        return [self.free[i] for i in chosen]

    def _segment(self, fits: Callable[[float], bool], *, all_traffic: float, other_than: str | None = None) -> str | None:
        if self.rng.random() < all_traffic:
            return None
        places = [place for place, share in self.places.items() if fits(share) and place[0] != other_than]
        if not places:  # no segment of that size in this world: its smallest one
            places = [min(self.places, key=self.places.get)]
        weights = np.array([3.0 if dim == self.mix.favour else 1.0 for dim, _ in places])
        dim, value = places[int(self.rng.choice(len(places), p=weights / weights.sum()))]
        return f"{dim}:{value}"

    def _uniform(self, low: float, high: float) -> float:
        return round(float(self.rng.uniform(low, high)), 2)

    def _add(self, features: list[str], *, share: float, days: int, segment: str | None,
             shape: str = "step", kind: str = "zero", start: date | None = None, keep: bool = False) -> date:
        """Schedule one incident, from ``start`` or a day drawn after the clean days; its
        features leave the free ones unless ``keep``. Returns its first day."""
        last_start = self.scenario.days - days - 1  # a day to be seen after it ends
        start = start or self.scenario.start + timedelta(days=int(self.rng.integers(self.scenario.clean_days, last_start)))
        what = f"feature={features[0]}" if len(features) == 1 else f"features={'|'.join(features)}"
        spec = f"{what},start={start},days={days},share={share},kind={kind},shape={shape}"
        self.specs.append(spec + (f",segment={segment}" if segment else ""))
        if not keep:
            self.free = [f for f in self.free if f not in features]
        return start
