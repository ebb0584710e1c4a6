"""The feco_ranker DAG parses cleanly, cheaply, and keeps the house policies."""

import json

from dags.conftest import DAGS, airflow_home  # noqa: F401 - the fixture
from dags.test_feco_daily import LOAD_BAG, run_in_airflow


def test_feco_ranker_dag_runs_on_published_coverage_alone_and_is_light_to_parse(airflow_home):  # noqa: F811 - the imported fixture
    out = run_in_airflow(airflow_home, LOAD_BAG.format(dags=DAGS) + """
    import json
    dag = bag.get_dag("feco_ranker")
    print(json.dumps({"errors": {k: str(v) for k, v in bag.import_errors.items()},
                      "tasks": sorted(dag.task_ids), "schedule": [asset.name for asset in dag.schedule],
                      "pools": sorted({t.pool for t in dag.tasks}),
                      "max_active_runs": dag.max_active_runs, "tags": sorted(dag.tags),
                      "retries": min(t.retries for t in dag.tasks)}))
    """)
    facts = json.loads(out)
    assert facts["errors"] == {} and facts["tasks"] == ["train"]
    assert facts["schedule"] == ["feco_coverage"] and facts["max_active_runs"] == 1
    assert facts["pools"] == ["feco_warehouse"]
    assert facts["tags"] == ["feco"] and facts["retries"] >= 1
