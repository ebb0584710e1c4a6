"""Statistics the paper's claims and the pipeline's replay share: the percentile bootstrap of a mean.

One implementation, so an incident's cost interval (:mod:`feco.ranker.replay`) and a
coverage-drop cell's (:mod:`feco.paper.claims`) are drawn the same way.
"""

from __future__ import annotations

import numpy as np

# Bootstrap means drawn at a time: bounds the index matrix to a few tens of MB.
BOOTSTRAP_CHUNK = 2_000


def bootstrap_means(values: np.ndarray, *, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Means of ``resamples`` resamples (with replacement) of ``values``.

    Examples
    --------
    >>> means = bootstrap_means(np.array([0.0, 0.1, 0.2, 0.3]), resamples=2_000, rng=np.random.default_rng(0))
    >>> low, high = np.percentile(means, [2.5, 97.5])
    >>> bool(0.0 <= low < 0.15 < high <= 0.3)
    True
    """
    values = np.asarray(values, dtype=np.float64)
    sizes = [min(BOOTSTRAP_CHUNK, resamples - start) for start in range(0, resamples, BOOTSTRAP_CHUNK)]
    return np.concatenate([values[rng.integers(0, len(values), size=(size, len(values)))].mean(axis=1)
                           for size in sizes])
