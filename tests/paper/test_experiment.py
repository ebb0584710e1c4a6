"""The coverage-drop experiment on a small slice of MQ2008 Fold1, stored in the warehouse."""

import duckdb
import polars as pl
import pytest

from feco.config import Ranker
from feco.errors import DataError
from feco.paper.datasets import Split, default_root, load_split
from feco.paper.experiment import (
    MIN_CONTRAST_COVERAGE,
    Grid,
    Training,
    cells_frame,
    coverage_drop_runs,
    experiment_id,
    importance_shift,
    run_coverage_drop,
    table1,
)
from feco.paper.store import finished_cells, store_experiment, store_run
from feco.ranker.importance import importances
from feco.ranker.model import ndcg_summary, predict_scores, score_ndcg, train_ranker
from feco.ranker.perturb import coverage_of, loss_seed, reduce_coverage
from feco.warehouse import create_schema, named_query
from held_lock import held_by_another_run

pytestmark = pytest.mark.skipif(not (default_root() / "mq2008" / "S1.txt").exists(),
                                reason="MQ2008 not in ../shared/data/ltr")


GRID = Grid(top_k=1, low_k=1, reductions=(0.05, 1.0), seeds=(1, 2), shap_sample_rows=200)
TRAINING = Training(Ranker().params, num_boost_round=15, early_stopping_rounds=5)


@pytest.fixture(scope="module")
def small():
    full = load_split("mq2008", 1)
    return Split("mq2008", 1, full.train.head(1500), full.valid.head(500), full.test.head(600), full.features)


@pytest.fixture(scope="module")
def result(small):
    return run_coverage_drop(small, grid=GRID, training=TRAINING)


def test_mq2008_fold1_split_follows_the_readme():
    split = load_split("mq2008", 1)
    assert (split.train.height, split.valid.height, split.test.height) == (9630, 2707, 2874)
    assert len(split.features) == 46
    with pytest.raises(DataError):
        load_split("mq2008", 1, root=default_root() / "nowhere")


def test_webis_fold_1_tests_on_its_fifth_file_and_mq2007_agg_keeps_its_missing_values():
    from feco.evaluation.letor import read_letor

    webis = load_split("webis", 1)
    assert webis.test.height == read_letor(default_root() / "webis_clueweb09" / "fold5.test.txt").height
    agg = load_split("mq2007agg", 1)
    assert (agg.train.height, agg.valid.height, agg.test.height, len(agg.features)) == (42158, 13813, 13652, 21)
    assert agg.test.get_column(agg.features[0]).null_count() > 0  # NULL = not ranked, not zero


def test_every_cell_is_recorded_with_measured_coverage_and_deltas(result):
    cells = result.cells
    assert cells.height == 2 * 2 * 2 * 2  # modes x features x shares x seeds
    assert set(cells["role"]) == {"top", "low"}
    full = cells.filter(reduction=1.0)
    assert (full["coverage_test_after"] == 0).all()
    five = cells.filter(reduction=0.05)
    assert ((five["coverage_test_after"] / five["coverage_test_before"]).round(2) == 0.95).all()
    assert cells.filter(mode="test")["coverage_train_after"].is_null().all()
    assert cells.filter(mode="retrain")["coverage_train_after"].is_not_null().all()
    base = result.model_runs.filter(kind="coverage_drop:baseline").row(0, named=True)
    row = cells.filter(mode="test").row(0, named=True)
    assert row["d_ndcg8"] == pytest.approx(row["ndcg8"] - base["ndcg8"])
    assert base["ndcg8_lightgbm"] > base["ndcg8"]  # queries with no relevant document score 1 there
    # Removing a feature from the test set entirely, model fixed, changes nothing for seeds: spread is 0.
    test_mode = table1(cells.filter(mode="test"))
    assert test_mode.filter(pl.col("reduction") == 1.0)["ndcg@8"].str.ends_with("± 0.0").all()


def test_retrained_cells_are_measured_against_the_control_of_their_seed(result):
    controls = result.model_runs.filter(kind="coverage_drop:control")
    assert sorted(controls["run_id"].str.split(":").list.last().cast(int)) == [1, 2]
    # The config's settings bag rows, so the seed alone moves a retrained model.
    control_ndcg8 = dict(zip(controls["run_id"].str.split(":").list.last().cast(int), controls["ndcg8"]))
    for cell in result.cells.filter(mode="retrain").iter_rows(named=True):
        assert cell["d_ndcg8"] == pytest.approx(cell["ndcg8"] - control_ndcg8[cell["seed"]])


