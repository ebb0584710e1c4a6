"""Numba kernel: reciprocal rank of the first relevant item."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def reciprocal_rank(pos_lo, pos_hi, match, before, relevant, k):
    """1 / rank of each query's best-ranked relevant item within ``k``, else 0."""
    n_queries = pos_lo.shape[0]
    out = np.zeros(n_queries)
    for q in range(n_queries):
        first = k
        for j in range(pos_lo[q], pos_hi[q]):
            if match[j] >= 0 and relevant[j] and before[j] < first:
                first = before[j]
        if first < k:
            out[q] = 1.0 / (first + 1)
    return out
