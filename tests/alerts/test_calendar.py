"""Pages that hold on a real calendar: a segment's own weekday pattern, a feature's launch, a
holiday's query mix, a recovery from zeros written over NULLs, and a warehouse's first days.

Each history is written as coverage states by hand (a region dimension of two regions, A and
B, all traffic their sum, and for the holiday query bands), so the rule sees exactly the
dynamic named and nothing else.
"""

from datetime import date, timedelta

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from feco.alerts.detect import alert_inputs, judge_day
from feco.warehouse import open_for_write
from logbuilder import make_config

MONDAY = date(2026, 3, 2)
ROWS = 8_000  # a segment's rows a day: 1,000 a window


def cell(n: int, coverage: float, missing: float = 0.0) -> tuple[int, float, float]:
    return n, coverage, missing


def write_day(conn, ds: date, segments: dict[tuple[str, str], tuple[int, float, float]]) -> None:
    """One day's states of f_dense: each segment's rows, coverage and NULL share over eight
    windows (give or take 0.1 point of coverage a window), all traffic the regions' sum."""
    regions = {key: value for key, value in segments.items() if key[0] == "region"}
    rows = sum(n for n, _, _ in regions.values())
    covered = sum(n * c for n, c, _ in regions.values())
    present = sum(n * (1 - m) for n, _, m in regions.values())
    cells = {**segments, ("all", "all"): (rows, covered / rows, 1 - present / rows)}
    states = []
    for (dim, value), (n, coverage, missing) in cells.items():
        per_window = n // 8
        for window in range(8):
            wobble = 0.002 * (window % 2 - 0.5)
            states.append((ds, window, "f_dense", dim, value, per_window, round(per_window * (1 - missing)),
                           round(per_window * max(coverage + wobble, 0.0))))
    conn.executemany("INSERT INTO coverage_states VALUES (?, ?, ?, ?, ?, ?, ?, ?)", states)
    conn.execute("INSERT INTO feature_status VALUES (?, 'f_dense', 'ok', NULL, '> 0')", [ds])
    conn.execute("INSERT INTO runs VALUES (?, now(), 1000, ?, 1, 'x')", [ds, rows])


def configured(tmp_path, **alerts):
    return make_config(tmp_path, logs={"features": ["f_dense"]}, coverage={},
                       segments={"dimensions": ["region", "query_band"]},
                       alerts={"min_rows": 100, "incidents": {"page_min_share": 0.05}, **alerts})


def fired(conn, ds: date, config, rule: str | None = None) -> pl.DataFrame:
    alerts = judge_day(conn, ds, config=config).alerts
    return alerts if rule is None else alerts.filter(pl.col("rule") == rule)


def wobble(i: int) -> float:
    return 0.004 * (i % 3 - 1)


def test_a_segment_with_its_own_weekends_learns_them_though_they_alerted_before(tmp_path):
    # Region A's queries differ at weekends: its coverage falls from 0.92 to 0.64 there, while
    # B is flat. Each of its weekends alerted (the weekly pattern is judged against only once two
    # of every weekday are known); those alerts must not keep its weekends out of the history
    # it learns the pattern from.
    config = configured(tmp_path)
    days = [MONDAY + timedelta(days=i) for i in range(8 * 7 - 1)]  # ends on a Saturday
    with open_for_write(config.paths.warehouse) as conn:
        for i, ds in enumerate(days):
            a = (0.64 if ds.weekday() >= 5 else 0.92) + wobble(i)
            write_day(conn, ds, {("region", "A"): cell(ROWS, a), ("region", "B"): cell(ROWS, 0.80 + wobble(i + 1))})
            if ds.weekday() >= 5 and ds != days[-1]:
                conn.execute("INSERT INTO alerts (ds, alert_id, feature, segment_dim, segment_value, rule, severity, "
                             "status) VALUES (?, ?, 'f_dense', 'region', 'A', 'drop_vs_moving_average', 'high', "
                             "'open')", [ds, f"a{i}"])
        assert days[-1].weekday() == 5
        assert fired(conn, days[-1], config, "drop_vs_moving_average").is_empty()


