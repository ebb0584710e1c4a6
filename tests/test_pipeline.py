"""The daily pipeline end to end on hand-made logs: publish, idempotence, views, failures."""

from datetime import date, timedelta

import duckdb
import polars as pl
import pytest

from feco import tasks
from feco.errors import DataError, WarehouseBusyError
from feco.sample_folder import is_sampled
from feco.warehouse import fetch, open_for_write, publish_day
from logbuilder import make_config, make_events, write_logs

START = date(2026, 3, 1)
DAYS = [START + timedelta(days=i) for i in range(10)]


@pytest.fixture
def config(tmp_path):
    config = make_config(tmp_path)
    for i, ds in enumerate(DAYS):
        if ds != DAYS[4]:  # a gap: one day has no logs at all
            write_logs(config.paths.logs, make_events(ds, events=1500, seed=i))
    return config


def table(config, sql: str, params=None) -> pl.DataFrame:
    with duckdb.connect(str(config.paths.warehouse), read_only=True) as conn:
        return fetch(conn, sql, params)


def run_all(config):
    for ds in DAYS:
        if ds != DAYS[4]:
            tasks.run_day(ds, config)


def test_running_a_day_twice_leaves_identical_rows(config):
    run_all(config)
    query = "SELECT * FROM coverage_states ORDER BY ALL"
    before = table(config, query)
    windows_before = table(config, "SELECT * FROM sample_windows ORDER BY ALL")
    tasks.run_day(DAYS[2], config)
    assert table(config, query).equals(before)
    assert table(config, "SELECT * FROM sample_windows ORDER BY ALL").equals(windows_before)
    assert table(config, "SELECT count(*) AS n FROM runs")["n"].item() == 9


def test_daily_view_merges_windows_exactly(config):
    tasks.run_day(DAYS[0], config)
    daily = table(config, "SELECT * FROM feco_daily WHERE segment_dim = 'all' ORDER BY feature")
    states = table(config, "SELECT feature, sum(n_covered)::BIGINT AS c, sum(n_rows)::BIGINT AS r FROM "
                           "coverage_states WHERE segment_dim = 'all' GROUP BY 1 ORDER BY 1")
    assert daily["coverage"].to_list() == pytest.approx((states["c"] / states["r"]).to_list())
    assert daily["n_rows"].dtype == pl.Int64


def test_moving_average_is_the_mean_of_the_trailing_calendar_days(config):
    run_all(config)
    daily = table(config, "SELECT ds, coverage FROM feco_daily WHERE feature = 'f_sparse' "
                          "AND segment_dim = 'region' AND segment_value = 'DE' ORDER BY ds")
    ma = table(config, "SELECT ds, coverage_ma7, coverage_pooled7, days_in_window FROM feco_ma7 "
                       "WHERE feature = 'f_sparse' AND segment_dim = 'region' "
                       "AND segment_value = 'DE' ORDER BY ds")
    values = dict(zip(daily["ds"], daily["coverage"]))
    for ds, average, _, days in ma.iter_rows():
        trailing = [values[d] for d in values if ds - timedelta(days=6) <= d <= ds]
        assert days == len(trailing)
        assert average == pytest.approx(sum(trailing) / len(trailing))
    # the gap day is skipped, not counted as zero: the last day's window holds 6 days
    assert ma["days_in_window"].to_list()[-1] == 6


def test_failed_publish_leaves_the_previous_state(config):
    tasks.run_day(DAYS[0], config)
    before = table(config, "SELECT * FROM coverage_states ORDER BY ALL")
    broken = pl.DataFrame({"ds": [DAYS[0]], "no_such_column": [1]})
    with open_for_write(config.paths.warehouse) as conn, pytest.raises(duckdb.Error):
        publish_day(conn, DAYS[0], {"coverage_states": broken})
    assert table(config, "SELECT * FROM coverage_states ORDER BY ALL").equals(before)


def test_missing_day_is_a_clear_error_and_the_warehouse_is_unchanged(config):
    run_all(config)
    before = table(config, "SELECT * FROM runs ORDER BY ds").drop("published_at")
    with pytest.raises(DataError, match=f"no log partition for {DAYS[4]}"):
        tasks.run_day(DAYS[4], config)
    assert table(config, "SELECT * FROM runs ORDER BY ds").drop("published_at").equals(before)


