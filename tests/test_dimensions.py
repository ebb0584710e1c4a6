"""A segment dimension is declared once (feco/dimensions.py): a toy one added to the declaration
alone is configured, counted by both coverage paths, labels rows, and is read by the ranker.

The modules read the declaration at import, so the toy dimension is added in a fresh
interpreter before feco's other modules are imported; a place that still names the
dimensions itself fails here (the config refuses the key or the dimension, a count or a
label lacks it)."""

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import polars as pl
from polars.testing import assert_frame_equal

from feco import config, dimensions
from logbuilder import make_events

DAY = date(2026, 3, 2)
TESTS = Path(__file__).resolve().parent

# The toy dimension: one line, as a team would add it. Its [logs] key names the column.
WITH_DEVICE = """
from feco import dimensions
dimensions.DIMENSIONS = (*dimensions.DIMENSIONS, dimensions.Dimension("device", source="device"))
"""

COUNTED = WITH_DEVICE + """
import json, sys
from datetime import date
from pathlib import Path
import polars as pl
from feco.config import parse_config
from feco.coverage import compute_states, segment_rows

folder = Path(sys.argv[1])
config = parse_config({"paths": {"logs": "logs", "samples": "samples", "warehouse": "feco.duckdb"},
                       "logs": {"features": ["f_dense"], "device": "device_type"},
                       "segments": {"dimensions": ["region", "device"], "crosses": [["region", "device"]]}},
                      source=folder / "feco.toml")
sample = pl.read_parquet(folder / "sample.parquet")
for counting in ("compiled", "sql"):
    states, _ = compute_states(sample, ds=date.fromisoformat(sys.argv[2]), config=config, counting=counting)
    states.write_parquet(folder / f"states_{counting}.parquet")
segment_rows(sample, ds=date.fromisoformat(sys.argv[2]), config=config).write_parquet(folder / "labels.parquet")
"""

RANKER_READS = WITH_DEVICE + """
import json, sys
from datetime import date
from pathlib import Path
from feco.config import parse_config
from feco.ranker.daily import ltr_rows, read_day
from feco.ranker.model import train_ranker
from feco.ranker.rows import chosen_events
import polars as pl

folder, ds = Path(sys.argv[1]), date.fromisoformat(sys.argv[2])
config = parse_config({"paths": {"logs": "logs", "samples": "samples", "warehouse": "feco.duckdb"},
                       "logs": {"features": ["f_dense"], "device": "device_type"}}, source=folder / "feco.toml")
chosen = chosen_events([ds], config, ["event_id"], events=1000, seed=1, segment=("device", "mobile"),
                       labels=["device"])
model = train_ranker(ltr_rows(pl.read_parquet(folder / "sample.parquet"), config, keep={"position": "position"}),
                     features=["f_dense"], num_boost_round=2,
                     params={"objective": "lambdarank", "min_data_in_leaf": 5, "verbose": -1})
_, _, kept = read_day(ds, config, model, label="label", threshold=1.0)
print(json.dumps({"chosen": chosen.get_column("event_id").unique().sort().to_list(), "kept_columns": kept.columns}))
"""


def run_with_device(script: str, folder: Path) -> str:
    """``script`` run in a fresh interpreter (the toy dimension declared before feco loads)."""
    paths = [str(TESTS.parent), str(TESTS), os.environ.get("PYTHONPATH", "")]
    done = subprocess.run([sys.executable, "-c", script, str(folder), DAY.isoformat()], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths))})
    assert done.returncode == 0, done.stderr
    return done.stdout


def sample_with_devices() -> pl.DataFrame:
    """A day's sampled rows in two windows, with the team's device column, a row's own (NULL
    read 'unknown')."""
    events = make_events(DAY, events=300, seed=4, rows_per_event=3)
    row = pl.int_range(pl.len())
    device = pl.when(row % 7 == 0).then(None).when(row % 5 < 2).then(pl.lit("mobile")).otherwise(pl.lit("desktop"))
    return events.with_columns(device.alias("device_type"), (pl.col("event_id") % 2).cast(pl.Int16).alias("window"))


def test_a_column_dimension_declared_alone_is_counted_by_both_paths_and_labels_rows(tmp_path):
    sample = sample_with_devices()
    sample.write_parquet(tmp_path / "sample.parquet")
    run_with_device(COUNTED, tmp_path)
    compiled, by_sql = (pl.read_parquet(tmp_path / f"states_{c}.parquet") for c in ("compiled", "sql"))
    order = ["window", "segment_dim", "segment_value", "feature"]
    assert_frame_equal(compiled.sort(order), by_sql.sort(order))
    device = pl.coalesce("device_type", pl.lit("unknown"))
    expected = (sample.group_by("window", device.alias("segment_value"))
                .agg(pl.len().cast(pl.Int64).alias("n_rows"), (pl.col("f_dense") > 0).sum().cast(pl.Int64).alias("n_covered")))
    counted = compiled.filter(segment_dim="device").select(expected.columns)
    assert_frame_equal(counted.sort("window", "segment_value"), expected.sort("window", "segment_value"),
                       check_dtypes=False)
    assert set(compiled.filter(segment_dim="region x device")["segment_value"]) >= {"DE x mobile", "US x unknown"}
    labels = pl.read_parquet(tmp_path / "labels.parquet")
    assert labels.columns == [*config.SEGMENT_DIMENSIONS, "device"]
    assert labels.get_column("device").to_list() == sample.select(device).to_series().to_list()


def test_the_ranker_reads_a_column_dimension_declared_alone(tmp_path):
    sample = sample_with_devices()
    for window, part in sample.group_by("window"):
        folder = tmp_path / "samples" / f"ds={DAY}" / f"window={window[0]}"
        folder.mkdir(parents=True)
        part.drop("window").write_parquet(folder / "part-0.parquet")
    pl.DataFrame({"window": [0, 1]}).write_parquet(tmp_path / "samples" / f"ds={DAY}" / "_windows.parquet")
    sample.write_parquet(tmp_path / "sample.parquet")
    read = json.loads(run_with_device(RANKER_READS, tmp_path).splitlines()[-1])
    with_mobile = sample.filter(pl.col("device_type") == "mobile").get_column("event_id").unique().sort()
    assert 0 < len(with_mobile) < sample.get_column("event_id").n_unique()
    assert read["chosen"] == with_mobile.to_list()  # the events with a row in the segment
    assert "device_type" in read["kept_columns"]  # the rows the attribution labels carry their device


def test_every_declared_source_is_a_logs_column_in_the_digests_order():
    sources = list(dimensions.by_source())
    assert {d.kind for d in dimensions.DIMENSIONS} <= {dimensions.COLUMN, dimensions.QUERY_BAND,
                                                       dimensions.PRODUCT_AGE, dimensions.AGE_BAND}
    assert all(config.LogSchema.model_fields[key].default == key for key in sources)
    # the config's digest hashes the fields in order: the keys stay where they were before the
    # declaration (product_id, not a segment's source, came later)
    assert list(config.LogSchema.model_fields) == ["timestamp", "event_id", "features", *sources, "label", "product_id",
                                                   "sources"]
