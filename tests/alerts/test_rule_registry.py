"""A rule registered in one place is judged, budgeted and reported everywhere: a toy rule added
to the registry alone (no other file names it) fires in detect, counts in the false-page
budget, opens an incident at its own fixed tier whose normal floor is its threshold, and is
marked on the report's coverage trends. A place that still lists the rules itself fails here."""

from datetime import timedelta

import polars as pl
import pytest

from feco import tasks
from feco.alerts.detect import alert_inputs, judged_series
from feco.alerts.rules import COVERAGE, STEP, coverage_line, drop_columns, fired, registry
from feco.report.data import load_report_data
from feco.warehouse import open_read_only
from logbuilder import make_config
from tests.report.small_warehouse import FEATURES, START, build

DS = START + timedelta(days=9)
LINE = 0.95  # meta_rating holds 90% coverage everywhere, every day


class ToyRule:
    """Coverage under a line, anywhere: a step in coverage, critical whatever the drop."""

    name = "toy_below_the_line"
    kinds = frozenset({COVERAGE, STEP})
    severity = "critical"
    measure = ("coverage", "below")
    needs_history = False
    statistics = ("observed",)

    def detect(self, inputs: pl.DataFrame, settings, alpha: float) -> pl.DataFrame:
        firing = (inputs.filter(pl.col("observed") < LINE)
                  .with_columns(pl.lit(LINE).alias("baseline"), pl.lit(LINE).alias("threshold"))
                  .with_columns(*drop_columns(pl.col("observed"), pl.col("baseline"))))
        return fired(firing, self.name)

    def budget_series(self, judged: pl.DataFrame) -> int:
        return judged.height

    def describe(self, alert: dict) -> str:
        return coverage_line(alert, "coverage", "the line")


@pytest.fixture
def config(tmp_path):
    build(tmp_path / "feco.duckdb")
    return make_config(tmp_path, logs={"features": FEATURES}, coverage={}, alerts={"min_rows": 100})


def register(monkeypatch) -> None:
    monkeypatch.setattr(registry, "RULES", (*registry.RULES, ToyRule()))


def test_every_rule_gets_the_statistics_it_declares(config):
    with open_read_only(config.paths.warehouse) as conn:
        columns = set(alert_inputs(conn, DS, alerts=config.alerts).columns)
    assert all(set(rule.statistics) <= columns for rule in registry.RULES)


def test_a_rule_whose_statistics_the_inputs_lack_is_refused(config, monkeypatch):
    lacking = ToyRule()
    lacking.statistics = ("observed", "toy_statistic")
    monkeypatch.setattr(registry, "RULES", (*registry.RULES, lacking))
    with pytest.raises(ValueError, match="toy_below_the_line needs toy_statistic"):
        tasks.detect(DS, config)


def test_a_registered_rule_counts_in_the_false_page_budget(config, monkeypatch):
    with open_read_only(config.paths.warehouse) as conn:
        inputs = alert_inputs(conn, DS, alerts=config.alerts)
    without = judged_series(inputs, config.alerts)
    register(monkeypatch)
    assert judged_series(inputs, config.alerts) > without


def test_a_registered_rule_is_judged_tracked_and_reported(config, monkeypatch):
    register(monkeypatch)
    tasks.detect(DS, config)
    with open_read_only(config.paths.warehouse) as conn:
        toy = conn.sql("SELECT feature, segment_dim, segment_value, severity, detail FROM alerts "
                       "WHERE rule = $rule", params={"rule": ToyRule.name}).fetchall()
        incidents = conn.sql("SELECT headline_rule, severity, normal_floor FROM incidents WHERE ds = $ds",
                             params={"ds": DS}).fetchall()
        marks = load_report_data(conn, alerts=config.alerts).marks
    assert ("meta_rating", "all", "all", "critical",
            "meta_rating in all traffic: coverage 90.0% vs 95.0% for the line (-5.0 points, -5%)") in toy
    assert (ToyRule.name, "critical", LINE) in incidents  # a coverage rule's threshold is the floor
    assert ToyRule.name in marks.get_column("rule").to_list()
