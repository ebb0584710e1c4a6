"""Numba kernel: where each positive judged item sits in its query's ranked list.

Every metric feco computes is a function of the ranks of the judged items with a positive
gain, so the run is never sorted as a whole. Per query the kernel puts the run's items in a
small open-addressing table kept at most an eighth full (real ids hash like random keys, and
fuller tables mispredict in the probe loops), which also finds duplicates; it looks up each
positive judged item and counts the items ranked before it (``before``) and the items sharing
its score (``tied``, itself included, only under tie averaging). With few judged items per
query a linear count per item is cheaper than a sort; with many, the query is sorted once.
The table is never cleared: queries own disjoint row ranges, so a slot holding a row outside
the current query's is a leftover and counts as empty.

Items are identified by one int64 key. Integer ids are their own key, which also orders them.
String ids get a 64-bit hash: two ids can share one, so the caller checks on the ids every
duplicate the kernel reports. Hashes carry no order, so when an item-ordered tie rule meets a
tie the kernel flags the query and the caller ranks the flagged queries again with lexical
codes.

Scores may be float64 or float32 (numba compiles one version per type); float32 scores
compare as trec_eval compares them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from feco.evaluation._kernels import (
    STATUS_DUPLICATE,
    STATUS_OK,
    TIE_AVERAGE,
    TIE_INPUT_ORDER,
    TIE_ITEM_ASC,
    TIE_ITEM_DESC,
)

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, inline="always")
def _slot(key: int, shift: int) -> int:
    return np.int64((np.uint64(key) * _GOLDEN) >> np.uint64(shift))


@njit(cache=True)
def _table_bits(m: int) -> int:
    bits = 3
    while (1 << bits) < 8 * m:
        bits += 1
    return bits


@njit(cache=True)
def _fill(table, keys, lo, hi):
    """Put rows ``lo:hi`` in ``table``; return (bits, -1) or (bits, a duplicated row).

    Slots holding rows outside ``lo:hi`` are left over from other queries and count as empty.
    """
    bits = _table_bits(hi - lo)
    shift = 64 - bits
    mask = (1 << bits) - 1
    for i in range(lo, hi):
        s = _slot(keys[i], shift)
        while lo <= table[s] < hi:
            other = table[s]
            if keys[other] == keys[i]:
                return bits, i
            s = (s + 1) & mask
        table[s] = i
    return bits, -1


@njit(cache=True, inline="always")
def _find(table, keys, key, bits, lo, hi):
    shift = 64 - bits
    mask = (1 << bits) - 1
    s = _slot(key, shift)
    while lo <= table[s] < hi:
        row = table[s]
        if keys[row] == key:
            return row
        s = (s + 1) & mask
    return -1


@njit(cache=True, inline="always")
def _above_and_equal(scores, score):
    """How many ``scores`` are above ``score`` and equal to it.

    Written over a slice from index 0 with conditional expressions: that form LLVM vectorises
    (about 4x faster than summing comparisons over ``range(lo, hi)`` of the whole array), and
    this loop is most of the kernel's work.
    """
    above = 0
    equal = 0
    for i in range(scores.shape[0]):
        above += 1 if scores[i] > score else 0
        equal += 1 if scores[i] == score else 0
    return above, equal


@njit(cache=True)
def first_duplicate(lo, hi, keys):
    """First row whose item repeats within its group ``lo[g]:hi[g]``, or -1."""
    longest = 0
    for g in range(lo.shape[0]):
        longest = max(longest, hi[g] - lo[g])
    table = np.full(1 << _table_bits(longest), -1, np.int64)
    for g in range(lo.shape[0]):
        _, duplicate = _fill(table, keys, lo[g], hi[g])
        if duplicate >= 0:
            return duplicate
    return -1


@njit(cache=True)
def order_query(scores, keys, lo, hi, tie_mode, keys_ordered, order, group_start, group_size):
    """Order rows ``lo:hi`` by score descending under ``tie_mode``.

    Writes, relative to ``lo``: ``order`` (row offsets in rank order), and for every row its
    tie group's first position and size. Returns False when a tie needs an item order that
    hashed keys cannot give.
    """
    m = hi - lo
    first = np.argsort(-scores[lo:hi], kind="mergesort")
    for t in range(m):
        order[t] = first[t]
    pos = 0
    while pos < m:
        end = pos + 1
        score = scores[lo + order[pos]]
        while end < m and scores[lo + order[end]] == score:
            end += 1
        size = end - pos
        if size > 1 and (tie_mode == TIE_ITEM_DESC or tie_mode == TIE_ITEM_ASC):
            if not keys_ordered:
                return False
            group_keys = np.empty(size, np.int64)
            for t in range(size):
                group_keys[t] = keys[lo + order[pos + t]]
            by_key = np.argsort(group_keys, kind="mergesort")
            rows = order[pos:end].copy()
            for t in range(size):
                if tie_mode == TIE_ITEM_ASC:
                    order[pos + t] = rows[by_key[t]]
                else:
                    order[pos + t] = rows[by_key[size - 1 - t]]
        for t in range(pos, end):
            group_start[order[t]] = pos
            group_size[order[t]] = size
        pos = end
    return True


@njit(cache=True)
def rank_judged(
    run_lo, run_hi, run_keys, run_scores, pos_lo, pos_hi, pos_keys, tie_mode, keys_ordered,
):
    """Ranks of the positive judged items of every query.

    Parameters
    ----------
    run_lo, run_hi
        Per query, the slice of the run arrays holding its ranked items (empty if missing).
    run_keys, run_scores
        Item keys and scores of the run.
    pos_lo, pos_hi
        Per query, the slice of ``pos_keys`` holding its judged items with positive gain.
    pos_keys
        Item keys of the positive judged items.
    tie_mode
        One of the ``TIE_*`` constants.
    keys_ordered
        Whether the first key orders items as their ids do (False for hashed string ids).

    Returns
    -------
    match : int64 array
        Run row of each positive judged item, or -1 if the run does not contain it.
    before : int64 array
        Items ranked strictly before it (under averaging: with a higher score).
    tied : int64 array
        1, or under averaging the size of its tie group.
    needs_order : bool array
        Queries left unranked because a tie needs the items' order and keys are hashes.
    status, query, row : int
        ``STATUS_OK``, or ``STATUS_DUPLICATE`` with the query and run row of an item ranked
        twice.
    """
    n_queries = run_lo.shape[0]
    n_pos = pos_keys.shape[0]
    match = np.full(n_pos, -1, np.int64)
    before = np.zeros(n_pos, np.int64)
    tied = np.ones(n_pos, np.int64)
    needs_order = np.zeros(n_queries, np.bool_)
    item_rule = tie_mode == TIE_ITEM_DESC or tie_mode == TIE_ITEM_ASC

    longest = 0
    for q in range(n_queries):
        longest = max(longest, run_hi[q] - run_lo[q])
    table = np.full(1 << _table_bits(longest), -1, np.int64)
    order = np.empty(longest, np.int64)
    group_start = np.empty(longest, np.int64)
    group_size = np.empty(longest, np.int64)

    for q in range(n_queries):
        lo = run_lo[q]
        hi = run_hi[q]
        m = hi - lo
        if m == 0:
            continue
        bits, duplicate = _fill(table, run_keys, lo, hi)
        if duplicate >= 0:
            return match, before, tied, needs_order, STATUS_DUPLICATE, q, duplicate
        found = 0
        for j in range(pos_lo[q], pos_hi[q]):
            match[j] = _find(table, run_keys, pos_keys[j], bits, lo, hi)
            found += match[j] >= 0
        if found == 0:
            continue

        if found <= 8.0 * np.log2(m + 1.0):
            for j in range(pos_lo[q], pos_hi[q]):
                p = match[j]
                if p < 0:
                    continue
                score = run_scores[p]
                ahead, same = _above_and_equal(run_scores[lo:hi], score)
                if same > 1 and tie_mode != TIE_AVERAGE:
                    if item_rule and not keys_ordered:
                        needs_order[q] = True
                        break
                    key = run_keys[p]
                    for i in range(lo, hi):
                        if run_scores[i] != score or i == p:
                            continue
                        if tie_mode == TIE_ITEM_DESC:
                            ahead += run_keys[i] > key
                        elif tie_mode == TIE_ITEM_ASC:
                            ahead += run_keys[i] < key
                        else:
                            ahead += i < p
                before[j] = ahead
                if tie_mode == TIE_AVERAGE:
                    tied[j] = same
        else:
            if not order_query(
                run_scores, run_keys, lo, hi, tie_mode, keys_ordered, order, group_start,
                group_size,
            ):
                needs_order[q] = True
                continue
            if tie_mode != TIE_AVERAGE:
                for t in range(m):
                    group_start[order[t]] = t
            for j in range(pos_lo[q], pos_hi[q]):
                p = match[j]
                if p < 0:
                    continue
                before[j] = group_start[p - lo]
                if tie_mode == TIE_AVERAGE:
                    tied[j] = group_size[p - lo]
    return match, before, tied, needs_order, STATUS_OK, -1, -1


@njit(cache=True)
def top_k_rows(run_lo, run_hi, run_keys, run_scores, k, tie_mode):
    """Run rows of every query's first ``k`` items, as a flat array in no particular order.

    Only the set matters (catalogue coverage), so each query takes one partition to find
    the k-th score and applies the tie rule to the items sharing it. Keys must be exact.
    """
    n_queries = run_lo.shape[0]
    total = 0
    for q in range(n_queries):
        total += min(run_hi[q] - run_lo[q], k)
    out = np.empty(total, np.int64)
    n = 0
    for q in range(n_queries):
        lo = run_lo[q]
        hi = run_hi[q]
        m = hi - lo
        if m <= k:
            for i in range(lo, hi):
                out[n] = i
                n += 1
            continue
        threshold = -np.partition(-run_scores[lo:hi], k - 1)[k - 1]
        at_threshold = np.empty(m, np.int64)
        n_tied = 0
        first = n
        for i in range(lo, hi):
            if run_scores[i] > threshold:
                out[n] = i
                n += 1
            elif run_scores[i] == threshold:
                at_threshold[n_tied] = i
                n_tied += 1
        room = k - (n - first)
        tied_rows = at_threshold[:n_tied]
        if tie_mode != TIE_INPUT_ORDER and room < n_tied:
            by_key = np.argsort(run_keys[tied_rows], kind="mergesort")
            if tie_mode == TIE_ITEM_DESC:
                by_key = by_key[::-1]
            tied_rows = tied_rows[by_key]
        for t in range(room):
            out[n] = tied_rows[t]
            n += 1
    return out
