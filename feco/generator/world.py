"""The knobs of the simulated world: query concentration, catalogue churn, segment sizes, and
the calendar real traffic follows.

The defaults are the generator's own world, so logs generated without a :class:`World` stay
byte for byte what they were. A benchmark turns the knobs to test monitoring on worlds it was
not tuned on: a flatter or steeper query mix, products arriving in batches and ageing out
fast, product groups and regions from 1% to 50% of traffic, and a :class:`Calendar`: weekends
with their own volume and query mix (some product groups more than others), growth, holidays
with a shifted mix, and a feature rolled out region by region.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from datetime import date
from typing import Any

import numpy as np

from feco.errors import UsageError
from feco.generator.schema import GROUP_WEIGHTS, PRODUCT_GROUPS, REGION_WEIGHTS, REGIONS

WORLD_SPEC_HELP = (
    "zipf_exponent=S,group_weights=W1|W2|...,region_weights=W1|...,new_share=P,"
    "lifetime_days=D,launch_every_days=N,cohort_spread=S (any subset)"
)


@dataclass(frozen=True)
class Calendar:
    """What the calendar does to traffic: weekends, growth, holidays, a feature's rollout.

    Parameters
    ----------
    weekend_volume
        A weekend day's search volume against a weekday's (0.6: 40% fewer searches on
        Saturdays and Sundays); None keeps the generator's own mild weekly shape.
    weekly_growth
        Volume grows by this share a week, counted from the new region's launch.
    weekend_mix
        At weekends every query's popularity exponent is multiplied by this: below 1, a
        flatter mix (more searches in the tail, where engagement data is thinner).
    weekend_groups
        Per product group, a further multiplier of its queries' exponent at weekends: a group
        whose weekend queries differ (0.6: it is searched for in its tail at weekends), so its
        coverage has a weekday pattern of its own, unlike the rest of traffic.
    holidays
        ISO dates of holidays: ``holiday_volume`` times the searches, with the query mix's
        exponent multiplied by ``holiday_mix``.
    rollout
        ``(feature, first_day, days, kept)``: a feature launched region by region. Before it
        reaches a region only ``kept`` of the rows that have it log it (the rest log 0); the
        regions are reached one after another, in an order drawn from the seed, from
        ``first_day`` over ``days`` days (the new region last).

    Examples
    --------
    >>> Calendar(weekend_volume=0.6, holidays=("2026-02-14",)).is_holiday(date(2026, 2, 14))
    True
    >>> Calendar(weekend_mix=0)
    Traceback (most recent call last):
    ...
    feco.errors.UsageError: world weekend_mix=0 is not in [0.1, 3]
    """

    weekend_volume: float | None = None
    weekly_growth: float = 0.0
    weekend_mix: float = 1.0
    weekend_groups: tuple[float, ...] | None = None
    holidays: tuple[str, ...] = ()
    holiday_volume: float = 2.5
    holiday_mix: float = 1.0
    rollout: tuple[str, str, int, float] | None = None

    def __post_init__(self) -> None:
        if self.weekend_volume is not None:
            _check_range("weekend_volume", self.weekend_volume, 0.1, 3.0)
        _check_range("weekly_growth", self.weekly_growth, -0.5, 1.0)
        _check_range("weekend_mix", self.weekend_mix, 0.1, 3.0)
        _check_range("holiday_mix", self.holiday_mix, 0.1, 3.0)
        _check_range("holiday_volume", self.holiday_volume, 0.1, 10.0)
        if self.weekend_groups is not None and (len(self.weekend_groups) != len(PRODUCT_GROUPS)
                                                 or not all(0.1 <= m <= 3.0 for m in self.weekend_groups)):
            raise UsageError(f"world weekend_groups needs {len(PRODUCT_GROUPS)} multipliers in [0.1, 3], "
                             f"got {self.weekend_groups!r}")
        for day in self.holidays:
            _iso_date("holidays", day)
        if self.rollout is not None:
            _, first_day, days, kept = self.rollout
            _iso_date("rollout", first_day)
            if not isinstance(days, int) or days < 1 or not 0.0 <= kept < 1.0:
                raise UsageError(f"world rollout={self.rollout!r}: days must be 1 or more and kept in [0, 1)")

    def is_holiday(self, ds: date) -> bool:
        return ds.isoformat() in self.holidays

    def to_dict(self) -> dict[str, Any]:
        """The knobs as JSON-ready values."""
        return {key: _json(value) for key, value in asdict(self).items()}

    def volume(self, ds: date, *, weekday_shape: tuple[float, ...], since_launch: int) -> float:
        """The day's volume against the mean: weekday shape, growth and holiday."""
        growth = (1.0 + self.weekly_growth) ** (since_launch / 7)
        return self._shape(ds.weekday(), weekday_shape) * growth * (self.holiday_volume if self.is_holiday(ds) else 1.0)

    def usual_week(self, weekday_shape: tuple[float, ...]) -> list[tuple[float, float, tuple[float, ...] | None]]:
        """(volume, exponent multiplier, group multipliers) of each day of a week without a
        holiday: the traffic a team's query bands are drawn from."""
        return [(self._shape(weekday, weekday_shape), *self._weekday_mix(weekday)) for weekday in range(7)]

    def mix(self, ds: date) -> tuple[float, tuple[float, ...] | None]:
        """The day's multiplier of the query exponent, and per product group a further one."""
        if self.is_holiday(ds):
            return self.holiday_mix, None
        return self._weekday_mix(ds.weekday())

    def _shape(self, weekday: int, weekday_shape: tuple[float, ...]) -> float:
        if self.weekend_volume is None:
            return weekday_shape[weekday]
        return (self.weekend_volume if weekday >= 5 else 1.0) * 7 / (5 + 2 * self.weekend_volume)

    def _weekday_mix(self, weekday: int) -> tuple[float, tuple[float, ...] | None]:
        return (self.weekend_mix, self.weekend_groups) if weekday >= 5 else (1.0, None)

    def rollout_reached(self, ds: date, regions: int, seed: int) -> np.ndarray | None:
        """Per region code, whether the rollout has reached it on ``ds`` (None: no rollout)."""
        if self.rollout is None:
            return None
        _, first_day, days, _ = self.rollout
        order = np.r_[np.random.default_rng([seed, 7]).permutation(regions - 1), regions - 1]
        reached_on = np.empty(regions, dtype=np.int64)
        reached_on[order] = np.round(np.linspace(0, days - 1, regions)).astype(np.int64)
        return (ds - date.fromisoformat(first_day)).days >= reached_on



