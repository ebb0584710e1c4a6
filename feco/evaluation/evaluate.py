"""Score a run against judgments under declared conventions, per query and on average.

:func:`evaluate` takes a run ``(query, item, score)`` and judgments ``(query, item,
relevance)``; :func:`evaluate_labelled` takes one frame whose rows are scored and labelled
candidates (a LETOR file with a model's predictions). Both return an :class:`Evaluation`:
per-query values, means, and the counts every mean is taken over.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from feco.errors import DataError, UsageError
from feco.evaluation.conventions import Conventions, resolve
from feco.evaluation.metrics import Context, check_supported, parse_metrics
from feco.evaluation.metrics import coverage as coverage_family
from feco.evaluation.ranked import RankedJudgments, rank_judgments

DEFAULT_METRICS = ("ndcg@4", "ndcg@8", "mrr@10", "map@100", "precision@10", "recall@10")
# The same panel as trec_eval measures it (ndcg_cut.4,8 recip_rank map_cut.100 P.10 recall.10):
# its recip_rank has no cut-off.
TREC_EVAL_METRICS = ("ndcg@4", "ndcg@8", "mrr", "map@100", "precision@10", "recall@10")


def default_metrics(conventions: Conventions | str | None = None) -> tuple[str, ...]:
    """The metrics reported when none are asked for: under the trec_eval presets trec_eval's
    own measures (``TREC_EVAL_METRICS``: MRR without a cut-off, as its ``recip_rank``), else
    ``DEFAULT_METRICS``.

    Examples
    --------
    >>> default_metrics("trec_eval")[2], default_metrics("lightgbm")[2]
    ('mrr', 'mrr@10')
    """
    return TREC_EVAL_METRICS if resolve(conventions).name in ("trec_eval", "trec_eval9") else DEFAULT_METRICS


@dataclass(frozen=True)
class QueryCounts:
    """How many queries a mean was taken over, and what happened to the others.

    Attributes
    ----------
    judged
        Queries with at least one judgment.
    evaluated
        Queries in every per-query mean.
    no_relevant
        Judged queries with no relevant item (in the ``ideal`` set); the conventions'
        ``no_relevant`` policy says whether they are in ``evaluated`` and with what score.
    missing_in_run
        Judged queries absent from the run; ``missing_in_run`` says how they count.
    unjudged_in_run
        Queries the run ranks without any judgment; no metric uses them, except catalogue
        coverage.
    """

    judged: int
    evaluated: int
    no_relevant: int
    missing_in_run: int
    unjudged_in_run: int


@dataclass(frozen=True)
class Evaluation:
    """Per-query values, means and counts of one evaluation.

    Attributes
    ----------
    metrics
        Mean of each metric by id; ``None`` when no query was evaluated (or the catalogue is
        empty), never a made-up 0 or 1.
    per_query
        One row per judged query: ``query``, ``status`` (``ok``, ``no_relevant``,
        ``missing_in_run``), ``n_retrieved``, ``n_relevant``, then one column per per-query
        metric, null where the query is left out of the mean.
    queries
        The counts behind the means.
    conventions
        The conventions the values were computed under.
    catalogue
        For catalogue coverage: catalogue size and queries of the run; else ``None``.
    """

    metrics: dict[str, float | None]
    per_query: pl.DataFrame
    queries: QueryCounts
    conventions: Conventions
    catalogue: dict[str, int] | None = None

    def summary(self) -> pl.DataFrame:
        """One row per metric: value and the counts and policies behind it.

        Examples
        --------
        >>> import polars as pl
        >>> from feco.evaluation import evaluate
        >>> run = pl.DataFrame({"query": [1, 2], "item": [1, 1], "score": [1.0, 1.0]})
        >>> qrels = pl.DataFrame({"query": [1, 2], "item": [1, 2], "relevance": [1, 0]})
        >>> evaluate(run, qrels, metrics=["mrr"]).summary().row(0)
        ('mrr', 1.0, 1, 1, 'exclude', 0, 'zero')
        """
        c = self.conventions
        return pl.DataFrame(
            {
                "metric": list(self.metrics),
                "value": list(self.metrics.values()),
                "evaluated": [self.queries.evaluated] * len(self.metrics),
                "no_relevant": [self.queries.no_relevant] * len(self.metrics),
                "no_relevant_policy": [c.no_relevant] * len(self.metrics),
                "missing_in_run": [self.queries.missing_in_run] * len(self.metrics),
                "missing_policy": [c.missing_in_run] * len(self.metrics),
            },
            schema_overrides={"value": pl.Float64},
        )

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict: ``metrics``, ``queries``, ``conventions`` (and ``catalogue``).

        Examples
        --------
        >>> import polars as pl
        >>> from feco.evaluation import evaluate
        >>> run = pl.DataFrame({"query": [1], "item": [1], "score": [1.0]})
        >>> qrels = pl.DataFrame({"query": [1, 2], "item": [1, 1], "relevance": [1, 1]})
        >>> out = evaluate(run, qrels, metrics=["mrr"], conventions="trec_eval").to_dict()
        >>> out["metrics"], out["queries"]["missing_in_run"], out["conventions"]["preset"]
        ({'mrr': 1.0}, 1, 'trec_eval')
        """
        out: dict[str, object] = {
            "metrics": dict(self.metrics),
            "queries": {
                "evaluated": self.queries.evaluated,
                "no_relevant": self.queries.no_relevant,
                "missing_in_run": self.queries.missing_in_run,
                "unjudged_in_run": self.queries.unjudged_in_run,
                "judged": self.queries.judged,
            },
            "conventions": self.conventions.to_dict(),
        }
        if self.catalogue is not None:
            out["catalogue"] = dict(self.catalogue)
        return out

    def by(self, segments: pl.DataFrame) -> pl.DataFrame:
        """Means and counts per segment of queries.

        Parameters
        ----------
        segments
            Frame with columns ``query`` and ``segment``; queries it does not list fall in
            segment ``"(none)"``.

        Returns
        -------
        polars.DataFrame
            ``segment``, ``judged``, ``evaluated``, ``no_relevant``, ``missing_in_run``, then
            the mean of every per-query metric.

        Examples
        --------
        >>> import polars as pl
        >>> from feco.evaluation import evaluate
        >>> run = pl.DataFrame({"query": [1, 2], "item": [1, 1], "score": [1.0, 1.0]})
        >>> qrels = pl.DataFrame({"query": [1, 2], "item": [1, 2], "relevance": [1, 1]})
        >>> segments = pl.DataFrame({"query": [1, 2], "segment": ["new", "old"]})
        >>> evaluate(run, qrels, metrics=["mrr"]).by(segments).select("segment", "mrr").rows()
        [('new', 1.0), ('old', 0.0)]
        """
        if not {"query", "segment"} <= set(segments.columns):
            raise UsageError("segments need columns 'query' and 'segment'")
        names = [m for m in self.metrics if m in self.per_query.columns]
        first = names[0] if names else None
        labelled = self.per_query.join(
            segments.select("query", pl.col("segment").cast(pl.String)).unique("query"),
            on="query",
            how="left",
        ).with_columns(pl.col("segment").fill_null("(none)"))
        return (
            labelled.group_by("segment")
            .agg(
                pl.len().alias("judged"),
                (pl.col(first).is_not_null().sum() if first else pl.lit(0)).alias("evaluated"),
                (pl.col("n_relevant") == 0).sum().alias("no_relevant"),
                (pl.col("status") == "missing_in_run").sum().alias("missing_in_run"),
                *[pl.col(name).mean() for name in names],
            )
            .sort("segment")
        )