def test_per_query_ndcg_averages_to_the_run_mean(result):
    per_run = result.query_ndcg.group_by("run_id").agg(pl.col("ndcg8").mean(), pl.len().alias("queries"))
    joined = per_run.join(result.model_runs.select("run_id", pl.col("ndcg8").alias("mean"),
                                                   (pl.col("queries") - pl.col("queries_no_relevant")).alias("n")),
                          on="run_id")
    assert joined.height == result.model_runs.height
    assert (joined["ndcg8"] - joined["mean"]).abs().max() < 1e-12
    assert (joined["queries"] == joined["n"]).all()


def test_every_cell_matches_a_direct_recomputation_with_the_model_functions(small, result):
    # The grid's shortcuts (SHAP only where a table reads it) must leave every value as the
    # plain recipe gives it: reduce, (re)train with the cell's seed, predict, score.
    def trained(train, valid, params):
        return train_ranker(train, valid, features=small.features, params=params,
                            num_boost_round=TRAINING.num_boost_round, early_stopping_rounds=TRAINING.early_stopping_rounds)

    def scored(model, test):
        return ndcg_summary(score_ndcg(test, predict_scores(model, test)))

    baseline = trained(small.train, small.valid, TRAINING.params)
    reference = {"test": {s: scored(baseline, small.test) for s in GRID.seeds},
                 "retrain": {s: scored(trained(small.train, small.valid, {**TRAINING.params, "seed": s}), small.test)
                             for s in GRID.seeds}}
    for cell in result.cells.iter_rows(named=True):
        feature, share, seed = cell["feature"], cell["reduction"], cell["seed"]
        reduced = {part: reduce_coverage(getattr(small, part), feature, share=share,
                                         seed=loss_seed(seed, feature, share, part))
                   for part in ("train", "valid", "test")}
        model = baseline if cell["mode"] == "test" else \
            trained(reduced["train"], reduced["valid"], {**TRAINING.params, "seed": seed})
        expected = scored(model, reduced["test"])
        for column in ("ndcg4", "ndcg8", "ndcg4_lightgbm", "ndcg8_lightgbm"):
            assert cell[column] == expected[column], (cell["run_id"], column)
            assert cell[f"d_{column}"] == pytest.approx(expected[column] - reference[cell["mode"]][seed][column])
        if cell["run_id"] in set(result.importance["run_id"]):
            again = importances(model, reduced["test"], sample_rows=GRID.shap_sample_rows, seed=0)
            stored = result.importance.filter(run_id=cell["run_id"]).drop("run_id")
            assert stored.equals(again), cell["run_id"]


def test_only_the_baseline_and_the_top_feature_at_the_smallest_share_compute_shap(result):
    # The importance-shift table reads the top feature's cells at 5%; nothing reads the others'.
    explained = result.model_runs.filter(pl.col("shap_rows").is_not_null())
    top = result.cells.filter(baseline_rank=1, reduction=0.05)
    assert top.height == 2 * 2  # modes x seeds
    assert sorted(explained["run_id"]) == sorted([f"{result.experiment_id}:baseline", *top["run_id"]])
    assert result.importance.height == explained.height * 46
    top = result.cells.filter(role="top")["feature"][0]
    shift = importance_shift(result, feature=top, reduction=0.05)
    assert shift["feature"][0] == top and shift["shap_share_after"].is_not_null().all()


def test_storing_an_experiment_twice_leaves_the_same_rows(result):
    conn = duckdb.connect()
    create_schema(conn, moving_average_days=7)
    store_experiment(conn, result)
    first = {t: conn.sql(f"SELECT * FROM {t} ORDER BY ALL").pl() for t in
             ("model_runs", "feature_importance", "coverage_drop_results", "coverage_drop_correlations")}
    store_experiment(conn, result)
    for table, rows in first.items():
        assert conn.sql(f"SELECT * FROM {table} ORDER BY ALL").pl().equals(rows), table
    assert first["coverage_drop_correlations"].filter(scope="within_feature").height == 2  # one per mode


