"""A batch of new products changes a segment's mix of product ages, not its data's health: the
drop and missing-values rules judge all traffic and the product-age segments against their
previous days as today's mix of age bands would have given them."""

from datetime import date, timedelta

import polars as pl

from feco.alerts.detect import alert_inputs, detect_alerts
from feco.warehouse import open_for_write
from logbuilder import make_config

START = date(2026, 3, 2)
DAYS = [START + timedelta(days=i) for i in range(36)]
LEVEL = {"0d": 0.05, "90d+": 0.6}  # a product's first day has no engagement yet
AGE = {"0d": "new", "1-2d": "new", "3-6d": "new", "7-13d": "new", "14-29d": "new", "30-89d": "established",
       "90d+": "established"}


def rows_on(ds: date, last: date) -> dict[str, int]:
    """Rows a window per band: a few brand-new products a day, a batch every 10 days and on the last day."""
    batch = (ds - START).days % 10 == 5 or ds == last
    return {"0d": 1000 if batch else 100, "90d+": 1900}


def write_day(conn, ds: date, rows: dict[str, int], coverage: dict[str, float],
              present: dict[str, float] | None = None) -> None:
    """States of f_dense on ds for each age band, product age and all traffic (8 windows alike;
    ``present``: each band's share of non-NULL values, all by default)."""
    covered = {band: round(rows[band] * coverage[band]) for band in rows}
    valued = {band: round(rows[band] * (present or {}).get(band, 1.0)) for band in rows}
    segments = [(("age_band", band), rows[band], valued[band], covered[band]) for band in rows]
    for age in sorted({AGE[band] for band in rows}):
        bands = [band for band in rows if AGE[band] == age]
        segments.append((("product_age", age), *(sum(counts[b] for b in bands) for counts in (rows, valued, covered))))
    segments.append((("all", "all"), sum(rows.values()), sum(valued.values()), sum(covered.values())))
    conn.executemany("INSERT INTO coverage_states VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                     [(ds, window, "f_dense", dim, value, n, p, c)
                      for (dim, value), n, p, c in segments for window in range(8)])


def drops_on_the_last_day(tmp_path, *, outage: bool) -> pl.DataFrame:
    config = make_config(tmp_path, logs={"features": ["f_dense"]}, coverage={},
                         segments={"dimensions": ["product_age", "age_band"]},
                         alerts={"min_rows": 100, "weekly": False})
    with open_for_write(config.paths.warehouse) as conn:
        for ds in DAYS:
            wobble = 1 + 0.02 * ((ds - START).days % 3 - 1)
            level = {band: value * wobble * (0.5 if outage and ds == DAYS[-1] else 1) for band, value in LEVEL.items()}
            write_day(conn, ds, rows_on(ds, DAYS[-1]), level)
        found = detect_alerts(conn, DAYS[-1], config=config)
    return found.filter(pl.col("rule") == "drop_vs_moving_average").sort("segment_dim", "segment_value")


def test_a_batch_of_new_products_is_no_drop_of_all_traffic(tmp_path):
    # all traffic falls from 57% to 41% on the batch's day: its mix, at the bands' usual
    # levels, says as much
    assert drops_on_the_last_day(tmp_path, outage=False).is_empty()


def test_a_real_drop_on_a_batch_day_still_shows(tmp_path):
    fired = drops_on_the_last_day(tmp_path, outage=True)
    assert ("all", "all") in set(zip(fired["segment_dim"], fired["segment_value"]))


def test_the_overlap_of_a_segments_age_mix_with_its_history(tmp_path):
    # a monthly batch: last month's new products (14-29 days old) gave way to today's (0 days)
    config = make_config(tmp_path, logs={"features": ["f_dense"]}, coverage={},
                         segments={"dimensions": ["product_age", "age_band"]}, alerts={"min_rows": 100})
    with open_for_write(config.paths.warehouse) as conn:
        for ds in DAYS[:8]:
            replaced = ds == DAYS[7]
            rows = {"0d" if replaced else "14-29d": 500, "90d+": 1500}
            write_day(conn, ds, rows, {band: 0.5 for band in rows})
        inputs = alert_inputs(conn, DAYS[7], alerts=config.alerts, segments=config.segments)
    overlap = {(row["segment_dim"], row["segment_value"]): row["history_overlap"] for row in inputs.to_dicts()}
    assert overlap[("product_age", "new")] == 0.0
    assert overlap[("product_age", "established")] == 1.0
    assert overlap[("all", "all")] == 0.75
    assert overlap[("age_band", "0d")] is None


def pages_on_a_monthly_batch_day(tmp_path, *, outage: bool = False, nulls: bool = False) -> pl.DataFrame:
    """A monthly batch of new products, without reviews on their first day (NULL, and so not
    covered), lands on the first and the last of 36 days; no new product in between: on the
    last day the history of the last month holds no product of their age."""
    config = make_config(tmp_path, logs={"features": ["f_dense"]}, coverage={},
                         segments={"dimensions": ["product_age", "age_band"]},
                         alerts={"min_rows": 100, "weekly": False})
    with open_for_write(config.paths.warehouse) as conn:
        for ds in DAYS:
            batch = ds in (DAYS[0], DAYS[-1])
            rows = {"0d": 600, "90d+": 1900} if batch else {"90d+": 1900}
            wobble = 1 + 0.02 * ((ds - START).days % 3 - 1)
            level = 0.5 if outage and ds == DAYS[-1] else 1
            present = {"0d": 0.0, "90d+": 0.7 if nulls and ds == DAYS[-1] else 1.0}
            write_day(conn, ds, rows, {"0d": 0.0, "90d+": 0.95 * wobble * level}, present=present)
        found = detect_alerts(conn, DAYS[-1], config=config)
    return found.filter(pl.col("segment_dim") == "all")


