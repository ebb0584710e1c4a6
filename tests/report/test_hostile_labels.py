"""Values from the logs in the report's charts, in a real browser: Plotly reads a subset of HTML
(links, bold) and entities in its labels and %{...} in hover templates, so the page writes a
segment value or a feature name as entities and it shows as it is. Skips, saying why, where
chromium or playwright is missing (`make browser` installs chromium)."""

from __future__ import annotations

import shutil
from datetime import timedelta

import duckdb
import pytest
from small_warehouse import DAYS, START

from feco.report import write_report

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the test extra)")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH: `make browser` installs "
                                                          "Debian's chromium (as root)")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
VALUE = '<a href="https://evil.example/">Open</a> %{y} &amp; 5%'
FEATURE = "<b>ctr</b>%{x}"


def test_values_from_the_logs_show_as_text_in_the_charts(warehouse, tmp_path):
    with duckdb.connect(str(warehouse)) as conn:
        for day in range(DAYS):
            for feature, dim, value in ((FEATURE, "all", "all"), (FEATURE, "region", VALUE), ("eng_ctr", "region", VALUE)):
                conn.execute("INSERT INTO coverage_states VALUES (?, 0, ?, ?, ?, 1000, 1000, 500)",
                             [START + timedelta(days=day), feature, dim, value])
    page_path = write_report(warehouse, tmp_path / "report")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(page_path.as_uri())
        page.wait_for_selector("#trend-chart .main-svg")
        page.select_option("#trend-feature", FEATURE)
        page.select_option("#trend-dim", "region")
        page.select_option("#trend-value", VALUE)
        trend = page.evaluate("""() => ({
            title: document.querySelector("#trend-chart .gtitle").textContent,
            legend: [...document.querySelectorAll("#trend-chart .legendtext")].map((e) => e.textContent),
            links: document.querySelectorAll("#trend-chart svg a").length})""")
        assert trend["title"] == f"{FEATURE} in region: {VALUE}: 0 alert days"
        assert f"coverage, region: {VALUE}" in trend["legend"] and trend["links"] == 0

        page.select_option("#heatmap-dim", "region")
        heatmap = page.evaluate("""(feature) => {
            const chart = document.getElementById("heatmap-chart");
            const ticks = [...chart.querySelectorAll(".ytick text")].map((e) => e.textContent);
            const row = DATA.cube.features.indexOf(feature);
            const day = DATA.heatmap.region.segment[row].findIndex((s) => s !== null);
            chart.emit("plotly_click", {points: [{pointIndex: [row, day]}]});  // a click on the cell
            return {ticks, bold: chart.querySelectorAll(".ytick tspan[style*=bold]").length};
        }""", FEATURE)
        assert FEATURE in heatmap["ticks"] and heatmap["bold"] == 0
        page.wait_for_function("""([feature, value]) => document.getElementById("trend-feature").value === feature
            && document.getElementById("trend-value").value === value""", arg=[FEATURE, VALUE])
        assert errors == []
        browser.close()
