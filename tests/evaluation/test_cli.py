"""`feco evaluate` and `feco evaluate-recs` end to end."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import feco.cli
from feco.evaluation import evaluate
from feco.evaluation.io import read_trec_qrels, read_trec_run

from .cases import random_case


@pytest.fixture
def cli(monkeypatch):
    """Run the CLI with only this module's subcommands; return (exit code, stdout, stderr)."""
    monkeypatch.setattr(feco.cli, "COMMAND_MODULES", ("feco.cli.evaluate",))

    def run(capsys, *argv: str):
        code = feco.cli.main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


@pytest.fixture
def trec_files(tmp_path: Path) -> tuple[Path, Path]:
    run, qrels = random_case(21)
    run_path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run_path.write_text("".join(f"{q} Q0 {i} 0 {s} t\n" for q, i, s in run.iter_rows()))
    qrels_path.write_text("".join(f"{q} 0 {i} {g}\n" for q, i, g in qrels.iter_rows()))
    return run_path, qrels_path


def test_evaluate_is_registered() -> None:
    assert "feco.cli.evaluate" in feco.cli.COMMAND_MODULES


def test_json_output_has_metrics_counts_and_conventions(cli, capsys, trec_files) -> None:
    run_path, qrels_path = trec_files
    code, out, _ = cli(capsys, "evaluate", "--qrels", str(qrels_path), "--run", str(run_path),
                       "--metrics", "ndcg@8,map,recall@5", "--preset", "trec_eval",
                       "--format", "json")
    assert code == 0
    payload = json.loads(out)
    expected = evaluate(read_trec_run(run_path), read_trec_qrels(qrels_path),
                        metrics=["ndcg@8", "map", "recall@5"], conventions="trec_eval")
    assert payload["metrics"] == pytest.approx(expected.metrics)
    assert payload["queries"]["evaluated"] == expected.queries.evaluated
    assert payload["queries"]["no_relevant"] == expected.queries.no_relevant
    assert payload["queries"]["missing_in_run"] == expected.queries.missing_in_run
    assert payload["conventions"]["preset"] == "trec_eval"
    assert payload["conventions"]["ties"] == "item_desc"


def test_table_output_states_counts_and_conventions(cli, capsys, trec_files) -> None:
    run_path, qrels_path = trec_files
    code, out, _ = cli(capsys, "evaluate", "--qrels", str(qrels_path), "--run", str(run_path),
                       "--set", "no_relevant=zero", "--set", "missing_in_run=drop")
    assert code == 0
    assert "ndcg@4" in out and "ndcg@8" in out
    assert "(scored 0)" in out and "(dropped)" in out
    assert "no_relevant=zero" in out and "preset=custom" in out


def test_svmlight_with_predictions(cli, capsys, tmp_path: Path) -> None:
    data, predictions = tmp_path / "test.txt", tmp_path / "pred.txt"
    data.write_text("1 qid:1 1:0.5\n0 qid:1 1:0.1\n0 qid:2 1:0.3\n2 qid:2 1:0.2\n")
    predictions.write_text("0.2\n0.4\n0.9\n0.1\n")
    code, out, _ = cli(capsys, "evaluate", "--svmlight", str(data), "--predictions",
                       str(predictions), "--metrics", "mrr", "--format", "json")
    assert code == 0
    assert json.loads(out)["metrics"]["mrr"] == 0.5


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["--qrels", "{qrels}", "--run", "{bad}"], 1, r"bad\.txt: line 2: score is not a number"),
        (["--qrels", "{qrels}"], 2, "--qrels and --run go together"),
        (["--qrels", "{qrels}", "--run", "{run}", "--svmlight", "{run}"], 2, "either"),
        (["--qrels", "{qrels}", "--run", "{run}", "--metrics", "ndgc@3"], 2, "unknown metric"),
        (["--qrels", "{qrels}", "--run", "{run}", "--preset", "excel"], 2, "unknown preset"),
        (["--qrels", "{qrels}", "--run", "{run}", "--set", "ties"], 2, "KEY=VALUE"),
        (["--qrels", "{qrels}", "--run", "{missing}"], 1, "no such file"),
    ],
)
def test_errors_are_one_line_and_exit_non_zero(cli, capsys, trec_files, tmp_path, argv, code,
                                               message) -> None:
    run_path, qrels_path = trec_files
    bad = tmp_path / "bad.txt"
    bad.write_text("1 Q0 a 1 0.5 t\n1 Q0 b 2 x t\n")
    paths = {"qrels": qrels_path, "run": run_path, "bad": bad, "missing": tmp_path / "none.txt"}
    argv = [a.format(**{k: str(v) for k, v in paths.items()}) for a in argv]
    exit_code, out, err = cli(capsys, "evaluate", *argv)
    assert exit_code == code
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("feco: error: ")
    assert re.search(message, err)


@pytest.mark.slow  # the whole MovieLens log (~16 s); the protocols are tested on small logs
def test_evaluate_recs_leave_one_out_on_movielens(cli, capsys, data_dir: Path) -> None:
    ratings = data_dir / "interactions/movielens_latest_small/ratings.csv"
    code, out, _ = cli(capsys, "evaluate-recs", "--interactions", str(ratings), "--protocol",
                       "leave-one-out", "--k", "5,10", "--format", "json")
    assert code == 0
    payload = json.loads(out)
    assert payload["protocol"]["tied_newest"] == 94
    assert set(payload["models"]) == {"random", "most-popular"}
    for model in payload["models"].values():
        assert model["queries"]["evaluated"] == 610
        assert {"hit_rate@5", "ndcg@10", "coverage@10"} <= set(model["metrics"])
    popular, random = (payload["models"][m]["metrics"] for m in ("most-popular", "random"))
    assert popular["hit_rate@10"] > random["hit_rate@10"]


def test_evaluate_recs_temporal_table_with_segments(cli, capsys, data_dir: Path) -> None:
    ratings = data_dir / "interactions/movielens_latest_small/ratings.csv"
    code, out, _ = cli(capsys, "evaluate-recs", "--interactions", str(ratings), "--protocol",
                       "temporal", "--k", "10", "--sampled-negatives", "100", "--segments")
    assert code == 0
    assert "personalize-temporal" in out and "test_users=61" in out
    assert "different, easier problem" in out
    assert "most-popular by history length" in out
    code, _, err = cli(capsys, "evaluate-recs", "--interactions", str(ratings), "--protocol",
                       "global-temporal")
    assert code == 2 and "--cutoff" in err
