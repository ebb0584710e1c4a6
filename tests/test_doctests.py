"""The docstring examples of the pipeline's modules run and stay true (tests/evaluation has its own)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import feco

# Examples that fail as written, until their owners make them run or drop them.
KNOWN_BROKEN: dict[str, str] = {}


def modules_with_examples() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(feco.__path__, "feco."):
        if info.name.startswith("feco.evaluation") or info.name == "feco.__main__":
            continue
        module = importlib.import_module(info.name)
        if any(test.examples for test in doctest.DocTestFinder().find(module)):
            names.append(info.name)
    return names


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=KNOWN_BROKEN[name]))
    if name in KNOWN_BROKEN else name
    for name in modules_with_examples()
])
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