def test_a_stopped_grid_resumes_from_the_stored_cells(small, result):
    conn = duckdb.connect()
    create_schema(conn, moving_average_days=7)
    half = GRID.__class__(**{**GRID.__dict__, "seeds": (1,)})
    for record in coverage_drop_runs(small, grid=half, training=TRAINING):
        store_run(conn, record)
    exp_id = experiment_id(small, GRID, TRAINING)
    assert experiment_id(small, half, TRAINING) == exp_id  # seeds are not part of the id
    done = finished_cells(conn, exp_id)
    assert len(done) == result.cells.height // 2
    rest = list(coverage_drop_runs(small, grid=GRID, training=TRAINING, skip=done))
    new_cells = [r.cell for r in rest if r.cell]
    assert {c["seed"] for c in new_cells} == {2} and len(new_cells) == len(done)
    for record in rest:  # the baseline and controls again, then the new cells
        store_run(conn, record)
    stored = named_query(conn, "coverage_drop_cells").sort("run_id")
    same = ["run_id", "coverage_test_after", "coverage_train_after", "ndcg8", "d_ndcg8", "d_ndcg8_lightgbm"]
    assert stored.select(same).rows() == result.cells.sort("run_id").select(same).rows()
    # The SQL deltas against each cell's reference average back to the stored change.
    deltas = named_query(conn, "coverage_drop_query_deltas").group_by("experiment_id", "mode", "feature",
                                                                     "reduction", "seed").agg(pl.col("d_ndcg8").mean())
    check = deltas.join(stored, on=["experiment_id", "mode", "feature", "reduction", "seed"])
    assert check.height == stored.height
    assert (check["d_ndcg8"] - check["d_ndcg8_right"]).abs().max() < 1e-12


def test_cells_without_train_coverage_in_the_first_hundred_rows_keep_the_column_numeric(result):
    # The fast form of the test below: 101 test-mode rows (no train coverage), then a retrained one.
    test_row, retrained = (result.cells.filter(mode=m).row(0, named=True) for m in ("test", "retrain"))
    frame = cells_frame([test_row] * 101 + [retrained])
    assert frame.schema["coverage_train_after"] == pl.Float64
    assert frame["coverage_train_after"].null_count() == 101


@pytest.mark.slow
def test_a_grid_with_over_a_hundred_test_cells_before_the_retrained_ones_builds_its_table():
    # polars infers a column's type from the first 100 rows: the test-mode cells come first and
    # carry no train coverage, which once typed the column as Null and crashed the full grid.
    full = load_split("mq2008", 1)
    tiny = Split("mq2008", 1, full.train.head(600), full.valid.head(300), full.test.head(300), full.features)
    grid = Grid(top_k=1, low_k=0, reductions=(0.05, 0.1, 0.25, 0.5, 1.0), seeds=tuple(range(1, 22)),
                shap_sample_rows=50)
    cells = run_coverage_drop(tiny, grid=grid, training=Training(Ranker().params, num_boost_round=3,
                                                                 early_stopping_rounds=2)).cells
    assert cells.filter(mode="test").height == 105
    assert cells.filter(mode="retrain")["coverage_train_after"].is_not_null().all()


def test_the_claims_report_reads_a_stored_grid_and_says_so_when_there_is_none(result, tmp_path, capsys,
                                                                                 monkeypatch):
    from feco.cli import main

    warehouse = tmp_path / "claims.duckdb"
    assert main(["experiment", "coverage-drop-report", "--warehouse", str(warehouse)]) == 1
    assert "no warehouse" in capsys.readouterr().err and not warehouse.exists()
    conn = duckdb.connect(str(warehouse))
    create_schema(conn, moving_average_days=7)
    conn.close()
    assert main(["experiment", "coverage-drop-report", "--warehouse", str(warehouse)]) == 1
    assert "no coverage-drop cells" in capsys.readouterr().err

    conn = duckdb.connect(str(warehouse))
    store_experiment(conn, result)
    conn.close()
    args = ["experiment", "coverage-drop-report", "--warehouse", str(warehouse), "--resamples", "99"]
    assert main(args) == 0
    out = capsys.readouterr().out
    for heading in ("Baselines per fold", "Retraining noise", "families", "bootstrap interval", "per fold beside",
                    "Within-feature", "SHAP share", "Power"):
        assert heading in out
    assert out.count("mq2008") >= 5
    conn = duckdb.connect(str(warehouse))
    stored = conn.sql("SELECT * FROM coverage_drop_claim_tests ORDER BY ALL").pl()
    conn.close()
    assert set(stored["family"]) >= {"sensitivity", "fold_effect", "within_feature", "importance_loss:top+low"}
    # The same warehouse gives the same report, byte for byte, and the same stored tests.
    assert main(args) == 0
    assert capsys.readouterr().out == out
    conn = duckdb.connect(str(warehouse))
    assert conn.sql("SELECT * FROM coverage_drop_claim_tests ORDER BY ALL").pl().equals(stored)
    conn.close()
    # Through tasks.coverage_drop_report: it waits for a run writing the warehouse
    monkeypatch.setenv("FECO_LOCK_WAIT_SECONDS", "0")
    with held_by_another_run(warehouse):
        assert main(args) == 3
    assert "another feco run holds" in capsys.readouterr().err