def evaluate(
    run: pl.DataFrame,
    qrels: pl.DataFrame,
    *,
    metrics: str | Sequence[str] | None = None,
    conventions: Conventions | str | None = None,
    catalogue: pl.Series | Sequence[object] | None = None,
    kernels: str = "numba",
) -> Evaluation:
    """Evaluate a run against judgments.

    Parameters
    ----------
    run
        Frame ``(query, item, score)``: one row per ranked item, higher score first. Rows of a
        query need not be contiguous; their order matters only for ``ties="input_order"``.
    qrels
        Frame ``(query, item, relevance)``; items absent from it are not relevant.
    metrics
        Metric ids (``"ndcg@8"``, ``"map"``, ...) as a sequence or a comma-separated string;
        by default those of :func:`default_metrics` for the conventions.
    conventions
        A :class:`~feco.evaluation.Conventions`, a preset name (``"trec_eval"``,
        ``"lightgbm"``, ``"sklearn"``, ``"ranx"``, ``"personalize"``), or ``None`` for
        feco's defaults.
    catalogue
        Items for ``coverage@k``; by default every item in the run or the judgments.
    kernels
        ``"numba"``: compiled loops, the fastest once loaded (numba's import and its cached
        kernels take half a second or more in a new process); ``"numpy"``: array operations with
        nothing to compile, for one-off calls such as ``feco evaluate``. Values are identical.

    Returns
    -------
    Evaluation

    Raises
    ------
    DataError
        Missing columns, nulls, NaN scores, an item ranked twice for a query, or (with
        ``no_relevant="error"``) a query with no relevant item.
    UsageError
        An unknown metric, or one the conventions leave undefined (MRR under tie averaging).

    Examples
    --------
    >>> import polars as pl
    >>> from feco.evaluation import evaluate
    >>> run = pl.DataFrame({"query": ["a", "a", "a", "b"], "item": ["x", "y", "z", "x"],
    ...                     "score": [0.9, 0.8, 0.1, 0.5]})
    >>> qrels = pl.DataFrame({"query": ["a", "a", "b", "c"], "item": ["y", "z", "y", "x"],
    ...                       "relevance": [2, 1, 0, 1]})
    >>> result = evaluate(run, qrels, metrics=["ndcg@2", "mrr"])
    >>> round(result.metrics["ndcg@2"], 4), result.metrics["mrr"]
    (0.2606, 0.25)
    >>> result.queries.evaluated, result.queries.no_relevant, result.queries.missing_in_run
    (2, 1, 1)
    """
    conventions = resolve(conventions)
    return _evaluate(run, qrels, metrics or default_metrics(conventions), conventions, catalogue, check_qrels=True,
                     kernels=kernels)


