"""Issue 61: one expectation that follows today's traffic, on LTR features that depend on the query.

LETOR features are normalised per query and NULL where a ranker did not rank the document, so a
segment's coverage and NULL share depend on WHICH queries it gets, and a weekend's (a
holiday's) head is other queries than a weekday's. On worlds written from real LTR values with
a real calendar (the traffic families of bench/alert_worlds.py), product groups then move on
weekends and holidays by more than their band mix explains, and today's method pages them.

Each history is written as coverage states by hand, as tests/alerts/test_calendar.py does: one
feature in three product groups, counted by query band and by product_group x query_band (as
configs/feco.toml counts them), all traffic the groups' sum. A group's coverage in a band is
its band's queries' own, so it moves when the group's queries within the band change. NDCG at
risk's test adds small hand-made logs, sampled, and a reference ranker trained on them.
"""

from datetime import date, timedelta

import polars as pl
import pytest

from feco import tasks
from feco.warehouse import open_for_write
from logbuilder import make_config, make_events, write_logs

FRIDAY = date(2026, 3, 6)  # the warehouse's first day: its first Saturday is its second day
ROWS = 8_000  # a group's rows on a weekday: 1,000 a window
BANDS = ("head", "torso", "tail")
MIX_FAILS = pytest.mark.xfail(strict=True, reason="issue 61: the expectation does not follow today's query mix yet")


def cells(rows: int, shares: tuple[float, ...], levels: tuple[float, ...], missing: float = 0.0) -> dict:
    """A group's cells by band: its rows split by ``shares``, each band at its coverage."""
    return {band: (round(rows * share), level, missing) for band, share, level in zip(BANDS, shares, levels)}


def write_day(conn, ds: date, groups: dict[str, dict[str, tuple[int, float, float]]], i: int) -> None:
    """One day's states of f_dense: each (group, band) cell's rows, coverage and NULL share
    over eight windows (give or take 0.1 point a window), and every sum of them."""
    parts = {("product_group x query_band", f"{g} x {b}"): cell for g, by_band in groups.items()
             for b, cell in by_band.items()}
    sums: dict[tuple[str, str], list] = {}
    for (_, name), cell in parts.items():
        group, band = name.split(" x ")
        for key in (("product_group", group), ("query_band", band), ("all", "all")):
            sums.setdefault(key, []).append(cell)
    for key, members in sums.items():
        rows = sum(n for n, _, _ in members)
        parts[key] = (rows, sum(n * c for n, c, _ in members) / rows, sum(n * m for n, _, m in members) / rows)
    states = []
    for (dim, value), (n, coverage, missing) in parts.items():
        per_window = n // 8
        for window in range(8):
            wobble = 0.002 * (window % 2 - 0.5) + 0.003 * ((i + window) % 3 - 1) / 3
            states.append((ds, window, "f_dense", dim, value, per_window, round(per_window * (1 - missing)),
                           round(per_window * max(coverage + wobble, 0.0))))
    conn.executemany("INSERT INTO coverage_states VALUES (?, ?, ?, ?, ?, ?, ?, ?)", states)
    conn.execute("INSERT INTO feature_status VALUES (?, 'f_dense', 'ok', NULL, '> 0')", [ds])
    conn.execute("INSERT INTO runs VALUES (?, now(), 1000, ?, 1, 'x')", [ds, sum(n for n, _, _ in sums[("all", "all")])])


def configured(tmp_path):
    return make_config(tmp_path, logs={"features": ["f_dense"]}, coverage={},
                       segments={"dimensions": ["product_group", "query_band"],
                                 "crosses": [["product_group", "query_band"]]},
                       alerts={"min_rows": 100, "incidents": {"page_min_share": 0.05}})


