"""What one day looks like before any row exists: traffic volume and shape, the day's query mix
and drift (a world's :class:`~feco.generator.world.Calendar` moves the volume and the mix).

Everything random about a day as a whole is drawn here from
``SeedSequence([seed, date.toordinal()])``, so a day does not depend on which range it was
generated in; each hour then gets its own child seed so hours can be built independently.
"""

from __future__ import annotations

import datetime as dt
import functools
from dataclasses import dataclass

import numpy as np

from feco.generator.catalogue import QueryTable, query_table, week_bands
from feco.generator.schema import FEATURE_FAMILIES
from feco.generator.world import World

MINUTES_PER_DAY = 1_440
EVENT_ID_STRIDE = 1_000_000_000
# A day's own count swings around the mean (weekday, wobble); a quarter of the id stride keeps
# even a busy day's event ids from spilling into the next day's.
MAX_EVENTS_PER_DAY = EVENT_ID_STRIDE // 4

# Mean 1 over a week: a little more search at weekends, a Friday dip.
_VOLUME_BY_WEEKDAY = np.array([1.00, 0.98, 0.97, 0.98, 0.94, 1.05, 1.08])
WEEKDAY_VOLUME = tuple(_VOLUME_BY_WEEKDAY / _VOLUME_BY_WEEKDAY.mean())
_NIGHT_TROUGH_HOUR = 4.0
_EVENING_PEAK_HOUR = 20.0
_DIURNAL_AMPLITUDE = 0.7

# Relative day-to-day wobble of presence rates: one draw per family, one per feature.
_FAMILY_WOBBLE = {"engagement": 0.03, "price": 0.035}
_FEATURE_WOBBLE = {"engagement": 0.03, "price": 0.035}
_HOUR_WOBBLE = 0.02
_WEEKEND_PRESENCE = {"engagement": 0.97, "price": 1.12}
_LOGGED_IN_SHARE = {"weekday": 0.68, "weekend": 0.55}

_NEW_REGION_START_SHARE = 0.01
_NEW_REGION_FINAL_SHARE = 0.07
_NEW_REGION_GROWTH_DAYS = 28.0


@dataclass(frozen=True)
class DayPlan:
    """The day-level draws every hour of ``ds`` shares."""

    ds: dt.date
    seed: int
    world: World
    minute_counts: np.ndarray
    region_shares: np.ndarray
    logged_in_share: float
    days_since_launch: int | None
    presence: dict[str, float]
    hour_presence: dict[str, np.ndarray]
    hour_seeds: tuple[np.random.SeedSequence, ...]
    query_mix: tuple[float, tuple[float, ...] | None] = (1.0, None)  # the calendar's, see Calendar.mix

    @property
    def queries(self) -> QueryTable:
        mix, group_mix = self.query_mix
        return query_table(self.seed, self.world.zipf_exponent * mix, self.world.group_weights, group_mix)

    @property
    def query_bands(self) -> np.ndarray:
        """Each query's band by its popularity in a usual week (``week_bands``): a weekend's
        or a holiday's mix moves traffic between the bands, not queries between them, as bands
        drawn from weeks of traffic do; a failure of tail queries hits the same queries every day."""
        return _week_bands(self.seed, self.world)

    @property
    def n_events(self) -> int:
        return int(self.minute_counts.sum())

    @property
    def event_id_base(self) -> int:
        return self.ds.toordinal() * EVENT_ID_STRIDE

    @property
    def is_weekend(self) -> bool:
        return self.ds.weekday() >= 5


@functools.lru_cache(maxsize=16)
def _week_bands(seed: int, world: World) -> np.ndarray:
    plain = query_table(seed, world.zipf_exponent, world.group_weights)
    weights = np.diff(plain.cdf, prepend=0.0)
    return week_bands(weights, plain.group, world.calendar.usual_week(WEEKDAY_VOLUME))


def plan_day(
    ds: dt.date, *, events_per_day: int, seed: int, new_region_launch: dt.date, world: World
) -> DayPlan:
    """Draw the day-level shape of ``ds``: events per minute, region mix and drift factors."""
    day_seed, *hour_seeds = np.random.SeedSequence([seed, ds.toordinal()]).spawn(25)
    rng = np.random.default_rng(day_seed)
    weekend = ds.weekday() >= 5
    days_since_launch = (ds - new_region_launch).days
    volume = world.calendar.volume(ds, weekday_shape=WEEKDAY_VOLUME, since_launch=days_since_launch)
    n_events = min(round(events_per_day * volume * np.exp(rng.normal(0, 0.02))), MAX_EVENTS_PER_DAY)
    minute_counts = rng.multinomial(n_events, _diurnal_profile())
    presence, hour_presence = _presence_drift(rng, weekend=weekend)
    return DayPlan(
        ds=ds,
        seed=seed,
        world=world,
        minute_counts=minute_counts,
        region_shares=_region_shares(days_since_launch, world.region_weights),
        logged_in_share=_LOGGED_IN_SHARE["weekend" if weekend else "weekday"],
        days_since_launch=days_since_launch if days_since_launch >= 0 else None,
        presence=presence,
        hour_presence=hour_presence,
        hour_seeds=tuple(hour_seeds),
        query_mix=world.calendar.mix(ds),
    )


def _diurnal_profile() -> np.ndarray:
    """Share of a day's events per UTC minute: trough at 04:00, peak at 20:00.

    The rise (16 h) is slower than the fall (8 h), so the phase is warped piecewise and a
    cosine of it is taken; the curve stays smooth at both turning points.
    """
    hours = (np.arange(MINUTES_PER_DAY) + 0.5) / 60.0
    since_trough = (hours - _NIGHT_TROUGH_HOUR) % 24.0
    rise = _EVENING_PEAK_HOUR - _NIGHT_TROUGH_HOUR
    phase = np.where(
        since_trough < rise,
        np.pi * since_trough / rise,
        np.pi + np.pi * (since_trough - rise) / (24.0 - rise),
    )
    density = 1.0 - _DIURNAL_AMPLITUDE * np.cos(phase)
    return density / density.sum()


def _region_shares(days_since_launch: int, weights: tuple[float, ...]) -> np.ndarray:
    """Traffic share per region; the new region starts small and grows for a few weeks."""
    if days_since_launch < 0:
        new_share = 0.0
    else:
        growth = 1.0 - np.exp(-days_since_launch / _NEW_REGION_GROWTH_DAYS)
        new_share = (
            _NEW_REGION_START_SHARE + (_NEW_REGION_FINAL_SHARE - _NEW_REGION_START_SHARE) * growth
        )
    old = np.asarray(weights) / sum(weights) * (1.0 - new_share)
    return np.append(old, new_share)


def _presence_drift(
    rng: np.random.Generator, *, weekend: bool
) -> tuple[dict[str, float], dict[str, np.ndarray]]:
    """Per-feature day factors and per-family hour factors on presence rates.

    Real engagement and promotion coverage moves a few percent from day to day (campaigns,
    traffic mix, pipeline lag); without this a day-over-day alert rule would look perfect.
    """
    presence: dict[str, float] = {}
    hour_presence: dict[str, np.ndarray] = {}
    for family, sigma in _FAMILY_WOBBLE.items():
        family_factor = np.exp(rng.normal(0.0, sigma))
        if weekend:
            family_factor *= _WEEKEND_PRESENCE[family]
        for name in FEATURE_FAMILIES[family]:
            presence[name] = float(family_factor * np.exp(rng.normal(0.0, _FEATURE_WOBBLE[family])))
        hour_presence[family] = np.exp(rng.normal(0.0, _HOUR_WOBBLE, size=24))
    return presence, hour_presence
