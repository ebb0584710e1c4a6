"""Assemble the report: read the warehouse, pack the data once, write one ``index.html``."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from urllib.parse import quote as url_quote

import polars as pl

from feco.alerts.channels import incident_command, incident_sql
from feco.alerts.oncall import describe_silence
from feco.alerts.rules import registry
from feco.alerts.rules.missing import MissingColumnRule
from feco.config import Alerts, Config
from feco.report.cube import heatmap_grids, pack_cube
from feco.report.data import ReportData, load_report_data
from feco.report.page import (
    Section,
    chart,
    controls,
    html_table,
    paragraph,
    render_page,
    select,
)
from feco.warehouse import named_query, open_read_only

COLD_START_DIMS = ("product_age", "region")


def write_report(warehouse: Path, out: Path, *, segment_dim: str = "region",
                 cold_start_features: list[str] | None = None, min_rows: int = 100,
                 config: Config | None = None, written_at: datetime | None = None) -> Path:
    """Write ``out/index.html`` from the warehouse alone; return the page's path.

    The page is self-contained (Plotly and the data inlined): it opens from disk with no
    server and no network.

    Parameters
    ----------
    warehouse
        The DuckDB file, opened read-only.
    out
        Folder for the page (created; an earlier page is replaced).
    segment_dim
        The heatmap's dimension when the page opens (a selector switches it).
    cold_start_features
        Features offered first in the cold-start charts; default: the four with the largest
        gap between established and new products.
    min_rows
        Segment-days with fewer sampled rows are left out of segment lines (too thin to read).
    config
        Its alert settings and moving-average length give the drop rule's expected band
        (default: the default settings); its ``[logs.sources]`` name each incident's upstream
        source, with the source's ``owner`` and ``runbook`` where it gives them.
    written_at
        The time the page says it was written (default: now); nothing computed depends on it.

    Examples
    --------
    On the demo's warehouse (``make demo``; not run as a doctest, it needs weeks of data)::

        write_report(Path("var/demo/feco.duckdb"), Path("var/demo/report"))
        # PosixPath('var/demo/report/index.html')
    """
    settings = {"alerts": config.alerts, "moving_average_days": config.moving_average_days} if config else {}
    alerts_min_rows = (config.alerts if config else Alerts()).min_rows
    written = (written_at or datetime.now(UTC)).astimezone(UTC)
    with open_read_only(warehouse, moving_average_days=config.moving_average_days if config else None) as conn:
        data = load_report_data(conn, segment_dim=segment_dim, **settings)
        silences = named_query(conn, "oncall_silences", {"now": written})
    cube = pack_cube(data.coverage, data.band)
    grid = _grid_table(data.grid)
    cold_start = cold_start_features or _largest_gap(data.coverage, count=4)
    payload = {
        "cube": cube, "heatmap": heatmap_grids(cube, data.coverage, data.band, min_rows=alerts_min_rows),
        "heatmap_dim": segment_dim, "heatmap_min_rows": alerts_min_rows,
        "marks": _records(by_segment(data.marks, cube["segments"])), "min_rows": min_rows, "start": _first_trend(data),
        "cold_start": [f for f in cold_start if f in cube["features"]],
        "ndcg": _segments_once(data.ndcg), "shap": _shap(data.shap), "grid": _records(grid),
        "study": _records(data.study),
    }
    dims = {dim for dim, _ in cube["segments"]}
    scored = data.ndcg is not None or data.incidents.get_column("d_ndcg8").is_not_null().any()
    sections = [_incidents(data.incidents, upstream=_upstream(config), scored=scored, silences=silences),
                _at_risk(data.at_risk),
                _trends(), _heatmap(), _cold_start(dims), *_ranker(data, grid), _study(data.study)]
    days = data.coverage.get_column("ds")
    out.mkdir(parents=True, exist_ok=True)
    page = out / "index.html"
    html = render_page(sections, payload, title="feco: feature coverage report",
                       subtitle=f"{days.min()} to {days.max()}, {days.n_unique()} days, from {warehouse.name}; "
                                f"written {written:%Y-%m-%d %H:%M} UTC",
                       plotly_js=_plotly_js())
    staged = out / "index.html.tmp"  # a reader (or a crash) never meets half a page
    try:
        staged.write_text(html, encoding="utf-8")
        os.replace(staged, page)
    except OSError as error:
        staged.unlink(missing_ok=True)  # a full disk leaves no half page behind
        if error.filename is not None:
            raise
        raise OSError(error.errno, error.strerror, str(staged)) from None  # a failed write names no file
    return page


def _plotly_js() -> str:
    from plotly.offline import (
        get_plotlyjs,  # the bundle only: plotly.py's figures are not used
    )

    return get_plotlyjs()


def _records(frame: pl.DataFrame | None) -> list[dict] | None:
    """Rows for the page's JSON: days as ISO strings, floats to 6 significant places."""
    if frame is None:
        return None
    return frame.with_columns(pl.col(pl.Date).cast(pl.String), pl.col(pl.Float64).round_sig_figs(6)).to_dicts()


