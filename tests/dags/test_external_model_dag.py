"""The daily DAG serves a team's own model: `dag.test()` on a day its `[ranker.model]` is valid
registers it, scores the day's sample with it and stores the served order's NDCG beside."""

from datetime import date

import duckdb
import lightgbm as lgb
import numpy as np

from dags.conftest import DAGS
from dags.test_feco_daily import LOAD_BAG, run_in_airflow
from logbuilder import FEATURES, make_events, write_config_file, write_logs

DAY = date(2026, 1, 3)


def test_the_daily_dag_scores_a_day_with_the_teams_model(airflow_home, tmp_path):
    write_logs(tmp_path / "logs", make_events(DAY, events=2000, seed=3))
    trained = make_events(date(2026, 1, 2), events=2000, seed=1)  # the team's own training rows
    data = lgb.Dataset(trained.select(FEATURES).to_numpy(), label=trained["label"].to_numpy(),
                       group=np.full(2000, 3), feature_name=["dense", "sparse", "signed"])
    booster = lgb.train({"objective": "lambdarank", "min_data_in_leaf": 5, "verbose": -1}, data, num_boost_round=5)
    booster.save_model(str(tmp_path / "team.txt"))
    config = write_config_file(tmp_path, extra=f"""
        [ranker.model]
        file = "team.txt"
        valid_from = {DAY}
        [ranker.model.features]
        dense = "f_dense"
        sparse = "f_sparse"
        signed = "f_signed"
    """)
    out = run_in_airflow(airflow_home, LOAD_BAG.format(dags=DAGS) + f"""
    run = bag.get_dag("feco_daily").test(run_conf={{"ds": "{DAY}"}})
    print(run.state)
    """, FECO_CONFIG=str(config))
    assert out == "success"
    with duckdb.connect(str(tmp_path / "feco.duckdb"), read_only=True) as conn:
        assert conn.execute("SELECT kind, valid_from FROM model_runs").fetchall() == [("external", DAY)]
        scored = conn.execute("SELECT DISTINCT r.run_id = m.run_id FROM ranker_daily r, model_runs m").fetchall()
        assert scored == [(True,)]
        assert conn.execute("SELECT count(*) FROM served_daily WHERE segment_dim = 'all'").fetchone() == (1,)
