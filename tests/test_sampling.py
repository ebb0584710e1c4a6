import itertools
from datetime import UTC, date, datetime, timedelta

import polars as pl
import pytest

from feco.errors import DataError
from feco.sample_folder import read_sample, sampled_query_events
from feco.sampling import day_windows, sample_day, write_sample
from logbuilder import make_config, make_events, write_logs

DAY = date(2026, 3, 2)


@pytest.fixture
def config(tmp_path):
    return make_config(tmp_path)


def test_windows_are_spread_over_the_day_in_utc(config):
    windows = day_windows(DAY, config)
    assert len(windows) == 8
    assert windows[0].start == datetime(2026, 3, 2, 1, 25, tzinfo=UTC)
    assert all((w.end - w.start).seconds == 600 for w in windows)
    assert windows[0].hours() == [1]


def test_window_crossing_an_hour_reads_both_hours(tmp_path):
    config = make_config(tmp_path, sampling={"windows": 1, "window_minutes": 10,
                                             "window_starts": ["05:55"]})
    assert day_windows(DAY, config)[0].hours() == [5, 6]


def test_systematic_sample_takes_whole_events_reproducibly(tmp_path, config):
    logs = make_events(DAY, events=4000, seed=1)
    write_logs(config.paths.logs, logs)
    rows, windows = sample_day(DAY, config)
    assert windows.get_column("events_sampled").to_list() == [5] * 8
    available = windows.get_column("events_available").to_list()
    assert windows.get_column("step").to_list() == pytest.approx([a / 5 for a in available])
    # every sampled event comes with all of its rows
    per_event = rows.group_by("event_id").len().get_column("len").unique().to_list()
    assert per_event == [3]
    again, _ = sample_day(DAY, config)
    assert rows.equals(again)


def test_sample_is_every_kth_event_in_time_order(tmp_path):
    config = make_config(tmp_path, sampling={"windows": 1, "window_minutes": 10,
                                             "window_starts": ["10:00"], "events_per_window": 4,
                                             "seed": 3})
    logs = make_events(DAY, events=40, seed=2, minutes=[600 + i % 10 for i in range(40)])
    write_logs(config.paths.logs, logs)
    rows, windows = sample_day(DAY, config)
    ordered = (logs.group_by("event_id").agg(pl.col("event_ts").min())
               .sort(["event_ts", "event_id"]).get_column("event_id").to_list())
    picked = rows.get_column("event_id").unique(maintain_order=True).to_list()
    positions = [ordered.index(e) for e in picked]
    assert windows["step"][0] == 10.0
    assert [b - a for a, b in itertools.pairwise(positions)] == [10, 10, 10]
    assert 0 <= positions[0] < 10


def test_different_seed_gives_a_different_sample(tmp_path):
    write_logs(tmp_path / "logs", make_events(DAY, events=4000, seed=1))
    first, _ = sample_day(DAY, make_config(tmp_path, sampling={"seed": 1, "events_per_window": 5}))
    second, _ = sample_day(DAY, make_config(tmp_path, sampling={"seed": 2, "events_per_window": 5}))
    assert set(first["event_id"]) != set(second["event_id"])


def test_short_window_is_taken_whole_and_recorded(tmp_path):
    config = make_config(tmp_path, sampling={"events_per_window": 10_000})
    write_logs(config.paths.logs, make_events(DAY, events=2000, seed=1))
    _, windows = sample_day(DAY, config)
    assert (windows["events_sampled"] == windows["events_available"]).all()
    assert (windows["step"] == 1.0).all()


def test_only_hours_overlapping_windows_are_read(config):
    write_logs(config.paths.logs, make_events(DAY, events=2000, seed=1))
    # hour 00 overlaps no window: a corrupt file there must not be opened
    bad = config.paths.logs / f"ds={DAY}" / "hour=00" / "part-0.parquet"
    bad.write_bytes(b"not parquet")
    sample_day(DAY, config)


def test_corrupt_file_in_a_window_names_the_file(config):
    write_logs(config.paths.logs, make_events(DAY, events=2000, seed=1))
    bad = config.paths.logs / f"ds={DAY}" / "hour=01" / "part-0.parquet"
    bad.write_bytes(bad.read_bytes()[:100])
    with pytest.raises(DataError, match="hour=01/part-0.parquet"):
        sample_day(DAY, config)


