"""The examples in the docstrings run and stay true."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "feco.ranking",
    "feco.ranking.conventions",
    "feco.ranking.evaluate",
    "feco.ranking.io",
    "feco.ranking.letor",
    "feco.ranking.metrics",
    "feco.ranking.metrics.average_precision",
    "feco.ranking.metrics.coverage",
    "feco.ranking.metrics.cutoff",
    "feco.ranking.metrics.dcg",
    "feco.ranking.metrics.reciprocal_rank",
    "feco.ranking.protocols",
    "feco.ranking.ranked",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0