@dataclass(frozen=True)
class World:
    """What the generated world looks like, beyond its seed.

    Parameters
    ----------
    zipf_exponent
        Query popularity falls as ``rank ** -zipf_exponent`` over 50,000 queries: 1.0 puts
        ~170 queries in the head (50% of traffic); 0.6 spreads traffic over thousands.
    group_weights
        Traffic share of each product group (:data:`PRODUCT_GROUPS` order), summing to 1.
    region_weights
        Traffic share of each region but the one launched mid-period (``BR``), summing to 1.
    new_share
        Share of impressions on products first seen less than 30 days before.
    lifetime_days
        Mean age, beyond their first 30 days, of the established products shown: a short one
        is a catalogue whose products age out fast.
    launch_every_days
        New products arrive every day (1) or in batches every N days, as collections and
        catalogue drops do: then the new products shown on a day are of few ages, and the
        new segment's coverage follows their cold start, batch after batch.
    cohort_spread
        Standard deviation (log scale) of each arrival day's own factor on engagement
        presence (0: none): a batch onboarded with half its data feeds is less covered for
        good, so the new segment's coverage moves as its membership turns over.
    calendar
        Weekends, growth, holidays and a rollout (see :class:`Calendar`).

    Examples
    --------
    >>> World(zipf_exponent=0.7).to_dict()["zipf_exponent"]
    0.7
    >>> World(new_share=1.5)
    Traceback (most recent call last):
    ...
    feco.errors.UsageError: world new_share=1.5 is not in [0, 1]
    """

    zipf_exponent: float = 1.0
    group_weights: tuple[float, ...] = GROUP_WEIGHTS
    region_weights: tuple[float, ...] = REGION_WEIGHTS
    new_share: float = 0.12
    lifetime_days: float = 365.0
    launch_every_days: int = 1
    cohort_spread: float = 0.0
    calendar: Calendar = field(default_factory=Calendar)

    def __post_init__(self) -> None:
        _check_range("zipf_exponent", self.zipf_exponent, 0.1, 3.0)
        _check_weights("group_weights", self.group_weights, len(PRODUCT_GROUPS))
        _check_weights("region_weights", self.region_weights, len(REGIONS) - 1)
        _check_range("new_share", self.new_share, 0.0, 1.0)
        _check_range("lifetime_days", self.lifetime_days, 1.0, 10_000.0)
        if not isinstance(self.launch_every_days, int) or not 1 <= self.launch_every_days <= 30:
            raise UsageError(f"world launch_every_days={self.launch_every_days!r} is not a whole number in 1..30")
        _check_range("cohort_spread", self.cohort_spread, 0.0, 2.0)

    def to_dict(self) -> dict[str, Any]:
        """The knobs as JSON-ready values (weights as lists; the calendar only when set)."""
        knobs = {key: _json(value) for key, value in asdict(self).items() if key != "calendar"}
        if self.calendar != Calendar():
            knobs["calendar"] = self.calendar.to_dict()
        return knobs


