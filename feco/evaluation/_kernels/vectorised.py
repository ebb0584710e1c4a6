"""NumPy kernels: the numba kernels' functions, same arguments and results, as array operations.

Where a numba kernel walks each query's rows, these sort all rows at once, by query, score
and tie rule fused into one int64 key, and read each item's place off the sorted order; item
ids become exact ranks first (``_dense_ranks``), so (query, item) pairs are single int64 keys
too. Sums are ``np.bincount`` over the items in the order the loops visit them (query by
query, item by item): every float is added in the same order, so the values are identical,
not merely close (tests/evaluation/test_kernels.py).
"""

from __future__ import annotations

import numpy as np

from feco.evaluation._kernels import (
    STATUS_DUPLICATE,
    STATUS_OK,
    TIE_AVERAGE,
    TIE_INPUT_ORDER,
    TIE_ITEM_ASC,
    TIE_ITEM_DESC,
)


def first_duplicate(lo, hi, keys):
    """First row whose item repeats within its group ``lo[g]:hi[g]``, or -1."""
    rows, group = _slices(lo, hi)
    codes, n_codes = _dense_ranks(keys[rows])
    if not _has_repeat(np.sort(group * n_codes + codes)):  # a repeat, in any row order
        return -1
    return int(_first_repeat(rows, group, codes)[1])


def rank_judged(run_lo, run_hi, run_keys, run_scores, pos_lo, pos_hi, pos_keys, tie_mode,
                keys_ordered):
    """Ranks of the positive judged items of every query (see ``ranks.rank_judged``)."""
    n_queries, n_pos = len(run_lo), len(pos_keys)
    match = np.full(n_pos, -1, np.int64)
    before = np.zeros(n_pos, np.int64)
    tied = np.ones(n_pos, np.int64)
    needs_order = np.zeros(n_queries, np.bool_)

    rows, group = _slices(run_lo, run_hi)
    pos, pos_group = _slices(pos_lo, pos_hi)
    codes, n_codes = _dense_ranks(np.concatenate([run_keys[rows], pos_keys[pos]]))
    run_codes, pos_codes = codes[:len(rows)], codes[len(rows):]
    # (query, item) pairs as one exact int64: sorts and searches take a single fast pass.
    pairs = group * n_codes + run_codes
    by_pair = np.argsort(pairs)
    if _has_repeat(pairs[by_pair]):
        q, row = _first_repeat(rows, group, run_codes)
        return match, before, tied, needs_order, STATUS_DUPLICATE, int(q), int(row)

    if not len(rows) or not len(pos):
        return match, before, tied, needs_order, STATUS_OK, -1, -1
    wanted = pos_group * n_codes + pos_codes
    at = np.searchsorted(pairs[by_pair], wanted).clip(max=len(rows) - 1)
    hit = pairs[by_pair][at] == wanted
    found = by_pair[at[hit]]  # where in rows each retrieved judged item is
    match[pos[hit]] = rows[found]

    score_ranks, _ = _dense_ranks(-run_scores[rows])
    order = _list_order(group, score_ranks, _tie_ranks(tie_mode, run_codes, n_codes))
    place, first_tied, tie_size = _places(order, group, score_ranks)
    if tie_mode == TIE_AVERAGE:
        before[pos[hit]], tied[pos[hit]] = first_tied[found], tie_size[found]
    else:
        before[pos[hit]] = place[found]
    if tie_mode in (TIE_ITEM_DESC, TIE_ITEM_ASC) and not keys_ordered:
        # Hashed keys carry no order: a tie at a judged item leaves its query to the caller.
        needs_order[pos_group[hit][tie_size[found] > 1]] = True
    return match, before, tied, needs_order, STATUS_OK, -1, -1


def top_k_rows(run_lo, run_hi, run_keys, run_scores, k, tie_mode):
    """Run rows of every query's first ``k`` items, as a flat array in no particular order."""
    rows, group = _slices(run_lo, run_hi)
    codes, n_codes = _dense_ranks(run_keys[rows])
    score_ranks, _ = _dense_ranks(-run_scores[rows])
    order = _list_order(group, score_ranks, _tie_ranks(tie_mode, codes, n_codes))
    place = _place_among_equals(group[order])
    return rows[order][place < k]


def run_dcg(pos_lo, pos_hi, match, before, tied, gains, k, discount, discount_cumsum):
    """DCG@k of every query from the ranks of its positive judged items."""
    items, query = _slices(pos_lo, pos_hi)
    keep = (match[items] >= 0) & (before[items] < k)
    items, query = items[keep], query[keep]
    first, size, gain = before[items], tied[items], gains[items]
    end = np.minimum(first + size, k)
    spread = gain * (discount_cumsum[end] - discount_cumsum[first]) / size
    values = np.where(size == 1, gain * discount[first], spread)
    return _sums(query, values, len(pos_lo))


def ideal_dcg(pos_lo, pos_hi, match, gains, k, candidates_only, discount):
    """DCG@k of the best ordering of each query's judged gains (or of those retrieved)."""
    items, query = _slices(pos_lo, pos_hi)
    if candidates_only:
        items, query = items[match[items] >= 0], query[match[items] >= 0]
    gain = gains[items]
    order = np.lexsort((-gain, query))
    query, gain = query[order], gain[order]
    rank = _place_among_equals(query)
    within = rank < k
    values = gain[within] * discount[rank[within]]
    return _sums(query[within], values, len(pos_lo))