# Garden's weekday head holds most of its traffic; at weekends its searches are other queries,
# which feco's bands (drawn from four weeks, mostly weekdays) count as torso, and garden's
# torso queries of a weekend are not its weekday ones: garden falls from 72.5% on a weekday to
# 67% on its first two Saturdays and 60.5% on its third, whose head is less covered (issue 61's
# independent worlds: `f5 in product_group=garden: coverage 64.3% vs 72.2%` on two Saturdays).
# Its head and tail queries keep their levels; toys and books keep their queries.
WEEKDAY = {"garden": ((0.6, 0.3, 0.1), (0.80, 0.65, 0.50)), "toys": ((0.5, 0.3, 0.2), (0.70, 0.55, 0.40)),
           "books": ((0.4, 0.35, 0.25), (0.60, 0.50, 0.35))}
GARDEN_WEEKEND_TORSO = {0: 0.63, 1: 0.64, 2: 0.50}  # by weekend: each weekend's head is its own
MISSING = {"garden": 0.155, "toys": 0.10, "books": 0.10}  # NULL where no ranker ranked the document


def usual_day(ds: date, weekend: int) -> dict:
    """Each group's cells on ``ds``; ``weekend`` numbers the weekend a weekend day falls in."""
    groups = {}
    for group, (shares, levels) in WEEKDAY.items():
        if ds.weekday() >= 5 and group == "garden":
            shares, levels = (0.35, 0.5, 0.15), (0.80, GARDEN_WEEKEND_TORSO[weekend % 3], 0.50)
        groups[group] = cells(round(ROWS * (0.6 if ds.weekday() >= 5 else 1.0)), shares, levels, MISSING[group])
    return groups


# A holiday: 2.5 times the searches, the mix shifted further than any weekend's. Garden's
# searches go to its torso and tail queries, others than a weekend's, less covered and more
# often unranked: garden falls to 58%, 12% under what its band mix predicts (issue 61's -11%
# to -17%), and its NULL share rises from 15.5% to 23.5% (issue 61's `f19 in
# product_group=toys: NULL/NaN share 22.2% vs 15.5% expected`), while its head queries keep their
# level: the mix, not a failure (a failure takes every band of the group).
HOLIDAY = {"garden": ((0.3, 0.45, 0.25), (0.80, 0.52, 0.42), (0.155, 0.28, 0.25)),
           "toys": ((0.35, 0.35, 0.3), WEEKDAY["toys"][1], (0.10,) * 3),
           "books": ((0.3, 0.35, 0.35), WEEKDAY["books"][1], (0.10,) * 3)}


def holiday_day() -> dict:
    return {group: {band: (round(2.5 * ROWS * share), level, missing)
                    for band, share, level, missing in zip(BANDS, *knobs)} for group, knobs in HOLIDAY.items()}


def pages(config, days: list[date]) -> list[tuple]:
    """Detect every day in order; the incidents that paged someone (date, segment)."""
    for ds in days:
        tasks.detect(ds, config)
    with open_for_write(config.paths.warehouse) as conn:
        return conn.sql("SELECT ds, segment_dim, segment_value FROM incidents "
                        "WHERE event = 'opened' AND paged_rank > 0 ORDER BY ds").fetchall()


