"""Numba kernels: discounted cumulative gain of a run and of the ideal ordering."""

from __future__ import annotations

import numpy as np
from numba import njit

from feco.evaluation._kernels.sorting import sort_prefix


@njit(cache=True)
def run_dcg(pos_lo, pos_hi, match, before, tied, gains, k, discount, discount_cumsum):
    """DCG@k of every query from the ranks of its positive judged items.

    ``discount[r]`` is the discount of 0-based position ``r`` and ``discount_cumsum[c]`` the
    sum of the first ``c`` discounts. A tied item gets the mean discount of the positions
    its group spans within the cut-off (scikit-learn's tie averaging).
    """
    n_queries = pos_lo.shape[0]
    out = np.zeros(n_queries)
    for q in range(n_queries):
        total = 0.0
        for j in range(pos_lo[q], pos_hi[q]):
            if match[j] < 0 or before[j] >= k:
                continue
            if tied[j] == 1:
                total += gains[j] * discount[before[j]]
            else:
                end = min(before[j] + tied[j], k)
                total += gains[j] * (discount_cumsum[end] - discount_cumsum[before[j]]) / tied[j]
        out[q] = total
    return out


@njit(cache=True)
def ideal_dcg(pos_lo, pos_hi, match, gains, k, candidates_only, discount):
    """DCG@k of the best ordering of each query's judged gains (or of those retrieved)."""
    n_queries = pos_lo.shape[0]
    out = np.zeros(n_queries)
    longest = 0
    for q in range(n_queries):
        longest = max(longest, pos_hi[q] - pos_lo[q])
    kept = np.empty(longest)
    for q in range(n_queries):
        m = 0
        for j in range(pos_lo[q], pos_hi[q]):
            if candidates_only and match[j] < 0:
                continue
            kept[m] = gains[j]
            m += 1
        if m == 0:
            continue
        sort_prefix(kept, m)
        total = 0.0
        for r in range(min(m, k)):
            total += kept[m - 1 - r] * discount[r]
        out[q] = total
    return out
