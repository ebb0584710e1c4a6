"""Kernels behind :mod:`feco.evaluation.metrics`; private, the conventions live in the API.

Two implementations of one set of functions: numba loops (:mod:`.compiled`), fastest once
compiled, and whole-array NumPy (:mod:`.vectorised`), which needs no compilation and no numba
import, so a one-off evaluation (``feco evaluate``) starts in a fraction of the time. Both
give identical values; :func:`load` picks one by name.
"""

from __future__ import annotations

from types import ModuleType

from feco.errors import UsageError

TIE_ITEM_DESC = 0
TIE_ITEM_ASC = 1
TIE_INPUT_ORDER = 2
TIE_AVERAGE = 3

STATUS_OK = 0
STATUS_DUPLICATE = 1

KERNELS = ("numba", "numpy")


def load(kernels: str) -> ModuleType:
    """The kernel module named ``"numba"`` or ``"numpy"`` (imported on first use)."""
    if kernels == "numba":
        from feco.evaluation._kernels import compiled

        return compiled
    if kernels == "numpy":
        from feco.evaluation._kernels import vectorised

        return vectorised
    raise UsageError(f"unknown kernels {kernels!r}; choose one of {', '.join(KERNELS)}")
