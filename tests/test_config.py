import itertools
from pathlib import Path

import pytest

from feco.config import CoverageRule, load_config
from feco.errors import ConfigError

MINIMAL = """
[paths]
logs = "logs"
samples = "samples"
warehouse = "w.duckdb"
[logs]
features = ["a", "b"]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "feco.toml"
    path.write_text(text)
    return path


def test_default_config_loads_with_the_papers_design(repo):
    config = load_config(repo / "configs" / "feco.toml")
    assert config.sampling.windows == 8 and config.sampling.window_minutes == 10
    assert config.moving_average_days == 7
    assert len(config.logs.features) >= 30
    assert config.paths.logs.is_absolute()


def test_relative_paths_resolve_against_the_config_folder(tmp_path, monkeypatch):
    monkeypatch.chdir("/")
    config = load_config(write(tmp_path, MINIMAL))
    assert config.paths.samples == tmp_path / "samples"


def test_the_reports_path_for_messages_resolves_like_the_other_paths(tmp_path, monkeypatch, repo):
    monkeypatch.chdir("/")
    demo = load_config(repo / "configs" / "feco.toml")
    assert demo.alerts.notify.report == str(repo / "var" / "demo" / "report" / "index.html")
    assert demo.alerts.notify.report.startswith(str(demo.paths.report))  # where the demo writes it
    local = load_config(write(tmp_path, MINIMAL + '[alerts.notify]\nreport = "out/index.html"\n'))
    assert local.alerts.notify.report == str(tmp_path / "out" / "index.html")
    url = load_config(write(tmp_path, MINIMAL + '[alerts.notify]\nreport = "https://feco.internal/report/"\n'))
    assert url.alerts.notify.report == "https://feco.internal/report/"


def test_feco_config_environment_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("FECO_CONFIG", str(write(tmp_path, MINIMAL)))
    assert load_config().logs.features == ["a", "b"]


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        ("[sampling]\nwindow = 8\n", "key 'sampling.window': unknown key"),
        ("[sampling]\nwindows = 'eight'\n", "key 'sampling.windows'"),
        ("[sampling]\nwindows = 200\n", "do not fit in a day"),
        ("[sampling]\nwindows = 2\nwindow_starts = ['01:00', '01:05']\n", "overlap"),
        ("[sampling]\nwindows = 1\nwindow_starts = ['23:55']\n", "past midnight"),
        ("[sampling]\nwindows = 2\nwindow_starts = ['01:00']\n", "1 window_starts given for 2"),
        ("[sampling]\nwindows = 1\nwindow_starts = ['25:00']\n", "key 'sampling'"),
        ("[coverage]\ndefault_rule = '>= 1'\n", "coverage rule '>= 1'"),
        ("[coverage]\ndefault_rule = '> 1e999'\n",
         "key 'coverage.default_rule': coverage rule '> 1e999': the threshold is not a finite number"),
        ("[coverage.rules]\na = '!= -1e999'\n", "key 'coverage.rules.a': coverage rule '!= -1e999'"),
        ("[coverage.rules]\nb = '> nan'\n", "key 'coverage.rules.b': coverage rule '> nan'"),
        ("[coverage.rules]\nzzz = '> 0'\n", "not in logs.features"),
        ("[coverage.rules]\na = '> reference_median'\n", "needs [coverage.reference]"),
        ("[sampling]\nwindows = 4\n[alerts.drop]\nmin_windows = 5\n", "could never fire"),
        ("[segments]\ndimensions = ['country']\n", "key 'segments.dimensions.0'"),
        ("[segments]\nhead_share = 0.8\ntorso_share = 0.3\n", "leave a tail"),
    ],
)
def test_bad_config_is_one_error_naming_key_and_file(tmp_path, extra, expected):
    path = write(tmp_path, MINIMAL + extra)
    with pytest.raises(ConfigError) as error:
        load_config(path)
    assert expected in str(error.value)
    assert str(path) in str(error.value)


@pytest.mark.parametrize(("extra", "key"), [
    ("[sampling]\nevents_per_window = 300000000000000000000\n", "sampling.events_per_window"),
    ("[sampling]\nseed = 18446744073709551616\n", "sampling.seed"),
    ("[segments]\nband_days = 1000000000000\n", "segments.band_days"),
    ("[alerts]\nmin_rows = 9223372036854775807\n", "alerts.min_rows"),
    ("[alerts.notify]\ntimeout_seconds = inf\n", "alerts.notify.timeout_seconds"),
    ("[alerts.notify]\ndeadline_seconds = 1e300\n", "alerts.notify.deadline_seconds"),
    ("[alerts.drop]\nk = inf\n", "alerts.drop.k"),
    ("[readiness]\nwait_hours = inf\n", "readiness.wait_hours"),
    ("[ranker.params]\nlearning_rate = nan\n", "ranker.params.learning_rate"),
])
def test_numbers_must_be_finite_and_within_sane_bounds(tmp_path, extra, key):
    path = write(tmp_path, MINIMAL + extra)
    with pytest.raises(ConfigError, match=f"^{path}: key '{key}[.']") as error:
        load_config(path)
    assert "\n" not in str(error.value)


def test_missing_file_and_bad_toml(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(write(tmp_path, "[paths\n"))


def test_missing_required_section(tmp_path):
    with pytest.raises(ConfigError, match="key 'paths': required key is missing"):
        load_config(write(tmp_path, "[logs]\nfeatures = ['a']\n"))


def test_window_starts_spread_evenly_or_as_configured(tmp_path):
    config = load_config(write(tmp_path, MINIMAL))
    starts = config.sampling.start_minutes()
    assert len(starts) == 8 and all(b - a == 180 for a, b in itertools.pairwise(starts))
    assert starts[-1] + 10 <= 24 * 60
    explicit = load_config(write(tmp_path, MINIMAL + "[sampling]\nwindows = 2\nwindow_starts = ['00:30', '12:00']\n"))
    assert explicit.sampling.start_minutes() == [30, 720]


@pytest.mark.parametrize(
    ("text", "op", "threshold", "reference"),
    [("> 0", ">", 0.0, None), ("!= 0", "!=", 0.0, None), ("> 2.5", ">", 2.5, None),
     ("> -1e-3", ">", -0.001, None), ("> reference_median", ">", None, "median")],
)
def test_coverage_rules_parse(text, op, threshold, reference):
    rule = CoverageRule.parse(text)
    assert (rule.op, rule.threshold, rule.reference) == (op, threshold, reference)


def test_reference_rule_needs_greater_than():
    with pytest.raises(ValueError, match="use '>'"):
        CoverageRule.parse("!= reference_mean")