def test_missing_feature_column_is_recorded_and_the_run_goes_on(config):
    tasks.run_day(DAYS[0], config)  # the warehouse has found f_sparse: gone the next day, it is an incident
    ds = DAYS[1]
    for path in (config.paths.logs / f"ds={ds}").rglob("*.parquet"):
        pl.read_parquet(path).drop("f_sparse").write_parquet(path)
    tasks.run_day(ds, config)
    status = table(config, "SELECT feature, status FROM feature_status WHERE ds = $ds ORDER BY 1",
                   {"ds": ds})
    assert dict(status.iter_rows()) == {"f_dense": "ok", "f_signed": "ok",
                                        "f_sparse": "missing_column"}
    daily = table(config, "SELECT n_present, coverage FROM feco_daily WHERE feature = 'f_sparse' "
                          "AND segment_dim = 'all' AND ds = $ds", {"ds": ds})
    assert daily.row(0) == (0, 0.0)
    assert table(config, "SELECT rule FROM alerts WHERE feature = 'f_sparse' AND ds = $ds",
                 {"ds": ds})["rule"].to_list() == ["missing_column"]


def test_non_numeric_feature_leaves_the_warehouse_unchanged(config):
    tasks.run_day(DAYS[0], config)
    ds = DAYS[1]
    for path in (config.paths.logs / f"ds={ds}").rglob("*.parquet"):
        pl.read_parquet(path).with_columns(pl.col("f_dense").cast(pl.String)).write_parquet(path)
    with pytest.raises(DataError, match="'f_dense' is String"):
        tasks.run_day(ds, config)
    assert table(config, "SELECT ds FROM runs")["ds"].to_list() == [DAYS[0]]


def reference_rule_config(tmp_path, rule: str):
    """f_dense compared with a reference statistic of DAYS[0:2]; logs of DAYS[0:3] written."""
    config = make_config(tmp_path, coverage={
        "rules": {"f_dense": rule},
        "reference": {"start": str(DAYS[0]), "end": str(DAYS[1])},
    })
    for i, ds in enumerate(DAYS[:3]):
        write_logs(config.paths.logs, make_events(ds, events=1500, seed=i))
    return config


def test_reference_statistics_are_computed_once_and_stored(tmp_path):
    config = reference_rule_config(tmp_path, "> reference_mean")
    tasks.run_day(DAYS[2], config)  # samples the reference days it needs first
    stored = table(config, "SELECT * FROM coverage_reference")
    assert stored["feature"].to_list() == ["f_dense"]
    assert stored["statistic"].to_list() == ["mean"]
    assert 0.4 < stored["value"].item() < 0.7  # uniform(0.1, 1) has mean 0.55
    daily = table(config, "SELECT coverage FROM feco_daily WHERE feature = 'f_dense' "
                          "AND segment_dim = 'all'")
    assert 0.3 < daily["coverage"].item() < 0.7


def test_coverage_reads_the_reference_and_only_sample_reference_makes_it(tmp_path):
    config = reference_rule_config(tmp_path, "> reference_median")
    tasks.sample(DAYS[2], config)
    with pytest.raises(DataError, match="no reference statistics stored for f_dense .* sample_reference"):
        tasks.compute_coverage(DAYS[2], config)
    assert not any(is_sampled(ds, config.paths.samples) for ds in DAYS[:2])  # no hidden sampling
    assert not config.paths.warehouse.exists()  # nor a hidden write

    made = tasks.sample_reference(DAYS[2], config)
    assert all(is_sampled(ds, config.paths.samples) for ds in DAYS[:2])
    assert tasks.sample_reference(DAYS[2], config) == made  # read back, not computed again
    assert table(config, "SELECT feature, statistic FROM coverage_reference").rows() == [("f_dense", "median")]
    assert tasks.compute_coverage(DAYS[2], config)["states"] > 0


def test_a_second_writer_fails_with_a_clear_message(config):
    with (open_for_write(config.paths.warehouse),
          pytest.raises(WarehouseBusyError, match="in use by another feco process")):
        # DuckDB's lock is per process; a second process is what a scheduler would be
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        with context.Pool(1) as pool:
            message = pool.apply(_try_write, (str(config.paths.warehouse),))
        raise WarehouseBusyError(message) if message else AssertionError("no lock conflict")


def _try_write(path: str) -> str:
    from pathlib import Path

    from feco.errors import WarehouseBusyError
    from feco.warehouse import open_for_write

    try:
        with open_for_write(Path(path), wait_seconds=1):
            return ""
    except WarehouseBusyError as error:
        return str(error)


def test_every_step_retried_alone_leaves_the_same_rows(config):
    """What an Airflow retry does: a step runs again after it (or a later step) ran."""
    for ds in DAYS[:3]:
        tasks.run_day(ds, config, deliver=False)
    query = ("SELECT (SELECT count(*) FROM coverage_states), (SELECT count(*) FROM alerts), "
             "(SELECT sum(n_covered) FROM coverage_states), (SELECT string_agg(alert_id, ',' ORDER BY alert_id) FROM alerts)")
    before = table(config, query).rows()
    for step in (tasks.sample, tasks.compute_coverage, tasks.publish, tasks.detect, tasks.publish, tasks.detect):
        step(DAYS[2], config)
        if step in (tasks.publish, tasks.detect):
            assert table(config, query).rows() == before
    assert table(config, query).rows() == before
