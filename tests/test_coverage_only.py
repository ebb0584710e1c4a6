"""Issue 60, items 7 and 8: coverage needs only what coverage needs (a timestamp, an event id
and the features; the label, the served position and the product id turn on more), and a
feature the logs have never held is a config error with a did-you-mean, not a page."""

from __future__ import annotations

import sys
from datetime import date, timedelta
from pathlib import Path

import duckdb
import polars as pl
import pytest

from feco import tasks
from feco.cli import main
from feco.config import load_config
from feco.warehouse import fetch
from logbuilder import FEATURES, make_events, write_config_file, write_logs

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import demo

DAYS = [demo.START + timedelta(days=d) for d in range(demo.DAYS)]
OPTIONAL = ("label", "position", "product_id")  # the demo's log columns coverage does without
DAY = date(2026, 3, 10)


def coverage_only_config(folder: Path, features: list[str], *, logs: str = "", extra: str = "") -> Path:
    """A config naming the timestamp, the event id and the features, and nothing else unless
    given: ``logs``, more [logs] lines; ``extra``, more TOML after it."""
    path = folder / "feco.toml"
    path.write_text(f'[paths]\nlogs = "logs"\nsamples = "samples"\nwarehouse = "feco.duckdb"\n'
                    f'[logs]\ntimestamp = "event_ts"\nevent_id = "event_id"\nfeatures = {features!r}\n{logs}{extra}',
                    encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def coverage_only(tmp_path_factory):
    """The demo's days and incidents (2,000 events a day, as the README's generate-logs line)
    without the label, position and product_id columns, every day run by `feco backfill`
    under a coverage-only config: the config file and the backfill's exit status."""
    folder = tmp_path_factory.mktemp("coverage-only")
    incidents = [arg for spec in demo.INCIDENTS for arg in ("--incident", spec)]
    assert main(["generate-logs", "--out", str(folder / "logs"), "--start", str(DAYS[0]), "--days", str(len(DAYS)),
                 "--events-per-day", "2000", "--seed", str(demo.SEED), *incidents]) == 0
    for path in (folder / "logs").rglob("*.parquet"):
        pl.read_parquet(path).drop(OPTIONAL).write_parquet(path)
    config = coverage_only_config(folder, load_config(REPO / "configs" / "feco.toml").logs.features)
    return config, main(["backfill", "--start", str(DAYS[0]), "--end", str(DAYS[-1]), "--config", str(config)])


def test_a_coverage_only_config_runs_the_demos_days_and_says_what_it_does_not_measure(coverage_only, capsys):
    config, backfilled = coverage_only
    assert backfilled == 0
    with duckdb.connect(str(config.parent / "feco.duckdb"), read_only=True) as conn:
        days = fetch(conn, "SELECT count(DISTINCT ds) FROM coverage_states").item()
        judged = fetch(conn, "SELECT count(DISTINCT ds) FROM runs").item()
        served = fetch(conn, "SELECT count(*) FROM served_daily").item()
        zeroed = fetch(conn, "SELECT count(*) FROM incidents WHERE feature = 'eng_ctr_7d'").item()
    assert days == judged == len(DAYS) and served == 0
    assert zeroed > 0  # the demo's incident in eng_ctr_7d is found without the optional columns
    capsys.readouterr()
    assert main(["alerts", "--since", str(DAYS[0]), "--config", str(config)]) == 0
    assert "eng_ctr_7d" in capsys.readouterr().out
    assert main(["report", "--out", str(config.parent / "report"), "--config", str(config)]) == 0
    assert (config.parent / "report" / "index.html").stat().st_size > 0
    capsys.readouterr()
    assert main(["status", "--config", str(config)]) == 0
    unmeasured = [line for line in capsys.readouterr().out.splitlines() if line.startswith("not measured:")]
    assert len(unmeasured) == 3 and all("the logs have no column" in line for line in unmeasured)
    for key in ("[logs] label", "[ranker] position", "[logs] product_id"):
        assert any(f"set {key} to the column" in line for line in unmeasured), key


def test_the_scheduled_training_waits_for_a_label(coverage_only):
    config, _ = coverage_only
    result = tasks.train_ranker(DAYS[-1], str(config), when_due=True)
    assert not result["trained"] and "no label column 'label'" in result["why"]


@pytest.mark.parametrize("column", OPTIONAL)
def test_an_optional_column_the_config_names_must_be_in_the_logs(tmp_path, capsys, column):
    events = make_events(DAY, events=300).with_columns(product_id=pl.int_range(pl.len())).drop(column)
    write_logs(tmp_path / "logs", events)
    section = "ranker" if column == "position" else "logs"
    named = f'{column} = "{column}"\n'
    config = coverage_only_config(tmp_path, FEATURES, **({"extra": f"[ranker]\n{named}"} if section == "ranker"
                                                        else {"logs": named}))
    assert main(["run", "--ds", str(DAY), "--config", str(config)]) == 1
    err = capsys.readouterr().err
    assert f"column '{column}' not in the logs" in err and f"[{section}] {column} in {config}" in err
    assert "leave the key out" in err


def test_a_feature_the_logs_never_held_is_a_config_error_with_the_nearest_column(tmp_path, capsys):
    write_logs(tmp_path / "logs", make_events(DAY, events=300))
    config = write_config_file(tmp_path, features=["f_dense", "f_sparce", "f_signed"])
    assert main(["run", "--ds", str(DAY), "--config", str(config)]) == 2  # a usage error: nothing paged
    err = capsys.readouterr().err
    assert err.startswith("feco: error: [logs] features") and err.count("\n") == 1
    assert "'f_sparce' (did you mean 'f_sparse'?)" in err



def test_the_template_leaves_each_optional_column_out_and_says_what_it_turns_on():
    from feco.config import OPTIONAL_COLUMNS

    template = (REPO / "configs" / "template.toml").read_text(encoding="utf-8")
    assert "Optional: left out" in template
    for _, key, _ in OPTIONAL_COLUMNS:
        assert f"\n# {key} = \"{key}\"" in template, key  # left out, as a comment with what it turns on