def _json(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def parse_world(spec: str) -> World:
    """A :class:`World` from ``key=value`` pairs separated by commas (weights by ``|``).

    Examples
    --------
    >>> parse_world("zipf_exponent=0.8, launch_every_days=14").launch_every_days
    14
    >>> parse_world("zipf=0.8")
    Traceback (most recent call last):
    ...
    feco.errors.UsageError: world spec 'zipf=0.8': unknown key 'zipf' (known: zipf_exponent, group_weights, region_weights, new_share, lifetime_days, launch_every_days, cohort_spread, weekend_volume, weekly_growth, weekend_mix, weekend_groups, holidays, holiday_volume, holiday_mix, rollout)
    >>> parse_world("weekend_volume=0.6,holidays=2026-02-14,rollout=pers_recent_view|2026-02-02|7|0.25").calendar.rollout
    ('pers_recent_view', '2026-02-02', 7, 0.25)
    """
    world_keys = [field.name for field in fields(World) if field.name != "calendar"]
    calendar_keys = [field.name for field in fields(Calendar)]
    values: dict[str, Any] = {}
    calendar: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        key, sep, text = (s.strip() for s in part.partition("="))
        if not sep or not text:
            raise UsageError(f"world spec {spec!r}: part {part!r} is not key=value")
        if key not in world_keys + calendar_keys:
            raise UsageError(f"world spec {spec!r}: unknown key {key!r} (known: {', '.join(world_keys + calendar_keys)})")
        (calendar if key in calendar_keys else values)[key] = _value(key, text)
    return World(**values, calendar=Calendar(**calendar))


def _value(key: str, text: str) -> Any:
    try:
        if key.endswith("_weights") or key == "weekend_groups":
            return tuple(float(w) for w in text.split("|"))
        if key == "holidays":
            return tuple(text.split("|"))
        if key == "rollout":
            feature, first_day, days, kept = text.split("|")
            return feature, first_day, int(days), float(kept)
        return int(text) if key == "launch_every_days" else float(text)
    except ValueError:
        raise UsageError(f"world {key}={text!r} is not a number{' list (W1|W2|...)' if '|' in text else ''}") from None


def _check_range(key: str, value: float, low: float, high: float) -> None:
    if not (isinstance(value, int | float) and low <= value <= high):
        raise UsageError(f"world {key}={value!r} is not in [{low:g}, {high:g}]")


def _iso_date(key: str, text: str) -> None:
    try:
        date.fromisoformat(text)
    except (TypeError, ValueError):
        raise UsageError(f"world {key}: {text!r} is not a date (YYYY-MM-DD)") from None


def _check_weights(key: str, weights: tuple[float, ...], count: int) -> None:
    if not isinstance(weights, tuple) or len(weights) != count:
        raise UsageError(f"world {key} needs {count} weights, got {weights!r}")
    if min(weights) <= 0 or not math.isclose(sum(weights), 1.0, abs_tol=1e-6):
        raise UsageError(f"world {key} must be positive and sum to 1, got {weights!r}")


DEFAULT_WORLD = World()
