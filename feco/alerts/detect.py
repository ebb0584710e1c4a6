"""Detect: run the alert rules on one published day and shape the alert rows."""

from __future__ import annotations

import hashlib
from datetime import date, timedelta
from typing import NamedTuple

import duckdb
import polars as pl

from feco.alerts.budget import series_alpha
from feco.alerts.rollup import roll_up
from feco.alerts.rules import ABNORMAL_DAY, FIRED_SCHEMA, InputRule, registry
from feco.alerts.rules.collapse import COLLAPSE_SHARE, CollapseRule
from feco.alerts.rules.decay import DecayRule
from feco.alerts.rules.drop import DropRule
from feco.alerts.rules.missing import missing_columns
from feco.alerts.rules.volume import volume_collapse
from feco.alerts.severity import severity
from feco.config import Alerts, Config, Incidents, ReferencePeriod, Segments
from feco.warehouse import named_query

# A day further than this many robust sds (1.4826 x the median absolute deviation) from its
# series' usual level is left out of the spread (and, below it, out of the level): a failure's
# days, and no more than a normal series' tail (under a normal, one day in 16,000).
OUTLIER_SD = 4.0
DIGITS = 10


class Judged(NamedTuple):
    """What one day's judgement writes: its alerts, what it did not judge (``unjudged``) and
    the decay references that follow a rise (``reference_moves``)."""

    alerts: pl.DataFrame
    unjudged: pl.DataFrame
    reference_moves: pl.DataFrame


def detect_alerts(conn: duckdb.DuckDBPyConnection, ds: date, **options) -> pl.DataFrame:
    """Every alert that fires on ``ds`` (:func:`judge_day`'s alerts).

    Examples
    --------
    On a warehouse with weeks of published days (not run as a doctest: it needs them)::

        with open_configured(config) as conn:
            alerts = detect_alerts(conn, date(2026, 1, 21), config=config)
    """
    return judge_day(conn, ds, **options).alerts


def judge_day(
    conn: duckdb.DuckDBPyConnection,
    ds: date,
    *,
    config: Config,
    importance: dict[str, float] | None = None,
    ndcg_change: dict[tuple[str, str], float] | None = None,
) -> Judged:
    """Every alert that fires on ``ds``, rolled up, with severity and a readable detail; what
    the coverage rules did not judge, and why; and the decay references that follow a rise.

    History rules (drop, decay) wait until ``alerts.warmup_days`` days of history exist;
    floor, missing-values and collapse rules run from the first day with a history. Segments
    with fewer than ``alerts.min_rows`` sampled rows raise no coverage alert but a collapse
    (they are listed as not judged). ``ndcg_change`` maps (segment_dim, segment_value) to the
    day's measured NDCG@8 change; a coverage alert's detail states it when known.
    """
    settings = config.alerts
    inputs = alert_inputs(conn, ds, alerts=settings, moving_average_days=config.moving_average_days,
                          reference=config.decay_reference(),
                          segments=config.segments, sources=config.logs.source_features())
    volume = named_query(conn, "sampled_volume", {"ds": ds, "baseline_days": settings.drop.baseline_days}).row(0)
    collapsed = volume_collapse(volume[0] or 0, volume[1], volume[2], settings, windows_missing=volume[3])
    eligible = inputs.filter(pl.col("n_rows") >= settings.min_rows)
    warm = judged_on_history(inputs, settings)
    pageable = inputs.filter(_pageable(settings.incidents))
    alpha = day_alpha(inputs, settings)
    noise = named_query(conn, "noise_marks", {"ds": ds, "spread_days": settings.drop.spread_days})
    found = [collapsed, missing_columns(_missing_features(conn, ds))]
    for rule in registry.RULES:
        _check_statistics(rule, inputs)
        if rule.needs_history and collapsed.filter(pl.col("observed") < pl.col("threshold")).height:
            continue  # a collapsed day's coverage is not comparable (a missing window leaves it so)
        judged = warm if rule.needs_history else pageable if getattr(rule, "pageable_only", False) else eligible
        found.append(detect_under_noise(rule, judged, settings, alpha=alpha, noise=noise))
    alerts = _with_ids(_collapse_where_no_drop(pl.concat(found)), ds)
    # the input rules' alerts roll up across segments; the day's own (volume, a column gone) stand alone
    coverage_alerts = alerts.filter(pl.col("rule").is_in(registry.input_rule_names()))
    rolled = pl.concat([
        roll_up(coverage_alerts, inputs),
        alerts.join(coverage_alerts, on="alert_id", how="anti").with_columns(
            pl.lit(None, pl.String).alias("parent_id"), pl.lit("open").alias("status")),
    ])
    decay_days = config.moving_average_days
    rolled = _ongoing(rolled, named_query(conn, "recent_alerts", {"ds": ds, "days": decay_days}), ds, decay_days)
    history_days = named_query(conn, "history_days", {"ds": ds}).item()
    return Judged(_finish(rolled, ds, importance, ndcg_change or {}, n_features=len(config.logs.features)),
                  unjudged(pageable, settings, ds=ds, history_days=history_days), _reference_moves(pageable, ds))