def test_a_launch_is_a_level_shift_not_a_failure_and_a_region_not_reached_is_not_paged(tmp_path):
    # A feature launched region by region: A's coverage rises from 0.21 to 0.78 on day 20 and
    # holds; B, not reached yet, stays at 0.21. The decay's reference (the first week) is 0.21.
    start = MONDAY
    config = configured(tmp_path, decay={"reference": {"start": start, "end": start + timedelta(days=6)}})
    days = [start + timedelta(days=i) for i in range(40)]
    with open_for_write(config.paths.warehouse) as conn:
        for i, ds in enumerate(days):
            a = (0.78 if i >= 20 else 0.21) + wobble(i)
            write_day(conn, ds, {("region", "A"): cell(ROWS, a), ("region", "B"): cell(ROWS, 0.21 + wobble(i + 1))})
        inputs = alert_inputs(conn, days[-1], alerts=config.alerts, reference=config.alerts.decay.reference,
                              segments=config.segments)
        alerts = fired(conn, days[-1], config)
    assert alerts.is_empty(), alerts.select("rule", "segment_value", "detail").rows()
    assert (inputs["baseline"].drop_nulls() <= 1).all() and (inputs["rest_baseline"].drop_nulls() <= 1).all()
    a = inputs.filter(pl.col("segment_value") == "A").row(0, named=True)
    assert a["risen_reference"] == pytest.approx(0.78, abs=0.01) and a["risen_since"] == days[26]
    with open_for_write(config.paths.warehouse) as conn:
        moves = judge_day(conn, days[-1], config=config).reference_moves
    assert ("region", "A", days[26]) in moves.select("segment_dim", "segment_value", "since").rows()


def test_a_launched_feature_failing_back_to_its_old_level_is_judged_against_its_new_one(tmp_path):
    # Launched on day 10 (0.21 -> 0.78), lost again on day 36: the decay's reference has
    # followed the launch, and the loss pages.
    from feco import tasks
    from feco.alerts.rules.decay import _series

    start = MONDAY
    config = configured(tmp_path, decay={"reference": {"start": start, "end": start + timedelta(days=6)}})
    days = [start + timedelta(days=i) for i in range(40)]
    with open_for_write(config.paths.warehouse) as conn:
        for i, ds in enumerate(days):
            level = 0.21 if i < 10 or i >= 36 else 0.78
            write_day(conn, ds, {("region", "A"): cell(ROWS, level + wobble(i)),
                                 ("region", "B"): cell(ROWS, level + wobble(i + 1))})
    for ds in days:
        tasks.detect(ds, config)
    with open_for_write(config.paths.warehouse) as conn:
        inputs = alert_inputs(conn, days[-1], alerts=config.alerts, reference=config.alerts.decay.reference,
                              segments=config.segments)
        opened = conn.sql("SELECT ds, segment_dim FROM incidents WHERE event = 'opened'").fetchall()
    followed = _series(inputs, against_rest=True).filter(pl.col("segment_dim") == "all")["reference_level"].item()
    assert followed == pytest.approx(0.78, abs=0.01)
    assert (days[36], "all") in opened


def holiday_drops(config) -> pl.DataFrame:
    """The drop rule's alerts on a holiday after five weeks: each query band keeps its usual
    coverage, but twice the searches go to the tail, where coverage is lowest, so all traffic
    (and new and established products alike, where they are segments) falls 13%: the mix, not
    a failure."""
    days = [MONDAY + timedelta(days=i) for i in range(36)]
    bands = {"head": 0.9, "torso": 0.7, "tail": 0.4}
    with open_for_write(config.paths.warehouse) as conn:
        for i, ds in enumerate(days):
            holiday = ds == days[-1]
            shares = {"head": 0.3, "torso": 0.3, "tail": 0.4} if holiday else {"head": 0.5, "torso": 0.3, "tail": 0.2}
            mean = sum(shares[b] * bands[b] for b in bands) + wobble(i)
            segments = {("region", "A"): cell(ROWS, mean), ("region", "B"): cell(ROWS, mean)}
            if "product_age" in config.segments.dimensions:
                segments |= {("product_age", "established"): cell(round(1.8 * ROWS), mean),
                             ("product_age", "new"): cell(round(0.2 * ROWS), mean)}
            segments |= {("query_band", b): cell(round(2 * ROWS * shares[b]), bands[b] + wobble(i)) for b in bands}
            write_day(conn, ds, segments)
        return fired(conn, days[-1], config, "drop_vs_moving_average")


