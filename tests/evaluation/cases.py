"""Builders of random runs and judgments, and converters for the cross-checked libraries."""

from __future__ import annotations

import numpy as np
import polars as pl


def random_case(
    seed: int,
    *,
    n_queries: int = 60,
    max_list: int = 15,
    n_items: int = 30,
    score_levels: int | None = 4,
    missing_share: float = 0.15,
    empty_share: float = 0.1,
    min_grade: int = 0,
    max_grade: int = 3,
    max_judged: int = 9,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A random run and judgments with string ids (mixed lengths, so lexical order differs
    from numeric order), ties when ``score_levels`` is set, queries judged but missing from
    the run, queries whose judgments are all zero, lists shorter than the cut-offs, and judged
    items the run never retrieves."""
    rng = np.random.default_rng(seed)
    run_rows, qrels_rows = [], []
    for q in range(n_queries):
        query = f"q{q}"
        if rng.random() >= missing_share:
            size = int(rng.integers(1, max_list + 1))
            items = rng.choice(n_items, size=size, replace=False)
            if score_levels is None:
                scores = rng.random(size)
            else:
                scores = rng.integers(0, score_levels, size).astype(float)
            run_rows += [(query, f"d{i}", float(s)) for i, s in zip(items, scores)]
        judged = rng.choice(n_items, size=int(rng.integers(1, max_judged + 1)), replace=False)
        grades = rng.integers(min_grade, max_grade + 1, len(judged))
        if rng.random() < empty_share:
            grades[:] = 0
        qrels_rows += [(query, f"d{i}", int(g)) for i, g in zip(judged, grades)]
    run = pl.DataFrame(run_rows, schema=["query", "item", "score"], orient="row")
    qrels = pl.DataFrame(qrels_rows, schema=["query", "item", "relevance"], orient="row")
    return run, qrels


def as_dicts(frame: pl.DataFrame, value: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for query, item, v in frame.iter_rows():
        out.setdefault(query, {})[item] = v
    return out


def per_query(result, metric: str) -> dict:
    frame = result.per_query.filter(pl.col(metric).is_not_null())
    return dict(zip(frame.get_column("query").to_list(), frame.get_column(metric).to_list()))
