"""A team's own model: a LightGBM model trained outside feco (the plain LightGBM API on the
generated logs' features, under names of its own), named by `[ranker.model]`, serves the days
from its `valid_from` through `feco run`: registered once by its bytes' digest, scored, explained
and replayed exactly as the reference ranker; a model that does not fit the logs is one clear
error."""

import contextlib
import hashlib
import io
import json
from datetime import date, timedelta

import duckdb
import lightgbm as lgb
import numpy as np
import polars as pl
import pytest

from feco.cli import main
from feco.evaluation import evaluate_labelled
from feco.generator import FEATURES, generate_logs, parse_incident
from feco.sample_folder import read_sample
from logbuilder import FEATURES as SMALL_FEATURES
from logbuilder import make_events, write_config_file, write_logs

START = date(2026, 3, 2)
SERVES = START + timedelta(days=4)
OUTAGE = START + timedelta(days=7)
DAYS = [START + timedelta(days=i) for i in range(9)]
NAMES = [f"f{i}" for i in range(len(FEATURES))]  # the team's own feature names

CONFIG = """
[alerts]
warmup_days = 3
min_rows = 300
[alerts.incidents]
page_after_days = 0
[ranker]
shap_rows = 200
shap_segment_rows = 60
[ranker.model]
file = "team/model.txt"
valid_from = {serves}
[ranker.model.features]
{mapping}
"""


def train_outside_feco(logs, days: list[date], features: list[str], names: list[str], path, *, rounds: int = 40):
    """A lambdarank model trained with LightGBM's own API on the logs' rows, saved as text."""
    rows = pl.concat([pl.read_parquet(logs / f"ds={d}" / "hour=*" / "*.parquet") for d in days])
    rows = rows.sort("event_id", "position")
    data = lgb.Dataset(rows.select(features).to_numpy(), label=rows["label"].to_numpy(),
                       group=rows.group_by("event_id", maintain_order=True).len()["len"].to_numpy(),
                       feature_name=names)
    booster = lgb.train({"objective": "lambdarank", "num_leaves": 15, "min_data_in_leaf": 20, "verbose": -1,
                         "seed": 1, "deterministic": True, "num_threads": 1}, data, num_boost_round=rounds)
    path.parent.mkdir(parents=True, exist_ok=True)
    booster.save_model(str(path))
    return booster


