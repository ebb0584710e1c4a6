"""Open the HTML report in a real headless browser and save a screenshot to look at.

Usage: .venv/bin/python scripts/check_report.py [REPORT_DIR]   (default var/demo/report)

Installs Chromium with apt-get when it is missing (needs root), renders index.html from disk
(file://, no server) at 1400 px wide and prints the PNG's path. It also fails when the page
links an image that is not beside it, so a broken report is caught before anyone opens it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BROWSERS = ("chromium", "chromium-browser", "google-chrome")


def browser() -> str:
    """The Chromium binary, installed with apt-get first when none is on PATH."""
    for name in BROWSERS:
        if shutil.which(name):
            return shutil.which(name)
    if os.geteuid() != 0:
        sys.exit("Chromium is not installed and installing it needs root: apt-get install -y chromium")
    print("installing chromium with apt-get ...", flush=True)
    subprocess.run(["apt-get", "update", "-qq"], check=True)
    subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=True,
                   env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    return next(shutil.which(n) for n in BROWSERS if shutil.which(n))


def missing_images(page: Path) -> list[str]:
    sources = re.findall(r'<img src="([^"]+)"', page.read_text(encoding="utf-8"))
    return [s for s in sources if not (page.parent / s).is_file()]


def screenshot(page: Path, png: Path) -> None:
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([browser(), "--headless", "--no-sandbox", "--disable-gpu",
                        "--disable-background-networking", "--disable-component-update",
                        "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
                        f"--screenshot={png}", "--window-size=1400,4000", page.as_uri()],
                       check=True, capture_output=True, timeout=120)


def main() -> int:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else REPO / "var" / "demo" / "report").resolve()
    page = folder / "index.html"
    if not page.is_file():
        sys.exit(f"no report at {page}: run `feco report --out {folder}` (or `make demo`) first")
    broken = missing_images(page)
    if broken:
        sys.exit(f"{page} links images that do not exist: {', '.join(broken)}")
    png = folder.parent / f"{folder.name}_screenshot.png"
    screenshot(page, png)
    if not png.is_file() or png.stat().st_size == 0:
        sys.exit(f"Chromium wrote no screenshot of {page}")
    print(png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
