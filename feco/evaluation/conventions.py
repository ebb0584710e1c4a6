"""The choices a ranking metric has to make, declared in one place, and presets that copy tools.

Ranking libraries disagree on gains, ties, empty queries and the ideal DCG, and most hide their
choice. A :class:`Conventions` value states every choice; every result feco reports carries
the conventions it was computed under. The presets reproduce other tools exactly (the tests
cross-check each one against the tool itself).

===================  ============================================  ==================
choice               options                                       feco default
===================  ============================================  ==================
``gain``             ``binary``, ``linear`` (raw grade),            ``exp2`` (equal to
                     ``exp2`` (2^rel - 1)                           ``binary`` on 0/1)
``ideal``            ``judged`` (trec_eval, ranx) or                ``judged``
                     ``candidates`` (LightGBM, sklearn)
``no_relevant``      ``exclude``, ``zero``, ``one`` (LightGBM),     ``exclude``
                     ``error``
``missing_in_run``   ``zero``, ``drop``                             ``zero``
``ties``             ``item_desc`` (trec_eval), ``item_asc``,       ``item_desc``
                     ``input_order`` (LightGBM), ``average``
                     (sklearn)
``ap_divisor``       ``all_relevant`` (trec_eval),                  ``all_relevant``
                     ``min_relevant_k`` (LightGBM)
``score_precision``  ``float64``, ``float32`` (trec_eval 9 stored   ``float64``
                     scores as C floats; 10.0 keeps doubles)
===================  ============================================  ==================

The discount is always ``1 / log2(rank + 1)`` with ranks from 1.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from feco.errors import UsageError

Gain = Literal["binary", "linear", "exp2"]
Ideal = Literal["judged", "candidates"]
NoRelevant = Literal["exclude", "zero", "one", "error"]
Missing = Literal["zero", "drop"]
Ties = Literal["item_desc", "item_asc", "input_order", "average"]
ApDivisor = Literal["all_relevant", "min_relevant_k"]
ScorePrecision = Literal["float64", "float32"]

_CHOICES: dict[str, tuple[str, ...]] = {
    "gain": ("binary", "linear", "exp2"),
    "ideal": ("judged", "candidates"),
    "no_relevant": ("exclude", "zero", "one", "error"),
    "missing_in_run": ("zero", "drop"),
    "ties": ("item_desc", "item_asc", "input_order", "average"),
    "ap_divisor": ("all_relevant", "min_relevant_k"),
    "score_precision": ("float64", "float32"),
}


@dataclass(frozen=True)
class Conventions:
    """Every choice behind a ranking metric, with feco's defaults.

    Parameters
    ----------
    gain
        Gain of a judged item with relevance ``rel``: ``"binary"`` (1 when ``rel >=
        relevance_level``), ``"linear"`` (``rel``) or ``"exp2"`` (``2**rel - 1``). Negative
        relevance gains nothing under every option, as in trec_eval and ranx.
    ideal
        The set of relevant items a query is normalised by: ``"judged"`` (every judged item
        of the query, also those the run never retrieved) or ``"candidates"`` (only judged
        items present in the ranked list, as LightGBM and scikit-learn see it). It sets the
        ideal DCG, the divisors of recall, AP and R-precision, and which queries have no
        relevant item.
    no_relevant
        What a query with no relevant item (in the ``ideal`` set) scores on every metric:
        ``"exclude"`` it from the means, ``"zero"``, ``"one"``, or raise (``"error"``). The
        number of such queries is always reported.
    missing_in_run
        A query that is judged but absent from the run: ``"zero"`` scores it as an empty
        ranking (0, or the ``no_relevant`` policy when it has no relevant item), ``"drop"``
        leaves it out of the means. The number of such queries is always reported.
    ties
        Order of items with equal scores: ``"item_desc"`` (item id descending, trec_eval),
        ``"item_asc"``, ``"input_order"`` (the order of the rows, LightGBM) or ``"average"``
        (the expectation over all orders of each tied group, scikit-learn; defined only for
        metrics that add up a value per rank: precision, recall, R-precision, DCG, NDCG,
        candidate recall).
    ap_divisor
        Divisor of AP@k: ``"all_relevant"`` (trec_eval, ranx) or ``"min_relevant_k"``
        (``min(relevant, k)``, LightGBM).
    score_precision
        Precision scores are compared in: ``"float64"`` (trec_eval 10.0 keeps them as C
        doubles), or ``"float32"`` as trec_eval 9 stored them (``float sim``), so scores equal
        in single precision tie and the tie rule orders them.
    relevance_level
        Smallest relevance that counts as relevant for binary metrics (precision, recall,
        hit rate, MRR, MAP, R-precision) and for the binary gain. Must be positive.
    name
        Label printed with results: the preset name, or ``"custom"``.

    Examples
    --------
    >>> from feco.evaluation import Conventions
    >>> Conventions().ties
    'item_desc'
    >>> Conventions.preset("lightgbm").no_relevant
    'one'
    >>> Conventions.preset("trec_eval").with_options(missing_in_run="zero").name
    'custom'
    """

    gain: Gain = "exp2"
    ideal: Ideal = "judged"
    no_relevant: NoRelevant = "exclude"
    missing_in_run: Missing = "zero"
    ties: Ties = "item_desc"
    ap_divisor: ApDivisor = "all_relevant"
    score_precision: ScorePrecision = "float64"
    relevance_level: float = 1
    name: str = "feco"

    def __post_init__(self) -> None:
        for field, allowed in _CHOICES.items():
            value = getattr(self, field)
            if value not in allowed:
                raise UsageError(
                    f"convention {field}={value!r} is not one of {', '.join(allowed)}"
                )
        if not self.relevance_level > 0:
            raise UsageError(
                f"convention relevance_level={self.relevance_level!r} must be positive"
            )

    @classmethod
    def preset(cls, name: str) -> Conventions:
        """Return the conventions that reproduce the tool ``name`` (see ``PRESETS``)."""
        try:
            return PRESETS[name]
        except KeyError:
            raise UsageError(
                f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}"
            ) from None

    def with_options(self, **changes: object) -> Conventions:
        """Return a copy with some choices changed; the result is named ``"custom"``."""
        unknown = sorted(set(changes) - set(_CHOICES) - {"relevance_level"})
        if unknown:
            raise UsageError(
                f"unknown convention {', '.join(unknown)}; known: "
                f"{', '.join([*_CHOICES, 'relevance_level'])}"
            )
        if "relevance_level" in changes:
            changes["relevance_level"] = _number(changes["relevance_level"])
        return dataclasses.replace(self, name="custom", **changes)

    def to_dict(self) -> dict[str, object]:
        """The conventions as a plain dict, including the fixed discount."""
        out: dict[str, object] = {"preset": self.name}
        out.update({field: getattr(self, field) for field in _CHOICES})
        out["relevance_level"] = self.relevance_level
        out["discount"] = "1/log2(rank+1)"
        return out


def _number(value: object) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise UsageError(f"convention relevance_level={value!r} is not a number") from None
    return int(number) if number.is_integer() else number


# trec_eval 10.0, the current release, without -c: gains are the raw grades, ties by docno
# descending, scores kept as C doubles, queries with no relevant document score 0 and count,
# queries absent from the run are skipped.
_TREC_EVAL = Conventions(
    gain="linear",
    ideal="judged",
    no_relevant="zero",
    missing_in_run="drop",
    ties="item_desc",
    ap_divisor="all_relevant",
    score_precision="float64",
    name="trec_eval",
)

PRESETS: dict[str, Conventions] = {
    "feco": Conventions(),
    "trec_eval": _TREC_EVAL,
    # trec_eval 9 (9.0.x, and pytrec_eval, which builds on it): the same, but scores were
    # stored as C floats, so scores equal in single precision tie and docno orders them.
    "trec_eval9": dataclasses.replace(_TREC_EVAL, score_precision="float32", name="trec_eval9"),
    # LightGBM's ndcg/map eval metrics: label_gain 2^i - 1, ideal over the query's own rows,
    # a query without a positive label scores 1, stable sort by score (row order on ties),
    # AP divided by min(positives, k). LightGBM only scores queries it was given.
    "lightgbm": Conventions(
        gain="exp2",
        ideal="candidates",
        no_relevant="one",
        missing_in_run="drop",
        ties="input_order",
        ap_divisor="min_relevant_k",
        name="lightgbm",
    ),
    # sklearn.metrics.ndcg_score/dcg_score (ignore_ties=False): raw grades as gains, ideal
    # over the given rows, ties averaged, an all-irrelevant row scores 0.
    "sklearn": Conventions(
        gain="linear",
        ideal="candidates",
        no_relevant="zero",
        missing_in_run="drop",
        ties="average",
        ap_divisor="all_relevant",
        name="sklearn",
    ),
    # ranx.evaluate(..., make_comparable=True): ndcg with raw grades (Jarvelin), ideal over
    # the qrels, empty queries score 0, missing queries become empty runs. ranx breaks ties
    # arbitrarily; the preset declares item id descending.
    "ranx": Conventions(
        gain="linear",
        ideal="judged",
        no_relevant="zero",
        missing_in_run="zero",
        ties="item_desc",
        ap_divisor="all_relevant",
        name="ranx",
    ),
    # Amazon Personalize offline metrics: interactions are binary relevance, NDCG is
    # normalised by the user's held-out items, a user without recommendations scores 0.
    # Personalize documents no tie rule and no AP; those keep feco's defaults.
    "personalize": Conventions(
        gain="binary",
        ideal="judged",
        no_relevant="exclude",
        missing_in_run="zero",
        ties="item_desc",
        ap_divisor="all_relevant",
        name="personalize",
    ),
}


def resolve(conventions: Conventions | str | None) -> Conventions:
    """Turn a preset name, a :class:`Conventions` or ``None`` (feco's default) into conventions.

    Examples
    --------
    >>> from feco.evaluation.conventions import resolve
    >>> resolve("sklearn").ties
    'average'
    """
    if conventions is None:
        return PRESETS["feco"]
    if isinstance(conventions, Conventions):
        return conventions
    if isinstance(conventions, str):
        return Conventions.preset(conventions)
    raise UsageError(f"conventions must be a preset name or Conventions, not {conventions!r}")