def test_missing_and_empty_partitions_are_clear_errors(config):
    with pytest.raises(DataError, match="no log partition for 2026-03-02"):
        sample_day(DAY, config)
    (config.paths.logs / f"ds={DAY}").mkdir(parents=True)
    with pytest.raises(DataError, match="empty log partition"):
        sample_day(DAY, config)


def test_a_day_with_no_events_in_any_window_is_an_error(config):
    # every hour a window reads has a file, but no event falls in a window
    write_logs(config.paths.logs, make_events(DAY, events=24, minutes=[60 * h for h in range(24)]))
    with pytest.raises(DataError, match="no search events in any sampling window"):
        sample_day(DAY, config)


def test_naive_timestamps_are_taken_as_utc(config):
    logs = make_events(DAY, events=2000, seed=1)
    write_logs(config.paths.logs, logs.with_columns(pl.col("event_ts").dt.replace_time_zone(None)))
    _, windows = sample_day(DAY, config)
    assert windows["events_sampled"].sum() == 40


def test_timestamps_in_another_zone_are_windowed_in_utc(config):
    logs = make_events(DAY, events=2000, seed=1)
    write_logs(config.paths.logs, logs)
    expected, _ = sample_day(DAY, config)
    shifted = logs.with_columns(pl.col("event_ts").dt.convert_time_zone("Asia/Tokyo"))
    for path in config.paths.logs.rglob("*.parquet"):
        path.unlink()
    write_logs(config.paths.logs, shifted)
    rows, _ = sample_day(DAY, config)
    assert rows["event_id"].to_list() == expected["event_id"].to_list()


def test_write_and_read_back_replace_the_day_whole(config):
    write_logs(config.paths.logs, make_events(DAY, events=2000, seed=1))
    rows, windows = sample_day(DAY, config)
    write_sample(DAY, config)
    write_sample(DAY, config)
    back, back_windows = read_sample(DAY, config.paths.samples)
    assert back.sort(["window", "event_ts", "event_id", "position"]).equals(
        rows.sort(["window", "event_ts", "event_id", "position"]).select(back.columns))
    assert back_windows.drop("sample_digest").equals(windows)  # and each window's files' sha256 beside it
    assert back_windows["sample_digest"].str.contains("^[0-9a-f]{64}$").all()
    assert sorted(p.name for p in config.paths.samples.iterdir()) == ["_feco_warehouse", f"ds={DAY}"]


def test_sampled_query_events_count_each_days_events_once(config):
    from datetime import timedelta

    days = [DAY, DAY + timedelta(days=1)]
    for ds in days:
        write_logs(config.paths.logs, make_events(ds, events=2000, seed=1))
        write_sample(ds, config)
    counts = sampled_query_events(days + [DAY - timedelta(days=1)], config.paths.samples,
                                  event_id="event_id", query="query")
    expected = pl.concat([read_sample(ds, config.paths.samples)[0].select("event_id", "query").unique()
                          for ds in days]).group_by("query").len("n")
    assert dict(counts.iter_rows()) == dict(expected.iter_rows())
    assert counts["n"].sum() == sum(read_sample(ds, config.paths.samples)[1]["events_sampled"].sum() for ds in days)


def test_the_sample_step_keeps_the_days_events_per_query_as_duckdb_counts_them(config):
    from feco.sample_folder import QUERY_EVENTS_FILE

    write_logs(config.paths.logs, make_events(DAY, events=3000, seed=4))
    write_sample(DAY, config)
    kept_file = config.paths.samples / f"ds={DAY}" / QUERY_EVENTS_FILE
    kept = pl.read_parquet(kept_file)
    kept_file.unlink()
    counted = sampled_query_events([DAY], config.paths.samples, event_id="event_id", query="query")
    assert kept.height > 10 and kept.sort("query").equals(counted.sort("query"))
    assert kept_file.exists()  # counted once more, and kept