def third_saturday(tmp_path, *, step: float = 1.0) -> tuple[date, list[tuple]]:
    """A warehouse from a Friday to its third Saturday (its 16th day, paged: two of every
    weekday are known), garden's coverage multiplied by ``step`` on that Saturday."""
    config = configured(tmp_path)
    days = [FRIDAY + timedelta(days=i) for i in range(16)]
    with open_for_write(config.paths.warehouse) as conn:
        for i, ds in enumerate(days):
            groups = usual_day(ds, weekend=(i + 1) // 7)
            if ds == days[-1]:
                groups["garden"] = {b: (n, c * step, m) for b, (n, c, m) in groups["garden"].items()}
            write_day(conn, ds, groups, i)
    assert days[-1].weekday() == 5
    return days[-1], pages(config, days)


@MIX_FAILS
def test_a_holiday_s_shifted_query_mix_in_a_group_of_query_dependent_features_does_not_page(tmp_path):
    # Issue 61's independent worlds: on a holiday (2.5x the searches, a shifted mix) query-
    # dependent features in product groups at -11% to -17%, NULL shares of rank features up.
    config = configured(tmp_path)
    days = [FRIDAY + timedelta(days=i) for i in range(27)]  # almost four weeks, then a Wednesday's holiday
    with open_for_write(config.paths.warehouse) as conn:
        for i, ds in enumerate(days):
            write_day(conn, ds, holiday_day() if ds == days[-1] else usual_day(ds, weekend=(i + 1) // 7), i)
    assert days[-1].weekday() == 2
    assert [p for p in pages(config, days) if p[0] == days[-1]] == []


@MIX_FAILS
def test_a_third_saturday_of_other_head_queries_does_not_page(tmp_path):
    # A warehouse started on a Friday knows two Saturdays by its third (early weekends); garden's
    # third sits 7 points under the first two, only in the band its weekend queries fall in.
    saturday, paged = third_saturday(tmp_path)
    assert [p for p in paged if p[0] == saturday] == []


def test_a_real_20_percent_step_on_that_saturday_still_pages(tmp_path):
    saturday, paged = third_saturday(tmp_path, step=0.8)
    assert (saturday, "product_group", "garden") in paged


MONDAY = date(2026, 3, 2)
RANKED_DAYS = [MONDAY + timedelta(days=i) for i in range(12)]  # two weeks' weekdays and the weekend between
TRAINED = MONDAY + timedelta(days=5)  # the model serves from the first Saturday, trained on the days before
CLEAN_SATURDAY = MONDAY + timedelta(days=12)
# f_dense's coverage: a Saturday's head is other queries, less covered, on both Saturdays alike.
LEVELS = {"weekday": {"f_dense": 0.80, "f_sparse": 0.30, "f_signed": 0.99},
          "weekend": {"f_dense": 0.70, "f_sparse": 0.29, "f_signed": 0.99}}


def ranked_logs(config) -> None:
    """Sampled logs on which f_dense decides relevance, so losing its values costs NDCG."""
    for i, ds in enumerate(RANKED_DAYS):
        events = make_events(ds, events=6_000, seed=i, rows_per_event=5)
        write_logs(config.paths.logs, events.with_columns(
            ((pl.col("f_dense") > 0.55).cast(pl.Int8) + (pl.col("f_dense") > 0.85).cast(pl.Int8)).alias("label")))
        tasks.sample(ds, config)


def write_levels(conn, ds: date, levels: dict[str, float]) -> None:
    """One day's states in all traffic: each feature at its level in eight windows of 1,000 rows."""
    states = [(ds, window, feature, "all", "all", 1_000, 1_000, round(1_000 * (level + 0.002 * (window % 2 - 0.5))))
              for feature, level in levels.items() for window in range(8)]
    conn.executemany("INSERT INTO coverage_states VALUES (?, ?, ?, ?, ?, ?, ?, ?)", states)
    conn.executemany("INSERT INTO feature_status VALUES (?, ?, 'ok', NULL, '> 0')", [(ds, f) for f in levels])
    conn.execute("INSERT INTO runs VALUES (?, now(), 1000, 8000, 1, 'x')", [ds])


@MIX_FAILS
def test_a_clean_saturday_s_ndcg_at_risk_interval_covers_zero(tmp_path):
    # Today's reference days are the last clean days, weekdays: a Saturday's usual coverage of
    # its own queries reads as a 12% loss of f_dense, replayed as NDCG lost every Saturday.
    from feco.ranker.at_risk import ndcg_at_risk
    from feco.ranker.daily import train_reference

    config = make_config(tmp_path, sampling={"events_per_window": 60, "seed": 1},
                         ranker={"reference_days": 4, "validation_days": 1, "num_boost_round": 30, "segments": []},
                         alerts={"min_rows": 100, "severity": {"reference_days": 5, "events": 400, "resamples": 200}})
    ranked_logs(config)
    train_reference(TRAINED, config)
    with open_for_write(config.paths.warehouse) as conn:
        for ds in [*RANKED_DAYS, CLEAN_SATURDAY]:
            write_levels(conn, ds, LEVELS["weekend" if ds.weekday() >= 5 else "weekday"])
        risk = ndcg_at_risk(conn, CLEAN_SATURDAY, config=config).row(0, named=True)
    assert risk["events"] > 0
    assert risk["d_ndcg8_low"] <= 0 <= risk["d_ndcg8_high"], risk