def by_segment(frame: pl.DataFrame, segments: list[list[str]]) -> pl.DataFrame:
    """``frame`` with its segment (``segment_dim``, ``segment_value``) replaced by ``s``, the
    segment's index in ``segments`` ([dim, value] each): a value from the logs (6,000
    characters, say) travels once in the page, not once per row naming it."""
    index = pl.DataFrame(segments, schema=["segment_dim", "segment_value"], orient="row").with_row_index("s")
    keyed = frame.join(index, on=["segment_dim", "segment_value"], maintain_order="left")
    return keyed.drop("segment_dim", "segment_value")


def _segments_once(frame: pl.DataFrame | None) -> dict | None:
    """``frame``'s rows for the page's JSON with its segments listed once: ``segments`` ([dim,
    value] each) and ``rows``, each naming its segment by ``s``, its index there."""
    if frame is None:
        return None
    segments = [list(row) for row in frame.select("segment_dim", "segment_value").unique(maintain_order=True).iter_rows()]
    return {"segments": segments, "rows": _records(by_segment(frame, segments))}


def trend_link(feature: str, segment_dim: str, segment_value: str) -> str:
    """The page's link to a feature's trend in a segment (read by ``page.js``)."""
    return "#trend/" + "/".join(url_quote(part, safe="") for part in (feature, segment_dim, segment_value))


def _first_trend(data: ReportData) -> dict:
    """The trend shown when the page opens: the first incident's, else the first feature's globally."""
    if data.incidents.height:
        return data.incidents.select("feature", "segment_dim", "segment_value").row(0, named=True)
    return {"feature": data.coverage.get_column("feature").min(), "segment_dim": "all", "segment_value": "all"}


def _incidents(incidents: pl.DataFrame, *, upstream: dict[str, dict[str, str]], scored: bool,
               silences: pl.DataFrame) -> Section:
    title = "Incidents"
    quiet = _silences(silences)
    if incidents.is_empty():  # news too: the section stays
        return Section("incidents", f"{title}: none", body=quiet + paragraph("No incident in the warehouse's days."))
    live = incidents.get_column("live").sum()
    note = ("An incident is one feature in one segment from the day it opened to its last day (resolved, or "
            "the last day published), every rule's alerts attached (`feco alerts`, table incidents). Most severe "
            "first, as paged. Urgency: a page woke someone; the daily digest lists, once a day, those that page "
            "no one (too mild or too small a segment). 'Recovered since' a day: its coverage has been back within "
            "its normal band from then on, though it stays open (and a 7-day average may still hold the failure) "
            "until it resolves. Each is shown by its latest headline on a failing day, its most severe and most "
            "localised alert: what its rule measured, what it expected, and the line it fires at (a coverage rule "
            "fires below its line, the missing-values rule above). Below each: its upstream source and what to "
            "run to look further; 'trend' opens the feature in its segment beside its sibling segments.")
    if scored:
        note += (" Within a severity the costliest comes first. Two NDCG@8 numbers, not to be compared: the "
                 "estimated cost is this incident's own effect, its coverage loss replayed on clean days of its "
                 "segment before it began and scored by the serving model, with a 95% interval (table "
                 "incident_costs); the day's NDCG@8 change is everything that moved the segment's NDCG@8 on the "
                 "headline day against its previous 7 days, mostly day-to-day noise, and can be far larger.")
    body = quiet + _digest(incidents) + paragraph(note) + _incident_table(incidents, upstream=upstream, scored=scored)
    digest = incidents.filter(pl.col("live") & (pl.col("urgency") == "low")).height
    return Section("incidents", f"{title}: {live} live ({digest} in the daily digest), {incidents.height - live} ended",
                   body=body)


