"""A decay in new products against the same products a week apart (feco.same_products).

Round 27 (ltr 80670): a catalogue renewed product by product carried new products' coverage
from 0.88 to 0.63 over five weeks while every product sampled a week apart kept its values.
The states are written by hand: f_dense in new products (30% of the rows) declining,
established ones flat, all traffic their sum, and two features flat everywhere (a segment's
wander is its features' median); the same products' counts either hold (a cohort turning
over) or fall with the segment (its products losing the feature).
"""

from datetime import date, timedelta

import polars as pl
import pytest

from feco.alerts.detect import alert_inputs, judge_day
from feco.warehouse import open_for_write
from logbuilder import make_config

START = date(2026, 3, 2)
DAYS = [START + timedelta(days=i) for i in range(42)]
NEW, ESTABLISHED = 2_400, 5_600  # rows a day
PANEL = 2_000  # rows a day of new products also sampled a week before


def new_coverage(i: int) -> float:
    """0.88 until day 20, then down to 0.63 by day 41, give or take 0.4 point."""
    return 0.88 - max(i - 20, 0) * 0.25 / 21 + 0.004 * (i % 3 - 1)


def write_day(conn, i: int, *, own_products_fall: bool) -> None:
    ds = DAYS[i]
    for feature, new in (("f_dense", new_coverage(i)), ("f_sparse", 0.7 + 0.004 * (i % 2)),
                         ("f_signed", 0.75 + 0.004 * ((i + 1) % 3 - 1))):
        cells = {("product_age", "new"): (NEW, new), ("product_age", "established"): (ESTABLISHED, 0.81),
                 ("all", "all"): (NEW + ESTABLISHED, (NEW * new + ESTABLISHED * 0.81) / (NEW + ESTABLISHED))}
        conn.executemany("INSERT INTO coverage_states VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [
            (ds, window, feature, dim, value, n // 8, n // 8, round(n // 8 * coverage))
            for (dim, value), (n, coverage) in cells.items() for window in range(8)])
        conn.execute("INSERT INTO feature_status VALUES (?, ?, 'ok', NULL, '> 0')", [ds, feature])
    conn.execute("INSERT INTO runs VALUES (?, now(), 1000, ?, 1, 'x')", [ds, NEW + ESTABLISHED])
    if i >= 7:  # the same products, now and a week before: theirs fell with the segment, or held
        now, then = (new_coverage(i), new_coverage(i - 7)) if own_products_fall else (0.80, 0.80)
        conn.execute("INSERT INTO same_products VALUES (?, 7, 'f_dense', 'product_age', 'new', 500, ?, ?, ?, ?)",
                     [ds, PANEL, round(PANEL * now), PANEL, round(PANEL * then)])


@pytest.mark.parametrize("own_products_fall", [False, True], ids=["a cohort turning over", "a failure"])
def test_new_products_decay_only_where_the_same_products_lost_coverage(tmp_path, own_products_fall):
    config = make_config(tmp_path, coverage={},
                         segments={"dimensions": ["product_age"]},
                         alerts={"min_rows": 100, "decay": {"reference": {"start": DAYS[0], "end": DAYS[13]}}})
    with open_for_write(config.paths.warehouse) as conn:
        for i in range(len(DAYS)):
            write_day(conn, i, own_products_fall=own_products_fall)
        inputs = alert_inputs(conn, DAYS[-1], alerts=config.alerts, reference=config.decay_reference(),
                              segments=config.segments)
        decays = judge_day(conn, DAYS[-1], config=config).alerts.filter(pl.col("rule") == "decay_vs_reference")
    new = inputs.filter(feature="f_dense", segment_value="new").row(0, named=True)
    # the changes since the reference telescope to the same products' last week less their
    # week before the reference's end: 0 for the cohort; for the failure, the segment's loss
    # from then (0.88) to its last week (about 0.66)
    assert new["same_products_loss"] == pytest.approx(0.21 if own_products_fall else 0.0, abs=0.02)
    assert new["same_products_days"] == 7  # the reference's days 7-13
    assert decays.filter(segment_value="new")["feature"].to_list() == ["f_dense"] * own_products_fall
    if own_products_fall:  # the page says why it is believed
        assert "its products sampled a week apart lost 21." in decays.filter(segment_value="new")["detail"].item()
