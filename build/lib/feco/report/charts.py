"""The report's charts, one function each: frames in, a PNG written, its file name out.

A feature keeps one colour in every chart (``feature_colours``); coverage is shown in percent
and changes in points, and every axis says which.
"""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # the report is written on servers without a display

import matplotlib.dates as mdates  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import polars as pl  # noqa: E402
from matplotlib.colors import TwoSlopeNorm  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

DPI = 100
ALERT_COLOUR = "#d62728"
SEVERITY_ORDER = {"critical": 0, "high": 1, "medium": 2, "low": 3}


def feature_colours(features: list[str]) -> dict[str, tuple]:
    """One colour per feature, stable for a given set of names (sorted, then a 40-colour cycle).

    Examples
    --------
    >>> colours = feature_colours(["b", "a"])
    >>> colours["a"] == feature_colours(["a", "c"])["a"]
    True
    """
    palette = list(plt.get_cmap("tab20").colors) + list(plt.get_cmap("tab20b").colors)
    return {name: palette[i % len(palette)] for i, name in enumerate(sorted(features))}


def coverage_trends(coverage: pl.DataFrame, alerts: pl.DataFrame, out: Path, *,
                    order: list[str], colours: dict[str, tuple], columns: int = 4) -> str:
    """Small multiples: per feature, daily coverage, its moving average and the alert days."""
    alert_days = _alert_days(alerts)
    rows = math.ceil(len(order) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(14, 2.3 * rows + 0.8), sharex=True,
                             squeeze=False)
    for ax, feature in zip(axes.flat, order):
        days = coverage.filter(pl.col("feature") == feature).sort("ds")
        ds = days.get_column("ds").to_list()
        ax.plot(ds, 100 * days.get_column("coverage").to_numpy(), color=colours[feature],
                marker=".", linewidth=1.2)
        ax.plot(ds, 100 * days.get_column("coverage_ma7").to_numpy(), color="black",
                linestyle="--", linewidth=1)
        marked = sorted(alert_days.get(feature, ()))
        for day in marked:
            ax.axvspan(day, day, color=ALERT_COLOUR, alpha=0.35, linewidth=4)
        suffix = f"  ({len(marked)} alert day{'s' * (len(marked) != 1)})" if marked else ""
        ax.set_title(feature + suffix, fontsize=9, color=ALERT_COLOUR if marked else "black")
        ax.set_ylabel("coverage (%)", fontsize=8)
        date_axis(ax)
    for ax in list(axes.flat)[len(order):]:
        ax.set_visible(False)
    fig.legend(handles=[
        Line2D([], [], color="grey", marker=".", label="daily coverage, global segment (feature colour)"),
        Line2D([], [], color="black", linestyle="--", label="7-day moving average"),
        Line2D([], [], color=ALERT_COLOUR, alpha=0.35, linewidth=6, label="day with an open alert (any segment)"),
    ], loc="upper center", ncol=3, fontsize=9, frameon=False)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.5 / fig.get_figheight()))
    return save(fig, out, "coverage_trends.png")


def _alert_days(alerts: pl.DataFrame) -> dict[str, set[date]]:
    days: dict[str, set[date]] = {}
    for feature, ds in alerts.select("feature", "ds").drop_nulls().iter_rows():
        days.setdefault(feature, set()).add(ds)
    return days


def change_heatmap(change: pl.DataFrame, out: Path, *, segment_dim: str, mark_points: float = 5.0,
                   limit_points: float = 10.0) -> str:
    """Features × days: coverage minus the previous days' mean, in points.

    For a dimension with several values each cell shows the value that fell furthest, and
    cells below ``-mark_points`` name it, so a drop confined to one segment is not averaged away.
    """
    worst = (change.drop_nulls("change_points").sort("change_points")
             .group_by("feature", "ds", maintain_order=True).first())
    features = sorted(worst.get_column("feature").unique().to_list())
    days = sorted(worst.get_column("ds").unique().to_list())
    grid = np.full((len(features), len(days)), np.nan)
    names = {}
    row_of = {f: i for i, f in enumerate(features)}
    col_of = {d: j for j, d in enumerate(days)}
    for feature, ds, value, points in worst.select("feature", "ds", "segment_value",
                                                   "change_points").iter_rows():
        grid[row_of[feature], col_of[ds]] = points
        names[row_of[feature], col_of[ds]] = value
    fig, ax = plt.subplots(figsize=(14, 0.28 * len(features) + 2))
    image = ax.imshow(np.clip(grid, -limit_points, limit_points), aspect="auto", cmap="RdBu",
                      norm=TwoSlopeNorm(0, -limit_points, limit_points), interpolation="nearest")
    if segment_dim != "all":
        for (i, j), value in names.items():
            if grid[i, j] <= -mark_points:
                ax.text(j, i, value, ha="center", va="center", fontsize=6, color="white")
    ax.set_yticks(range(len(features)), features, fontsize=8)
    ax.set_xticks(range(len(days)), [d.strftime("%m-%d") for d in days], fontsize=8, rotation=90)
    ax.set_xlabel("day (UTC)")
    scope = "global segment" if segment_dim == "all" else f"worst {segment_dim} value per cell"
    ax.set_title(f"Coverage change against the mean of the previous 7 days ({scope}); "
                 f"grey: no baseline yet")
    ax.set_facecolor("#dddddd")
    bar = fig.colorbar(image, ax=ax, fraction=0.03, pad=0.01)
    bar.set_label(f"coverage − previous-days mean (points, clipped at ±{limit_points:g})")
    fig.tight_layout()
    return save(fig, out, "coverage_change_heatmap.png")


