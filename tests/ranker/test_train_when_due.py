"""The scheduled ranker trains only when a model is due and its reference period is sampled."""

from datetime import date, timedelta

import polars as pl

from feco import tasks
from feco.sample_folder import WINDOWS_FILE
from feco.warehouse import open_for_write
from logbuilder import make_config

DAY = date(2026, 2, 10)


def add_model(config, valid_from: date) -> None:
    with open_for_write(config.paths.warehouse, moving_average_days=7) as conn:
        conn.execute("INSERT INTO model_runs (run_id, kind, version, artifact, valid_from) VALUES (?, ?, ?, ?, ?)",
                     [f"reference-{valid_from}", "reference", str(valid_from), "model.txt", valid_from])


def sample_days(config, days: list[date]) -> None:
    for day in days:
        folder = config.paths.samples / f"ds={day}"
        folder.mkdir(parents=True)
        pl.DataFrame({"window": [0]}).write_parquet(folder / WINDOWS_FILE)


def test_a_fresh_warehouse_waits_for_a_full_reference_period(tmp_path):
    config = make_config(tmp_path, ranker={"reference_days": 6, "validation_days": 1})
    sample_days(config, [DAY - timedelta(days=n) for n in (1, 2, 3)])
    outcome = tasks.train_ranker(DAY, config, when_due=True)
    assert outcome == {"ds": str(DAY), "trained": False, "why": "3 of 6 reference days sampled"}


def test_a_model_younger_than_retrain_days_is_kept(tmp_path):
    config = make_config(tmp_path, ranker={"reference_days": 6, "validation_days": 1, "retrain_days": 7})
    sample_days(config, [DAY - timedelta(days=n) for n in range(1, 7)])
    add_model(config, DAY - timedelta(days=6))
    outcome = tasks.train_ranker(DAY, config, when_due=True)
    assert outcome == {"ds": str(DAY), "trained": False, "why": f"model {DAY - timedelta(days=6)} is 6 days old"}
