"""Search events of one hour and the products shown in each ranked list.

An hour's rows are laid out event after event (the shown order is fixed later by the
production ranker), with every per-event attribute repeated over the event's rows.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np

from feco.generator.calendar import DayPlan
from feco.generator.catalogue import MAX_AGE_DAYS, product_ids, slots_per_day
from feco.generator.schema import NEW_PRODUCT_DAYS, NEW_REGION, REGIONS
from feco.generator.world import World

_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()
_US_PER_MINUTE = 60_000_000
_US_PER_DAY = 86_400_000_000
_MIN_LIST, _MAX_LIST = 5, 20
_CROSS_GROUP_SHARE = 0.15
# Low slots are a day's popular arrivals: shown more often, engaged with more.
_SLOT_SKEW = 1.6
# The new region's shoppers are less often signed in during its first weeks.
_NEW_REGION_LOGGED_IN = 0.75


@dataclass(frozen=True)
class Rows:
    """Per-row context of one hour, before features: one entry per (event, shown product)."""

    n_events: int
    event_ts: np.ndarray
    event_id: np.ndarray
    event_index: np.ndarray
    query: np.ndarray
    region: np.ndarray
    logged_in: np.ndarray
    group: np.ndarray
    category_match: np.ndarray
    age_days: np.ndarray
    first_seen: np.ndarray
    product_id: np.ndarray
    slot_rank: np.ndarray

    def __len__(self) -> int:
        return len(self.product_id)


def draw_rows(plan: DayPlan, hour: int, rng: np.random.Generator) -> Rows:
    """Draw the events of ``hour`` on ``plan.ds`` and the products each of them showed."""
    event_ts, event_id = event_times(plan, hour, rng)
    n_events = len(event_ts)
    queries = plan.queries
    query = np.searchsorted(queries.cdf, rng.random(n_events) * queries.cdf[-1]).astype(np.int32)
    region = choose(rng, plan.region_shares, n_events)
    logged_in = rng.random(n_events, dtype=np.float32) < _logged_in_share(plan, region)
    lengths = rng.integers(_MIN_LIST, _MAX_LIST + 1, n_events)
    event_index = np.repeat(np.arange(n_events, dtype=np.int32), lengths)
    query_of_row = query[event_index]
    group, category_match = _product_group(queries.group[query_of_row], plan.world, rng)
    age_days, slot, slot_rank = _product_age_and_slot(group, plan, rng)
    first_seen = plan.ds.toordinal() - age_days
    return Rows(
        n_events=n_events,
        event_ts=event_ts[event_index],
        event_id=event_id[event_index],
        event_index=event_index,
        query=query_of_row,
        region=region[event_index],
        logged_in=logged_in[event_index],
        group=group,
        category_match=category_match,
        age_days=age_days,
        first_seen=(first_seen - _EPOCH_ORDINAL).astype(np.int32),
        product_id=product_ids(first_seen, group, slot),
        slot_rank=slot_rank,
    )


def event_times(
    plan: DayPlan, hour: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Sorted event timestamps (µs since epoch) of one hour, and their day-unique ids."""
    first_minute = hour * 60
    counts = plan.minute_counts[first_minute : first_minute + 60]
    minutes = np.repeat(np.arange(first_minute, first_minute + 60, dtype=np.int64), counts)
    day_start = (plan.ds.toordinal() - _EPOCH_ORDINAL) * _US_PER_DAY
    event_ts = day_start + minutes * _US_PER_MINUTE + rng.integers(0, _US_PER_MINUTE, len(minutes))
    event_ts.sort()
    first_seq = int(plan.minute_counts[:first_minute].sum())
    event_id = plan.event_id_base + first_seq + np.arange(len(event_ts), dtype=np.int64)
    return event_ts, event_id


def choose(rng: np.random.Generator, shares: np.ndarray, size: int) -> np.ndarray:
    """Categorical draws as int8 codes (faster than ``rng.choice`` with ``p``)."""
    cdf = np.cumsum(shares)
    return np.searchsorted(cdf / cdf[-1], rng.random(size), side="right").astype(np.int8)


def _logged_in_share(plan: DayPlan, region: np.ndarray) -> np.ndarray:
    share = np.full(len(region), plan.logged_in_share, dtype=np.float32)
    share[region == REGIONS.index(NEW_REGION)] *= _NEW_REGION_LOGGED_IN
    return share


def _product_group(
    query_group: np.ndarray, world: World, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Mostly the query's own group; some results come from elsewhere in the catalogue."""
    other = choose(rng, np.asarray(world.group_weights), len(query_group))
    group = np.where(
        rng.random(len(query_group), dtype=np.float32) < _CROSS_GROUP_SHARE, other, query_group
    )
    return group, group == query_group


def _product_age_and_slot(
    group: np.ndarray, plan: DayPlan, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Age in days of each shown product, its arrival slot, and the slot as a rank in [0, 1)."""
    n, world = len(group), plan.world
    is_new = rng.random(n, dtype=np.float32) < world.new_share
    established = NEW_PRODUCT_DAYS + rng.exponential(world.lifetime_days, n).astype(np.int32)
    new_ages = _launch_ages(plan)
    age = np.where(
        is_new,
        new_ages[rng.integers(0, len(new_ages), n, dtype=np.int32)],
        np.minimum(established, MAX_AGE_DAYS),
    )
    slot_rank = rng.random(n, dtype=np.float32) ** _SLOT_SKEW
    arrivals = slots_per_day(world.group_weights, world.launch_every_days)
    slot = (slot_rank * arrivals[group]).astype(np.int64)
    return age.astype(np.int32), slot, slot_rank


def _launch_ages(plan: DayPlan) -> np.ndarray:
    """The ages a new product can have on ``plan.ds``: every age under 30 days when products
    arrive daily; with batches every N days, the days since each batch of the last 30."""
    every = plan.world.launch_every_days
    since_last = (plan.ds.toordinal() - plan.seed) % every
    return np.arange(since_last, NEW_PRODUCT_DAYS, every, dtype=np.int32)
