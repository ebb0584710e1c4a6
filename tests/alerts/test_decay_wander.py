"""The decay's week-to-week wander is measured on whole weeks of normal days: an outage of one
feature must not widen the null its segment's and its source's other features are judged by."""

from datetime import date, timedelta

from feco.alerts.rules import ABNORMAL_DAY, registry
from feco.warehouse import named_query, open_for_write
from logbuilder import make_config

START = date(2026, 3, 2)  # a Monday
DS = START + timedelta(days=28)


def wander(tmp_path, *, alerted: bool) -> dict:
    """Four weeks of f_dense at 0.6 coverage, but 0.1 for three days of the second week."""
    config = make_config(tmp_path, logs={"features": ["f_dense"]}, coverage={}, alerts={"min_rows": 100})
    with open_for_write(config.paths.warehouse) as conn:
        for offset in range(28):
            ds = START + timedelta(days=offset)
            level = 0.1 if 9 <= offset <= 11 else 0.6 + 0.01 * (offset % 2)
            conn.executemany("INSERT INTO coverage_states VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                             [(ds, window, "f_dense", "all", "all", 1000, 1000, round(1000 * level))
                              for window in range(8)])
            if alerted and 9 <= offset <= 11:
                conn.execute("INSERT INTO alerts (ds, alert_id, feature, segment_dim, segment_value, rule, severity, status) "
                             "VALUES (?, ?, 'f_dense', 'all', 'all', 'drop_vs_moving_average', 'critical', 'open')", [ds, f"a{offset}"])
        row = named_query(conn, "decay_wander", {"ds": DS, "ref_start": START, "wander_days": 84,
                                                 "min_rows": 100, "risen_features": [],
                                                 **registry.rule_lists(ABNORMAL_DAY),
                                                 "risen_dims": [], "risen_values": [], "risen_since": []}).row(0, named=True)
    return row


def test_a_week_that_raised_a_step_alert_is_left_out_of_the_wander(tmp_path):
    unflagged = wander(tmp_path / "a", alerted=False)
    flagged = wander(tmp_path / "b", alerted=True)
    assert unflagged["weeks"] == 4 and unflagged["week_var"] > 0.01  # the outage week in it
    assert flagged["weeks"] == 3 and flagged["week_var"] < 1e-4
