"""The examples in the docstrings run and stay true."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "feco.evaluation",
    "feco.evaluation.conventions",
    "feco.evaluation.evaluate",
    "feco.evaluation.io",
    "feco.evaluation.letor",
    "feco.evaluation.metrics",
    "feco.evaluation.metrics.average_precision",
    "feco.evaluation.metrics.coverage",
    "feco.evaluation.metrics.cutoff",
    "feco.evaluation.metrics.dcg",
    "feco.evaluation.metrics.reciprocal_rank",
    "feco.evaluation.protocols",
    "feco.evaluation.ranked",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0
