"""Injected incidents: a share of one feature's logged values turned to zero or NULL.

An incident corrupts what is *logged* only. User behaviour (labels) and the shown order come
from the clean values, as they would when a logging or feature-store bug hides a signal that
the serving side still had. A *source outage* hits several features of one upstream source
(a feature family) on the same rows: the join with that source failed.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from feco.errors import UsageError
from feco.generator.schema import (
    FEATURE_FAMILIES,
    PRODUCT_AGES,
    PRODUCT_GROUPS,
    QUERY_BANDS,
    REGIONS,
)

SEGMENT_VALUES: dict[str, tuple[str, ...]] = {
    "product_group": PRODUCT_GROUPS,
    "region": REGIONS,
    "query_band": QUERY_BANDS,
    "product_age": PRODUCT_AGES,
}
KINDS = ("zero", "null", "zero_fill")
SHAPES = ("step", "decay")
# What an incident hits: one feature, a list of them, or (the first N of) a source's features.
_TARGETS = ("feature", "features", "source")
_REQUIRED = ("start", "days", "share")
_OPTIONAL = ("kind", "shape", "segment")
_SOURCE = re.compile(r"^(\w+)(?:\[:(\d+)\])?$")

INCIDENT_SPEC_HELP = (
    "feature=NAME|features=A|B|...|source=FAMILY[:N],start=YYYY-MM-DD,days=N,share=S"
    "[,kind=zero|null|zero_fill][,shape=step|decay][,segment=DIM:VALUE]"
)


@dataclass(frozen=True)
class Segment:
    """One segment an incident is confined to, e.g. ``Segment("region", "DE")``."""

    dim: str
    value: str


@dataclass(frozen=True)
class Incident:
    """A share of one feature's values set to zero or NULL for a run of days.

    Parameters
    ----------
    feature
        One of :data:`feco.generator.FEATURES`.
    start
        First affected day (UTC).
    days
        Number of affected days, ``start`` included.
    share
        Share of the feature's values hit, in (0, 1]; with ``shape="decay"`` the share reached
        on the last day.
    kind
        ``"zero"`` writes 0.0, ``"null"`` writes NULL (a logging bug, told apart by monitoring),
        ``"zero_fill"`` writes 0.0 over NULLs too (an upstream failing to its default value:
        a feature's NULL share falls to nothing while it lasts, and comes back after).
    shape
        ``"step"`` hits ``share`` from the first day; ``"decay"`` hits ``share * d / days`` on
        day ``d = 1..days``.
    segment
        Confine the incident to one segment; ``None`` hits all traffic.
    others
        Further features hit on the same rows (a source outage): the incident's features are
        ``(feature, *others)``.
    source
        The feature family (upstream source) they all come from, for an outage.
    """

    feature: str
    start: dt.date
    days: int
    share: float
    kind: Literal["zero", "null", "zero_fill"] = "zero"
    shape: Literal["step", "decay"] = "step"
    segment: Segment | None = None
    others: tuple[str, ...] = ()
    source: str | None = None

    @property
    def features(self) -> tuple[str, ...]:
        """Every feature the incident hits."""
        return (self.feature, *self.others)

    def share_on(self, ds: dt.date) -> float:
        """Share of values hit on day ``ds`` (0.0 outside the incident).

        Examples
        --------
        >>> inc = parse_incident("feature=eng_ctr_7d,start=2026-01-10,days=4,share=0.8,shape=decay")
        >>> [inc.share_on(dt.date(2026, 1, d)) for d in (9, 10, 13, 14)]
        [0.0, 0.2, 0.8, 0.0]
        """
        day = (ds - self.start).days + 1
        if not 1 <= day <= self.days:
            return 0.0
        return self.share if self.shape == "step" else self.share * day / self.days

    def to_dict(self) -> dict[str, Any]:
        """The incident as JSON-ready ground truth."""
        segment = (
            None if self.segment is None else {"dim": self.segment.dim, "value": self.segment.value}
        )
        truth = {
            "feature": self.feature,
            "start": self.start.isoformat(),
            "days": self.days,
            "share": self.share,
            "kind": self.kind,
            "shape": self.shape,
            "segment": segment,
        }
        if self.others or self.source:
            truth |= {"features": list(self.features), "source": self.source}
        return truth


def parse_incident(spec: str, *, families: Mapping[str, Sequence[str]] = FEATURE_FAMILIES) -> Incident:
    """Parse an incident spec such as the one ``feco generate-logs --incident`` takes.

    Parameters
    ----------
    spec
        Comma-separated ``key=value`` pairs: ``start``, ``days`` and ``share`` are required,
        and one of ``feature=NAME``, ``features=A|B|...`` (several features on the same rows)
        or ``source=FAMILY`` (all of a family's features; ``source=FAMILY[:N]`` its first N);
        ``kind`` (default ``zero``), ``shape`` (default ``step``) and ``segment=DIM:VALUE``
        with DIM one of ``product_group``, ``region``, ``query_band``, ``product_age`` are
        optional.
    families
        The world's features by family (source); the generator's by default.

    Returns
    -------
    Incident

    Raises
    ------
    UsageError
        Naming the part of the spec that is wrong.

    Examples
    --------
    >>> parse_incident("feature=eng_ctr_30d,start=2026-03-01,days=5,share=0.9,segment=region:DE")
    ... # doctest: +NORMALIZE_WHITESPACE
    Incident(feature='eng_ctr_30d', start=datetime.date(2026, 3, 1), days=5, share=0.9,
             kind='zero', shape='step', segment=Segment(dim='region', value='DE'), others=(),
             source=None)
    >>> parse_incident("source=engagement[:3],start=2026-03-01,days=1,share=1").features
    ('eng_ctr_7d', 'eng_ctr_30d', 'eng_atc_rate_30d')
    """
    parts = _split_spec(spec)
    features = _features(parts, families)
    return Incident(
        feature=features[0],
        others=features[1:],
        source=None if "feature" in parts else _common_family(features, families),
        start=_date(parts["start"]),
        days=_positive_int(parts["days"]),
        share=_share(parts["share"]),
        kind=_choice(parts, "kind", KINDS, default="zero"),
        shape=_choice(parts, "shape", SHAPES, default="step"),
        segment=_segment(parts.get("segment")),
    )


def _split_spec(spec: str) -> dict[str, str]:
    parts: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in spec.split(","))):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or not value.strip():
            raise UsageError(f"incident spec {spec!r}: part {part!r} is not key=value")
        if key not in _TARGETS + _REQUIRED + _OPTIONAL:
            known = ", ".join(_TARGETS + _REQUIRED + _OPTIONAL)
            raise UsageError(f"incident spec {spec!r}: unknown key {key!r} (known: {known})")
        if key in parts:
            raise UsageError(f"incident spec {spec!r}: key {key!r} given twice")
        parts[key] = value.strip()
    targets = [key for key in _TARGETS if key in parts]
    missing = [key for key in _REQUIRED if key not in parts] + ([] if targets else ["feature"])
    if missing:
        raise UsageError(f"incident spec {spec!r}: missing {', '.join(missing)}")
    if len(targets) > 1:
        raise UsageError(f"incident spec {spec!r}: give one of feature, features, source, not {' and '.join(targets)}")
    return parts


def _features(parts: dict[str, str], families: Mapping[str, Sequence[str]]) -> tuple[str, ...]:
    """The features an incident hits, from whichever of feature, features, source it gives."""
    known = tuple(name for names in families.values() for name in names)
    if "feature" in parts:
        return (_choice(parts, "feature", known),)
    if "features" in parts:
        names = tuple(_choice({"feature": name.strip()}, "feature", known) for name in parts["features"].split("|"))
        if len(set(names)) < len(names):
            raise UsageError(f"incident features={parts['features']!r} names a feature twice")
        return names
    match = _SOURCE.match(parts["source"])
    family = families.get(match.group(1)) if match else None
    if family is None:
        raise UsageError(f"incident source={parts['source']!r} is not FAMILY or FAMILY[:N] "
                         f"with FAMILY one of: {', '.join(families)}")
    count = int(match.group(2) or len(family))
    if not 1 <= count <= len(family):
        raise UsageError(f"incident source={parts['source']!r}: {match.group(1)} has {len(family)} features")
    return tuple(family[:count])


def _common_family(features: tuple[str, ...], families: Mapping[str, Sequence[str]]) -> str | None:
    """The one family all ``features`` belong to, else None."""
    return next((name for name, members in families.items() if set(features) <= set(members)), None)


def _choice(parts: dict[str, str], key: str, allowed: tuple[str, ...], *, default: str = "") -> Any:
    value = parts.get(key, default)
    if value in allowed:
        return value
    if len(allowed) > 10:
        close = difflib.get_close_matches(value, allowed, n=1)
        hint = f" (did you mean {close[0]}?)" if close else " (not among the world's features)"
        raise UsageError(f"incident {key}={value!r} is not a known {key}{hint}")
    raise UsageError(f"incident {key}={value!r} is not one of: {', '.join(allowed)}")


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise UsageError(f"incident start={text!r} is not a date YYYY-MM-DD") from None


def _positive_int(text: str) -> int:
    try:
        days = int(text)
    except ValueError:
        days = 0
    if days < 1:
        raise UsageError(f"incident days={text!r} is not a positive whole number")
    return days


def _share(text: str) -> float:
    try:
        share = float(text)
    except ValueError:
        share = float("nan")
    if not 0.0 < share <= 1.0:
        raise UsageError(f"incident share={text!r} is not a number in (0, 1]")
    return share


def _segment(text: str | None) -> Segment | None:
    if text is None:
        return None
    dim, sep, value = text.partition(":")
    if dim not in SEGMENT_VALUES:
        raise UsageError(f"incident segment dim {dim!r} is not one of: {', '.join(SEGMENT_VALUES)}")
    if not sep or value not in SEGMENT_VALUES[dim]:
        allowed = ", ".join(SEGMENT_VALUES[dim])
        raise UsageError(f"incident segment value {value!r} for {dim} is not one of: {allowed}")
    return Segment(dim, value)


def incident_mask(
    incident: Incident, ds: dt.date, segments: dict[str, np.ndarray], *, rng: np.random.Generator
) -> np.ndarray | None:
    """Rows of one hour hit by ``incident`` on ``ds``, or None when it is not active.

    ``segments`` maps each segment dim to the rows' value codes (indexes into
    :data:`SEGMENT_VALUES`).
    """
    share = incident.share_on(ds)
    if share == 0.0:
        return None
    n_rows = len(next(iter(segments.values())))
    hit = rng.random(n_rows, dtype=np.float32) < share
    if incident.segment is not None:
        code = SEGMENT_VALUES[incident.segment.dim].index(incident.segment.value)
        hit &= segments[incident.segment.dim] == code
    return hit


def check_incidents(
    incidents: Sequence[Incident], *, families: Mapping[str, Sequence[str]] = FEATURE_FAMILIES
) -> None:
    """Reject incidents built in Python with values a spec would not parse to."""
    for incident in incidents:
        if incident != parse_incident(_spec_of(incident), families=families):
            raise UsageError(f"incident {incident!r} does not round-trip through its spec")


def _spec_of(incident: Incident) -> str:
    several = incident.others or incident.source
    parts = [
        f"features={'|'.join(incident.features)}" if several else f"feature={incident.feature}",
        f"start={incident.start.isoformat()}",
        f"days={incident.days}",
        f"share={incident.share!r}",
        f"kind={incident.kind}",
        f"shape={incident.shape}",
    ]
    if incident.segment is not None:
        parts.append(f"segment={incident.segment.dim}:{incident.segment.value}")
    return ",".join(parts)
