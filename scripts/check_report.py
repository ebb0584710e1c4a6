"""Open the HTML report in a real headless browser and save a screenshot to look at.

Usage: .venv/bin/python scripts/check_report.py [REPORT_DIR]   (default var/demo/report)

Renders index.html from disk (file://, no server) in Debian's chromium (`make browser`
installs it) driven by playwright, at 1400 px wide, and prints the full-page PNG's path. It
fails when the page logs a console error or asks for anything beyond its own file.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

REPO = Path(__file__).resolve().parents[1]
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def main() -> int:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else REPO / "var" / "demo" / "report").resolve()
    page_path = folder / "index.html"
    if not page_path.is_file():
        sys.exit(f"no report at {page_path}: run `feco report --out {folder}` (or `make demo`) first")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("chromium is not installed: `make browser` installs it (as root)")
    png = folder.parent / f"{folder.name}_screenshot.png"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        problems = []
        page.on("console", lambda m: problems.append(f"console error: {m.text}") if m.type == "error" else None)
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        page.on("request", lambda r: problems.append(f"request: {r.url}") if r.url != page_path.as_uri() else None)
        page.goto(page_path.as_uri())
        page.wait_for_selector("#trend-chart .main-svg")
        page.screenshot(path=str(png), full_page=True)
        browser.close()
    if problems:
        sys.exit(f"{page_path}:\n  " + "\n  ".join(problems))
    print(png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
