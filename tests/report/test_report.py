"""The HTML report: one self-contained page whose data are the warehouse's, each section
rendered when the warehouse has its data and skipped with a note when it does not."""

from __future__ import annotations

import html
import json
import re
import shlex
from datetime import UTC, timedelta
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest
from small_warehouse import DAYS, FEATURES, START, add_attribution, build

from feco.cli import main as feco
from feco.errors import DataError, UsageError
from feco.report import write_report
from feco.report.cube import MISSING, unpack
from held_lock import held_by_another_run

REPO = Path(__file__).resolve().parents[2]
ALWAYS = ("incidents", "coverage", "heatmap", "cold-start")
RANKER = ("ndcg", "shap", "coverage-drop")


def _page(out: Path) -> str:
    return (out / "index.html").read_text(encoding="utf-8")


def _status(page: str) -> dict[str, str]:
    """Each section's status: rendered ones are sections, skipped ones a line in 'Not in this report'."""
    return dict(re.findall(r'<(?:section id|li data-section)="([^"]+)" data-status="(\w+)"', page))


def _payload(page: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="feco-data">(.*?)</script>', page, re.DOTALL).group(1))


def test_sections_from_the_pipeline_tables_render_and_ranker_ones_are_skipped(warehouse, tmp_path):
    out = tmp_path / "report"
    page_path = write_report(warehouse, out)
    page = _page(out)
    status = _status(page)
    assert page_path == out / "index.html"
    assert all(status[key] == "rendered" for key in ALWAYS), status
    assert all(status[key] == "skipped" for key in (*RANKER, "sampling-study")), status
    assert "No day scored by a ranker yet" in page and "No experiment stored" in page
    # the incident leads the page, links to its trend and carries its numbers
    assert page.index('id="incidents"') < page.index('id="coverage"')
    assert '<a href="#trend/eng_ctr/region/DE">trend</a>' in page
    assert "region: DE" in page and "<td>-80.0</td>" in page  # change -80%; not "region=DE"


def test_the_page_is_self_contained(warehouse, tmp_path):
    write_report(warehouse, tmp_path / "r")
    page = _page(tmp_path / "r")
    assert [p.name for p in (tmp_path / "r").iterdir()] == ["index.html"]
    # the markup links nothing outside the page (the browser test watches the requests too)
    markup = re.sub(r"<script[^>]*>.*?</script>", "", page, flags=re.DOTALL)
    assert not re.findall(r'(?:src|href)="(?!#)[^"]*"', markup)
    assert "<script src" not in page and "Plotly.react" in page and "plotly.js v" in page.lower()


def test_the_payload_holds_the_warehouse_values(warehouse, tmp_path):
    write_report(warehouse, tmp_path / "r")
    cube = _payload(_page(tmp_path / "r"))["cube"]
    days, features, segments = cube["days"], cube["features"], [tuple(s) for s in cube["segments"]]
    assert segments[0] == ("all", "all") and len(days) == DAYS and features == sorted(FEATURES)
    coverage, rows = unpack(cube["coverage"], np.uint16), unpack(cube["rows"], np.uint32)

    def at(feature: str, segment: tuple[str, str], day: int) -> int:
        return (features.index(feature) * len(segments) + segments.index(segment)) * DAYS + day

    de = ("region", "DE")
    assert coverage[at("eng_ctr", de, 9)] == 1000  # 0.5 - 0.4 = 10.00%
    assert coverage[at("eng_ctr", de, 8)] == 5000
    assert coverage[at("eng_ctr", ("region", "BR"), 2)] == MISSING  # BR starts on day 5
    assert rows[segments.index(de) * DAYS + 3] == 400
    expected, us = unpack(cube["expected"], np.uint16), ("region", "US")
    assert expected[at("eng_ctr", us, 3)] == MISSING  # before the rule's warm-up
    # a segment's expectation is its usual share of the rest of traffic that day: 50% on day 8,
    # and far lower on day 9, when DE (most of the rest of US) fell to 10%
    assert expected[at("eng_ctr", us, 8)] == 5000
    assert expected[at("eng_ctr", us, 9)] < 5000
    assert expected[at("eng_ctr", de, 9)] == MISSING  # 400 rows: too few for the rule to judge


def test_an_unknown_heatmap_dimension_is_a_usage_error(warehouse, tmp_path):
    with pytest.raises(UsageError, match="query_band"):
        write_report(warehouse, tmp_path / "r", segment_dim="query_band")


def test_a_warehouse_older_than_this_feco_is_named_not_a_traceback(warehouse, tmp_path):
    with duckdb.connect(str(warehouse)) as conn:  # as a release before incidents left it
        conn.execute("DROP VIEW incident_summary")
        conn.execute("DROP TABLE incidents")
    with pytest.raises(DataError, match=r"predates this version of feco \(no incidents\): run `feco run"):
        write_report(warehouse, tmp_path / "report")


def test_stored_sampling_study_and_ranker_results_render(warehouse, tmp_path):
    with duckdb.connect(str(warehouse)) as conn:
        conn.execute("INSERT INTO sampling_study VALUES "
                     "(?, 'windows', 8, 100, 800, 9000, 20000, 0.1, 0.4, 1.2, 2), "
                     "(?, 'windows', 16, 100, 1600, 18000, 40000, 0.2, 0.3, 0.6, 2), "
                     "(?, 'random', 8, 100, 800, 9100, 500000, 0.9, 0.3, 1.1, 2)", [START] * 3)
        _ranker_tables(conn)
    out = tmp_path / "report"
    write_report(warehouse, out)
    page = _page(out)
    status = _status(page)
    assert all(status[key] == "rendered" for key in (*ALWAYS, *RANKER, "sampling-study")), status
    assert "<td>40,000</td>" in page  # rows read of the 16-window configuration
    payload = _payload(page)
    assert {dim for dim, _ in payload["ndcg"]["segments"]} == {"all", "region"}
    assert payload["shap"]["eng_ctr"][0] == [str(START), 0.5]  # the scoring model's share, its reference line
    assert payload["ndcg"]["rows"][0]["ndcg8"] == pytest.approx(0.65)


def _ranker_tables(conn: duckdb.DuckDBPyConnection) -> None:
    """A few rows in the ranker's own tables (created by its sql/schema/2x files)."""
    days = [START + timedelta(days=d) for d in range(DAYS)]
    daily = pl.DataFrame({"ds": days * 2, "run_id": ["ref"] * 2 * DAYS,
                          "segment_dim": ["all"] * DAYS + ["region"] * DAYS,
                          "segment_value": ["all"] * DAYS + ["DE"] * DAYS, "queries": [120] * 2 * DAYS,
                          "queries_evaluated": [100] * 2 * DAYS, "queries_no_relevant": [20] * 2 * DAYS,
                          "ndcg4_sum": [60.0] * 2 * DAYS, "ndcg8_sum": [65.0] * 2 * DAYS})
    runs = ["ref"] * 3 + ["x:baseline"] * 3 + ["x:retrain:eng_ctr:0.05:1"] * 3
    importance = pl.DataFrame({"run_id": runs, "feature": FEATURES * 3,
                               "gain": [1.0] * 9, "gain_share": [1 / 3] * 9, "shap": [1.0] * 9,
                               "shap_share": [0.5, 0.3, 0.2] * 2 + [0.3, 0.4, 0.3],
                               "shap_rank": [1, 2, 3] * 2 + [2, 1, 3]})
    cells = pl.DataFrame({
        "experiment_id": ["x", "x"], "run_id": ["x:retrain:eng_ctr:0.05:1", "x:test:eng_ctr:0.05:1"],
        "dataset": ["mq2008"] * 2, "fold": [1, 1], "mode": ["retrain", "test"], "feature": ["eng_ctr"] * 2,
        "role": ["top"] * 2, "baseline_rank": [1, 1], "baseline_shap_share": [0.5] * 2,
        "baseline_gain_share": [0.3] * 2, "reduction": [0.05, 0.05], "seed": [1, 1],
        "coverage_test_before": [0.5, 0.5], "coverage_test_after": [0.475, 0.475],
        "ndcg4": [0.58, 0.57], "ndcg8": [0.63, 0.62], "d_ndcg4": [-0.02, -0.03], "d_ndcg8": [-0.02, -0.03]})
    add_attribution(conn)
    for name, frame in (("ranker_daily", daily), ("feature_importance", importance),
                        ("coverage_drop_results", cells)):
        conn.register(f"{name}_rows", frame.to_arrow())
        # The ranker's schema files create these tables; without them, the frames define them.
        conn.execute(f"CREATE TABLE IF NOT EXISTS {name} AS SELECT * FROM {name}_rows LIMIT 0")
        conn.execute(f"INSERT INTO {name} BY NAME SELECT * FROM {name}_rows")


def test_cli_writes_the_report_and_prints_its_path(warehouse, tmp_path, capsys):
    out = tmp_path / "r"
    code = feco(["report", "--out", str(out), "--warehouse", str(warehouse), "--segment-dim", "all"])
    assert code == 0
    assert capsys.readouterr().out.strip() == str(out / "index.html")


def test_cli_writes_the_report_through_the_door_under_the_run_lock(warehouse, tmp_path, capsys, monkeypatch):
    # `feco report` is tasks.report, as the DAG's report task: it waits for a run writing the warehouse
    out = tmp_path / "r"
    monkeypatch.setenv("FECO_LOCK_WAIT_SECONDS", "0")
    with held_by_another_run(warehouse):
        assert feco(["report", "--out", str(out), "--warehouse", str(warehouse)]) == 3
    assert "another feco run holds" in capsys.readouterr().err
    assert not out.exists()


def test_cli_names_a_missing_warehouse_in_one_line(tmp_path, capsys):
    code = feco(["report", "--out", str(tmp_path / "r"), "--warehouse", str(tmp_path / "none.duckdb")])
    assert code == 1
    assert capsys.readouterr().err.count("\n") == 1


DEMO = REPO / "var" / "demo" / "feco.duckdb"


@pytest.mark.skipif(not DEMO.exists(), reason="no demo warehouse: run `make demo` first")
def test_demo_warehouse_report(tmp_path):
    out = tmp_path / "demo"
    try:
        write_report(DEMO, out)
    except Exception as error:  # a demo run holding the file for writing is not a failure here
        if "in use" in str(error):
            pytest.skip("the demo warehouse is being written")
        raise
    page = _page(out)
    assert all(_status(page)[key] == "rendered" for key in (*ALWAYS, "ndcg", "shap")), _status(page)


HOSTILE_VALUES = ("<!--<script>", "</script><script>alert(1)</script>", "tv & <audio>")


def test_values_from_the_logs_cannot_end_or_comment_out_the_pages_script(warehouse, tmp_path):
    # "<!--<script>" inside a script element makes the parser skip the next "</script>": the
    # data element would swallow the page's own script. No "<" may reach the element's text.
    with duckdb.connect(str(warehouse)) as conn:
        for day in range(DAYS):
            for value in HOSTILE_VALUES:
                conn.execute("INSERT INTO coverage_states VALUES (?, 0, 'eng_ctr', 'region', ?, 50, 50, 25)",
                             [START + timedelta(days=day), value])
    write_report(warehouse, tmp_path / "r")
    page = _page(tmp_path / "r")
    data = page.split('<script type="application/json" id="feco-data">', 1)[1].split("</script>", 1)[0]
    assert not set("<>&") & set(data)
    assert {("region", value) for value in HOSTILE_VALUES} <= {tuple(s) for s in json.loads(data)["cube"]["segments"]}
    assert page.count("<script") == 3 and page.endswith("</script>\n</body></html>\n")  # Plotly, the data, page.js


def test_a_long_segment_value_is_stored_once_and_the_page_stays_small(warehouse, tmp_path):
    """A 6,000-character value too small to judge in every cell of the heatmap, with an alert and
    the ranker's NDCG on each day: the page holds it twice (the cube's segments, the NDCG's), the
    cells, marks and NDCG rows name it by index."""
    value = "<long & " + "x" * 6_000 + ">"
    with duckdb.connect(str(warehouse)) as conn:
        for day in range(DAYS):
            ds = START + timedelta(days=day)
            for feature in ("eng_ctr", "meta_rating", "text_bm25"):
                conn.execute("INSERT INTO coverage_states VALUES (?, 0, ?, 'region', ?, 50, 50, 25)", [ds, feature, value])
            conn.execute("INSERT INTO alerts (ds, alert_id, feature, segment_dim, segment_value, rule, observed, baseline, "
                         "threshold, severity, status, n_rows) VALUES (?, ?, 'eng_ctr', 'region', ?, "
                         "'drop_vs_moving_average', 0.5, 0.9, 0.8, 'high', 'open', 50)", [ds, f"long{day}", value])
            conn.execute("INSERT INTO ranker_daily BY NAME SELECT ? AS ds, 'ref' AS run_id, 'region' AS segment_dim, "
                         "? AS segment_value, 20 AS queries, 10 AS queries_evaluated, 10 AS queries_no_relevant, "
                         "6.0 AS ndcg4_sum, 6.5 AS ndcg8_sum", [ds, value])
    small = _page(write_report(warehouse, tmp_path / "small").parent)
    escaped = value.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    assert small.count("x" * 6_000) == 2 and escaped in small
    data = _payload(small)
    assert sum(len(row) for row in data["heatmap"]["region"]["unjudged"] if row) and len(data["marks"]) >= DAYS
    assert len(data["ndcg"]["rows"]) == DAYS
    plain = _page(write_report(build(tmp_path / "plain.duckdb"), tmp_path / "plain").parent)
    assert len(small) < len(plain) + 4 * len(value)  # the value twice, and the NDCG section


def test_a_heatmap_cell_with_an_unjudged_segment_is_never_coloured_healthy():
    # Region DE had 472 sampled rows (under min_rows 500): not judged. US was judged and fine
    # on day 1, and fell below the alert line on day 2.
    from datetime import date

    from feco.report.cube import heatmap_grids, pack_cube

    days = [date(2026, 11, 3), date(2026, 11, 4)]
    coverage = pl.DataFrame({
        "ds": days * 2, "feature": ["f"] * 4, "segment_dim": ["region"] * 4, "segment_value": ["US", "US", "DE", "DE"],
        "n_rows": [9_000, 9_000, 472, 496], "coverage": [0.70, 0.40, 0.0, 0.0], "coverage_ma7": [0.7] * 4,
        "shap_share": [None] * 4})
    band = pl.DataFrame({"ds": days, "feature": ["f"] * 2, "segment_dim": ["region"] * 2, "segment_value": ["US"] * 2,
                         "expected": [0.68, 0.68], "lower": [0.60, 0.60]})
    cube = pack_cube(coverage, band)
    grid = heatmap_grids(cube, coverage, band, min_rows=500)["region"]
    de = cube["segments"].index(["region", "DE"])
    assert grid["z"][0][0] is None and grid["unjudged"][0][0] == [[de, 472]]  # not blue: DE unseen
    assert grid["z"][0][1] < -1 and grid["unjudged"][0][1] == [[de, 496]]  # US's drop still shows


def test_the_page_says_when_it_was_written(warehouse, tmp_path):
    from datetime import datetime

    write_report(warehouse, tmp_path / "r", written_at=datetime(2026, 3, 13, 6, 5, tzinfo=UTC))
    assert "2026-03-01 to 2026-03-12, 12 days, from feco.duckdb; written 2026-03-13 06:05 UTC" in _page(tmp_path / "r")


def _next_steps(page: str) -> list[str]:
    """The line under each incident: its upstream source and the command to look further."""
    return [html.unescape(re.sub(r"<[^>]+>", "", cell))
            for cell in re.findall(r'<tr class="note-row"><td class="text" colspan="\d+">(.*?)</td></tr>', page)]


@pytest.mark.parametrize("value", ["DE", "$(touch pwned) `x` \"y\""])
def test_each_incident_names_its_upstream_source_and_a_command_that_runs_as_shown(warehouse, tmp_path, value):
    from feco.alerts.channels import incident_sql
    from feco.config import parse_config

    with duckdb.connect(str(warehouse)) as conn:  # the incident in a region named by the logs
        conn.execute("UPDATE incidents SET segment_value = ?", [value])
        conn.execute("UPDATE alerts SET segment_value = ?", [value])
    config = parse_config({"paths": {"logs": "logs", "samples": "samples", "warehouse": "feco.duckdb"},
                           "logs": {"features": FEATURES, "sources": {"engagement": ["eng_*"]}}},
                          source=tmp_path / "feco.toml")
    write_report(warehouse, tmp_path / "r", config=config)
    (line,) = _next_steps(_page(tmp_path / "r"))
    where, command = line.split(". Look further: ")
    assert where == "Upstream source engagement"
    sql = incident_sql({"opened_ds": START + timedelta(days=9), "feature": "eng_ctr", "segment_dim": "region",
                        "segment_value": value})
    assert shlex.split(command) == ["feco", "query", sql]  # pasted into a shell, the SQL arrives whole


def test_a_source_that_names_its_owner_and_runbook_shows_them():
    from types import SimpleNamespace

    from feco.report.build import _upstream

    logs = SimpleNamespace(sources={"engagement": SimpleNamespace(features=["eng_*"], owner="search-signals",
                                                                  runbook="https://wiki.example/eng"),
                                    "price": ["price_*"]},
                           source_features=lambda: {"engagement": ["eng_ctr"], "price": ["price_x"]})
    upstream = _upstream(SimpleNamespace(logs=logs))
    assert upstream["eng_ctr"] == {"source": "engagement", "owner": "search-signals",
                                   "runbook": "https://wiki.example/eng"}
    assert upstream["price_x"] == {"source": "price"}


def test_the_replayed_cost_and_the_days_ndcg_change_are_named_apart(warehouse, tmp_path):
    from small_warehouse import add_incidents

    with duckdb.connect(str(warehouse)) as conn:
        add_incidents(conn)
    write_report(warehouse, tmp_path / "r")
    incidents = _page(tmp_path / "r").split('<section id="incidents"')[1].split("</section>")[0]
    head = re.search(r"<table><tr>(.*?)</tr>", incidents).group(1)
    assert "estimated cost, NDCG@8 (replayed, 95% interval)" in head and "NDCG@8 change, all causes" in html.unescape(head)
    assert "not to be compared" in incidents and "-0.0200 (-0.0310 to -0.0090)" in incidents


def test_a_null_share_incident_says_what_it_measured_and_that_it_fires_above(warehouse, tmp_path):
    from small_warehouse import add_incidents

    with duckdb.connect(str(warehouse)) as conn:
        add_incidents(conn)
    write_report(warehouse, tmp_path / "r")
    rows = re.findall(r'<tr class="severity-\w+">(.*?)</tr>', _page(tmp_path / "r"))
    (null,) = [row for row in rows if "meta_rating" in row]
    assert "NULL or NaN share 53.4%" in null and "above 17.8%" in null and "below" not in null
    (drop,) = [row for row in rows if "eng_ctr" in row]
    assert "coverage 10.0%" in drop and "below 45.0%" in drop
