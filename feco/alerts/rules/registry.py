"""The alert rules, in one place.

A new rule is a class in this folder added here; nothing else names it. Detect runs
``RULES`` on the day's inputs and sums their ``budget_series`` into the false-page budget;
severity reads a rule's fixed tier, incidents, cost and the report its kinds
(``names(kind)``), and SQL takes those names as list parameters (``rule_lists``). They read
the registry when they run, never copy it at import, so a rule registered here (or by a test)
is seen everywhere.
"""

from __future__ import annotations

from feco.alerts.rules import KINDS, InputRule, Rule
from feco.alerts.rules.collapse import CollapseRule
from feco.alerts.rules.decay import DecayRule
from feco.alerts.rules.drop import DropRule
from feco.alerts.rules.floor import FloorRule
from feco.alerts.rules.missing import MissingColumnRule, MissingValuesRule
from feco.alerts.rules.volume import VolumeDropRule

# Judged on the day's inputs, one row per feature and segment, in this order.
RULES: tuple[InputRule, ...] = (DropRule(), DecayRule(), FloorRule(), MissingValuesRule(), CollapseRule())
# Raised from the day as a whole (its sampled volume, the logs' columns), not from the inputs.
DAY_RULES: tuple[Rule, ...] = (VolumeDropRule(), MissingColumnRule())


def every_rule() -> tuple[Rule, ...]:
    return (*RULES, *DAY_RULES)


def rule_named(name: str) -> Rule | None:
    """The rule whose alerts carry ``name``; None for a name no rule has (an older release's)."""
    return next((rule for rule in every_rule() if rule.name == name), None)


def names(kind: str) -> list[str]:
    """The names of the rules of one kind (``feco.alerts.rules.KINDS``)."""
    return [rule.name for rule in every_rule() if kind in rule.kinds]


def input_rule_names() -> list[str]:
    return [rule.name for rule in RULES]


def rule_lists(*kinds: str) -> dict[str, list[str]]:
    """SQL parameters ``$<kind>_rules`` listing each kind's rule names (every kind by default)."""
    return {f"{kind}_rules": names(kind) for kind in kinds or KINDS}
