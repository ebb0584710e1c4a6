"""Coverage-state speed on a sample of 1.6M events (about 20M rows) and 33 features.

feco's `compute_states` (all segment dimensions and the region x query_band cross) against
the floor (numpy counting non-zeros per column of the sample in memory, no segments, no NULL
handling). Measured where the pipeline counts, from the day's sample files (the generated
day written as samples/ds=…/window=N/part-0.parquet, hour % 8 standing in for the window,
with the day's events per query kept beside them as the sample step keeps them), and on the
sample as one frame in memory; each with the compiled counts (the default) and with the SQL
(`counting="sql"`, the counts before them). ``files-recount`` counts the day's events per
query from the files again (a day sampled by the Spark engine, the first time); ``kept`` is
what keeping them costs the sample step. Each path runs in its own process so that its peak
memory can be reported; ``read`` is the time the files' columns take to read alone (Parquet
decoding: a floor for any counting from the files). Targets: from the sample files within
6x of the floor, peak memory at most 1.5x the sample's size.

    python bench/coverage_speed.py                  # files, files-recount, kept, files-sql, frame, read, numpy, history
    python bench/coverage_speed.py frame-sql pandas  # these need 9 and 12 GB
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DAY, OUT, best_of, large_day, peak_rss_mb

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "feco.toml"
SAMPLE = OUT / "sample_1600000"
DEFAULT_PATHS = ["files", "files-recount", "kept", "files-sql", "frame", "read", "numpy", "history"]


def load_sample():
    """The whole generated day as one sample: hour % 8 stands in for the eight windows."""
    import polars as pl

    logs = large_day()
    frame = pl.read_parquet(str(logs / f"ds={DAY}" / "hour=*" / "*.parquet"))
    return frame.with_columns((pl.col("event_ts").dt.hour() % 8).cast(pl.Int16).alias("window"))


def sample_files():
    """The same rows as the day's sample files, as the sample step writes them (once): the
    window files, the day's kept events per query, and the summary that marks it sampled."""
    import polars as pl

    from feco import storage
    from feco.sample_folder import QUERY_EVENTS_FILE, WINDOWS_FILE, SampleFiles, keep_query_events, write_rows

    day = SAMPLE / f"ds={DAY}"
    files = [day / f"window={window}" / "part-0.parquet" for window in range(8)]
    if not all(f.exists() for f in [*files, day / QUERY_EVENTS_FILE, day / WINDOWS_FILE]):
        logs = str(large_day() / f"ds={DAY}" / "hour=*" / "*.parquet")
        for window, file in enumerate(files):
            rows = pl.scan_parquet(logs, hive_partitioning=False).filter(pl.col("event_ts").dt.hour() % 8 == window)
            write_rows(rows.collect(), file)
        keep_query_events(kept_query_events(files)[0], day, event_id="event_id", query="query")
        pl.DataFrame({"window": list(range(8))}).write_parquet(day / WINDOWS_FILE)
    fs, _ = storage.filesystem_for(day)
    return SampleFiles(fs, [str(f) for f in files], list(range(8)), [str(f) for f in files])


def kept_query_events(files) -> tuple:
    """The day's events per query as the sample step takes them from each window's rows in
    memory, and the seconds (wall, CPU) that took, the rows' reading excluded."""
    import polars as pl

    from feco.sample_folder import query_event_pairs, query_events_of

    wall = cpu = 0.0
    pairs = []
    for file in files:
        rows = pl.read_parquet(file)
        started, cpu_started = time.perf_counter(), time.process_time()
        pairs.append(query_event_pairs(rows, event_id="event_id", query="query"))
        wall, cpu = wall + time.perf_counter() - started, cpu + time.process_time() - cpu_started
    started, cpu_started = time.perf_counter(), time.process_time()
    counts = query_events_of(pairs)
    return counts, wall + time.perf_counter() - started, cpu + time.process_time() - cpu_started


def timed(function, repeats: int = 3) -> dict:
    """The fastest of ``repeats`` runs: its wall and CPU seconds."""
    runs = []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        function()
        runs.append((time.perf_counter() - wall, time.process_time() - cpu))
    wall, cpu = min(runs)
    return {"seconds": wall, "cpu": cpu}


def run_states(source: str, counting: str, *, kept: bool = True) -> dict:
    """compute_states as the coverage step runs it: from the sample files, the day's events
    per query read from what the sample step kept (``kept``), else counted from the files."""
    from feco.config import load_config
    from feco.coverage import compute_states, day_events

    config = load_config(CONFIG)
    config = config.model_copy(update={"paths": config.paths.model_copy(update={"samples": SAMPLE})})
    sample = sample_files() if source == "files" else load_sample()
    read_kept = kept and source == "files"

    def run():
        return compute_states(sample, ds=DAY, config=config, counting=counting,
                              day_events=day_events(DAY, config) if read_kept else None)

    before = peak_rss_mb()
    result = timed(run)
    states, _ = run()
    return result | {"states": states.height, "peak_mb": peak_rss_mb(), "before_mb": before}


def run_kept() -> dict:
    """The sample step's share: the day's events per query from its windows' rows in memory."""
    _, wall, cpu = kept_query_events(sample_files().files)
    return {"seconds": wall, "cpu": cpu, "peak_mb": peak_rss_mb()}


