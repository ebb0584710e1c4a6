"""The knobs of the simulated world: query concentration, catalogue churn, segment sizes.

The defaults are the generator's own world, so logs generated without a :class:`World` stay
byte for byte what they were. A benchmark turns the knobs to test monitoring on worlds it was
not tuned on: a flatter or steeper query mix, products arriving in batches and ageing out
fast, product groups and regions from 1% to 50% of traffic.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

from feco.errors import UsageError
from feco.generator.schema import GROUP_WEIGHTS, PRODUCT_GROUPS, REGION_WEIGHTS, REGIONS

WORLD_SPEC_HELP = (
    "zipf_exponent=S,group_weights=W1|W2|...,region_weights=W1|...,new_share=P,"
    "lifetime_days=D,launch_every_days=N,cohort_spread=S (any subset)"
)


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
        """The knobs as JSON-ready values (weights as lists)."""
        return {key: list(value) if isinstance(value, tuple) else value for key, value in asdict(self).items()}


def parse_world(spec: str) -> World:
    """A :class:`World` from ``key=value`` pairs separated by commas (weights by ``|``).

    Examples
    --------
    >>> parse_world("zipf_exponent=0.8, launch_every_days=14").launch_every_days
    14
    >>> parse_world("zipf=0.8")
    Traceback (most recent call last):
    ...
    feco.errors.UsageError: world spec 'zipf=0.8': unknown key 'zipf' (known: zipf_exponent, group_weights, region_weights, new_share, lifetime_days, launch_every_days, cohort_spread)
    """
    known = {field.name: field.type for field in fields(World)}
    values: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        key, sep, text = (s.strip() for s in part.partition("="))
        if not sep or not text:
            raise UsageError(f"world spec {spec!r}: part {part!r} is not key=value")
        if key not in known:
            raise UsageError(f"world spec {spec!r}: unknown key {key!r} (known: {', '.join(known)})")
        values[key] = _value(key, text)
    return World(**values)


def _value(key: str, text: str) -> Any:
    try:
        if key.endswith("_weights"):
            return tuple(float(w) for w in text.split("|"))
        return int(text) if key == "launch_every_days" else float(text)
    except ValueError:
        raise UsageError(f"world {key}={text!r} is not a number{' list (W1|W2|...)' if '|' in text else ''}") from None


def _check_range(key: str, value: float, low: float, high: float) -> None:
    if not (isinstance(value, int | float) and low <= value <= high):
        raise UsageError(f"world {key}={value!r} is not in [{low:g}, {high:g}]")


def _check_weights(key: str, weights: tuple[float, ...], count: int) -> None:
    if not isinstance(weights, tuple) or len(weights) != count:
        raise UsageError(f"world {key} needs {count} weights, got {weights!r}")
    if min(weights) <= 0 or not math.isclose(sum(weights), 1.0, abs_tol=1e-6):
        raise UsageError(f"world {key} must be positive and sum to 1, got {weights!r}")


DEFAULT_WORLD = World()