def evaluate_labelled(
    frame: pl.DataFrame,
    *,
    metrics: str | Sequence[str] | None = None,
    conventions: Conventions | str | None = None,
    query: str = "qid",
    label: str = "label",
    score: str = "score",
    item: str | None = None,
    kernels: str = "numba",
) -> Evaluation:
    """Evaluate a frame whose rows are scored, labelled candidates (LETOR data + predictions).

    Each query's candidates are its rows: judged and ranked at once, so the ideal DCG is the
    same under ``ideal="judged"`` and ``"candidates"`` and no query is missing from the run.

    Parameters
    ----------
    frame
        One row per candidate with a query id, a relevance label and a model score.
    metrics, conventions, kernels
        As in :func:`evaluate`.
    query, label, score
        Column names.
    item
        Column with item ids (e.g. ``"docid"``), used by item-ordered tie rules. Without it
        the row position stands for the item, so ``ties="item_desc"`` puts later rows first
        and ``"input_order"`` earlier rows first.

    Returns
    -------
    Evaluation

    Examples
    --------
    >>> import polars as pl
    >>> from feco.evaluation import evaluate_labelled
    >>> frame = pl.DataFrame({"qid": [1, 1, 1, 2, 2], "label": [0, 2, 1, 0, 0],
    ...                       "score": [0.3, 0.2, 0.1, 0.5, 0.4]})
    >>> feco = evaluate_labelled(frame, metrics=["ndcg@2"])
    >>> lgbm = evaluate_labelled(frame, metrics=["ndcg@2"], conventions="lightgbm")
    >>> round(feco.metrics["ndcg@2"], 4), round(lgbm.metrics["ndcg@2"], 4)
    (0.5213, 0.7606)
    >>> feco.queries.evaluated, lgbm.queries.evaluated  # query 2 has no relevant row
    (1, 2)
    """
    missing = [c for c in (query, label, score, item) if c is not None and c not in frame.columns]
    if missing:
        raise DataError(f"labelled frame lacks column(s) {', '.join(missing)}")
    item_expr = pl.col(item) if item is not None else pl.int_range(pl.len(), dtype=pl.Int64)
    run = frame.select(pl.col(query).alias("query"), item_expr.alias("item"),
                       pl.col(score).alias("score"))
    qrels = frame.select(pl.col(query).alias("query"), item_expr.alias("item"),
                         pl.col(label).alias("relevance"))
    conventions = resolve(conventions)
    return _evaluate(run, qrels, metrics or default_metrics(conventions), conventions, None,
                     check_qrels=item is not None, kernels=kernels)


