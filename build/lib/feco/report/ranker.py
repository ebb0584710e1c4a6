"""The report's ranker sections: NDCG by day, importance before and after a coverage drop, and
the coverage-drop grid (the FeCo paper's Figures 1-2 and Table 1).

Each section needs its tables to exist with rows (``sql/schema/2x_*.sql``); otherwise it is
skipped with a note, so a warehouse without ranker results still gets a report.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import polars as pl

from feco.report import charts
from feco.report.page import Section, html_table

def sections(tables: dict[str, pl.DataFrame], coverage: pl.DataFrame, out: Path, *,
             colours: dict, missing: str) -> list[Section]:
    """The three ranker sections, each rendered or skipped on its own."""
    daily = tables.get("ranker_daily")
    importance = tables.get("feature_importance")
    cells = tables.get("coverage_drop_results")
    return [
        _ndcg(daily, coverage, importance, out, colours) if daily is not None
        else Section("ndcg", "NDCG by day", skipped=missing),
        _importance(importance, cells, out, colours) if importance is not None and cells is not None
        else Section("importance", "Importance before and after a coverage drop", skipped=missing),
        _grid(cells, out, colours) if cells is not None
        else Section("coverage-drop", "Coverage-drop grid", skipped=missing),
    ]


def _top_features(importance: pl.DataFrame | None, coverage: pl.DataFrame, *, run_ids: list[str],
                  count: int) -> list[str]:
    """The monitored features with the largest mean SHAP share in the runs that scored the days."""
    if importance is None:
        return []
    known = coverage.get_column("feature").unique().implode()
    return (importance.filter(pl.col("feature").is_in(known) & pl.col("run_id").is_in(run_ids))
            .group_by("feature")
            .agg(pl.col("shap_share").mean()).sort("shap_share", descending=True)
            .head(count).get_column("feature").to_list())


def _ndcg(daily: pl.DataFrame, coverage: pl.DataFrame, importance: pl.DataFrame | None,
          out: Path, colours: dict) -> Section:
    run_ids = sorted({r for ids in daily.get_column("run_ids").drop_nulls() for r in ids.split(",")})
    top = _top_features(importance, coverage, run_ids=run_ids, count=4)
    fig, (upper, lower) = plt.subplots(2, 1, figsize=(14, 7), sharex=True)
    for column, label, style in (("ndcg4", "NDCG@4", "-"), ("ndcg8", "NDCG@8", "--")):
        upper.plot(daily.get_column("ds").to_list(), daily.get_column(column).to_numpy(),
                   color="black", linestyle=style, marker="o", label=label)
    upper.set_ylabel("NDCG (0–1)")
    upper.set_title("Daily NDCG of the reference ranker on the day's sample")
    upper.legend(fontsize=9)
    for feature in top:
        days = coverage.filter(pl.col("feature") == feature).sort("ds")
        lower.plot(days.get_column("ds").to_list(), 100 * days.get_column("coverage").to_numpy(),
                   color=colours[feature], marker=".", label=feature)
    lower.set_ylabel("coverage (%)")
    lower.set_title("Coverage of the most important features (by mean SHAP share)" if top
                    else "No importances stored: no features to show")
    if top:
        lower.legend(fontsize=9, ncol=len(top), loc="lower left")
    for ax in (upper, lower):
        charts.date_axis(ax)
    lower.set_xlabel("day (UTC)")
    fig.tight_layout()
    name = charts.save(fig, out, "ndcg_daily.png")
    return Section("ndcg", "NDCG by day", images=[(name, "NDCG@4 and NDCG@8 by day")],
                   text="NDCG@4/8 by day beside the coverage of the features the model leans on most.")


def _shift(importance: pl.DataFrame, cells: pl.DataFrame, *, top: int = 10) -> tuple[pl.DataFrame, str, float, str]:
    """Baseline SHAP shares of the top features and their means after the smallest drop of the
    most important feature (retrained when such cells exist, as in the paper's figures)."""
    experiment = cells.get_column("experiment_id").sort().last()
    cells = cells.filter(pl.col("experiment_id") == experiment)
    mode = "retrain" if (cells.get_column("mode") == "retrain").any() else cells.get_column("mode").first()
    cells = cells.filter(pl.col("mode") == mode)
    base = importance.filter(pl.col("run_id") == f"{experiment}:baseline").sort("shap_share", descending=True)
    dropped = next(f for f in base.get_column("feature") if f in set(cells.get_column("feature")))
    reduction = cells.filter(pl.col("feature") == dropped).get_column("reduction").min()
    run_ids = cells.filter((pl.col("feature") == dropped) & (pl.col("reduction") == reduction)).get_column("run_id")
    after = (importance.filter(pl.col("run_id").is_in(run_ids.implode())).group_by("feature")
             .agg(pl.col("shap_share").mean().alias("after")))
    shift = (base.head(top).select("feature", pl.col("shap_share").alias("before"))
             .join(after, on="feature", how="left"))
    return shift, dropped, reduction, mode


def _importance(importance: pl.DataFrame, cells: pl.DataFrame, out: Path, colours: dict) -> Section:
    title = "Importance before and after a coverage drop"
    try:
        shift, dropped, reduction, mode = _shift(importance, cells)
    except StopIteration:
        return Section("importance", title, skipped="No coverage-drop cell matches a baseline run's features.")
    palette = charts.feature_colours(shift.get_column("feature").to_list()) | colours
    fig, ax = plt.subplots(figsize=(14, 0.45 * shift.height + 1.6))
    rows = range(shift.height)
    features = shift.get_column("feature").to_list()
    ax.barh([r - 0.2 for r in rows], 100 * shift.get_column("before").to_numpy(), height=0.4,
            color=[palette[f] for f in features], label="baseline")
    ax.barh([r + 0.2 for r in rows], 100 * shift.get_column("after").fill_null(0).to_numpy(), height=0.4,
            color=[palette[f] for f in features], alpha=0.45, hatch="//", label=f"after {dropped} lost {reduction:.0%}")
    ax.set_yticks(list(rows), features, fontsize=9)
    ax.invert_yaxis()
    ax.set_xlabel("share of mean |SHAP| (%)")
    ax.set_title(f"Feature importance before and after {dropped} lost {reduction:.0%} of its coverage ({mode})")
    ax.legend(fontsize=9, loc="lower right")
    fig.tight_layout()
    name = charts.save(fig, out, "importance_shift.png")
    return Section("importance", title, images=[(name, "importance before and after a drop")],
                   tables=[html_table(shift.with_columns(pl.col("before", "after") * 100),
                                      formats={"before": ".2f", "after": ".2f"})],
                   text="The FeCo paper's Figures 1-2: shares of mean |SHAP| (in %) of the baseline "
                        "model's top features, and after the most important one lost some coverage.")


def _grid(cells: pl.DataFrame, out: Path, colours: dict) -> Section:
    table = (cells.group_by("mode", "feature", "reduction")
             .agg(pl.len().alias("seeds"),
                  (100 * pl.col("coverage_test_before").mean()).alias("FeCo before %"),
                  (100 * pl.col("coverage_test_after").mean()).alias("FeCo after %"),
                  pl.col("ndcg4").mean().alias("NDCG@4"), pl.col("ndcg8").mean().alias("NDCG@8"),
                  pl.col("d_ndcg4").mean().alias("ΔNDCG@4"), pl.col("d_ndcg8").mean().alias("ΔNDCG@8"))
             .sort("mode", "feature", "reduction"))
    modes = table.get_column("mode").unique().sort().to_list()
    palette = charts.feature_colours(table.get_column("feature").unique().to_list()) | colours
    fig, axes = plt.subplots(1, len(modes), figsize=(14, 4.2), sharey=True, squeeze=False)
    for ax, mode in zip(axes.flat, modes):
        for feature in table.filter(pl.col("mode") == mode).get_column("feature").unique().sort():
            line = table.filter((pl.col("mode") == mode) & (pl.col("feature") == feature)).sort("reduction")
            ax.plot(100 * line.get_column("reduction").to_numpy(), line.get_column("ΔNDCG@8").to_numpy(),
                    marker="o", color=palette[feature], label=feature)
        ax.axhline(0, color="grey", linewidth=0.8)
        ax.set_xlabel("coverage removed (% of covered rows)")
        ax.set_title(f"mode: {mode}")
        ax.legend(fontsize=8)
    axes.flat[0].set_ylabel("ΔNDCG@8 against the baseline")
    fig.tight_layout()
    name = charts.save(fig, out, "coverage_drop_grid.png")
    formats = {c: ".1f" for c in ("FeCo before %", "FeCo after %")} | {
        c: ".4f" for c in ("NDCG@4", "NDCG@8", "ΔNDCG@4", "ΔNDCG@8")}
    return Section("coverage-drop", "Coverage-drop grid", images=[(name, "NDCG change against coverage removed")],
                   tables=[html_table(table.with_columns(pl.col("reduction") * 100), formats=formats)],
                   text="The FeCo paper's Table 1: NDCG@4/8 after removing a share of a feature's "
                        "coverage, in the test set only or in every set with the model retrained "
                        "(means over seeds).")