def run_read() -> dict:
    """The sample files' columns the counts use, read as the compiled counts read them, and
    nothing else: Parquet decoding's share of the time."""
    from feco.config import load_config
    from feco.coverage_kernel import BATCH_ROWS

    config = load_config(CONFIG)
    texts = [config.logs.product_group, config.logs.region, config.logs.query]
    columns = ["window", *texts, config.logs.product_first_seen, *config.logs.features]
    files = sample_files()
    before = peak_rss_mb()
    result = timed(lambda: sum(b.num_rows for b in files.batches(columns, dictionaries=texts, batch_size=BATCH_ROWS)))
    return result | {"states": 0, "peak_mb": peak_rss_mb(), "before_mb": before}


def run_history() -> dict:
    """The query-band history of a day with ``band_days`` = 7 (the default): the six days
    before it, each the same 19M-row sample (hard links), counted from their files the first
    time (``seconds``), read from what that kept the second (``kept_seconds``)."""
    import os
    from datetime import timedelta

    import polars as pl

    from feco.config import load_config
    from feco.coverage import band_history
    from feco.sample_folder import WINDOWS_FILE

    config = load_config(CONFIG)
    root = OUT / "history_samples"
    source = sample_files()
    for back in range(1, config.segments.band_days):
        day = root / f"ds={DAY - timedelta(days=back)}"
        for window, file in zip(source.windows, source.files):
            target = day / f"window={window}" / "part-0.parquet"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.unlink(missing_ok=True)
            os.link(file, target)
        (day / "_query_events.parquet").unlink(missing_ok=True)
        pl.DataFrame({"window": source.windows}).write_parquet(day / WINDOWS_FILE)  # marks the day sampled
    config = config.model_copy(update={"paths": config.paths.model_copy(update={"samples": root})})
    counted = timed(lambda: band_history(DAY, config), repeats=1)
    kept = timed(lambda: band_history(DAY, config))
    return counted | {"kept_seconds": kept["seconds"], "kept_cpu": kept["cpu"], "peak_mb": peak_rss_mb()}


def run_numpy() -> dict:
    import numpy as np

    from feco.config import load_config

    features = load_config(CONFIG).logs.features
    sample = load_sample()
    arrays = [sample.get_column(f).to_numpy() for f in features]
    seconds = best_of(lambda: [np.count_nonzero(a) for a in arrays], repeats=5)
    return {"seconds": seconds, "peak_mb": peak_rss_mb(), "rows": sample.height,
            "sample_mb": sample.estimated_size() / 2**20,
            "files_mb": sum(Path(f).stat().st_size for f in sample_files().files) / 2**20}


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


PATHS = {
    "files": lambda: run_states("files", "compiled"),
    "files-recount": lambda: run_states("files", "compiled", kept=False),
    "kept": run_kept,
    "files-sql": lambda: run_states("files", "sql"),
    "frame": lambda: run_states("frame", "compiled"),
    "frame-sql": lambda: run_states("frame", "sql"),
    "read": run_read,
    "numpy": run_numpy,
    "history": run_history,
    "pandas": run_pandas,
}
LABELS = {
    "files": "compute_states, sample files, compiled",
    "files-recount": "  the same, the day's events counted again",
    "files-sql": "compute_states, sample files, SQL",
    "frame": "compute_states, frame in memory, compiled",
    "frame-sql": "compute_states, frame in memory, SQL",
    "read": "reading the files' columns, no counting",
}


def in_subprocess(name: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--one", name], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(paths: list[str]) -> None:
    sample_files()
    results = {name: in_subprocess(name) for name in dict.fromkeys(["numpy", *paths])}
    floor = results["numpy"]
    print(f"sample: {floor['rows']:,} rows, 33 features; {floor['sample_mb']:,.0f} MB in memory, "
          f"{floor['files_mb']:,.0f} MB of sample files")
    print(f"numpy count_nonzero floor (frame in memory): {floor['seconds']:6.2f} s")
    for name, label in LABELS.items():
        if name in results:
            run = results[name]
            print(f"{label:42s} {run['seconds']:6.2f} s (CPU {run['cpu']:5.2f} s) = "
                  f"{run['seconds'] / floor['seconds']:5.1f}x the floor; peak RSS {run['peak_mb']:,.0f} MB "
                  f"= {run['peak_mb'] / floor['sample_mb']:.2f}x the sample in memory, "
                  f"{run['peak_mb'] / floor['files_mb']:.2f}x its files (before counting: {run['before_mb']:,.0f} MB); "
                  f"{run['states']:,} states")
    if "kept" in results:
        run = results["kept"]
        print(f"the sample step's share: the day's events per query from its windows' rows in memory "
              f"{run['seconds']:6.2f} s (CPU {run['cpu']:5.2f} s)")
    if "history" in results:
        run = results["history"]
        print(f"query-band history, 6 days of this sample: counted {run['seconds']:6.2f} s (CPU {run['cpu']:5.2f} s), "
              f"then read from what was kept {run['kept_seconds']:6.3f} s (CPU {run['kept_cpu']:5.3f} s)")
    if "pandas" in results:
        print(f"pandas group-by, same job: {results['pandas']['seconds']:6.2f} s; "
              f"peak RSS {results['pandas']['peak_mb']:,.0f} MB")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(PATHS[sys.argv[2]]()))
    else:
        main(sys.argv[1:] or DEFAULT_PATHS)