def _evaluate(run, qrels, metrics, conventions: Conventions, catalogue, *, check_qrels: bool,
              kernels: str):
    parsed = parse_metrics(metrics)
    for metric in parsed:
        check_supported(metric, conventions)
    ranked = rank_judgments(
        run, qrels, ties=conventions.ties, score_precision=conventions.score_precision,
        check_qrels=check_qrels, kernels=kernels,
    )
    context = _context(ranked, conventions)
    counted, fill = _policy(context)

    values: dict[str, float | None] = {}
    columns: dict[str, np.ndarray] = {}
    items = catalogue_info = None
    for metric in parsed:
        if not metric.definition.per_query:
            if items is None:
                items = _catalogue(catalogue, run, qrels, ranked)
                catalogue_info = {"size": items.len(), "queries": len(ranked.run_lo)}
            values[metric.id] = coverage_family.compute_run(metric, ranked, items)
            continue
        raw = metric.family.compute(metric, context)
        per_query = np.where(context.n_relevant == 0, fill, raw)
        columns[metric.id] = per_query
        values[metric.id] = float(per_query[counted].mean()) if counted.any() else None

    per_query = pl.DataFrame(
        {
            "query": ranked.queries,
            "in_run": ranked.in_run,
            "n_retrieved": ranked.n_retrieved,
            "n_relevant": context.n_relevant,
        }
    ).select(
        "query",
        pl.when(~pl.col("in_run")).then(pl.lit("missing_in_run"))
        .when(pl.col("n_relevant") == 0).then(pl.lit("no_relevant"))
        .otherwise(pl.lit("ok")).alias("status"),
        "n_retrieved",
        "n_relevant",
        *(pl.Series(name, np.where(counted, col, np.nan)).fill_nan(None)
          for name, col in columns.items()),
    )
    counts = QueryCounts(
        judged=len(ranked.queries),
        evaluated=int(counted.sum()),
        no_relevant=int((context.n_relevant == 0).sum()),
        missing_in_run=int((~ranked.in_run).sum()),
        unjudged_in_run=ranked.unjudged_in_run,
    )
    return Evaluation(values, per_query, counts, conventions, catalogue_info)


def _context(ranked: RankedJudgments, conventions: Conventions) -> Context:
    relevance = ranked.relevance
    relevant = relevance >= conventions.relevance_level
    if conventions.gain == "binary":
        gains = relevant.astype(np.float64)
    elif conventions.gain == "linear":
        gains = relevance
    else:
        gains = np.exp2(relevance) - 1.0
    in_scope = relevant if conventions.ideal == "judged" else relevant & (ranked.match >= 0)
    return Context(
        ranked=ranked,
        conventions=conventions,
        gains=gains,
        relevant=relevant,
        n_relevant=_per_query_sum(ranked, in_scope),
        n_relevant_judged=_per_query_sum(ranked, relevant),
    )


def _per_query_sum(ranked: RankedJudgments, flags: np.ndarray) -> np.ndarray:
    cumulative = np.concatenate([[0], np.cumsum(flags, dtype=np.int64)])
    return cumulative[ranked.pos_hi] - cumulative[ranked.pos_lo]


def _policy(context: Context) -> tuple[np.ndarray, float]:
    """Which queries enter the means, and the value of those with no relevant item."""
    conventions = context.conventions
    empty = context.n_relevant == 0
    counted = np.ones(len(empty), bool)
    if conventions.missing_in_run == "drop":
        counted &= context.ranked.in_run
    if conventions.no_relevant == "error" and (empty & counted).any():
        first = context.ranked.queries.filter(pl.Series(empty & counted))[0]
        raise DataError(
            f"{int((empty & counted).sum())} queries have no relevant item (first: {first!r}) "
            "and the conventions say no_relevant='error'"
        )
    if conventions.no_relevant == "exclude":
        counted &= ~empty
    return counted, {"one": 1.0}.get(conventions.no_relevant, 0.0)


def _catalogue(catalogue, run: pl.DataFrame, qrels: pl.DataFrame, ranked: RankedJudgments):
    item_dtype = ranked.run.schema["item"]
    if catalogue is None:
        items = pl.concat([run.get_column("item").cast(item_dtype),
                           qrels.get_column("item").cast(item_dtype)])
    else:
        items = pl.Series("item", list(catalogue) if not isinstance(catalogue, pl.Series)
                          else catalogue)
        try:
            items = items.cast(item_dtype)
        except pl.exceptions.PolarsError:
            raise DataError(f"catalogue ids cannot be compared with item ids ({item_dtype})") \
                from None
    return items.unique()

