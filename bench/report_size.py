"""The report page's size against its budget, on 180 days × 33 features × 60 segments.

Builds (once, cached under bench/out/) a warehouse of coverage counts of that shape, eight
windows a day, with a weekly dip in the personalisation features and a few incidents, writes
the report and prints the page's size, what makes it up, and the seconds it took. Asserts
nothing. `--warehouse PATH` measures a real warehouse instead (e.g. bench/long_run.py's).

    .venv/bin/python bench/report_size.py [--days 180] [--warehouse PATH]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from datetime import date, timedelta
from pathlib import Path

import duckdb
import numpy as np
import polars as pl

from feco.report import write_report
from feco.warehouse import create_schema

OUT = Path(__file__).resolve().parent / "out" / "report_size"
BUDGET_MB = 12.0
START = date(2026, 1, 5)  # a Monday
FEATURES = [f"{family}_{k}" for family, count in
            (("text", 7), ("meta", 8), ("eng", 8), ("pers", 5), ("price", 5)) for k in range(count)]
DIMENSIONS = {"product_group": [f"group_{k}" for k in range(18)], "region": ["US", "DE", "UK", "FR", "JP", "BR"],
              "query_band": ["head", "torso", "tail"], "product_age": ["new", "established"]}


def segments() -> list[tuple[str, str, float]]:
    """(dim, value, share of traffic): the global one, four dimensions and two crosses (60)."""
    found = [("all", "all", 1.0)]
    for dim, values in DIMENSIONS.items():
        found += [(dim, v, 1 / len(values)) for v in values]
    for first, second in (("region", "query_band"), ("region", "product_age")):
        found += [(f"{first} x {second}", f"{a} x {b}", 1 / (len(DIMENSIONS[first]) * len(DIMENSIONS[second])))
                  for a in DIMENSIONS[first] for b in DIMENSIONS[second]]
    return found


def build_warehouse(path: Path, days: int) -> None:
    rng = np.random.default_rng(3)
    segs = segments()
    base = rng.uniform(0.05, 0.98, len(FEATURES))
    frames = []
    for d in range(days):
        ds = START + timedelta(days=d)
        weekend = ds.weekday() >= 5
        for f, feature in enumerate(FEATURES):
            level = base[f] * (0.8 if weekend and feature.startswith("pers") else 1.0)
            for dim, value, share in segs:
                drop = 0.5 if (feature == "eng_1" and "DE" in value and 120 <= d < 123) else 1.0
                rows = np.full(8, int(3000 * share) + 20)
                cover = np.clip(level * drop + rng.normal(0, 0.01, 8), 0, 1)
                frames.append(pl.DataFrame({
                    "ds": [ds] * 8, "window_index": np.arange(8), "feature": [feature] * 8, "segment_dim": [dim] * 8,
                    "segment_value": [value] * 8, "n_rows": rows, "n_present": rows,
                    "n_covered": np.round(rows * cover).astype(np.int64)}))
    states = pl.concat(frames)
    with duckdb.connect(str(path)) as conn:
        create_schema(conn, moving_average_days=7)
        conn.register("states", states.to_arrow())
        conn.execute("INSERT INTO coverage_states BY NAME SELECT * FROM states")
        level = float(base[FEATURES.index("eng_1")])  # the injected fall: half of it, in DE
        for d, status in ((120, "open"), (121, "ongoing"), (122, "ongoing")):
            conn.execute(
                "INSERT INTO alerts (ds, alert_id, feature, segment_dim, segment_value, rule, observed, baseline, "
                "threshold, drop_abs, drop_rel, severity, status, n_rows, detail) VALUES "
                "(?, ?, 'eng_1', 'region', 'DE', 'drop_vs_moving_average', ?, ?, ?, ?, 0.5, 'critical', ?, "
                "520, 'eng_1 fell in DE')",
                [START + timedelta(days=d), f"a{d}", level / 2, level, 0.9 * level, level / 2, status])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--days", type=int, default=180)
    parser.add_argument("--warehouse", type=Path)
    args = parser.parse_args()
    warehouse = args.warehouse
    if warehouse is None:
        warehouse = OUT / f"feco_{args.days}.duckdb"
        if not warehouse.exists():
            OUT.mkdir(parents=True, exist_ok=True)
            started = time.perf_counter()
            build_warehouse(warehouse, args.days)
            print(f"built {warehouse} in {time.perf_counter() - started:.0f} s")
    with duckdb.connect(str(warehouse), read_only=True) as conn:
        shape = conn.sql("SELECT count(DISTINCT ds), count(DISTINCT feature), "
                         "count(DISTINCT (segment_dim, segment_value)) FROM coverage_states").fetchall()[0]
    started = time.perf_counter()
    page = write_report(warehouse, OUT / "report")
    seconds = time.perf_counter() - started
    text = page.read_text(encoding="utf-8")
    data = re.search(r'<script type="application/json" id="feco-data">(.*?)</script>', text, re.DOTALL).group(1)
    payload = json.loads(data)
    compact = {"separators": (",", ":"), "ensure_ascii": False}
    parts = {"coverage cube": len(json.dumps(payload["cube"], **compact)),
             "heatmap grids": len(json.dumps(payload["heatmap"], **compact))}
    parts["other data"] = len(data) - sum(parts.values())
    parts["plotly.js"] = len(re.search(r"<script>(.*?)</script>", text, re.DOTALL).group(1))
    size = page.stat().st_size
    print(f"{shape[0]} days × {shape[1]} features × {shape[2]} segments: page {size / 1e6:.1f} MB "
          f"(budget {BUDGET_MB:g} MB: {'within' if size / 1e6 <= BUDGET_MB else 'OVER'}), written in {seconds:.1f} s")
    for name, count in parts.items():
        print(f"  {name:14} {count / 1e6:6.2f} MB")


if __name__ == "__main__":
    main()