def average_precision(pos_lo, pos_hi, match, before, relevant, k, divisors):
    """Sum of precision at the rank of each relevant item within ``k``, over ``divisors[q]``."""
    items, query = _slices(pos_lo, pos_hi)
    keep = (match[items] >= 0) & relevant[items] & (before[items] < k) & (divisors[query] != 0)
    items, query = items[keep], query[keep]
    order = np.lexsort((before[items], query))
    query, rank = query[order], before[items][order] + 1
    nth = _place_among_equals(query)
    totals = _sums(query, (nth + 1.0) / rank, len(pos_lo))
    out = np.zeros(len(pos_lo))
    np.divide(totals, divisors, out=out, where=divisors != 0)
    return out


def reciprocal_rank(pos_lo, pos_hi, match, before, relevant, k):
    """1 / rank of each query's best-ranked relevant item within ``k``, else 0."""
    items, query = _slices(pos_lo, pos_hi)
    keep = (match[items] >= 0) & relevant[items] & (before[items] < k)
    first = np.full(len(pos_lo), k, np.int64)
    np.minimum.at(first, query[keep], before[items[keep]])
    out = np.zeros(len(pos_lo))
    hit = first < k
    out[hit] = 1.0 / (first[hit] + 1)
    return out


def relevant_within(pos_lo, pos_hi, match, before, tied, relevant, cutoffs):
    """Relevant items ranked within each query's cut-off, expected over ties when averaging."""
    items, query = _slices(pos_lo, pos_hi)
    keep = (match[items] >= 0) & relevant[items] & (before[items] < cutoffs[query])
    items, query = items[keep], query[keep]
    first, size = before[items], tied[items]
    share = (np.minimum(first + size, cutoffs[query]) - first) / size
    values = np.where(size == 1, 1.0, share)
    return _sums(query, values, len(pos_lo))


def _sums(query, values, n_queries):
    """Per query, the sum of its values added in the order given (float64 even when empty)."""
    return np.bincount(query, weights=values, minlength=n_queries).astype(np.float64, copy=False)


def _slices(lo, hi):
    """The indices of the slices ``lo[g]:hi[g]`` one after another, and each one's ``g``."""
    lengths = hi - lo
    ends = np.cumsum(lengths)
    indices = np.arange(ends[-1] if len(ends) else 0, dtype=np.int64)
    return indices - np.repeat(ends - lengths - lo, lengths), np.repeat(
        np.arange(len(lo), dtype=np.int64), lengths)


def _dense_ranks(values):
    """Each value's rank among the distinct values (equal values share one), and their count."""
    order = np.argsort(values)
    new = np.ones(len(values), np.int64)
    new[1:] = values[order][1:] != values[order][:-1]
    ranks = np.empty(len(values), np.int64)
    ranks[order] = np.cumsum(new) - 1
    return ranks, int(new.sum())


def _place_among_equals(sorted_values):
    """Each element's 0-based place among the equal values before it, in a sorted array.

    From the runs' starts (a few linear passes): ``searchsorted(v, v)`` takes five times as
    long on a million rows.
    """
    new = np.ones(len(sorted_values), bool)
    new[1:] = sorted_values[1:] != sorted_values[:-1]
    starts = np.flatnonzero(new)
    return np.arange(len(sorted_values)) - starts[np.cumsum(new) - 1]


def _has_repeat(sorted_values):
    """Whether two neighbours are equal: a repeat only once the values are sorted."""
    return bool(len(sorted_values) > 1 and (sorted_values[1:] == sorted_values[:-1]).any())


def _first_repeat(rows, group, codes):
    """The first group holding an item twice and its first row that repeats one.

    Only on the error path, so one exact sort of everything is cheap enough.
    """
    order = np.lexsort((rows, codes, group))
    g, c, r = group[order], codes[order], rows[order]
    again = (g[1:] == g[:-1]) & (c[1:] == c[:-1])
    g, r = g[1:][again], r[1:][again]
    first_group = g.min()
    return first_group, r[g == first_group].min()


def _tie_ranks(tie_mode, codes, n_codes):
    """What orders a query's items of equal score, as ranks: the item key descending or
    ascending, or the row (rows of a query are in input order)."""
    if tie_mode == TIE_ITEM_DESC:
        return n_codes - 1 - codes
    if tie_mode == TIE_INPUT_ORDER:
        return np.arange(len(codes), dtype=np.int64)
    return codes


def _list_order(group, score_ranks, tie_ranks):
    """Rows sorted by query, then score descending, then the tie rule.

    The three ranks make one int64 key when their product fits (a single unstable argsort,
    several times faster than ``np.lexsort``; the key is unique, so the order is exact).
    """
    n_scores = int(score_ranks.max(initial=0)) + 1
    n_ties = int(tie_ranks.max(initial=0)) + 1
    if len(group) and (int(group[-1]) + 1) * n_scores * n_ties < 2**63:
        return np.argsort((group * n_scores + score_ranks) * n_ties + tie_ranks)
    return np.lexsort((tie_ranks, score_ranks, group))


def _places(order, group, score_ranks):
    """Per row: its 0-based place in its query's list, the place where its tie group starts
    and the tie group's size."""
    n = len(order)
    g, s = group[order], score_ranks[order]
    new = np.ones(n, bool)
    new[1:] = (g[1:] != g[:-1]) | (s[1:] != s[:-1])
    starts = np.flatnonzero(new)
    member = np.cumsum(new) - 1
    sorted_place = _place_among_equals(g)
    place, first_tied, tie_size = (np.empty(n, np.int64) for _ in range(3))
    place[order] = sorted_place
    first_tied[order] = sorted_place[starts][member]
    tie_size[order] = np.diff(np.append(starts, n))[member]
    return place, first_tied, tie_size