def detect_under_noise(rule: InputRule, judged: pl.DataFrame, settings: Alerts, *, alpha: float,
                       noise: pl.DataFrame) -> pl.DataFrame:
    """``rule.detect`` at the day's ``alpha``, but for each series whose pages people marked
    noise lately (``noise``: sql/queries/noise_marks.sql), judged at alpha / (1 + its marks):
    the series' own false pages tighten its budget, so it needs a larger shortfall to page again.

    Examples
    --------
    With no series marked it is the rule's own detect (not run as a doctest: it needs inputs)::

        detect_under_noise(rule, inputs, settings, alpha=1e-4, noise=named_query(conn, "noise_marks", params))
    """
    keys = ["feature", "segment_dim", "segment_value"]
    marks = noise.filter(pl.col("rule") == rule.name).select(*keys, "noise_marks")
    if marks.is_empty() or judged.is_empty():
        return rule.detect(judged, settings, alpha)
    judged = judged.join(marks, on=keys, how="left", nulls_equal=True).with_columns(pl.col("noise_marks").fill_null(0))
    return pl.concat([rule.detect(series.drop("noise_marks"), settings, alpha / (1 + n))
                      for (n,), series in judged.group_by("noise_marks", maintain_order=True)])


def _collapse_where_no_drop(alerts: pl.DataFrame) -> pl.DataFrame:
    """A collapse speaks where the drop rule cannot (the first weeks, a segment under
    min_rows): where both fire, the drop says it, with its prediction and spread."""
    keys = ["feature", "segment_dim", "segment_value"]
    drops = alerts.filter(pl.col("rule") == DropRule.name).select(keys)
    collapses = alerts.filter(pl.col("rule") == CollapseRule.name).join(drops, on=keys, how="anti")
    return pl.concat([alerts.filter(pl.col("rule") != CollapseRule.name), collapses])


def _ongoing(alerts: pl.DataFrame, recent: pl.DataFrame, ds: date, decay_days: int) -> pl.DataFrame:
    """A headline that also fired the day before, in the same place and by the same rule, is
    'ongoing': the team was paged for it already, so it is listed but not delivered again. A
    decay counts as ongoing for ``decay_days`` after it last fired: its 7-day average hovers
    at the threshold, flipping in and out, and is one condition, paged when it first crossed."""
    keys = ["feature", "segment_dim", "segment_value", "rule"]
    lookback = pl.when(pl.col("rule") == DecayRule.name).then(decay_days).otherwise(1)
    seen = (alerts.join(recent, on=keys, how="left", nulls_equal=True)
            .select(((pl.lit(ds) - pl.col("last_ds")).dt.total_days() <= lookback).fill_null(False))
            .to_series())
    return alerts.with_columns(
        pl.when((pl.col("status") == "open") & seen).then(pl.lit("ongoing")).otherwise(pl.col("status")).alias("status"))


