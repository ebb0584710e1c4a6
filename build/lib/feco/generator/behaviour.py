"""The production ranker that ordered each list, and the users who responded to it.

The shown order is a noisy score of the utility (a decent but imperfect ranker), and labels
follow a cascade: a row is examined with a probability falling with its position, then
clicked, added to cart, purchased and repurchased with probabilities rising with utility.
"""

from __future__ import annotations

import numpy as np

# The production ranker's error, relative to the utility's unit spread.
_RANKER_NOISE = 0.8
_EXAMINATION_DECAY = 0.6
# Cascade stages as (slope, offset) of a logistic in utility: click, add-to-cart, purchase.
_STAGES = ((1.2, -2.6), (0.8, -2.0), (0.8, -1.5))
_REPEAT_GIVEN_PURCHASE = (0.12, 0.55)


def rank_lists(
    event_index: np.ndarray, utility: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Order rows within each event by the production ranker's score.

    Returns the row order that sorts by (event, score descending) and the 1-based position of
    each row in that order. ``event_index`` must be non-decreasing.
    """
    score = utility + rng.normal(0.0, _RANKER_NOISE, len(utility)).astype(np.float32)
    # The score squashed into (0, 1), high scores first, added to the event index: one stable
    # sort of an almost sorted key, much faster than a two-key lexsort.
    key = event_index + 1.0 / (1.0 + np.exp(score.astype(np.float64)))
    order = np.argsort(key, kind="stable")
    starts = np.flatnonzero(np.r_[True, event_index[1:] != event_index[:-1]])
    lengths = np.diff(np.r_[starts, len(event_index)])
    position = np.arange(len(event_index)) - np.repeat(starts, lengths) + 1
    return order, position.astype(np.int16)


def draw_labels(
    utility: np.ndarray,
    position: np.ndarray,
    *,
    past_purchase: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """Graded labels 0–4 (none, click, add-to-cart, purchase, repeat purchase) of ordered rows."""
    n = len(utility)
    reached = rng.random(n, dtype=np.float32) < position.astype(np.float32) ** -_EXAMINATION_DECAY
    label = np.zeros(n, dtype=np.int8)
    for slope, offset in _STAGES:
        reached &= rng.random(n, dtype=np.float32) < _sigmoid(slope * utility + offset)
        label += reached
    repeat = np.where(past_purchase, _REPEAT_GIVEN_PURCHASE[1], _REPEAT_GIVEN_PURCHASE[0])
    label += reached & (rng.random(n, dtype=np.float32) < repeat)
    return label


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return (1.0 / (1.0 + np.exp(-x))).astype(np.float32)