def test_a_holiday_s_query_mix_is_expected_of_all_traffic(tmp_path):
    assert holiday_drops(configured(tmp_path)).filter(pl.col("segment_dim") == "all").is_empty()


def test_a_holiday_s_query_mix_is_expected_of_new_and_established_products(tmp_path):
    # Held-out round 11 (holiday 33398 at 40K): on a holiday of tail-heavy searches, engagement
    # features fell a third in product_age = established, judged at its age mix alone, while
    # all traffic, judged at its query mix too, was expected to fall so.
    config = make_config(tmp_path, logs={"features": ["f_dense"]}, coverage={},
                         segments={"dimensions": ["region", "query_band", "product_age"]},
                         alerts={"min_rows": 100, "incidents": {"page_min_share": 0.05}})
    assert holiday_drops(config).filter(pl.col("segment_dim").is_in(["all", "product_age"])).is_empty()


USUAL_MIX = {"A": {"head": 0.6, "torso": 0.3, "tail": 0.1}, "B": {"head": 0.4, "torso": 0.3, "tail": 0.3}}
# Region A's searches turn from head to tail, B's barely: A falls 40% a holiday, its ratio to B 32%
OWN_HOLIDAY_MIX = {"A": {"head": 0.1, "torso": 0.3, "tail": 0.6}, "B": {"head": 0.3, "torso": 0.3, "tail": 0.4}}


def own_holidays(tmp_path, holidays: int, holiday: dict = OWN_HOLIDAY_MIX) -> pl.DataFrame:
    """Every alert on the last of ``holidays`` holidays (each region's query mix ``holiday``)
    after five weeks, the decay's reference the first week. Each band keeps its coverage in
    each region; counted by region x query_band."""
    config = make_config(tmp_path, logs={"features": ["f_dense"]}, coverage={},
                         segments={"dimensions": ["region", "query_band"], "crosses": [["region", "query_band"]]},
                         alerts={"min_rows": 100, "incidents": {"page_min_share": 0.05},
                                 "decay": {"reference": {"start": MONDAY, "end": MONDAY + timedelta(days=6)}}})
    levels = {"A": {"head": 0.9, "torso": 0.6, "tail": 0.3}, "B": {"head": 0.8, "torso": 0.5, "tail": 0.2}}
    days = [MONDAY + timedelta(days=i) for i in range(35 + holidays)]
    with open_for_write(config.paths.warehouse) as conn:
        for i, ds in enumerate(days):
            shares = holiday if i >= 35 else USUAL_MIX
            cells = {(r, b): cell(round(ROWS * shares[r][b]), levels[r][b] + wobble(i + (r == "B"))) for r in levels
                     for b in levels[r]}
            segments = {("region x query_band", f"{r} x {b}"): value for (r, b), value in cells.items()}
            for dim, index in (("region", 0), ("query_band", 1)):
                for value in {key[index] for key in cells}:
                    part = [cells[key] for key in cells if key[index] == value]
                    n = sum(rows for rows, _, _ in part)
                    segments[(dim, value)] = cell(n, sum(rows * c for rows, c, _ in part) / n)
            write_day(conn, ds, segments)
        return fired(conn, days[-1], config)


def test_a_segment_s_own_holiday_query_mix_is_expected_of_it(tmp_path):
    # Held-out round 24 (holiday 92170 at 40K, calendar 60515 at 150K): on a holiday toys'
    # searches went from 71% head to 80% tail, more than the rest's moved, and its engagement
    # features were paged 37% below their usual ratio to the rest; at toys' own band mix and
    # the bands' usual levels, 10%.
    drops = own_holidays(tmp_path, 1).filter(pl.col("rule") == "drop_vs_moving_average")
    assert drops.filter(pl.col("segment_dim") == "region").is_empty(), drops.select("segment_value", "detail").rows()