def _silences(silences: pl.DataFrame) -> str:
    """The silences in force when the page was written (`feco silence`): what they hold back."""
    if silences.is_empty():
        return ""
    return paragraph("Silenced when written (their incidents page no one until then): "
                     + "; ".join(describe_silence(row) for row in silences.iter_rows(named=True)) + ".")


def _digest(incidents: pl.DataFrame) -> str:
    """The daily digest: the live incidents that page no one, as the day's digest message lists them."""
    low = incidents.filter(pl.col("live") & (pl.col("urgency") == "low")).select(
        "severity", "feature", segment_label(pl.col("segment_dim"), pl.col("segment_value")).alias("segment"))
    if low.is_empty():
        return ""
    return paragraph("Daily digest (low urgency, paging no one): "
                     + "; ".join(f"{severity} {feature} in {segment}" for severity, feature, segment in low.rows()) + ".")


def _incident_table(incidents: pl.DataFrame, *, upstream: dict[str, dict[str, str]], scored: bool) -> str:
    rows = incidents.to_dicts()
    columns = {
        "severity": [r["severity"] for r in rows],
        "status": [_standing(r) for r in rows],
        "urgency": ["page" if r["urgency"] == "high" else "daily digest" for r in rows],
        "feature": [r["feature"] for r in rows],
        "segment": incidents.select(segment_label(pl.col("segment_dim"), pl.col("segment_value"))).to_series(),
        "rule": [r["rule"] for r in rows],
        "opened": [r["first_ds"] for r in rows],
        "last day": [r["last_ds"] for r in rows],
        "days": [r["days"] for r in rows],
        "measured": [_measured(r) for r in rows],
        "expected": [None if r["baseline"] is None else f"{r['baseline']:.1%}" for r in rows],
        "fires": [_fires(r) for r in rows],
        "change %": [None if r["drop_rel"] is None else -100 * r["drop_rel"] for r in rows],
    }
    if scored:
        columns["estimated cost, NDCG@8 (replayed, 95% interval)"] = [
            None if r["d_ndcg8"] is None
            else f"{r['d_ndcg8']:+.4f} ({r['d_ndcg8_low']:+.4f} to {r['d_ndcg8_high']:+.4f})" for r in rows]
        columns["the day's NDCG@8 change, all causes"] = [
            f"{r['ndcg8_change']:+.4f}" if r["ndcg8_change"] is not None
            else None if r["ndcg8_change_all"] is None else f"all traffic {r['ndcg8_change_all']:+.4f}" for r in rows]
    columns["chart"] = ["trend"] * len(rows)
    columns["link"] = [trend_link(r["feature"], r["segment_dim"], r["segment_value"]) for r in rows]
    table = pl.DataFrame(columns, schema_overrides={"change %": pl.Float64, "expected": pl.String,
                                                    "fires": pl.String, "measured": pl.String})
    return html_table(table, formats={"change %": ".1f"}, links={"chart": "link"},
                      row_classes=[f"severity-{r['severity']}" for r in rows],
                      notes=[_next_steps(r, upstream) for r in rows])


def _on_call(row: dict) -> str | None:
    """What people on call did: 'acknowledged by ana 2026-12-08 09:30 UTC; resolved by hand by bo (…)'."""
    parts = []
    if row["acked_by"]:
        parts.append(f"acknowledged by {row['acked_by']} {row['acked_at'].astimezone(UTC):%Y-%m-%d %H:%M} UTC")
    if row["resolved_by"]:
        parts.append(f"resolved by hand by {row['resolved_by']}"
                     + (f" ({row['resolve_reason']})" if row["resolve_reason"] else ""))
    if row["noise_marks"]:
        parts.append("marked noise")
    return "; ".join(parts) or None


def _standing(row: dict) -> str:
    """'live', 'recovered since D' (back within its normal band, still open), 'resolved R (recovered since D)'."""
    back = f"recovered since {row['recovered_ds']}" if row["recovered_ds"] else None
    if row["live"]:
        return back or "live"
    return f"resolved {row['resolved_ds']}" + (f" ({back})" if back else "")


