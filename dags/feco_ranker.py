"""feco_ranker: keep the reference ranker fresh on the pipeline's own samples.

Scheduled on the coverage asset feco_daily publishes, so it runs after a day is published
rather than at the same midnight. It trains when the model that would score the next day is
missing or `ranker.retrain_days` old (weekly by default), on the sampled days before it, and
waits until `ranker.reference_days` days are sampled; otherwise it does nothing. Same
function as `feco train-ranker --ds DATE` (feco.tasks.train_ranker), in the warehouse's pool.

Config: the `config` param (default $FECO_CONFIG where the DAG is parsed). Deployment:
docs/airflow.md.
"""

from __future__ import annotations

import os
import sys
from datetime import timedelta

from airflow.sdk import dag, task

# Airflow puts the DAG folder on sys.path only when it parses through a DAG bundle (the
# dag-processor, `airflow dags test`), not for a plain DagBag (`airflow dags list-import-errors
# --local` without -B, tools that load the file): make this file's own folder importable so
# the helper copied beside it is found whatever the working directory.
HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.append(HERE)

from feco_support import COVERAGE, PARAMS, START, WAREHOUSE_POOL, day_of_run, retry_settings, run_config, tell_failure


@dag(
    dag_id="feco_ranker",
    schedule=[COVERAGE],
    start_date=START,
    catchup=False,
    max_active_runs=1,
    params=PARAMS,
    default_args={**retry_settings(), "execution_timeout": timedelta(hours=3), "on_failure_callback": tell_failure},
    tags=["feco"],
    doc_md=__doc__,
)
def feco_ranker():
    @task(pool=WAREHOUSE_POOL)
    def train(*, triggering_asset_events=None) -> dict:
        from airflow.sdk import get_current_context

        from feco import tasks

        context = get_current_context()
        published = [tasks.as_date(event.extra["ds"]) for event in (triggering_asset_events or {}).get(COVERAGE, [])
                     if "ds" in event.extra]
        latest = max(published) if published else day_of_run(context)
        return tasks.train_ranker(latest + timedelta(days=1), run_config(context), when_due=True)

    train()


feco_ranker()
