"""Assemble the report: read the warehouse, draw each section's charts, write ``index.html``."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from feco.errors import DataError, UsageError
from feco.report import charts, ranker
from feco.report.data import ReportData, load_report_data
from feco.report.page import Section, html_table, render_page
from feco.warehouse import open_read_only

COUNT_RULES = ("volume_drop", "missing_column", "low_volume")
NO_RANKER = "No ranker results yet: this section appears once the ranker has written them."


def write_report(warehouse: Path, out: Path, *, segment_dim: str = "region",
                 cold_start_features: list[str] | None = None, min_rows: int = 500) -> Path:
    """Write ``out/index.html`` and its images from the warehouse alone; return the page's path.

    Parameters
    ----------
    warehouse
        The DuckDB file, opened read-only.
    out
        Folder for the page and its PNG files (created; files of an earlier report are replaced).
    segment_dim
        Dimension of the coverage-change heatmap (``all`` for the global segment only).
    cold_start_features
        Features for the new-versus-established and region charts; default: the four with the
        largest gap between established and new products.
    min_rows
        Segment-days with fewer sampled rows are left out of the segment charts.

    Examples
    --------
    >>> write_report(Path("var/demo/feco.duckdb"), Path("var/demo/report"))  # doctest: +SKIP
    PosixPath('var/demo/report/index.html')
    """
    with open_read_only(warehouse) as conn:
        dims = conn.sql("SELECT DISTINCT segment_dim FROM coverage_states").pl().get_column("segment_dim")
        if segment_dim not in dims.to_list():
            raise UsageError(f"segment dimension '{segment_dim}' is not in the warehouse "
                             f"(it has: {', '.join(sorted(dims.to_list()))})")
        data = load_report_data(conn, segment_dim=segment_dim, min_rows=min_rows)
    if data.coverage.is_empty():
        raise DataError(f"warehouse {warehouse} holds no coverage yet: run `feco run --ds DATE` first")
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.png"):
        old.unlink()
    colours = charts.feature_colours(data.coverage.get_column("feature").unique().to_list())
    chosen = cold_start_features or _largest_gap(data.product_age, count=4)
    sections = [
        _trends(data, out, colours),
        _heatmap(data, out),
        _cold_start(data, out, chosen, colours, min_rows, chosen_by_gap=not cold_start_features),
        _regions(data, out, chosen, min_rows),
        *ranker.sections(data.ranker, data.coverage, out, colours=colours, missing=NO_RANKER),
        _alerts(data),
        _study(data, out),
    ]
    days = data.coverage.get_column("ds")
    page = out / "index.html"
    page.write_text(render_page(sections, title="feco: feature coverage report",
                                subtitle=f"{days.min()} to {days.max()}, {days.n_unique()} days, "
                                         f"from {warehouse.name}"), encoding="utf-8")
    return page


def _alert_order(data: ReportData) -> list[str]:
    """Features with open alerts first (most alerts first), then the rest by name."""
    counts = dict(data.alerts.drop_nulls("feature").group_by("feature").len().iter_rows())
    features = sorted(data.coverage.get_column("feature").unique().to_list())
    return sorted(features, key=lambda f: (-counts.get(f, 0), f))


def _trends(data: ReportData, out: Path, colours: dict) -> Section:
    image = charts.coverage_trends(data.coverage, data.alerts, out, order=_alert_order(data), colours=colours)
    return Section("coverage", "Coverage by day", images=[(image, "coverage per feature by day")],
                   text="Per feature, the share of sampled rows in which it is covered (global segment), "
                        "its 7-day moving average, and the days with an open alert in any segment. "
                        "Features with alerts come first.")


def _heatmap(data: ReportData, out: Path) -> Section:
    if data.change.drop_nulls("change_points").is_empty():
        return Section("heatmap", "Coverage change", skipped="Not enough days for a baseline yet.")
    image = charts.change_heatmap(data.change, out, segment_dim=data.segment_dim)
    return Section("heatmap", f"Coverage change by {data.segment_dim}",
                   images=[(image, "coverage change heatmap")],
                   text="Blue: coverage above the mean of the previous 7 days; red: below. Cells "
                        "falling 5 points or more name the segment value that fell furthest.")


def _largest_gap(product_age: pl.DataFrame, *, count: int) -> list[str]:
    if product_age.is_empty():
        return []
    gaps = (product_age.group_by("feature", "segment_value").agg(pl.col("coverage").mean())
            .pivot(on="segment_value", index="feature", values="coverage"))
    if not {"new", "established"} <= set(gaps.columns):
        return []
    return (gaps.with_columns((pl.col("established") - pl.col("new")).alias("gap"))
            .sort("gap", descending=True).head(count).get_column("feature").to_list())


def _cold_start(data: ReportData, out: Path, features: list[str], colours: dict, min_rows: int, *,
                chosen_by_gap: bool) -> Section:
    title = "Cold start: new versus established products"
    if not features:
        return Section("cold-start", title, skipped="No product-age segments in the warehouse.")
    image = charts.segment_trends(
        data.product_age, out, features=features, name="cold_start.png", colours=colours,
        min_rows=min_rows, title="Coverage for new (first seen < 30 days) and established products")
    return Section("cold-start", title, images=[(image, "new versus established products")],
                   text=("The features with the largest coverage gap between established and new "
                         "products" if chosen_by_gap else "Chosen features")
                        + f" ({', '.join(features)}): engagement signals need history, so new "
                          f"products start without them (the FeCo paper's Figure 3).")


def _regions(data: ReportData, out: Path, features: list[str], min_rows: int) -> Section:
    title = "Coverage by region"
    if data.region.is_empty() or not features:
        return Section("regions", title, skipped="No region segments in the warehouse.")
    image = charts.segment_trends(data.region, out, features=features, name="regions.png",
                                  min_rows=min_rows // 5,
                                  title="Coverage per region; a region launched mid-period starts later")
    return Section("regions", title, images=[(image, "coverage by region")],
                   text=f"The same features per region. Region-days with fewer than {min_rows // 5} "
                        f"sampled rows are left out: a new region's first days are too thin to read.")


def _alerts(data: ReportData) -> Section:
    title = "Open alerts"
    if data.alerts.is_empty():
        return Section("alerts", title, skipped="No open alerts.")
    # Volume and missing-column rules carry counts in observed and baseline, not shares.
    share = ~pl.col("rule").is_in(COUNT_RULES)
    table = data.alerts.select(
        "ds", "severity", "rule", "feature",
        (pl.col("segment_dim") + "=" + pl.col("segment_value")).alias("segment"),
        *[pl.when(share).then(100 * pl.col(c)).alias(name) for c, name in (
            ("observed", "observed %"), ("baseline", "baseline %"), ("drop_abs", "drop (points)"))],
        (100 * pl.col("drop_rel")).alias("drop (%)"), "n_rows", "detail",
    ).with_columns(pl.col("ds").cast(pl.String))
    formats = {c: ".1f" for c in ("observed %", "baseline %", "drop (points)", "drop (%)")}
    note = ("Observed and baseline: coverage (or, for missing_values, the NULL share) in %; "
            "n_rows: sampled rows of the segment that day.")
    return Section("alerts", f"{title} ({data.alerts.height})", text=note,
                   tables=[html_table(table, formats=formats | {"n_rows": ","})])


def _study(data: ReportData, out: Path) -> Section:
    title = "Sampling study"
    if data.study is None:
        return Section("sampling-study", title,
                       skipped="No sampling study yet: run `feco sampling-study --ds DATE`.")
    image = charts.study_curve(data.study, out)
    table = data.study.select(
        "strategy", "windows", "events_per_window", "events_sampled", "rows_read", "seconds",
        "mean_error_points", "max_error_points").sort("strategy", "rows_read")
    formats = {"events_sampled": ",", "rows_read": ",", "seconds": ".2f",
               "mean_error_points": ".3f", "max_error_points": ".3f"}
    return Section("sampling-study", title, images=[(image, "sampling error against cost")],
                   tables=[html_table(table, formats=formats)],
                   text="Each configuration's coverage against the full day's, for every feature "
                        "(errors in points), and what it cost; random and reservoir samples take "
                        "as many events as the windowed configuration did.")
