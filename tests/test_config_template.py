"""The template for one's own logs, and config values that must be refused, not coerced."""

import json
from datetime import date

import pytest

from feco.cli import main
from feco.config import load_config
from feco.errors import ConfigError
from logbuilder import FEATURES, make_events, write_logs


def own_config(repo, folder):
    """configs/template.toml as a user would fill it in: their folders, their features."""
    text = (repo / "configs" / "template.toml").read_text()
    text = text.replace("/path/to/feco", str(folder)).replace("/path/to/search-logs", str(folder / "logs"))
    text = text.replace('["feature_a", "feature_b"]', json.dumps(FEATURES))
    text = text.replace("events_per_window = 200000", "events_per_window = 5")
    path = folder / "feco.toml"
    path.write_text(text)
    return path


def test_the_template_keeps_no_demo_setting(repo):
    config = load_config(repo / "configs" / "template.toml")
    assert config.alerts.decay.reference is None and config.coverage.reference is None
    assert config.alerts.notify.jsonl is None
    folders = config.paths.model_dump(include={"logs", "samples", "warehouse", "report"})
    for path in (*folders.values(), config.ranker.models):
        assert str(path).startswith("/path/to/"), path


def test_the_template_runs_on_ones_own_logs_and_status_says_decay_is_off(repo, tmp_path, capsys):
    write_logs(tmp_path / "logs", make_events(date(2026, 3, 1), events=1500))
    config = own_config(repo, tmp_path)
    assert main(["run", "--ds", "2026-03-01", "--config", str(config)]) == 0
    assert main(["status", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "days:              1 (2026-03-01 to 2026-03-01)" in out
    assert "rule not running:  decay: no reference period" in out


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[sampling]\nwindows = "8"\n', "key 'sampling.windows': Input should be a valid integer"),
        ("[sampling]\nwindows = 8.0\n", "key 'sampling.windows'"),
        ("[sampling]\nseed = -1\n", "key 'sampling.seed': Input should be greater than or equal to 0"),
        ("[ranker]\nseed = -1\n", "key 'ranker.seed'"),
        ('[alerts]\nweekly = "yes"\n', "key 'alerts.weekly'"),
        ("moving_average_days = '7'\n", "key 'moving_average_days'"),
    ],
)
def test_wrong_types_and_negative_seeds_are_refused(tmp_path, text, expected):
    path = tmp_path / "feco.toml"
    path.write_text(text + '[paths]\nlogs = "l"\nsamples = "s"\nwarehouse = "w.duckdb"\n'
                    '[logs]\nfeatures = ["a"]\n')
    with pytest.raises(ConfigError, match=expected.replace("(", r"\(")):
        load_config(path)


def test_dates_and_paths_may_still_be_strings(tmp_path):
    path = tmp_path / "feco.toml"
    path.write_text('[paths]\nlogs = "l"\nsamples = "s"\nwarehouse = "w.duckdb"\n[logs]\nfeatures = ["a"]\n'
                    '[alerts.decay]\nreference = { start = "2026-03-01", end = 2026-03-07 }\n')
    assert load_config(path).alerts.decay.reference.start == date(2026, 3, 1)


def test_a_folder_given_as_config_is_one_clear_line(tmp_path, capsys):
    with pytest.raises(ConfigError, match="is a folder: give the config file itself"):
        load_config(tmp_path)
    assert main(["status", "--config", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("feco: error: ") and len(err.strip().splitlines()) == 1
