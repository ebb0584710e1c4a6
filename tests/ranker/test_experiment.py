"""The coverage-drop experiment on a small slice of MQ2008 Fold1, stored in the warehouse."""

import duckdb
import polars as pl
import pytest

from feco.config import Ranker
from feco.errors import DataError
from feco.ranker.datasets import Split, default_root, load_split
from feco.ranker.experiment import (
    Grid,
    Training,
    cells_frame,
    coverage_drop_runs,
    experiment_id,
    importance_shift,
    run_coverage_drop,
    table1,
)
from feco.ranker.store import finished_cells, store_experiment, store_run
from feco.warehouse import create_schema, named_query

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
    from feco.ranking.letor import read_letor

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


def test_importances_are_kept_per_run_and_the_shift_is_readable(result):
    # Baseline, controls and the cells at the smallest share are explained; the others skip SHAP.
    explained = result.model_runs.filter(pl.col("shap_rows").is_not_null())
    assert explained.height == 1 + 2 + result.cells.filter(reduction=0.05).height
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


def test_the_claims_report_reads_a_stored_grid_and_says_so_when_there_is_none(result, tmp_path, capsys):
    from feco.cli import main

    warehouse = tmp_path / "claims.duckdb"
    conn = duckdb.connect(str(warehouse))
    create_schema(conn, moving_average_days=7)
    conn.close()
    assert main(["experiment", "coverage-drop-report", "--warehouse", str(warehouse)]) == 1
    assert "no coverage-drop cells" in capsys.readouterr().err

    conn = duckdb.connect(str(warehouse))
    store_experiment(conn, result)
    conn.close()
    assert main(["experiment", "coverage-drop-report", "--warehouse", str(warehouse), "--resamples", "99"]) == 0
    out = capsys.readouterr().out
    for heading in ("Retraining noise", "bootstrap interval", "Within-feature", "SHAP share", "Power"):
        assert heading in out
    assert out.count("mq2008") >= 5
