"""Numba helper: sort the short per-query buffers the metric kernels use."""

from __future__ import annotations

from numba import njit

_INSERTION_MAX = 32


@njit(cache=True, inline="always")
def sort_prefix(values, n):
    """Sort ``values[:n]`` ascending in place.

    Per-query buffers hold a query's judged items, usually a handful: insertion sort beats
    a general sort's set-up there, and longer buffers use the library sort.
    """
    if n > _INSERTION_MAX:
        values[:n].sort()
        return
    for i in range(1, n):
        value = values[i]
        j = i - 1
        while j >= 0 and values[j] > value:
            values[j + 1] = values[j]
            j -= 1
        values[j + 1] = value
