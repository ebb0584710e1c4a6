from datetime import date, timedelta

import polars as pl

from feco import same_products, storage, tasks
from feco.sample_folder import WINDOWS_FILE, write_rows
from feco.warehouse import open_for_write, open_read_only
from logbuilder import make_config, make_events, write_logs

DAY = date(2026, 3, 9)
WEEK_BEFORE = DAY - timedelta(days=same_products.LAG_DAYS)


def sampled(config, ds: date, products: list[int], first_seen: list[date], f_dense: list[float]) -> None:
    day = storage.partition_dir(config.paths.samples, ds)
    n = len(products)
    rows = pl.DataFrame({"event_id": list(range(n)), "event_ts": [None] * n, "product_group": ["books"] * n,
                         "region": ["DE"] * n, "query": ["q"] * n, "product_first_seen": first_seen,
                         "product_id": products, "f_dense": f_dense, "f_sparse": [0.0] * n, "f_signed": [1.0] * n})
    write_rows(rows, storage.join(day, "window=0", "part-0.parquet"))
    storage.write_parquet(pl.DataFrame({"window": [0]}), storage.join(day, WINDOWS_FILE))


def test_the_same_products_are_counted_on_both_days_and_turnover_is_not(tmp_path):
    config = make_config(tmp_path)
    old, new = DAY - timedelta(days=200), DAY - timedelta(days=10)
    # product 1 established and covered on both days; 2 new, covered then and not now (its data
    # failed); 3 arrived since (not covered: a cohort without the value); 4 gone since
    sampled(config, WEEK_BEFORE, [1, 2, 2, 4], [old, new, new, new], [1.0, 1.0, 1.0, 1.0])
    sampled(config, DAY, [1, 2, 3, 3], [old, new, DAY, DAY], [1.0, 0.0, 0.0, 0.0])
    counts, not_counted = same_products.counts(DAY, config=config, references={})
    assert not_counted is None
    dense = {(r["segment_dim"], r["segment_value"]): (r["n_products"], r["n_rows_now"], r["n_covered_now"],
                                                      r["n_rows_then"], r["n_covered_then"])
             for r in counts.filter(feature="f_dense").iter_rows(named=True)}
    assert dense[("product_age", "new")] == (1, 1, 0, 2, 2)  # product 3 is not in it: no loss from turnover
    assert dense[("product_age", "established")] == (1, 1, 1, 1, 1)
    assert sum(v[0] for k, v in dense.items() if k[0] == "age_band") == 2


def test_without_the_product_column_or_the_week_before_nothing_is_counted_and_says_why(tmp_path):
    config = make_config(tmp_path)
    sampled(config, DAY, [1], [DAY], [1.0])
    counts, not_counted = same_products.counts(DAY, config=config, references={})
    assert counts.is_empty() and not_counted == f"{WEEK_BEFORE} was not sampled"
    sampled(config, WEEK_BEFORE, [1], [DAY], [1.0])
    renamed = make_config(tmp_path, logs={"features": ["f_dense", "f_sparse", "f_signed"], "product_id": "sku"})
    counts, not_counted = same_products.counts(DAY, config=renamed, references={})
    assert counts.is_empty() and "'sku'" in not_counted


def test_a_day_run_publishes_its_same_products_counts_and_a_rerun_replaces_them(tmp_path):
    config = make_config(tmp_path)
    for ds in (WEEK_BEFORE, DAY):
        events = make_events(ds, events=3000, seed=ds.day)
        write_logs(config.paths.logs, events.with_columns((pl.int_range(pl.len()) % 97).alias("product_id")))
    for ds in (WEEK_BEFORE, DAY):
        tasks.sample(ds, config)
        counted = tasks.compute_coverage(ds, config)["same_products"]
        tasks.publish(ds, config)
    assert counted > 0
    with open_read_only(config.paths.warehouse) as conn:
        stored = conn.sql("SELECT * FROM same_products ORDER BY ALL").pl()
    assert stored["ds"].unique().to_list() == [DAY] and (stored["n_rows_then"] > 0).all()
    tasks.run_day(DAY, config, deliver=False)
    with open_read_only(config.paths.warehouse) as conn:
        assert conn.sql("SELECT * FROM same_products ORDER BY ALL").pl().equals(stored)


def test_status_says_when_product_age_segments_are_judged_without_their_own_products(tmp_path):
    from feco.cli.pipeline import _same_products_not_counted

    config = make_config(tmp_path)
    with open_for_write(config.paths.warehouse) as conn:
        conn.execute("INSERT INTO runs VALUES ($ds, now(), 10, 30, 3, 'x')", {"ds": DAY})
        assert _same_products_not_counted(conn, config, days=same_products.LAG_DAYS) == []  # too soon to count
        [warning] = _same_products_not_counted(conn, config, days=9)
        assert "[logs] product_id, 'product_id'" in warning
        conn.execute("INSERT INTO same_products VALUES ($ds, 7, 'f_dense', 'product_age', 'new', 1, 1, 1, 1, 1)",
                     {"ds": DAY})
        assert _same_products_not_counted(conn, config, days=9) == []
