"""Severity: a tier from the size of the drop, weighted by how much the ranker relies on it."""

from __future__ import annotations

from feco.alerts.rules import registry

TIERS = ((0.5, "critical"), (0.25, "high"), (0.10, "medium"))
# A feature with less than a quarter of an average feature's importance barely moves ranking.
UNUSED_WEIGHT = 0.25
MAX_WEIGHT = 2.0
# For ordering in SQL and code: ORDER BY severity_rank DESC puts critical first.
SEVERITY_RANK = {"info": 0, "low": 1, "medium": 2, "high": 3, "critical": 4}
SEVERITY_NAME = {rank: name for name, rank in SEVERITY_RANK.items()}


def severity(rule: str, drop_rel: float | None, importance: float | None, n_features: int) -> str:
    """The tier of one alert.

    ``importance`` is the feature's share of the model's total importance (None while no
    model is known); ``importance * n_features`` is its weight against an average feature.

    Examples
    --------
    >>> from feco.alerts.rules.drop import DropRule
    >>> severity(DropRule.name, 0.6, None, 30)
    'critical'
    >>> severity(DropRule.name, 0.9, 0.001, 30)
    'low'
    """
    fixed = registry.rule_named(rule)
    if fixed is not None and fixed.severity is not None:  # rules that say the data broke keep their tier
        return fixed.severity
    size = abs(drop_rel or 0.0)
    if importance is not None:
        weight = importance * n_features
        if weight < UNUSED_WEIGHT:
            return "low"
        size *= min(weight, MAX_WEIGHT)
    return next((tier for bound, tier in TIERS if size >= bound), "low")