def test_a_long_holiday_s_query_mix_does_not_weigh_on_the_decay_s_average(tmp_path):
    # Held-out round 24 (holiday 92170 at 40K): a holiday's tail-heavy searches took a third off
    # an engagement feature for the day, and the 7-day average of established products sank
    # 13% below the reference: paged as a decay. Two days here on which nine searches in ten
    # are tail queries: the reference is taken at the week's mix.
    tail = {"head": 0.02, "torso": 0.08, "tail": 0.9}
    alerts = own_holidays(tmp_path, 2, {"A": tail, "B": tail}).filter(pl.col("segment_dim").is_in(["all", "region"]))
    assert alerts.is_empty(), alerts.select("rule", "segment_value", "detail").rows()


def test_a_cross_counted_for_a_few_days_after_an_upgrade_changes_no_expectation(tmp_path):
    # A warehouse counted without region x query_band gets it on an upgrade: until the cross
    # covers every day its history reads, a segment is judged as before (a series scaled on
    # some days and not on others is no series).
    def expectations(folder, cross_days: int) -> pl.DataFrame:
        config = make_config(folder, logs={"features": ["f_dense"]}, coverage={},
                             segments={"dimensions": ["region", "query_band"]}, alerts={"min_rows": 100})
        days = [MONDAY + timedelta(days=i) for i in range(36)]
        with open_for_write(config.paths.warehouse) as conn:
            for i, ds in enumerate(days):
                shares = OWN_HOLIDAY_MIX if i >= 33 else USUAL_MIX
                cells = {(r, b): cell(round(ROWS * shares[r][b]), 0.5 + 0.1 * (b == "head") + wobble(i))
                         for r in shares for b in shares[r]}
                segments = {(dim, value): cell(sum(n for n, _, _ in part), sum(n * c for n, c, _ in part)
                                               / sum(n for n, _, _ in part))
                            for dim, index in (("region", 0), ("query_band", 1)) for value in {k[index] for k in cells}
                            if (part := [cells[k] for k in cells if k[index] == value])}
                if i >= 36 - cross_days:
                    segments |= {("region x query_band", f"{r} x {b}"): v for (r, b), v in cells.items()}
                write_day(conn, ds, segments)
            inputs = alert_inputs(conn, days[-1], alerts=config.alerts, segments=config.segments)
        return inputs.filter(pl.col("segment_dim") == "region").select("segment_value", "baseline", "rest_baseline")

    before = expectations(tmp_path / "without", 0)
    assert_frame_equal(expectations(tmp_path / "upgraded", 5), before, check_row_order=False)
    with pytest.raises(AssertionError):  # counted from the first day, it scales
        assert_frame_equal(expectations(tmp_path / "counted", 36), before, check_row_order=False)


def test_a_return_to_the_usual_null_share_after_zeros_over_nulls_neither_pages_nor_holds_the_incident(tmp_path):
    # f_dense is NULL in 30% of rows. A failure wrote zeros over every value of region A, NULLs
    # included, for three days (coverage 0, NULL share 0): a drop, paged. On the day it
    # recovers the NULL share is back at its usual 30%: no "values turning NULL", and the
    # incident resolves after its two normal days.
    from feco import tasks

    config = configured(tmp_path)
    days = [MONDAY + timedelta(days=i) for i in range(32)]
    failure = days[25:28]
    with open_for_write(config.paths.warehouse) as conn:
        for i, ds in enumerate(days):
            usual = cell(ROWS, 0.5 + wobble(i), 0.30 + wobble(i) / 4)
            write_day(conn, ds, {("region", "A"): cell(ROWS, 0.0, 0.0) if ds in failure else usual,
                                 ("region", "B"): usual})
    for ds in days:
        tasks.detect(ds, config)
    with open_for_write(config.paths.warehouse) as conn:
        missing = conn.sql("SELECT ds FROM alerts WHERE rule = 'missing_values'").fetchall()
        states = conn.sql("SELECT ds, status FROM incidents WHERE segment_value = 'A' ORDER BY ds").fetchall()
    assert missing == []
    assert states[0] == (failure[0], "open") and states[-1] == (days[29], "resolved")


