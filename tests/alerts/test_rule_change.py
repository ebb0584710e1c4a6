"""A feature's coverage rule changed in the config is another definition, not a drop: the day
records its rule, the series restarts (moving average, alert history), nothing pages, and
`feco status` says so."""

from datetime import date, timedelta

import duckdb

from feco import tasks
from feco.cli import main
from logbuilder import make_config, make_events, write_logs

START = date(2026, 5, 4)
DAYS = [START + timedelta(days=i) for i in range(10)]
CHANGED = DAYS[-1]


def configured(folder, rule: str):
    return make_config(folder, sampling={"events_per_window": 150, "seed": 1}, coverage={"rules": {"f_signed": rule}},
                       alerts={"min_rows": 300, "notify": {"webhook_url_env": "FECO_TEST_NO_WEBHOOK"}})


def test_a_changed_coverage_rule_restarts_the_series_without_a_page(tmp_path, capsys):
    for i, ds in enumerate(DAYS):
        write_logs(tmp_path / "logs", make_events(ds, events=8000, seed=i))
    for ds in DAYS[:-1]:  # f_signed is normal: covered in every row under != 0, in half under > 0
        tasks.run_day(ds, configured(tmp_path, "!= 0"), deliver=False)
    tasks.run_day(CHANGED, configured(tmp_path, "> 0"), deliver=False)

    with duckdb.connect(str(tmp_path / "feco.duckdb"), read_only=True) as conn:
        rules = conn.sql("SELECT ds, rule FROM feature_status WHERE feature = 'f_signed' ORDER BY ds").fetchall()
        alerts = conn.sql("SELECT rule, segment_dim, segment_value FROM alerts WHERE feature = 'f_signed'").fetchall()
        ma = conn.sql("SELECT coverage, coverage_ma7, days_in_window FROM feco_ma7 WHERE feature = 'f_signed' "
                      "AND segment_dim = 'all' AND ds = $ds", params={"ds": CHANGED}).fetchall()
    assert rules[0][1] == "!= 0" and rules[-1] == (CHANGED, "> 0")
    assert alerts == []  # the rule change paged HIGH before: coverage 100% -> ~50%
    coverage, coverage_ma7, days = ma[0]
    assert coverage < 0.6 and coverage_ma7 == coverage and days == 1

    config = tmp_path / "feco.toml"
    config.write_text('[paths]\nlogs = "logs"\nsamples = "samples"\nwarehouse = "feco.duckdb"\n'
                      '[logs]\nfeatures = ["f_dense", "f_sparse", "f_signed"]\n')
    assert main(["status", "--config", str(config)]) == 0
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("rule changed:"))
    assert f"f_signed: counted under '> 0' since {CHANGED} (was '!= 0')" in line
