"""Query bands over a warehouse's first days: one set for the whole first window.

A day's head/torso/tail bands come from the sampled events of the ``band_days`` days ending
at it. In a warehouse's first ``band_days`` days there are fewer, and bands drawn from fewer
days are blurrier (more queries on the wrong side of an edge), so a tail band counted on the
first days is not the tail band counted four weeks on: a decay reference taken then read as
a decline of the features that go with a query's popularity. The days of the first window
share the bands of all of them sampled so far, and each of them, as it is counted, restates
the ones before it.
"""

from datetime import date, timedelta

import polars as pl
import pytest

from feco import tasks
from feco.cli import main
from feco.coverage import band_history, compute_states
from feco.sample_folder import sample_files, sampled_query_events
from feco.sampling import write_sample
from feco.warehouse import read_configured
from logbuilder import make_config, make_events, write_config_file, write_logs

DAY = date(2026, 3, 2)
BAND_DAYS = 4


@pytest.fixture
def config(tmp_path):
    return make_config(tmp_path, segments={"crosses": [["region", "query_band"]], "band_days": BAND_DAYS},
                       sampling={"windows": 8, "window_minutes": 10, "events_per_window": 5, "seed": 7})


def days(n: int) -> list[date]:
    return [DAY + timedelta(days=d) for d in range(n)]


def write_days(config, n: int) -> None:
    for ds in days(n):
        write_logs(config.paths.logs, make_events(ds, events=4000, seed=ds.day))


def counts(config, of: list[date]) -> pl.DataFrame:
    return sampled_query_events(of, config.paths.samples, event_id="event_id", query="query")


def test_a_first_windows_days_take_the_bands_of_all_of_it_sampled_so_far(config):
    write_days(config, 6)
    for ds in days(6):
        write_sample(ds, config)
    second = days(6)[1]
    window = days(BAND_DAYS)
    assert band_history(second, config).sort("query").equals(
        counts(config, [d for d in window if d != second]).sort("query"))
    last = days(6)[-1]  # past the first window: the days before it, as always
    assert band_history(last, config).sort("query").equals(
        counts(config, [last - timedelta(days=d) for d in range(1, BAND_DAYS)]).sort("query"))


def band_rows(states: pl.DataFrame) -> pl.DataFrame:
    """Covered rows per query-band segment and feature, over the day's windows."""
    return (states.filter(pl.col("segment_dim").str.contains("query_band"))
            .group_by("segment_dim", "segment_value", "feature").agg(pl.col("n_rows", "n_covered").sum())
            .sort(pl.all()))


def stored(config, ds: date) -> pl.DataFrame:
    with read_configured(config) as conn:
        return conn.sql("SELECT * FROM coverage_states WHERE ds = $ds", params={"ds": ds}).pl()


def test_each_day_of_the_first_window_restates_the_ones_before_it(config):
    write_days(config, 3)
    for ds in days(3):
        tasks.run_day(ds, config, deliver=False)

    def counted(history):
        states, _ = compute_states(sample_files(DAY, config.paths.samples), ds=DAY, config=config,
                                   references={}, band_history=history)
        return band_rows(states)

    restated = counted(counts(config, days(3)[1:]))
    assert not counted(None).equals(restated)  # the bands moved as the days came in
    assert band_rows(stored(config, DAY)).equals(restated)


def test_feco_run_says_which_earlier_days_it_restated(tmp_path, capsys):
    for ds in days(3):
        write_logs(tmp_path / "logs", make_events(ds, events=1500, seed=ds.day))
    config_file = str(write_config_file(tmp_path, extra=f"[segments]\nband_days = {BAND_DAYS}\n"))
    for ds in days(3):
        assert main(["run", "--ds", str(ds), "--config", config_file]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if ": published " in line]
    assert "restated" not in lines[0]
    assert "the query bands of 1 earlier day restated" in lines[1]
    assert "the query bands of 2 earlier days restated" in lines[2]


def test_a_restated_day_states_no_count_its_coverage_no_longer_has(tmp_path):
    """Issue 60: the earlier days' unjudged rows kept the query bands' counts they were judged
    on (441 rows where feco_daily, restated, said 447)."""
    config = make_config(tmp_path, segments={"dimensions": ["query_band"], "band_days": BAND_DAYS},
                         sampling={"windows": 8, "window_minutes": 10, "events_per_window": 5, "seed": 7},
                         alerts={"min_rows": 1_000_000})  # every segment unjudged: its rows stated
    write_days(config, 3)
    for ds in days(3):
        tasks.run_day(ds, config, deliver=False)
    with read_configured(config) as conn:
        judged = conn.sql("""
            SELECT u.*, d.n_rows AS coverage_rows
            FROM unjudged u
            JOIN (SELECT ds, segment_dim, segment_value, max(n_rows) AS n_rows FROM feco_daily GROUP BY ALL) d
                USING (ds, segment_dim, segment_value)
            WHERE u.reason = 'few_rows' AND u.segment_dim = 'query_band'""").pl()
    stated = judged.with_columns(pl.col("detail").str.extract(r"^([\d,]+) sampled rows").str.replace_all(",", "")
                                 .cast(pl.Int64).alias("stated"))
    moved = stated.filter(pl.col("stated") != pl.col("coverage_rows"))
    assert moved.height and set(moved["ds"]) <= set(days(3)[:2])  # the restated days' bands moved
    assert moved["detail"].str.contains("as judged").all(), moved  # says it is a count as judged
    if "n_rows" in judged.columns:
        assert judged.filter(pl.col("n_rows") != pl.col("coverage_rows")).is_empty()