def test_a_noisy_null_share_does_not_page_in_a_warehouse_s_first_days(tmp_path):
    # A new warehouse's second day: region A's NULL share moves 6 points, as its few sampled
    # rows do, and B (never NULL) turns 10% NULL: with one earlier day there is no spread to judge
    # either by. On the third day, B's first NULLs page on the amount alone; A's noise does not.
    config = configured(tmp_path)
    with open_for_write(config.paths.warehouse) as conn:
        write_day(conn, MONDAY, {("region", "A"): cell(800, 0.5, 0.30), ("region", "B"): cell(ROWS, 0.5, 0.0)})
        write_day(conn, MONDAY + timedelta(days=1),
                  {("region", "A"): cell(800, 0.5, 0.36), ("region", "B"): cell(ROWS, 0.5, 0.10)})
        assert fired(conn, MONDAY + timedelta(days=1), config, "missing_values").is_empty()
        conn.execute("UPDATE coverage_states SET n_present = n_rows WHERE ds = $ds AND segment_value IN ('B', 'all')",
                     {"ds": MONDAY + timedelta(days=1)})
        write_day(conn, MONDAY + timedelta(days=2),
                  {("region", "A"): cell(800, 0.5, 0.24), ("region", "B"): cell(ROWS, 0.5, 0.10)})
        found = fired(conn, MONDAY + timedelta(days=2), config, "missing_values")
    assert found.filter(pl.col("segment_dim") == "region").select("segment_value").rows() == [("B",)]
    # listed, not paged: a first weekend's other NULLs would look the same
    from feco import tasks

    tasks.detect(MONDAY + timedelta(days=2), config)
    with open_for_write(config.paths.warehouse) as conn:
        incidents = conn.sql("SELECT segment_value, event, not_paged FROM incidents WHERE segment_value = 'B'").fetchall()
    assert incidents == [("B", None, "not paged: 2 days of history, NULL rises page from 14 (page_after_days: the "
                                      "weekly pattern is learnt from two of every weekday)")]


def test_a_collapse_pages_from_a_new_warehouse_s_second_day_in_a_segment_under_min_rows(tmp_path):
    # Region A holds 10% of the rows, under min_rows (500 a day here: it has 472); on day 2 its
    # coverage goes from 0.6 to nothing. Noise elsewhere (B at -15%) is not a collapse.
    config = configured(tmp_path, min_rows=500)
    with open_for_write(config.paths.warehouse) as conn:
        write_day(conn, MONDAY, {("region", "A"): cell(480, 0.6), ("region", "B"): cell(4_300, 0.6)})
        write_day(conn, MONDAY + timedelta(days=1), {("region", "A"): cell(472, 0.0), ("region", "B"): cell(4_300, 0.51)})
        alerts, unjudged, _ = judge_day(conn, MONDAY + timedelta(days=1), config=config)
    collapses = alerts.filter(pl.col("rule") == "collapse")
    assert collapses.select("segment_dim", "segment_value").rows() == [("region", "A")]
    assert collapses["severity"].to_list() == ["critical"]
    assert set(unjudged["reason"]) == {"warm_up", "few_rows"}
    assert unjudged.filter(pl.col("reason") == "few_rows")["segment_value"].to_list() == ["A"]


def test_a_collapse_still_pages_on_its_second_day(tmp_path):
    # Region A (under min_rows, so only the collapse rule judges it) holds 0.6 for three days,
    # then nothing for two. The first collapsed day is no level to judge the second by: an
    # outage that went silent on its second day came back as another incident on its third.
    config = configured(tmp_path, min_rows=500)
    days = [MONDAY + timedelta(days=i) for i in range(5)]
    with open_for_write(config.paths.warehouse) as conn:
        for i, ds in enumerate(days):
            a = 0.6 + wobble(i) if i < 3 else 0.0
            write_day(conn, ds, {("region", "A"): cell(480, a), ("region", "B"): cell(4_300, 0.6 + wobble(i + 1))})
        second = fired(conn, days[-1], config, "collapse")
    assert second.select("segment_dim", "segment_value").rows() == [("region", "A")]


