"""Metric ids and the registry of metric families.

A metric id is a string ``name@k`` (``"ndcg@8"``) or a bare ``name`` (no cut-off), parsed once
into a :class:`Metric`. Each family lives in its own module with the definitions and
conventions it documents; the kernels (numba or NumPy) are in :mod:`feco.evaluation._kernels`.

============================  =======================================  ================
id                            family module                            cut-off
============================  =======================================  ================
``precision@k``               :mod:`~feco.evaluation.metrics.cutoff`       required
``recall@k``                  :mod:`~feco.evaluation.metrics.cutoff`       optional
``hit_rate@k``                :mod:`~feco.evaluation.metrics.cutoff`       required
``r_precision``               :mod:`~feco.evaluation.metrics.cutoff`       none
``candidate_recall@k``        :mod:`~feco.evaluation.metrics.cutoff`       optional
``dcg@k``, ``ndcg@k``         :mod:`~feco.evaluation.metrics.dcg`          optional
``mrr@k``                     :mod:`~feco.evaluation.metrics.reciprocal_rank`  optional
``map@k``                     :mod:`~feco.evaluation.metrics.average_precision`  optional
``coverage@k``                :mod:`~feco.evaluation.metrics.coverage`     required
============================  =======================================  ================
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

import numpy as np

from feco.errors import UsageError
from feco.evaluation.conventions import Conventions
from feco.evaluation.ranked import RankedJudgments

NO_CUTOFF = np.iinfo(np.int64).max
_ALIASES = {"r-precision": "r_precision", "rprec": "r_precision", "hit-rate": "hit_rate"}


@dataclass(frozen=True)
class Definition:
    """What a metric name accepts.

    Attributes
    ----------
    name
        The metric's name in ids.
    cutoff
        ``"required"``, ``"optional"`` or ``"none"``.
    averages_ties
        Whether the value has an expectation over tied orders (it adds a value per rank).
    per_query
        False for run-level metrics (catalogue coverage).
    """

    name: str
    cutoff: str
    averages_ties: bool
    per_query: bool = True


@dataclass(frozen=True)
class Metric:
    """A parsed metric id.

    Examples
    --------
    >>> from feco.evaluation.metrics import parse_metric
    >>> parse_metric("ndcg@8")
    Metric(name='ndcg', k=8)
    >>> parse_metric("r-precision").id
    'r_precision'
    """

    name: str
    k: int | None

    @property
    def id(self) -> str:
        """The canonical id, ``name@k`` or ``name``."""
        return self.name if self.k is None else f"{self.name}@{self.k}"

    @property
    def cutoff(self) -> int:
        """The cut-off as an int, with no cut-off as the largest int64."""
        return NO_CUTOFF if self.k is None else self.k

    @property
    def definition(self) -> Definition:
        """The definition of the metric's name."""
        return _definitions()[self.name][0]

    @property
    def family(self) -> ModuleType:
        """The module that computes the metric."""
        return _definitions()[self.name][1]


@dataclass(frozen=True)
class Context:
    """What every per-query metric reads: ranks, gains, relevance and normalisers.

    Attributes
    ----------
    ranked
        Ranks of the positive judged items.
    conventions
        The conventions in force.
    gains
        Gain of each positive judged item.
    relevant
        Whether each positive judged item reaches ``relevance_level``.
    n_relevant
        Relevant items per query in the conventions' ``ideal`` set.
    n_relevant_judged
        Relevant judged items per query, retrieved or not.
    """

    ranked: RankedJudgments
    conventions: Conventions
    gains: np.ndarray
    relevant: np.ndarray
    n_relevant: np.ndarray
    n_relevant_judged: np.ndarray


def parse_metric(text: str) -> Metric:
    """Parse one metric id such as ``"ndcg@8"``, ``"map"`` or ``"r-precision"``.

    Raises
    ------
    UsageError
        For an unknown name, a bad cut-off, or a cut-off the metric does not take.
    """
    raw = text.strip().lower()
    name, _, k_text = raw.partition("@")
    name = _ALIASES.get(name, name)
    known = _definitions()
    if name not in known:
        raise UsageError(f"unknown metric {text!r}; known: {', '.join(sorted(known))}")
    definition = known[name][0]
    k: int | None = None
    if k_text:
        if not k_text.isdigit() or int(k_text) < 1:
            raise UsageError(f"metric {text!r}: the cut-off must be a positive integer")
        k = int(k_text)
    if definition.cutoff == "required" and k is None:
        raise UsageError(f"metric {text!r} needs a cut-off, e.g. {name}@10")
    if definition.cutoff == "none" and k is not None:
        raise UsageError(f"metric {text!r} takes no cut-off; use {name}")
    return Metric(name, k)


def parse_metrics(spec: str | Sequence[str]) -> list[Metric]:
    """Parse a comma-separated string or a sequence of ids, keeping order, dropping repeats.

    Examples
    --------
    >>> from feco.evaluation.metrics import parse_metrics
    >>> [m.id for m in parse_metrics("ndcg@4, ndcg@8,ndcg@4")]
    ['ndcg@4', 'ndcg@8']
    """
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    metrics = [parse_metric(item) for item in items if item.strip()]
    if not metrics:
        raise UsageError("no metric given")
    return list(dict.fromkeys(metrics))


def check_supported(metric: Metric, conventions: Conventions) -> None:
    """Refuse a metric that the conventions leave undefined, naming the conflict.

    Examples
    --------
    >>> from feco.evaluation import Conventions
    >>> from feco.evaluation.metrics import check_supported, parse_metric
    >>> check_supported(parse_metric("ndcg@5"), Conventions.preset("sklearn"))
    >>> check_supported(parse_metric("mrr@5"), Conventions.preset("sklearn"))
    Traceback (most recent call last):
    ...
    feco.errors.UsageError: mrr@5 has no tie-averaged definition; use ties other than 'average' (preset 'sklearn')
    """
    if conventions.ties == "average" and not metric.definition.averages_ties:
        raise UsageError(
            f"{metric.id} has no tie-averaged definition; use ties other than 'average' "
            f"(preset {conventions.name!r})"
        )
    if metric.name == "candidate_recall" and conventions.ideal == "candidates":
        raise UsageError(
            f"{metric.id} divides by every judged relevant item; it is undefined when "
            f"relevance is counted among candidates only (preset {conventions.name!r})"
        )


_REGISTRY: dict[str, tuple[Definition, ModuleType]] = {}


def _definitions() -> dict[str, tuple[Definition, ModuleType]]:
    if not _REGISTRY:
        from feco.evaluation.metrics import (
            average_precision,
            coverage,
            cutoff,
            dcg,
            reciprocal_rank,
        )

        for module in (cutoff, dcg, reciprocal_rank, average_precision, coverage):
            for definition in module.DEFINITIONS:
                _REGISTRY[definition.name] = (definition, module)
    return _REGISTRY
