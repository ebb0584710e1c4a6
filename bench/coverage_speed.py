"""Coverage-state speed on a sample of 1.6M events (about 20M rows) and 33 features.

feco's `compute_states` (all segment dimensions and the region x query_band cross) against
the floor (numpy counting non-zeros per column, no segments, no NULL handling) and a pandas
group-by doing the same job as feco. Each path runs in its own process so that its peak
memory can be reported. Targets: feco within 10x of the floor, 10x faster than pandas.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DAY, best_of, large_day, peak_rss_mb

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "feco.toml"


def load_sample():
    """The whole generated day as one sample: hour % 8 stands in for the eight windows."""
    import polars as pl

    logs = large_day()
    frame = pl.read_parquet(str(logs / f"ds={DAY}" / "hour=*" / "*.parquet"))
    return frame.with_columns((pl.col("event_ts").dt.hour() % 8).cast(pl.Int16).alias("window"))


def run_feco() -> dict:
    from feco.config import load_config
    from feco.coverage import compute_states

    config = load_config(CONFIG)
    sample = load_sample()
    before = peak_rss_mb()
    seconds = best_of(lambda: compute_states(sample, ds=DAY, config=config), repeats=3)
    states, _ = compute_states(sample, ds=DAY, config=config)
    return {"seconds": seconds, "rows": sample.height, "states": states.height,
            "peak_mb": peak_rss_mb(), "input_mb": before}


def run_numpy() -> dict:
    import numpy as np

    from feco.config import load_config

    features = load_config(CONFIG).logs.features
    sample = load_sample()
    arrays = [sample.get_column(f).to_numpy() for f in features]
    seconds = best_of(lambda: [np.count_nonzero(a) for a in arrays], repeats=5)
    return {"seconds": seconds, "peak_mb": peak_rss_mb()}


def run_pandas() -> dict:
    """The same job in pandas: segment columns (query bands from the day's events, product
    age), present and covered indicators, then one group-by per segment dimension."""
    import numpy as np
    import pandas as pd

    from feco.config import load_config

    config = load_config(CONFIG)
    features = config.logs.features
    frame = load_sample().to_pandas()
    dims = [[]] + [[d] for d in config.segments.dimensions] + [list(c) for c in config.segments.crosses]

    def job():
        events = frame[["event_id", "query"]].drop_duplicates()["query"].value_counts()
        events = events.sort_index().sort_values(ascending=False, kind="stable")
        before = (events.cumsum() - events) / events.sum()
        bands = pd.Series(np.select([before < 0.5, before < 0.8], ["head", "torso"], "tail"), index=events.index)
        age = (pd.Timestamp(DAY) - pd.to_datetime(frame["product_first_seen"])).dt.days
        keys = pd.DataFrame({
            "window": frame["window"],
            "product_group": frame["product_group"].fillna("unknown"),
            "region": frame["region"].fillna("unknown"),
            "query_band": frame["query"].map(bands).fillna("unknown"),
            "product_age": np.where(age.isna(), "unknown", np.where(age < 30, "new", "established")),
        })
        values = frame[features]
        present = values.notna()
        indicators = pd.concat([present.add_prefix("p:"), (present & (values > 0)).add_prefix("c:")], axis=1)
        indicators["n_rows"] = 1
        with_keys = pd.concat([keys, indicators], axis=1)
        return [with_keys.groupby(["window", *d])[list(indicators.columns)].sum() for d in dims]

    started = time.perf_counter()
    job()
    return {"seconds": time.perf_counter() - started, "peak_mb": peak_rss_mb()}


def in_subprocess(name: str) -> dict:
    out = subprocess.run([sys.executable, __file__, name], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    large_day()
    feco, floor, pandas = in_subprocess("feco"), in_subprocess("numpy"), in_subprocess("pandas")
    print(f"sample: {feco['rows']:,} rows, 33 features; {feco['states']:,} states "
          f"(global, 4 dimensions and 1 cross; 8 windows)")
    print(f"feco compute_states:        {feco['seconds']:7.2f} s  peak RSS {feco['peak_mb']:,.0f} MB "
          f"(input frame alone: {feco['input_mb']:,.0f} MB)")
    print(f"numpy count_nonzero floor:  {floor['seconds']:7.2f} s  feco / floor = "
          f"{feco['seconds'] / floor['seconds']:5.1f}x (target <= 10)")
    print(f"pandas group-by, same job:  {pandas['seconds']:7.2f} s  pandas / feco = "
          f"{pandas['seconds'] / feco['seconds']:5.1f}x (target >= 10); peak RSS {pandas['peak_mb']:,.0f} MB")


if __name__ == "__main__":
    if len(sys.argv) == 2:
        print(json.dumps({"feco": run_feco, "numpy": run_numpy, "pandas": run_pandas}[sys.argv[1]]()))
    else:
        main()