def _measured(row: dict) -> str | None:
    """What the headline's rule saw, named: 'coverage 4.6%', 'NULL or NaN share 53.4%'."""
    if row["rule"] == MissingColumnRule.name:
        return "column missing from the logs"
    measure = _measure(row["rule"])[0]
    return None if row["observed"] is None else f"{measure} {row['observed']:.1%}"


def _fires(row: dict) -> str | None:
    """The line the headline's rule fires at, with its side: 'below 29.8%', 'above 17.8%'."""
    side = _measure(row["rule"])[1]
    return None if side is None or row["threshold"] is None else f"{side} {row['threshold']:.1%}"


def _measure(rule: str) -> tuple[str, str | None]:
    """What a rule's observed value is, and on which side of its threshold it fires: a coverage
    rule below its line, the missing-values rule above it (a NULL share rising)."""
    known = registry.rule_named(rule)
    return known.measure if known else ("value", None)


def _next_steps(row: dict, upstream: dict[str, dict[str, str]]) -> str:
    """What people on call did, where to go next: the upstream source (its owner and runbook
    where configured), and the `feco query` command showing the incident's coverage from a week
    before it opened."""
    contact = upstream.get(row["feature"], {})
    source = row["source"] or contact.get("source")
    if source:
        told = "; ".join(f"{key}: {escape(contact[key])}" for key in ("owner", "runbook") if key in contact)
        where = f"Upstream source <b>{escape(source)}</b>" + (f" ({told})" if told else "")
    else:
        where = "In no upstream source of [logs.sources]"
    incident = {"opened_ds": row["first_ds"], "feature": row["feature"], "segment_dim": row["root_dim"],
                "segment_value": row["root_value"], "features": row["features"]}
    sql = incident_sql(incident)
    # In double quotes the SQL's own quotes stay readable; a value holding what a shell expands
    # there takes incident_command's single quoting, which keeps it part of the SQL.
    command = f'feco query "{sql}"' if not set(sql) & set('$`"\\!') else incident_command(incident)
    on_call = _on_call(row)
    return (f"On call: {escape(on_call)}. " if on_call else "") + f"{where}. Look further: <code>{escape(command)}</code>"


def _upstream(config: Config | None) -> dict[str, dict[str, str]]:
    """Each feature's upstream source from ``[logs.sources]``, with the source's owner and
    runbook where its entry gives them."""
    if config is None:
        return {}
    by_feature = {}
    for source, features in config.logs.source_features().items():
        entry = config.logs.sources[source]  # a source written as a table may name its people
        contact = {"source": source} | {key: str(value) for key in ("owner", "runbook")
                                        if (value := getattr(entry, key, None))}
        by_feature |= {feature: contact for feature in features}
    return by_feature


def _at_risk(rows: pl.DataFrame | None) -> Section:
    """What the data costs the serving model, the last 14 days, and the last day per scored
    segment: the section after the incidents."""
    title = "NDCG at risk"
    if rows is None:
        return Section("ndcg-at-risk", title, skipped="No day scored yet: the served order needs the logs' "
                                                      "[logs] label and [ranker] position columns.")
    shown = {"d_ndcg8": "NDCG@8 at risk", "d_ndcg8_low": "low", "d_ndcg8_high": "high",
             "served_ndcg8": "served NDCG@8", "model_ndcg8": "model NDCG@8", "deficits": "deficits replayed"}
    formats = {name: "+.4f" for name in ("NDCG@8 at risk", "low", "high")} | {
        name: ".4f" for name in ("served NDCG@8", "model NDCG@8")}
    days = rows.filter(pl.col("segment_dim") == "all").head(14).select("ds", *shown).rename(shown)
    last = rows.filter((pl.col("ds") == rows["ds"].max()) & (pl.col("segment_dim") != "all"))
    segments = last.select(segment_label(pl.col("segment_dim"), pl.col("segment_value")).alias("segment"),
                           *shown).rename(shown)
    note = ("What the day's coverage costs the model serving it: every coverage deficit of its features beyond the "
            "day's sampling noise, against the last clean days, applied together to clean events of those days "
            "(each region its own) and scored, with a 95% interval over events and draws of the rows hit "
            "(view ndcg_at_risk_daily). 0: nothing below its reference. Beside it, the NDCG@8 of the order that "
            "was served (from the logged positions) and of the model on the same day's events "
            "(served_daily_ndcg). docs/ranker.md says how each is taken.")
    body = paragraph(note) + html_table(days, formats=formats)
    if segments.height:
        body += paragraph(f"{rows['ds'].max()} per segment:") + html_table(segments, formats=formats)
    return Section("ndcg-at-risk", title, body=body)