def segment_trends(frame: pl.DataFrame, out: Path, *, features: list[str], name: str, title: str,
                   colours: dict[str, tuple] | None = None, min_rows: int = 0) -> str:
    """Per feature, one line per segment value over time.

    With ``colours`` (feature colours) the segments differ by line style, for two-valued
    dimensions like product age; without, each segment value gets its own colour. A value
    that starts after the first day (a region launched mid-period) says so in the legend.
    """
    frame = frame.filter(pl.col("n_rows") >= min_rows)
    values = sorted(frame.get_column("segment_value").unique().to_list())
    first_day = frame.get_column("ds").min()
    styles = ["-", "--", ":", "-."]
    value_colours = dict(zip(values, plt.get_cmap("tab10").colors))
    fig, axes = plt.subplots(1, len(features), figsize=(14, 3.6), sharex=True, squeeze=False)
    for ax, feature in zip(axes.flat, features):
        for k, value in enumerate(values):
            days = frame.filter((pl.col("feature") == feature) & (pl.col("segment_value") == value)).sort("ds")
            if days.is_empty():
                continue
            start = days.get_column("ds").min()
            label = value if start == first_day else f"{value} (from {start:%m-%d})"
            colour = colours[feature] if colours else value_colours[value]
            style = styles[k % len(styles)] if colours else "-"
            ax.plot(days.get_column("ds").to_list(), 100 * days.get_column("coverage").to_numpy(),
                    color=colour, linestyle=style, linewidth=1.6, label=label)
        ax.set_title(feature, fontsize=10)
        ax.set_ylabel("coverage (%)", fontsize=8)
        ax.set_ylim(bottom=0)
        date_axis(ax)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    if colours:  # line styles carry the segment; draw the legend in neutral grey
        handles = [Line2D([], [], color="grey", linestyle=h.get_linestyle()) for h in handles]
    fig.legend(handles, labels, loc="upper center", ncol=max(1, min(len(labels), 8)), fontsize=9, frameon=False)
    fig.suptitle(title, y=0.9, fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.86))
    return save(fig, out, name)


def study_curve(study: pl.DataFrame, out: Path, *, target_points: float = 0.5) -> str:
    """Sampling study: largest per-feature error against cost (rows read, seconds)."""
    fig, axes = plt.subplots(1, 2, figsize=(14, 4.8))
    for ax, cost, label in zip(axes, ("rows_read", "seconds"),
                               ("rows read (log scale)", "seconds to sample and count (log scale)")):
        windowed = study.filter(pl.col("strategy") == "windows")
        per_window = sorted(windowed.get_column("events_per_window").unique().to_list())
        shades = plt.get_cmap("viridis")(np.linspace(0, 0.85, max(len(per_window), 1)))
        for shade, size in zip(shades, per_window):
            line = windowed.filter(pl.col("events_per_window") == size).sort("windows")
            ax.plot(line.get_column(cost).to_numpy(), line.get_column("max_error_points").to_numpy(),
                    marker="o", color=shade, label=f"windows, {size:,} events each")
        for strategy, marker, colour in (("random", "s", "#ff7f0e"), ("reservoir", "^", "#d62728")):
            points = study.filter(pl.col("strategy") == strategy)
            ax.scatter(points.get_column(cost).to_numpy(), points.get_column("max_error_points").to_numpy(),
                       marker=marker, color=colour, alpha=0.7, label=f"{strategy} sample, same events")
        ax.axhline(target_points, color="grey", linestyle=":", label=f"{target_points:g}-point target")
        ax.set_xscale("log")
        ax.set_yscale("log")
        # 0.5, not 5×10⁻¹; minor ticks labelled at 2, 3 and 5 only, so labels never crowd
        ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        ax.yaxis.set_minor_formatter(FuncFormatter(
            lambda value, _: f"{value:g}" if f"{value:.0e}"[0] in "235" else ""))
        ax.set_xlabel(label)
        ax.set_ylabel("largest |sampled − full-day coverage| (points)")
        ax.grid(True, which="major", alpha=0.3)
    axes[0].legend(fontsize=8, loc="lower left")
    day = study.get_column("ds").max()
    fig.suptitle(f"Sampling error against cost on {day}: every feature, worst of "
                 f"{study.get_column('repeats').max()} repeats", fontsize=11)
    fig.tight_layout()
    return save(fig, out, "sampling_study.png")


def date_axis(ax) -> None:
    """Day ticks as MM-DD, at most five, so labels never overlap."""
    ax.xaxis.set_major_locator(mdates.AutoDateLocator(minticks=3, maxticks=5))
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%m-%d"))
    ax.tick_params(labelsize=7)
    ax.tick_params(axis="x", labelbottom=True)
    ax.grid(True, alpha=0.25)


def save(fig, out: Path, name: str) -> str:
    """Write ``fig`` as ``out/name`` and free it; return the name the page links to."""
    fig.savefig(out / name, dpi=DPI)
    plt.close(fig)
    return name