def feco(*args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    folder = tmp_path_factory.mktemp("external_model")
    generate_logs(folder / "logs", start=START, days=len(DAYS), events_per_day=6_000, seed=3, incidents=[
        parse_incident(f"feature=eng_ctr_30d,start={OUTAGE},days=2,share=1.0")])
    booster = train_outside_feco(folder / "logs", DAYS[:3], list(FEATURES), NAMES, folder / "team" / "model.txt")
    mapping = "\n".join(f'{name} = "{feature}"' for name, feature in zip(NAMES, FEATURES))
    path = write_config_file(folder, features=list(FEATURES), events_per_window=150,
                             extra=CONFIG.format(serves=SERVES, mapping=mapping))
    for ds in DAYS:
        code, _, err = feco("run", "--ds", str(ds), "--config", str(path))
        assert code == 0, err
    return folder, path, booster


def query(folder, text, params=None):
    with duckdb.connect(str(folder / "feco.duckdb"), read_only=True) as conn:
        return conn.sql(text, params=params).pl()


@pytest.mark.slow  # ~2 minutes: nine generated days through `feco run`
def test_the_team_model_is_registered_once_by_its_digest(pipeline):
    folder, path, _ = pipeline
    runs = query(folder, "SELECT * FROM model_runs")
    assert runs["kind"].to_list() == ["external"]
    digest = hashlib.sha256((folder / "team" / "model.txt").read_bytes()).hexdigest()[:8]
    run = runs.row(0, named=True)
    assert run["version"] == f"{SERVES}-{digest}" and run["valid_from"] == SERVES and run["train_end"] is None
    assert json.loads(run["params"])["features"]["f0"] == FEATURES[0]
    shares = query(folder, "SELECT feature, shap_share FROM feature_importance")
    assert set(shares["feature"]) == set(FEATURES) and shares["shap_share"].sum() == pytest.approx(1)
    code, _, err = feco("run", "--ds", str(DAYS[-1]), "--config", str(path))
    assert code == 0, err
    assert query(folder, "SELECT count(*) AS n FROM model_runs")["n"][0] == 1


@pytest.mark.slow
def test_the_days_it_serves_are_scored_and_explained_by_it_as_lightgbm_scores_them(pipeline):
    folder, _, booster = pipeline
    scored = query(folder, "SELECT DISTINCT ds, run_id FROM ranker_daily ORDER BY ds")
    assert scored["ds"].to_list() == [d for d in DAYS if d >= SERVES]
    assert set(scored["run_id"]) == {query(folder, "SELECT run_id FROM model_runs")["run_id"][0]}
    # independently: LightGBM's predict on the day's sample, NDCG@8 by feco.evaluation
    day = DAYS[-1]
    rows = read_sample(day, folder / "samples")[0].sort("event_id", "position", maintain_order=True)
    scores = booster.predict(rows.select(FEATURES).to_numpy().astype(np.float64))
    frame = rows.select(pl.col("event_id").alias("qid"), pl.col("label").cast(pl.Int64), pl.Series("score", scores))
    expected = evaluate_labelled(frame, metrics=["ndcg@8"]).metrics["ndcg@8"]
    stored = query(folder, "SELECT ndcg8 FROM ranker_daily_ndcg WHERE ds = $ds AND segment_dim = 'all'", {"ds": day})
    assert stored["ndcg8"][0] == pytest.approx(expected, abs=1e-12)
    features = query(folder, "SELECT DISTINCT feature FROM shap_daily")["feature"]
    assert set(features) == set(FEATURES)  # explained under the log's names, beside their coverage


@pytest.mark.slow
def test_its_incidents_are_replayed_with_it_and_its_ndcg_at_risk_is_there_every_day(pipeline):
    folder, path, _ = pipeline
    run_id = query(folder, "SELECT run_id FROM model_runs")["run_id"][0]
    cost = query(folder, "SELECT * FROM incident_costs WHERE ds = $ds", {"ds": OUTAGE}).row(0, named=True)
    assert cost["run_id"] == run_id and cost["features"] == ["eng_ctr_30d"]
    assert cost["reference_start"] < SERVES  # a team model's training days are unknown: any clean day serves
    assert cost["d_ndcg8_low"] <= cost["d_ndcg8"] <= cost["d_ndcg8_high"] < 0
    risk = query(folder, "SELECT * FROM ndcg_at_risk_daily WHERE segment_dim = 'all' ORDER BY ds")
    assert risk["ds"].to_list() == [d for d in DAYS if d >= SERVES] and set(risk["run_id"]) == {run_id}
    outage = risk.row(by_predicate=pl.col("ds") == OUTAGE, named=True)
    assert "eng_ctr_30d" in outage["features"] and outage["d_ndcg8_high"] < 0
    code, out, _ = feco("status", "--config", str(path))
    assert code == 0 and "NDCG at risk:" in out and f"model external {SERVES}" in out


@pytest.mark.slow
def test_the_served_order_is_scored_every_day_model_or_not(pipeline):
    folder, _, _ = pipeline
    served = query(folder, "SELECT * FROM served_daily_ndcg WHERE segment_dim = 'all' ORDER BY ds")
    assert served["ds"].to_list() == DAYS and served["events_tied"].sum() == 0
    assert served.filter(pl.col("ds") < SERVES)["model_ndcg8"].is_null().all()
    assert served.filter(pl.col("ds") >= SERVES)["model_ndcg8"].is_not_null().all()


def small_day(tmp_path, extra: str):
    day = date(2026, 1, 3)
    write_logs(tmp_path / "logs", make_events(day, events=2000, seed=3))
    return day, write_config_file(tmp_path, extra=extra)


def small_model(tmp_path, names: list[str], columns: list[str] = SMALL_FEATURES):
    rows = make_events(date(2026, 1, 2), events=400, seed=1)
    data = lgb.Dataset(rows.select(columns).to_numpy(), label=rows["label"].to_numpy(),
                       group=np.full(400, 3), feature_name=names)
    booster = lgb.train({"objective": "lambdarank", "min_data_in_leaf": 5, "verbose": -1}, data, num_boost_round=3)
    booster.save_model(str(tmp_path / "model.txt"))


@pytest.mark.parametrize("names, mapping, message", [
    (["a", "b", "c"], {"a": "f_dense", "b": "f_sparse", "c": "f_signed", "d": "f_dense"},
     "the model has 3 features (a, b, c) and the mapping names 4, 1 of them not the model's: d"),
    (["a", "b", "c"], {"a": "f_dense", "b": "f_sparse"},
     "1 of the model's 3 features are not columns of the sampled logs: c (map the model's names"),
    (["a", "b", "c"], {"a": "f_dense", "b": "f_sparse", "c": "price"},
     "1 of the model's 3 features are not columns of the sampled logs: c (price)"),
])
def test_a_model_that_does_not_fit_the_logs_is_one_clear_error(tmp_path, names, mapping, message):
    small_model(tmp_path, names)
    lines = "\n".join(f'{name} = "{column}"' for name, column in mapping.items())
    day, path = small_day(tmp_path, f'[ranker.model]\nfile = "model.txt"\nvalid_from = 2026-01-01\n'
                                    f'[ranker.model.features]\n{lines}\n')
    code, _, err = feco("run", "--ds", str(day), "--config", str(path))
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_a_pickled_model_is_refused_with_what_to_do_instead(tmp_path):
    import pickle

    (tmp_path / "model.pkl").write_bytes(pickle.dumps({"a": 1}))
    day, path = small_day(tmp_path, '[ranker.model]\nfile = "model.pkl"\nvalid_from = 2026-01-01\n')
    code, _, err = feco("run", "--ds", str(day), "--config", str(path))
    assert code == 2 and "model.pkl: a pickle (as pickle and joblib write)" in err and "booster.save_model(path)" in err


def test_a_model_valid_later_leaves_the_day_to_the_reference_ranker(tmp_path):
    small_model(tmp_path, SMALL_FEATURES)
    day, path = small_day(tmp_path, '[ranker.model]\nfile = "model.txt"\nvalid_from = 2026-02-01\n')
    code, _, err = feco("run", "--ds", str(day), "--config", str(path))
    assert code == 0, err
    with duckdb.connect(str(tmp_path / "feco.duckdb"), read_only=True) as conn:
        assert conn.execute("SELECT count(*) FROM model_runs").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM served_daily").fetchone() == (3,)  # all, and regions US, DE
