"""Numba kernel: average precision within a cut-off."""

from __future__ import annotations

import numpy as np
from numba import njit

from feco.evaluation._kernels.sorting import sort_prefix


@njit(cache=True)
def average_precision(pos_lo, pos_hi, match, before, relevant, k, divisors):
    """Sum of precision at the rank of each relevant item within ``k``, over ``divisors[q]``."""
    n_queries = pos_lo.shape[0]
    out = np.zeros(n_queries)
    longest = 0
    for q in range(n_queries):
        longest = max(longest, pos_hi[q] - pos_lo[q])
    buffer = np.empty(longest, np.int64)
    for q in range(n_queries):
        if divisors[q] == 0:
            continue
        m = 0
        for j in range(pos_lo[q], pos_hi[q]):
            if match[j] >= 0 and relevant[j] and before[j] < k:
                buffer[m] = before[j] + 1
                m += 1
        sort_prefix(buffer, m)
        total = 0.0
        for i in range(m):
            total += (i + 1.0) / buffer[i]
        out[q] = total / divisors[q]
    return out