def alert_inputs(conn: duckdb.DuckDBPyConnection, ds: date, *, alerts: Alerts, moving_average_days: int = 7,
                 reference: ReferencePeriod | None = None, segments: Segments | None = None,
                 sources: dict[str, list[str]] | None = None) -> pl.DataFrame:
    """The coverage rules' inputs on ``ds``: one row per feature and segment present that day
    (``sql/queries/alert_inputs.sql``; all traffic and the product-age segments are judged
    against their previous days as today's mix of age bands and of query bands would have
    given them),
    its upstream source (``sources``), how much its weekly level wanders
    (``decay_wander.sql``), every segment's relative drops, fired or not, so roll-up can
    compare siblings (the day's per-series false-alarm rate is :func:`day_alpha`).

    Examples
    --------
    On a warehouse with published days (not run as a doctest: it needs them)::

        alert_inputs(conn, date(2026, 1, 21), alerts=config.alerts).columns[:4]
        # ['feature', 'segment_dim', 'segment_value', 'n_rows']
    """
    segments = segments or Segments()
    bands_from = named_query(conn, "bands_from").item()
    inputs = named_query(conn, "alert_inputs", {
        "ds": ds, "baseline_days": alerts.drop.baseline_days, "bands_from": bands_from,
        "new_bands": segments.new_age_bands(),
        "age_bands": [label for label, _ in segments.age_bands()],
        "spread_days": alerts.drop.spread_days,
        "weekly": alerts.weekly,
        "outlier_sd": OUTLIER_SD,
        "collapse_share": COLLAPSE_SHARE,
        "follow_days": alerts.decay.follow_days,
        "follow_relative": alerts.decay.relative,
        "follow_absolute": alerts.decay.absolute,
        "ref_start": reference.start if reference else None,
        "ref_end": reference.end if reference else None,
        "ref_min_days": reference.days_needed() if reference else 0,
        "min_rows": alerts.min_rows,
        "ma_days": moving_average_days,
    })
    risen = inputs.filter(pl.col("risen_since").is_not_null())
    wander = named_query(conn, "decay_wander", {
        "ds": ds, "ref_start": reference.start if reference else ds, "wander_days": alerts.decay.wander_days,
        "min_rows": alerts.min_rows, **registry.rule_lists(ABNORMAL_DAY),
        **{f"risen_{name}": risen[column].to_list() for name, column in (
            ("features", "feature"), ("dims", "segment_dim"), ("values", "segment_value"), ("since", "risen_since"))},
    }).rename({"weeks": "wander_weeks"})
    source_of = {feature: name for name, features in (sources or {}).items() for feature in features}
    return inputs.join(wander, on=["feature", "segment_dim", "segment_value"], how="left").with_columns(
        pl.col("feature").replace_strict(source_of, default=None, return_dtype=pl.String).alias("source"),
        ((pl.col("baseline") - pl.col("observed")) / pl.col("baseline")).alias(f"drop_rel_{DropRule.name}"),
        ((pl.col("reference") - pl.col("coverage_ma7")) / pl.col("reference")).alias(f"drop_rel_{DecayRule.name}"),
    )


def _check_statistics(rule: InputRule, inputs: pl.DataFrame) -> None:
    """Refuse a rule whose statistics the inputs lack, naming them: a new rule's statistic is a
    part of ``sql/queries/alert_inputs/`` joined in ``alert_inputs.sql``."""
    lacking = [name for name in rule.statistics if name not in inputs.columns]
    if lacking:
        raise ValueError(f"alert rule {rule.name} needs {', '.join(lacking)}, which sql/queries/alert_inputs.sql "
                         "does not give")


def day_alpha(inputs: pl.DataFrame, settings: Alerts) -> float:
    """The day's per-series false-alarm rate under the false-page budget (``feco.alerts.budget``),
    passed to every rule."""
    return series_alpha(settings.false_pages_per_week, judged_series(inputs, settings))


def judged_series(inputs: pl.DataFrame, settings: Alerts) -> int:
    """The (rule, feature, segment) series that could page today: each rule's series
    (``budget_series``) among the features and pageable segments with enough rows."""
    judged = inputs.filter((pl.col("n_rows") >= settings.min_rows) & _pageable(settings.incidents))
    return sum(rule.budget_series(judged) for rule in registry.RULES)


def _pageable(incidents: Incidents) -> pl.Expr:
    """All traffic, and segments holding ``page_min_share`` of the feature's rows that day
    (not crosses of dimensions nor age bands unless they page)."""
    share = pl.col("n_rows") / pl.col("n_rows").filter(pl.col("segment_dim") == "all").first().over("feature")
    cross = pl.col("segment_dim").str.contains(" x ", literal=True)
    age_band = pl.col("segment_dim") == "age_band"
    return (pl.col("segment_dim") == "all") | (
        (share >= incidents.page_min_share).fill_null(False) & (pl.lit(incidents.page_crosses) | ~cross)
        & (pl.lit(incidents.page_age_bands) | ~age_band))


def judged_on_history(inputs: pl.DataFrame, settings: Alerts) -> pl.DataFrame:
    """The rows the history rules (drop, decay) judge: enough sampled rows and enough days
    of history; the others raise no such alert."""
    return inputs.filter((pl.col("n_rows") >= settings.min_rows) & (pl.col("baseline_days") >= settings.warmup_days))


def _missing_features(conn, ds: date) -> list[str]:
    return named_query(conn, "missing_features", {"ds": ds}).get_column("feature").to_list()


def _reference_moves(pageable: pl.DataFrame, ds: date) -> pl.DataFrame:
    """The series whose decay reference follows a rise held above it (``risen_reference``)."""
    moved = pageable.filter(pl.col("risen_reference") > pl.col("reference"))
    return moved.select(pl.lit(ds).alias("ds"), "feature", "segment_dim", "segment_value", "reference",
                        pl.col("risen_reference").alias("followed"), pl.col("risen_since").alias("since"))


UNJUDGED_SCHEMA = {"ds": pl.Date, "feature": pl.String, "segment_dim": pl.String, "segment_value": pl.String,
                   "reason": pl.String, "detail": pl.String}