def test_a_monthly_batch_of_new_products_is_no_drop_and_no_missing_values_in_all_traffic(tmp_path):
    # all traffic falls from 95% to 72% covered and from 0% to 24% NULL: the batch's age was
    # last seen a month ago, without reviews; at those levels today's mix says as much
    assert pages_on_a_monthly_batch_day(tmp_path).get_column("rule").to_list() == []


def test_a_real_drop_on_a_monthly_batch_day_still_shows(tmp_path):
    assert "drop_vs_moving_average" in pages_on_a_monthly_batch_day(tmp_path, outage=True).get_column("rule")


def test_values_of_established_products_turning_null_on_a_monthly_batch_day_still_show(tmp_path):
    assert "missing_values" in pages_on_a_monthly_batch_day(tmp_path, nulls=True).get_column("rule")


def test_the_first_batch_since_the_history_began_is_taken_at_the_youngest_bands_levels(tmp_path):
    # The history holds one cohort, 7-13 days old, then 14-29: young products have few reviews
    # (10% covered, 80% NULL). Today's batch, the first 0d products ever seen, has none: at the
    # youngest band's levels today's mix says nearly as much, and neither rule pages.
    config = make_config(tmp_path, logs={"features": ["f_dense"]}, coverage={},
                         segments={"dimensions": ["product_age", "age_band"]},
                         alerts={"min_rows": 100, "weekly": False})
    with open_for_write(config.paths.warehouse) as conn:
        for day, ds in enumerate(DAYS):
            young = "7-13d" if day < 7 else "14-29d"
            rows = {young: 600, "90d+": 1900} | ({"0d": 600} if ds == DAYS[-1] else {})
            wobble = 1 + 0.02 * (day % 3 - 1)
            write_day(conn, ds, rows, {"0d": 0.0, young: 0.1 if young == "7-13d" else 0.4, "90d+": 0.95 * wobble},
                      present={"0d": 0.0, young: 0.2 if young == "7-13d" else 0.6})
        found = detect_alerts(conn, DAYS[-1], config=config)
    assert found.filter(pl.col("segment_dim") == "all").get_column("rule").to_list() == []


def test_a_batchs_second_day_is_taken_at_its_first_days_levels(tmp_path):
    # A cohort seen from 3 days old ages through the history; the next batch lands on the day
    # before the last (0d, the first ever) and is 1-2 days old on the last, a band never seen
    # either: it is taken at the 0d band's levels (the same products, a day younger), not at
    # the 3-6d band's (last month's cohort, with reviews by then), and neither rule pages.
    config = make_config(tmp_path, logs={"features": ["f_dense"]}, coverage={},
                         segments={"dimensions": ["product_age", "age_band"]},
                         alerts={"min_rows": 100, "weekly": False})
    cohort = [("3-6d", 0.3, 0.6)] * 4 + [("7-13d", 0.4, 0.7)] * 6 + [("14-29d", 0.5, 0.8)] * 17 + [("30-89d", 0.6, 0.9)] * 9
    with open_for_write(config.paths.warehouse) as conn:
        for day, ds in enumerate(DAYS):
            band, level, share = cohort[day]
            rows, coverage, present = {band: 600, "90d+": 1900}, {band: level}, {band: share}
            if day >= len(DAYS) - 2:  # the batch: no reviews on its first day, a few on its second
                batch = "0d" if day == len(DAYS) - 2 else "1-2d"
                rows[batch], coverage[batch], present[batch] = 1500, (0.0 if batch == "0d" else 0.02), (0.0 if batch == "0d" else 0.05)
            wobble = 1 + 0.02 * (day % 3 - 1)
            write_day(conn, ds, rows, coverage | {"90d+": 0.95 * wobble}, present=present)
        found = detect_alerts(conn, DAYS[-1], config=config)
    assert found.filter(pl.col("segment_dim") == "all").get_column("rule").to_list() == []


def test_a_first_batch_replacing_last_months_new_products_is_no_collapse_of_new_products(tmp_path):
    # The bench's churn world: last month's cohort (14-29 days old, reviewed) is all of
    # product_age=new until a batch lands whose products have no reviews yet. The segment's
    # rows are other products than its history's: the collapse rule, like the others, leaves
    # it unjudged (the unjudged table's age_mix); the established products failing the same
    # day still alert.
    config = make_config(tmp_path, logs={"features": ["f_dense"]}, coverage={},
                         segments={"dimensions": ["product_age", "age_band"]},
                         alerts={"min_rows": 100, "weekly": False})
    with open_for_write(config.paths.warehouse) as conn:
        for day, ds in enumerate(DAYS[:10]):
            batch = ds == DAYS[9]
            rows = {"0d" if batch else "14-29d": 600, "90d+": 1900}
            write_day(conn, ds, rows, {"0d": 0.0, "14-29d": 0.8, "90d+": 0.1 if batch else 0.95})
        found = detect_alerts(conn, DAYS[9], config=config)
    alerted = found.filter(pl.col("segment_dim") == "product_age")
    assert alerted.get_column("segment_value").to_list() == ["established"]
