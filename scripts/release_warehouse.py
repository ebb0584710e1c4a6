"""Build the warehouse an earlier release of feco wrote, as a test fixture of upgrades.

Usage:
    .venv/bin/python scripts/release_warehouse.py COMMIT [COMMIT ...]

For each commit of main: its code (``git archive``) runs a small pipeline (12 days of
generated logs with one incident, a reference ranker trained on the first six, the rest
scored, alerts and incidents detected), and the warehouse it wrote is exported with DuckDB's
EXPORT DATABASE into ``tests/fixtures/releases/<commit>/``: the schema that release created,
as SQL, its rows, as Parquet, and its model files. tests/test_release_upgrades.py imports each
one and opens it with today's feco. Run it once for each release whose schema differs from the
ones kept.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from datetime import date, timedelta
from pathlib import Path

import duckdb

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "releases"
START, DAYS, TRAINED = date(2026, 11, 1), 12, date(2026, 11, 7)
FEATURES = ["text_bm25_title", "meta_rating", "eng_ctr_7d", "eng_ctr_30d", "eng_atc_rate_30d", "pers_brand_affinity",
            "price_vs_category", "price_discount_pct"]
INCIDENT = f"feature=eng_ctr_7d,start={START + timedelta(days=8)},days=3,share=0.9,kind=zero,shape=step,segment=region:DE"


def build(commit: str, out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix=f"feco-{commit}-") as scratch:
        code, work = Path(scratch) / "code", Path(scratch) / "work"
        code.mkdir()
        work.mkdir()
        archive = subprocess.run(["git", "-C", str(REPO), "archive", commit], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(code)], input=archive, check=True)
        config = write_config(code / "configs" / "feco.toml", work)

        def feco(*args: str) -> None:
            print(f"[{commit}] feco {' '.join(args)}", flush=True)
            subprocess.run([sys.executable, "-m", "feco", *args], cwd=code, check=True,
                           env={**os.environ, "PYTHONPATH": str(code)})

        feco("generate-logs", "--out", str(work / "logs"), "--start", str(START), "--days", str(DAYS),
             "--events-per-day", "8000", "--seed", "3", "--incident", INCIDENT)
        last = START + timedelta(days=DAYS - 1)
        feco("backfill", "--start", str(START), "--end", str(TRAINED - timedelta(days=1)), "--config", str(config))
        feco("train-ranker", "--ds", str(TRAINED), "--config", str(config))
        feco("backfill", "--start", str(TRAINED), "--end", str(last), "--config", str(config))
        if out.exists():
            shutil.rmtree(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        with duckdb.connect(str(work / "feco.duckdb"), read_only=True) as conn:
            conn.execute(f"EXPORT DATABASE '{out}' (FORMAT parquet)")
        shutil.copytree(work / "models", out / "models")
    # model_runs.artifact names the model under the folder it was built in: a test moves it
    (out / "BUILT_IN").write_text(f"{commit}\n{work}\n", encoding="utf-8")


def write_config(template: Path, work: Path) -> Path:
    """The release's own demo config, pointed at ``work`` and cut to a few features."""
    text = template.read_text(encoding="utf-8")
    for key in ("logs", "samples", "warehouse", "models", "jsonl", "report"):
        target = {"warehouse": "feco.duckdb", "jsonl": "alerts.jsonl", "report": "report/index.html"}.get(key, key)
        text = re.sub(rf'^{key} = "[^"]*"', f'{key} = "{work / target}"', text, flags=re.MULTILINE)
    text = re.sub(r"^features = \[.*?\]", "features = " + repr(FEATURES).replace("'", '"'), text,
                  flags=re.MULTILINE | re.DOTALL)
    path = work / "feco.toml"
    path.write_text(text, encoding="utf-8")
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("commits", nargs="+", help="commits of main, as short hashes")
    for commit in parser.parse_args().commits:
        build(commit, FIXTURES / commit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
