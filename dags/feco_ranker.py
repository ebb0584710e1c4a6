"""feco_ranker: retrain the reference ranker every week on the pipeline's own samples.

Thin on purpose: the task imports feco inside its body and calls the same function as
`feco train-ranker --ds DATE`. The model trained on run date D uses the sampled days before D
and scores the days from D on (feco_daily's `score` task picks the model valid on its day).
One run at a time: it writes the same DuckDB file as feco_daily.

Config: $FECO_CONFIG, else configs/feco.toml beside this repository's dags/ folder.
First run: $FECO_START_DATE (YYYY-MM-DD), else 2026-01-01.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import pendulum
from airflow.sdk import dag, task

CONFIG = os.environ.get("FECO_CONFIG", str(Path(__file__).resolve().parents[1] / "configs" / "feco.toml"))
START = pendulum.parse(os.environ.get("FECO_START_DATE", "2026-01-01"), tz="UTC")


@dag(
    dag_id="feco_ranker",
    schedule="@weekly",
    start_date=START,
    catchup=False,
    max_active_runs=1,
    default_args={"retries": 2, "retry_delay": timedelta(minutes=10)},
    tags=["feco"],
    doc_md=__doc__,
)
def feco_ranker():
    @task
    def train(ds: str | None = None) -> dict:
        from feco.ranker.daily import train_reference
        from feco.tasks import as_date

        return train_reference(as_date(ds), CONFIG)

    train()


feco_ranker()
