"""The sampling study on a small generated day: every strategy is measured against the full
day, the random strategies take as many events as the windowed one, and results are stored."""

from __future__ import annotations

from datetime import date

import duckdb
import polars as pl
import pytest

from feco.errors import WarehouseBusyError
from feco.generator import generate_logs
from feco.sampling import study as sampling_study
from feco.warehouse import create_schema
from held_lock import held_by_another_run
from logbuilder import make_config

DAY = date(2026, 6, 3)


@pytest.fixture(scope="module")
def day(tmp_path_factory):
    root = tmp_path_factory.mktemp("study")
    generate_logs(root / "logs", start=DAY, days=1, events_per_day=4000, seed=5)
    features = ["eng_ctr_7d", "meta_rating", "text_bm25_title", "price_vs_category"]
    config = make_config(root, logs={"features": features},
                         coverage={"rules": {"price_vs_category": "!= 0"}})
    return config


@pytest.fixture(scope="module")
def study(day):
    return sampling_study.run_study(DAY, day, windows=[2, 24], events_per_window=[10, 10_000], repeats=2)


def test_every_configuration_has_the_three_strategies_with_the_same_events(study):
    assert study.height == 2 * 2 * 3
    per_config = study.group_by("windows", "events_per_window").agg(
        pl.col("strategy").sort(), pl.col("events_sampled").n_unique().alias("sizes"))
    assert all(s.to_list() == ["random", "reservoir", "windows"] for s in per_config.get_column("strategy"))
    assert per_config.get_column("sizes").to_list() == [1] * 4


def test_windows_read_fewer_rows_than_the_day_and_more_windows_read_more(study):
    windows = study.filter(strategy="windows").sort("windows", "events_per_window")
    day_rows = study.filter(strategy="random").get_column("rows_read").max()
    assert windows.get_column("rows_read").max() < day_rows
    reads = windows.group_by("windows").agg(pl.col("rows_read").first()).sort("windows")
    assert reads.get_column("rows_read").is_sorted() and reads.get_column("rows_read").n_unique() == 2


def test_errors_are_points_and_shrink_with_a_larger_sample(study):
    random = study.filter(strategy="random").sort("events_sampled")
    assert (study.get_column("max_error_points") >= study.get_column("mean_error_points")).all()
    assert random.get_column("mean_error_points").first() > random.get_column("mean_error_points").last()


def test_reservoir_keeps_whole_events_and_exactly_k_of_them(day):
    files = sorted((day.paths.logs / f"ds={DAY}").glob("hour=*/*.parquet"))
    rows = sampling_study._reservoir(files, 50, rng=__import__("numpy").random.default_rng(1), event_id="event_id")
    full = pl.read_parquet(files, hive_partitioning=False)
    kept = rows.get_column("event_id").unique()
    assert kept.len() == 50
    assert rows.height == full.filter(pl.col("event_id").is_in(kept.implode())).height


def test_stored_study_replaces_the_day(study, tmp_path):
    with duckdb.connect(str(tmp_path / "w.duckdb")) as conn:
        create_schema(conn, moving_average_days=7)
        sampling_study.store_study(conn, study)
        sampling_study.store_study(conn, study.head(3))
        assert conn.sql("SELECT count(*) AS n FROM sampling_study").pl().item() == 3


def test_cheapest_line_names_a_configuration_or_says_none(study):
    line = sampling_study.cheapest_line(study, target_points=100.0)
    assert "windows: 2 windows x 10 events" in line
    assert "none under 0.001 points" in sampling_study.cheapest_line(study, target_points=0.001)


def test_the_study_is_stored_through_the_door_under_the_run_lock(day, study, monkeypatch):
    from feco import tasks

    monkeypatch.setattr(sampling_study, "run_study", lambda *args, **options: study)
    monkeypatch.setenv("FECO_LOCK_WAIT_SECONDS", "0")
    with held_by_another_run(day.paths.warehouse):
        with pytest.raises(WarehouseBusyError, match="another feco run holds"):
            tasks.sampling_study(DAY, day, windows=[2], events_per_window=[10])
        # --no-store writes nothing, so it does not wait for a run
        assert tasks.sampling_study(DAY, day, windows=[2], events_per_window=[10], store=False).equals(study)
    assert tasks.sampling_study(DAY, day, windows=[2], events_per_window=[10]).equals(study)
    with duckdb.connect(str(day.paths.warehouse), read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM sampling_study").fetchone() == (study.height,)


def test_the_command_prints_the_study_and_stores_it_unless_told_not_to(day, study, monkeypatch, capsys, tmp_path):
    from feco import tasks
    from feco.cli import main

    config = day.model_copy(update={"paths": day.paths.model_copy(update={"warehouse": tmp_path / "w.duckdb"})})
    monkeypatch.setattr(sampling_study, "run_study", lambda *args, **options: study)
    monkeypatch.setattr(tasks, "load_config", lambda path: config)
    args = ["sampling-study", "--ds", str(DAY), "--windows", "2", "--events", "10"]
    assert main([*args, "--no-store"]) == 0
    assert "cheapest with every feature under" in capsys.readouterr().out
    assert not config.paths.warehouse.exists()
    assert main(args) == 0
    assert f"stored in {config.paths.warehouse} (table sampling_study)" in capsys.readouterr().out
    with duckdb.connect(str(config.paths.warehouse), read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM sampling_study").fetchone() == (study.height,)
