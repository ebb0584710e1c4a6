"""Numba kernel: relevant items within a cut-off (precision, recall, hit rate, R-precision)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def relevant_within(pos_lo, pos_hi, match, before, tied, relevant, cutoffs):
    """Relevant items ranked within each query's cut-off, expected over ties when averaging.

    ``cutoffs`` holds one cut-off per query. An item tied with ``tied - 1`` others after
    ``before`` items occupies each of the ``tied`` positions with equal probability, so it
    counts for the share of those positions that fall within the cut-off.
    """
    n_queries = pos_lo.shape[0]
    out = np.zeros(n_queries)
    for q in range(n_queries):
        k = cutoffs[q]
        hits = 0.0
        for j in range(pos_lo[q], pos_hi[q]):
            if match[j] < 0 or not relevant[j] or before[j] >= k:
                continue
            if tied[j] == 1:
                hits += 1.0
            else:
                hits += (min(before[j] + tied[j], k) - before[j]) / tied[j]
        out[q] = hits
    return out
