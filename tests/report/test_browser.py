"""The report in a real browser: Debian's chromium driven by playwright, the page opened from
disk. Picking a feature and a segment changes the chart's data, an incident's link opens its
trend, nothing is fetched and the console stays clean; a screenshot is saved to look at.

Skips, saying why, where chromium or playwright is missing (`make browser` installs chromium).
"""

from __future__ import annotations

import shutil

import duckdb
import pytest

from feco.report import write_report
from small_warehouse import add_attribution

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the test extra)")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH: `make browser` installs "
                                                          "Debian's chromium (as root)")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture
def browser_page(warehouse, tmp_path):
    """The report of the small warehouse open in chromium, with its console errors and any
    request that left the page's own file."""
    with duckdb.connect(str(warehouse)) as conn:
        add_attribution(conn)
    page_path = write_report(warehouse, tmp_path / "report")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors, requests = [], []
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("request", lambda request: requests.append(request.url))
        page.goto(page_path.as_uri())
        page.wait_for_selector("#trend-chart .main-svg")
        yield page, errors, requests, page_path
        browser.close()


def trend(page) -> dict:
    """The trend chart's title and its coverage trace (the one named 'coverage, ...')."""
    return page.evaluate("""() => {
        const chart = document.getElementById("trend-chart");
        const line = chart.data.find((t) => t.name.startsWith("coverage"));
        return {title: chart.layout.title.text, name: line.name, y: line.y};
    }""")


def test_picking_a_feature_and_a_segment_redraws_the_trend(browser_page, tmp_path):
    page, errors, requests, page_path = browser_page
    first = trend(page)
    assert first["name"] == "coverage, region: DE"  # the page opens on the incident
    page.select_option("#trend-feature", "meta_rating")
    page.select_option("#trend-dim", "region")
    page.select_option("#trend-value", "US")
    chosen = trend(page)
    assert chosen["title"].startswith("meta_rating in region: US")
    assert chosen["y"] != first["y"] and chosen["y"] == [90.0] * 12  # the warehouse's 90% every day
    assert page.evaluate("location.hash") == "#trend/meta_rating/region/US"

    page.select_option("#heatmap-dim", "all")
    heat_all = page.evaluate("document.getElementById('heatmap-chart').data[0].z")
    page.select_option("#heatmap-dim", "region")
    assert page.evaluate("document.getElementById('heatmap-chart').data[0].z") != heat_all

    page.click("#incidents a[href^='#trend/']")
    page.wait_for_function("document.getElementById('trend-feature').value === 'eng_ctr'")
    back = trend(page)
    assert back["name"] == "coverage, region: DE" and back["y"][9] == 10.0  # the 10% of the fall

    # Attribution beside coverage: eng_ctr's share of |SHAP| in DE falls on day 9 with its coverage.
    page.select_option("#shap-feature", "eng_ctr")
    page.select_option("#shap-dim", "region")
    page.select_option("#shap-value", "DE")
    chart = page.evaluate("""() => {
        const chart = document.getElementById("shap-chart");
        return {title: chart.layout.title.text, shap: chart.data[0].y, coverage: chart.data[2].y};
    }""")
    assert chart["title"] == "eng_ctr in region: DE: attribution and coverage"
    assert chart["shap"][8] == 30.0 and chart["shap"][9] == 12.5 and chart["shap"][10] == 30.0
    assert chart["coverage"][8] == 50.0 and chart["coverage"][9] == 10.0

    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    assert (tmp_path / "report.png").stat().st_size > 10_000
    assert errors == []
    assert [url for url in requests if url != page_path.as_uri()] == []
