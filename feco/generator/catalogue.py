"""The simulated world behind the logs: queries and products that outlive any one day.

Nothing here is stored: a query's or a product's attributes are a hash of (seed, its id), so a
day can be generated alone and still agree with every other day of the same seed.

Products are identified by when they arrived: ``product_id = first_seen_ordinal * 10_000 +
group * 1_000 + slot``. New products arrive every day in every group (more in big groups), and
the catalogue needs no state to know a product's group or first-seen date.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from feco.generator.schema import GROUP_WEIGHTS

N_QUERIES = 50_000
# Zipf exponent 1 (the default world) over 50k queries puts ~170 queries in the head (50% of
# traffic) and ~5k in the torso (next 30%), leaving a long tail, as in product search.
_BAND_EDGES = (0.5, 0.8)

MAX_AGE_DAYS = 1_500
# A product id holds its arrival slot in three digits.
_MAX_SLOTS = 999

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser over a uint64 array: a cheap, well-spread stateless hash."""
    x = x ^ (x >> np.uint64(30))
    x = x * _M1
    x = x ^ (x >> np.uint64(27))
    x = x * _M2
    return x ^ (x >> np.uint64(31))


def hash_ids(ids: np.ndarray, *, seed: int, stream: int) -> np.ndarray:
    """Hash integer ids into 64 random bits, independently per (seed, stream)."""
    salt = mix(np.array([seed * 1_000_003 + stream], dtype=np.uint64))[0]
    return mix(ids.astype(np.uint64) * _GOLDEN ^ salt)


def uniforms(bits: np.ndarray) -> tuple[np.ndarray, ...]:
    """Split 64 hashed bits into four float32 uniforms on (0, 1) with 16-bit resolution."""
    mask = np.uint64(0xFFFF)
    return tuple(
        (((bits >> np.uint64(shift)) & mask).astype(np.float32) + 0.5) / 65536.0
        for shift in (0, 16, 32, 48)
    )


def normal_from_uniform(u: np.ndarray) -> np.ndarray:
    """A logistic stand-in for the normal quantile: unit variance, close enough for latents."""
    return (0.5513 * np.log(u / (1.0 - u))).astype(np.float32)


@dataclass(frozen=True)
class QueryTable:
    """Query popularity and attributes for one seed; the index is the popularity rank."""

    cdf: np.ndarray
    popularity_score: np.ndarray
    group: np.ndarray
    names: pa.Array


@functools.lru_cache(maxsize=16)
def query_table(
    seed: int, zipf_exponent: float = 1.0, group_weights: tuple[float, ...] = GROUP_WEIGHTS,
    group_mix: tuple[float, ...] | None = None,
) -> QueryTable:
    """The query catalogue of ``seed`` (cached: every hour of every day uses it). With
    ``group_mix`` a product group's queries fall as ``rank ** -(zipf_exponent * mix)``: a
    group searched for in its tail (a weekend's mix, :class:`feco.generator.world.Calendar`)."""
    ranks = np.arange(N_QUERIES)
    u_group, _, _, _ = uniforms(hash_ids(ranks, seed=seed, stream=1))
    group = np.searchsorted(np.cumsum(group_weights), u_group * 0.999999).astype(np.int8)
    weights = 1.0 / (ranks + 1.0) ** zipf_exponent
    if group_mix is not None:
        weights = within_groups(weights, group, np.asarray(group_mix))
    cdf = np.cumsum(weights) / weights.sum()
    popularity_score = (1.0 - np.log1p(ranks) / np.log1p(N_QUERIES)).astype(np.float32)
    # Names are a seeded permutation so a query's popularity is not readable from its name.
    perm = np.random.default_rng(np.random.SeedSequence([seed, 1])).permutation(N_QUERIES)
    names = pa.array([f"q{number:06d}" for number in perm], type=pa.string())
    return QueryTable(
        cdf=cdf, popularity_score=popularity_score, group=group, names=names
    )


def week_bands(weights: np.ndarray, group: np.ndarray,
               usual_week: list[tuple[float, float, tuple[float, ...] | None]]) -> np.ndarray:
    """Each query's band in a usual week's traffic (``Calendar.usual_week``: each day's volume
    and mix of the plain ``weights``): bands a team draws from weeks of its searches, weekends
    included, so a failure "in head queries" hits half of the week's searches."""
    week = np.zeros(len(weights))
    for volume, mix, group_mix in usual_week:
        day = weights ** mix
        if group_mix is not None:
            day = within_groups(day, group, np.asarray(group_mix))
        week += volume * day / day.sum()
    # a query's band is set by the traffic share of the queries more popular than it
    order = np.argsort(-week, kind="stable")
    share = week[order] / week.sum()
    band = np.empty(len(weights), dtype=np.int8)
    band[order] = np.searchsorted(_BAND_EDGES, np.cumsum(share) - share, side="right")
    return band


def within_groups(weights: np.ndarray, group: np.ndarray, mix: np.ndarray) -> np.ndarray:
    """Each group's queries' weights raised to its ``mix`` and scaled back to the group's own
    total: the group is searched for as often, deeper in its tail (``mix`` below 1)."""
    moved = weights ** mix[group]
    totals = np.bincount(group, weights=weights, minlength=len(mix))
    moved_totals = np.bincount(group, weights=moved, minlength=len(mix))
    return moved * (totals / np.where(moved_totals > 0, moved_totals, 1.0))[group]


def slots_per_day(group_weights: tuple[float, ...], launch_every_days: int = 1) -> np.ndarray:
    """Products arriving per launch in each group: more in big groups, more per batch when
    products arrive in batches."""
    per_day = np.maximum(3, np.round(300 * np.asarray(group_weights))).astype(np.int64)
    return np.minimum(per_day * launch_every_days, _MAX_SLOTS)


def product_ids(first_seen: np.ndarray, group: np.ndarray, slot: np.ndarray) -> np.ndarray:
    """Product ids from arrival day ordinal, group index and slot within that day's arrivals."""
    return first_seen.astype(np.int64) * 10_000 + group.astype(np.int64) * 1_000 + slot