def test_a_sample_away_from_local_disk_streams_the_same_rows_to_duckdb(config):
    import dataclasses

    import duckdb
    import pyarrow.fs as pafs

    from feco.sample_folder import sample_files

    write_logs(config.paths.logs, make_events(DAY, events=500, seed=0))  # seed 2 leaves window 2 empty
    write_sample(DAY, config)
    local = sample_files(DAY, config.paths.samples)
    elsewhere = dataclasses.replace(local, fs=pafs.SubTreeFileSystem("/", pafs.LocalFileSystem()))
    assert local.is_local and not elsewhere.is_local  # DuckDB's Parquet reader, then pyarrow batches
    tables = []
    for files in (local, elsewhere):
        with duckdb.connect() as conn:
            files.register(conn)
            tables.append(conn.sql("SELECT * FROM sample_rows ORDER BY ALL").pl())
    assert tables[0].height == local.count_rows() and tables[0].equals(tables[1])


def _sample_in_memory(ds, config):
    """The sampler as it was before events were chosen from two columns: every row of each
    window in memory, events ordered by (first timestamp, id), every k-th one taken."""
    import numpy as np

    from feco.sampling import day_windows

    logs = pl.read_parquet(config.paths.logs / f"ds={ds}" / "hour=*" / "*.parquet", hive_partitioning=False)
    chosen = []
    for window in day_windows(ds, config):
        rows = logs.filter(pl.col("event_ts").is_between(window.start, window.end, closed="left"))
        events = (rows.group_by("event_id").agg(pl.col("event_ts").min())
                  .sort(["event_ts", "event_id"]).get_column("event_id"))
        wanted = config.sampling.events_per_window
        if events.len() <= wanted:
            chosen += events.to_list()
            continue
        step = events.len() / wanted
        rng = np.random.default_rng([config.sampling.seed, ds.toordinal(), window.index])
        offsets = np.floor(rng.uniform(0, step) + step * np.arange(wanted)).astype(np.int64)
        chosen += events.gather(np.minimum(offsets, events.len() - 1)).to_list()
    return logs.filter(pl.col("event_id").is_in(chosen))


def test_events_chosen_from_two_columns_are_those_the_in_memory_sampler_chose(tmp_path):
    from feco.coverage import compute_states
    from feco.generator import generate_logs
    from feco.sample_folder import sample_files

    config = make_config(tmp_path, logs={"features": ["text_bm25_title", "eng_ctr_7d", "price_vs_category",
                                                      "pers_recent_view", "meta_in_stock"]},
                         coverage={}, sampling={"events_per_window": 40, "seed": 5})
    generate_logs(config.paths.logs, start=DAY, days=2, events_per_day=30_000, seed=3)
    for ds in (DAY, DAY + timedelta(days=1)):
        expected = _sample_in_memory(ds, config)
        write_sample(ds, config)
        rows, windows = read_sample(ds, config.paths.samples)
        assert windows["events_sampled"].sum() == 8 * 40
        assert sorted(rows["event_id"].unique()) == sorted(expected["event_id"].unique())
        assert rows.height == expected.height  # every row of every chosen event
        streamed, _ = compute_states(sample_files(ds, config.paths.samples), ds=ds, config=config)
        in_memory, _ = compute_states(rows, ds=ds, config=config)
        key = ["window", "feature", "segment_dim", "segment_value"]
        assert streamed.sort(key).equals(in_memory.sort(key))


def test_a_days_query_events_are_counted_once_and_again_after_it_is_sampled_again(config):
    import pyarrow.parquet as pq

    from feco.sample_folder import QUERY_EVENTS_FILE
    from feco.storage import partition_dir

    def counted(event_id="event_id"):
        return sampled_query_events([DAY], config.paths.samples, event_id=event_id, query="query").sort("query")

    write_logs(config.paths.logs, make_events(DAY, events=800, seed=3))
    write_sample(DAY, config)
    first = counted()
    kept = partition_dir(config.paths.samples, DAY) / QUERY_EVENTS_FILE
    planted = pl.DataFrame({"query": ["planted"], "n": [7]}).to_arrow()
    pq.write_table(planted.replace_schema_metadata({"event_id": "event_id", "query": "query"}), kept)
    assert counted().rows() == [("planted", 7)]  # what is kept is read: the day is not counted again
    assert counted("position").rows() != [("planted", 7)]  # kept from other columns: counted again
    assert pq.read_schema(kept).metadata == {b"event_id": b"position", b"query": b"query"}
    write_sample(DAY, config)  # the day sampled again: a new folder, counted afresh
    assert counted().equals(first)