def test_contrasts_are_features_the_baseline_uses_and_every_run_counts_its_ties(small, result):
    low = result.cells.filter(role="low")
    assert low.height and (low["baseline_shap_share"] > 0).all() and (low["baseline_gain_share"] > 0).all()
    base = result.model_runs.filter(kind="coverage_drop:baseline").row(0, named=True)
    # The least important covered feature the baseline uses: every feature ranked below it is
    # unused (share 0) or too rarely covered to be a contrast.
    below = result.importance.filter((pl.col("run_id") == base["run_id"])
                                     & (pl.col("shap_rank") > low["baseline_rank"].max()))
    assert below.height and (below["shap_share"] == 0).any()
    for row in below.iter_rows(named=True):
        assert row["shap_share"] == 0 or row["gain_share"] == 0 or \
            coverage_of(small.test, row["feature"]) < MIN_CONTRAST_COVERAGE, row
    scores = predict_scores(train_ranker(small.train, small.valid, features=small.features, params=TRAINING.params,
                                         num_boost_round=TRAINING.num_boost_round,
                                         early_stopping_rounds=TRAINING.early_stopping_rounds), small.test)
    per_query = small.test.select("qid", pl.Series("score", scores)).group_by("qid", "score").len()
    assert base["scored_rows"] == small.test.height
    assert base["tied_rows"] == per_query.filter(pl.col("len") > 1)["len"].sum() > 0
    assert min(base["ndcg8"], base["ndcg8_ties_forward"]) <= base["ndcg8_ties_average"] \
        <= max(base["ndcg8"], base["ndcg8_ties_forward"])


def test_the_command_stores_every_run_in_batches_and_a_rerun_adds_nothing(tmp_path, capsys, monkeypatch):
    from feco import tasks
    from feco.cli import main

    warehouse = tmp_path / "grid.duckdb"
    args = ["experiment", "coverage-drop", "--dataset", "mq2008", "--setting", "plain", "--top", "1", "--low", "0",
            "--seeds", "1", "--warehouse", str(warehouse)]
    monkeypatch.setattr(tasks, "STORE_EVERY_SECONDS", 3600.0)  # everything in the final write
    assert main(args) == 0
    assert "6 cells planned, 0 already stored" in capsys.readouterr().out
    conn = duckdb.connect(str(warehouse))
    runs = conn.sql("SELECT kind, count(*) FROM model_runs GROUP BY kind").fetchall()
    conn.close()
    assert dict(runs) == {"coverage_drop:baseline": 1, "coverage_drop:control": 1,
                          "coverage_drop:test": 3, "coverage_drop:retrain": 3}
    monkeypatch.setattr(tasks, "STORE_EVERY_SECONDS", 0.0)  # a write after every run
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "6 cells planned, 6 already stored" in out and "new cells" in out  # baseline and control only
    conn = duckdb.connect(str(warehouse))
    assert conn.execute("SELECT count(*) FROM model_runs").fetchone() == (8,)
    conn.close()
    # Every write through tasks.coverage_drop, under the run lock
    monkeypatch.setenv("FECO_LOCK_WAIT_SECONDS", "0")
    with held_by_another_run(warehouse):
        assert main(args) == 3
    assert "another feco run holds" in capsys.readouterr().err