SHOWN_CHARACTERS = 80  # of a segment value, as page.js's shown(): the rest is an ellipsis


def segment_label(dim: pl.Expr, value: pl.Expr) -> pl.Expr:
    """'all traffic' or 'region: DE', as the page's charts name segments; a value longer than
    SHOWN_CHARACTERS is cut there, with an ellipsis."""
    shown = (pl.when(value.str.len_chars() > SHOWN_CHARACTERS)
             .then(value.str.slice(0, SHOWN_CHARACTERS - 1) + "…").otherwise(value))
    return pl.when(dim == "all").then(pl.lit("all traffic")).otherwise(dim + ": " + shown)


def _trends() -> Section:
    return Section("coverage", "Coverage by day", body=controls(
        select("trend-feature", "feature"), select("trend-dim", "segment dimension"), select("trend-value", "value"),
    ) + paragraph(
        "Daily coverage of the feature in the chosen segment, its 7-day average, the band of the drop rule "
        "(expected: the previous 7 days' mean shifted by the weekday's usual deviation; alert below: less the "
        "rule's widest margin), and its sibling segments in grey. The band is drawn where the rule judged the "
        "segment (enough rows and history). Each alert of this segment is a red cross at what its rule saw, "
        "with the band that rule used that day in red: a dash at what it expected, down to the line it fires "
        "below (a decay alert compares the 7-day average with a reference period; a drop can also fire "
        "against the rest of traffic).") + chart("trend"))


def _heatmap() -> Section:
    return Section("heatmap", "Coverage against expectation", body=controls(
        select("heatmap-dim", "segment dimension")) + paragraph(
        "Per feature and day, the segment of the chosen dimension that stood furthest below what the drop rule "
        "expected, in units of the rule's margin: 0 as expected, −1 at the line it fires below (red), blue above. "
        "Within half a margin of expected a cell stays white: the worst of many segments is always a little "
        "below, by chance. A weekday's usual dip is part of the expectation. Blank: not judged (too few rows or "
        "days). Click a cell for its trend.") + chart("heatmap"))


def _largest_gap(coverage: pl.DataFrame, *, count: int) -> list[str]:
    gaps = (coverage.filter(pl.col("segment_dim") == "product_age")
            .group_by("feature", "segment_value").agg(pl.col("coverage").mean())
            .pivot(on="segment_value", index="feature", values="coverage"))
    if not {"new", "established"} <= set(gaps.columns):
        return []
    return (gaps.with_columns((pl.col("established") - pl.col("new")).alias("gap"))
            .sort("gap", descending=True).head(count).get_column("feature").to_list())


def _cold_start(dims: set[str]) -> Section:
    title = "Cold start: new products and a launched region"
    present = [d for d in COLD_START_DIMS if d in dims]
    if not present:
        return Section("cold-start", title, skipped="No product-age or region segments in the warehouse.")
    charts = "".join(chart(f"cold-{'age' if d == 'product_age' else 'region'}") for d in present)
    return Section("cold-start", title, body=controls(select("cold-feature", "feature")) + paragraph(
        "Engagement signals need history, so new products start without them (the FeCo paper's Figure 3); a "
        "region launched mid-period starts later, and its label says from when. The features with the largest "
        "gap between established and new products come first.") + charts)