def test_a_weekday_whose_days_differ_keeps_the_weekly_shape(tmp_path):
    # Region A's weekends sit at 0.64 against 0.92 on weekdays. Its second and third Thursdays
    # are off by 4 points either way, so only the first is typical: the weekly shape still
    # holds (from that one Thursday), and A's third Saturday at 0.45 is a drop.
    config = configured(tmp_path)
    days = [MONDAY + timedelta(days=i) for i in range(20)]  # ends on the third Saturday
    thursdays = {3: 0.92, 10: 0.96, 17: 0.88}
    with open_for_write(config.paths.warehouse) as conn:
        for i, ds in enumerate(days):
            a = thursdays.get(i, (0.64 if ds.weekday() >= 5 else 0.92) + wobble(i))
            a = 0.45 if ds == days[-1] else a
            write_day(conn, ds, {("region", "A"): cell(ROWS, a), ("region", "B"): cell(ROWS, 0.80 + wobble(i + 1))})
        inputs = alert_inputs(conn, days[-1], alerts=config.alerts, segments=config.segments)
        drops = fired(conn, days[-1], config, "drop_vs_moving_average")
    a = inputs.filter(pl.col("segment_value") == "A").row(0, named=True)
    assert a["baseline"] == pytest.approx(0.64, abs=0.01)
    assert ("region", "A") in drops.select("segment_dim", "segment_value").rows()


def test_weekends_at_half_the_traffic_are_no_volume_collapse_but_a_collapsed_saturday_is(tmp_path):
    config = configured(tmp_path)
    days = [MONDAY + timedelta(days=i) for i in range(20)]  # ends on the third Saturday
    with open_for_write(config.paths.warehouse) as conn:
        for i, ds in enumerate(days):
            write_day(conn, ds, {("region", "A"): cell(ROWS, 0.9), ("region", "B"): cell(ROWS, 0.8)})
            events = 480 if ds.weekday() >= 5 else 1000
            conn.executemany("INSERT INTO sample_windows (ds, window_index, window_start, window_end, "
                             "events_available, events_sampled) VALUES (?, ?, now(), now(), ?, ?)",
                             [(ds, w, events, events) for w in range(8)])
        # from the second week on, when a weekend's own days are known
        assert [ds for ds in days[7:-1] if not fired(conn, ds, config, "volume_drop").is_empty()] == []
        conn.execute("UPDATE sample_windows SET events_sampled = 200 WHERE ds = ?", [days[-1]])
        (alert,) = fired(conn, days[-1], config, "volume_drop").iter_rows(named=True)
    assert alert["detail"] == "sampled events fell to 1,600 from a usual 3,840"


def test_a_region_not_reached_yet_is_judged_by_its_own_days_while_the_rest_rises(tmp_path):
    # A feature launched in region A on day 25 (0.5 to 0.9); B, not reached, keeps its level
    # with its noise (about 2 points a day). On the last day B dips 7 points, within its own
    # noise: against its usual ratio to the rest (now A at 0.9) it would be a 50% drop. A real
    # loss in B (half its rows) is still a drop.
    config = configured(tmp_path)
    noise = [0.03, -0.02, 0.01, -0.03, 0.01]  # a 5-day cycle: no weekday learns it
    days = [MONDAY + timedelta(days=i) for i in range(28)]
    with open_for_write(config.paths.warehouse) as conn:
        for i, ds in enumerate(days):
            a = 0.9 if i >= 25 else 0.5 + wobble(i)
            b = 0.43 if ds == days[-1] else 0.5 + noise[i % 5]
            write_day(conn, ds, {("region", "A"): cell(ROWS, a), ("region", "B"): cell(ROWS, b)})
        assert ("region", "B") not in fired(conn, days[-1], config, "drop_vs_moving_average").select(
            "segment_dim", "segment_value").rows()
        conn.execute("DELETE FROM coverage_states WHERE ds = ?", [days[-1]])
        conn.execute("DELETE FROM feature_status WHERE ds = ?", [days[-1]])
        conn.execute("DELETE FROM runs WHERE ds = ?", [days[-1]])
        write_day(conn, days[-1], {("region", "A"): cell(ROWS, 0.9), ("region", "B"): cell(ROWS, 0.25)})
        assert ("region", "B") in fired(conn, days[-1], config, "drop_vs_moving_average").select(
            "segment_dim", "segment_value").rows()