def unjudged(pageable: pl.DataFrame, settings: Alerts, *, ds: date, history_days: int) -> pl.DataFrame:
    """What the coverage rules did not judge on ``ds`` in the segments that can page, and why
    (table ``unjudged``): segments under ``min_rows``, the warm-up, a segment whose mix of
    product ages is not its history's. The segment's rows are feco_daily's, not copied here: a
    later day's counting may restate a day's query bands (feco.coverage.first_window), and a
    figure in the detail is the one judged on, said so.

    Examples
    --------
    >>> rows = pl.DataFrame({"feature": ["f", "f"], "segment_dim": ["all", "region"], "segment_value": ["all", "DE"],
    ...                      "n_rows": [9000, 472], "history_overlap": [0.9, None]})
    >>> unjudged(rows, Alerts(), ds=date(2026, 11, 3), history_days=2).select("segment_value", "reason").rows()
    [('all', 'warm_up'), ('DE', 'few_rows')]
    """
    rows = []
    if history_days < settings.warmup_days:
        start = ds + timedelta(days=settings.warmup_days - history_days)
        rows.append((None, "all", "all", "warm_up",
                     f"{history_days} of warmup_days ({settings.warmup_days}) days of history: the drop and decay "
                     f"rules judge from {start}; missing values and collapses are judged meanwhile"))
    few = pageable.filter(pl.col("n_rows") < settings.min_rows).unique(["segment_dim", "segment_value"])
    for row in few.sort("segment_dim", "segment_value").iter_rows(named=True):
        rows.append((None, row["segment_dim"], row["segment_value"], "few_rows",
                     f"{row['n_rows']:,} sampled rows as judged, under min_rows ({settings.min_rows:,}): only a "
                     "collapse is judged"))
    mixed = pageable.filter((pl.col("n_rows") >= settings.min_rows)
                            & (pl.col("history_overlap") < settings.min_age_overlap))
    for row in mixed.sort("feature", "segment_dim", "segment_value").iter_rows(named=True):
        rows.append((row["feature"], row["segment_dim"], row["segment_value"], "age_mix",
                     f"its rows share {row['history_overlap']:.0%} of their product ages with its history's, under "
                     f"min_age_overlap ({settings.min_age_overlap:.0%}): its history says nothing of it"))
    return pl.DataFrame([(ds, *row) for row in rows], schema=UNJUDGED_SCHEMA, orient="row")


def _with_ids(alerts: pl.DataFrame, ds: date) -> pl.DataFrame:
    keys = alerts.select("feature", "segment_dim", "segment_value", "rule").iter_rows()
    ids = [hashlib.sha1(f"{ds}|{f}|{d}|{v}|{r}".encode()).hexdigest()[:16] for f, d, v, r in keys]
    return alerts.with_columns(pl.Series("alert_id", ids, dtype=pl.String))


def _severity_drop(alert: dict) -> float | None:
    return alert["severity_drop"] if alert["severity_drop"] is not None else alert["drop_rel"]


def _finish(alerts: pl.DataFrame, ds: date, importance: dict[str, float] | None,
            ndcg_change: dict[tuple[str, str], float], *, n_features: int) -> pl.DataFrame:
    rows = []
    for row in alerts.iter_rows(named=True):
        # A model that does not use a feature gives it share 0, not "unknown".
        share = importance.get(row["feature"], 0.0) if importance and row["feature"] else None
        change = ndcg_change.get((row["segment_dim"], row["segment_value"])) if row["feature"] else None
        detail = registry.rule_named(row["rule"]).describe(row)  # each rule says what its alerts mean
        if change is not None:
            # Fewer than 7 days may have been scored (a new model, a gap): say what the mean is over.
            detail += f"; NDCG@8 {change:+.3f} vs the mean of the days scored in the 7 before"
        row |= {"ds": ds, "importance": share,
                "severity": severity(row["rule"], _severity_drop(row), share, n_features),
                "detail": detail}
        rows.append(row)
    schema = {"ds": pl.Date, "alert_id": pl.String, **FIRED_SCHEMA, "severity": pl.String,
              "importance": pl.Float64, "status": pl.String, "parent_id": pl.String, "detail": pl.String}
    frame = pl.DataFrame(rows, schema=schema, orient="row").drop("against", "severity_drop")  # said in the detail, and in the severity
    # DuckDB sums in parallel, so the last bits of a mean can differ between runs; rounding
    # keeps a re-run of a day bit-identical.
    floats = [name for name in frame.columns if schema[name] == pl.Float64]
    return frame.with_columns(pl.col(floats).round(DIGITS)).sort(
        ["status", "feature", "segment_dim", "segment_value", "rule"], nulls_last=True)