def _ranker(data: ReportData, grid: pl.DataFrame | None) -> list[Section]:
    missing = ("No day scored by a ranker yet: `feco train-ranker --ds DATE` trains one, and `feco run` scores "
               "the days from DATE on.")
    ndcg = Section("ndcg", "NDCG by day", skipped=missing) if data.ndcg is None else Section(
        "ndcg", "NDCG by day", body=controls(
            select("ndcg-dim", "segment dimension"),
            select("ndcg-metric", "metric", [("ndcg8", "NDCG@8"), ("ndcg4", "NDCG@4")]),
        ) + paragraph("The reference ranker's NDCG on each day's sample, per scored segment (all traffic in "
                      "black), over the events with a relevant product.") + chart("ndcg"))
    title = "Feature importance over time, beside coverage"
    shap = Section("shap", title, skipped=missing) if data.shap is None else Section("shap", title, body=controls(
        select("shap-feature", "feature"), select("shap-dim", "segment dimension"), select("shap-value", "value"),
    ) + paragraph(
        "The feature's share of the scoring model's mean |SHAP| on each day's sample in the chosen segment "
        "(exact TreeSHAP on a sample of the day's rows: [ranker] shap_rows), beside its coverage there. A "
        "coverage loss moves the share either way: down where the model gets less of the feature to use, up "
        "where the value left in its place (a zero, a NULL) moves scores more than the real values did. Dotted: "
        "its share in the model's own training data (a retrain shows as a step).") + chart("shap"))
    return [ndcg, shap, _grid(grid)]


def _shap(shap: pl.DataFrame | None) -> dict | None:
    """Each feature's share in the model that scored each day, by feature: ``{feature: [[ds, share], ...]}``."""
    if shap is None:
        return None
    return {feature: rows.select(pl.col("ds").cast(pl.String), pl.col("shap_share").round_sig_figs(6)).rows()
            for (feature,), rows in shap.sort("ds").group_by("feature", maintain_order=True)}


def _grid_table(cells: pl.DataFrame | None) -> pl.DataFrame | None:
    if cells is None:
        return None
    return (cells.group_by("mode", "feature", "reduction")
            .agg(pl.len().alias("seeds"),
                 pl.col("coverage_test_before").mean(), pl.col("coverage_test_after").mean(),
                 pl.col("ndcg4").mean(), pl.col("ndcg8").mean(), pl.col("d_ndcg4").mean(), pl.col("d_ndcg8").mean())
            .sort("mode", "feature", "reduction"))


def _grid(grid: pl.DataFrame | None) -> Section:
    title = "Coverage-drop experiment"
    if grid is None:
        return Section("coverage-drop", title,
                       skipped="No experiment stored: `feco experiment coverage-drop` runs the paper's grid.")
    table = grid.with_columns(
        pl.col("reduction", "coverage_test_before", "coverage_test_after") * 100).rename(
        {"reduction": "removed %", "coverage_test_before": "FeCo before %", "coverage_test_after": "FeCo after %",
         "ndcg4": "NDCG@4", "ndcg8": "NDCG@8", "d_ndcg4": "ΔNDCG@4", "d_ndcg8": "ΔNDCG@8"})
    formats = {c: ".1f" for c in ("removed %", "FeCo before %", "FeCo after %")} | {
        c: ".4f" for c in ("NDCG@4", "NDCG@8", "ΔNDCG@4", "ΔNDCG@8")}
    return Section("coverage-drop", title, body=controls(select("grid-mode", "mode")) + paragraph(
        "The FeCo paper's Table 1: NDCG@4/8 after removing a share of a feature's coverage, in the test set "
        "only or in every set with the model retrained (means over seeds).") + chart("grid")
        + html_table(table, formats=formats))


def _study(study: pl.DataFrame | None) -> Section:
    title = "Sampling study"
    if study is None:
        return Section("sampling-study", title, skipped="No sampling study yet: run `feco sampling-study --ds DATE`.")
    table = study.select("strategy", "windows", "events_per_window", "events_sampled", "rows_read", "seconds",
                         "mean_error_points", "max_error_points").sort("strategy", "rows_read")
    formats = {"events_sampled": ",", "rows_read": ",", "seconds": ".2f",
               "mean_error_points": ".3f", "max_error_points": ".3f"}
    return Section("sampling-study", title, body=controls(
        select("study-cost", "cost", [("rows_read", "rows read"), ("seconds", "seconds")])) + paragraph(
        "Each configuration's coverage against the full day's, for every feature (errors in points), and what it "
        "cost; random and reservoir samples take as many events as the windowed configuration did.")
        + chart("study") + html_table(table, formats=formats))
