import math
from datetime import date, timedelta

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from feco import coverage, storage
from feco.coverage import compute_states, reference_statistics
from feco.errors import DataError
from feco.sample_folder import SampleFiles
from logbuilder import make_config, make_events

DAY = date(2026, 3, 2)
COMPOSED, DECOMPOSED = "\u00d6sterreich", "O\u0308sterreich"  # look alike: NFC makes the second the first


def sample_frame(values: dict[str, list], **columns) -> pl.DataFrame:
    n = len(next(iter(values.values())))
    base = {
        "window": [i % 2 for i in range(n)],
        "event_id": list(range(n)),
        "product_group": ["books"] * n,
        "region": ["US" if i % 3 else "DE" for i in range(n)],
        "query": ["q1"] * n,
        "product_first_seen": [DAY - timedelta(days=100)] * n,
    }
    return pl.DataFrame({**base, **columns, **values}, strict=False).with_columns(
        pl.col("window").cast(pl.Int16))


def global_counts(states: pl.DataFrame, feature: str) -> tuple[int, int, int]:
    rows = states.filter(feature=feature, segment_dim="all")
    return tuple(int(rows[c].sum()) for c in ("n_rows", "n_present", "n_covered"))


def test_null_and_nan_are_not_present_and_never_covered(tmp_path):
    config = make_config(tmp_path)
    frame = sample_frame({
        "f_dense": [1.0, 0.0, None, math.nan, -2.0, math.inf],
        "f_sparse": [0.0] * 6,
        "f_signed": [0.0, -1.0, 2.0, None, math.nan, -math.inf],
    })
    states, status = compute_states(frame, ds=DAY, config=config)
    assert global_counts(states, "f_dense") == (6, 4, 2)   # 1.0 and +inf are > 0
    assert global_counts(states, "f_sparse") == (6, 6, 0)
    assert global_counts(states, "f_signed") == (6, 4, 3)  # != 0: -1, 2, -inf
    assert status["status"].to_list() == ["ok"] * 3


def test_threshold_rule(tmp_path):
    config = make_config(tmp_path, coverage={"rules": {"f_dense": "> 0.5"}})
    frame = sample_frame({"f_dense": [0.2, 0.5, 0.7, 3.0], "f_sparse": [0.0] * 4,
                          "f_signed": [1.0] * 4})
    states, _ = compute_states(frame, ds=DAY, config=config)
    assert global_counts(states, "f_dense") == (4, 4, 2)


def test_reference_rule_uses_the_stored_statistic(tmp_path):
    config = make_config(tmp_path, coverage={
        "rules": {"f_dense": "> reference_median"},
        "reference": {"start": "2026-01-01", "end": "2026-01-07"},
    })
    reference = sample_frame({"f_dense": [1.0, 2.0, 3.0, None], "f_sparse": [0.0] * 4,
                              "f_signed": [1.0] * 4})
    statistics = reference_statistics(reference, config=config)
    assert statistics == {"f_dense": 2.0}
    day = sample_frame({"f_dense": [1.5, 2.5, 9.0, 2.0], "f_sparse": [0.0] * 4,
                        "f_signed": [1.0] * 4})
    states, _ = compute_states(day, ds=DAY, config=config, references=statistics)
    assert global_counts(states, "f_dense") == (4, 4, 2)
    with pytest.raises(DataError, match="no reference median stored for feature 'f_dense'"):
        compute_states(day, ds=DAY, config=config)


def test_missing_feature_column_is_a_status_not_a_failure(tmp_path):
    config = make_config(tmp_path)
    frame = sample_frame({"f_dense": [1.0, 0.0], "f_signed": [1.0, 1.0]})
    states, status = compute_states(frame, ds=DAY, config=config)
    assert global_counts(states, "f_sparse") == (2, 0, 0)
    assert status.filter(feature="f_sparse")["status"].item() == "missing_column"


def test_non_numeric_feature_column_is_a_data_error(tmp_path):
    config = make_config(tmp_path)
    frame = sample_frame({"f_dense": ["a", "b"], "f_sparse": [0.0, 1.0], "f_signed": [1.0, 1.0]})
    with pytest.raises(DataError, match="feature column 'f_dense' is String, not numeric"):
        compute_states(frame, ds=DAY, config=config)


def segment_rows(states: pl.DataFrame, dim: str) -> dict[str, int]:
    rows = states.filter(feature="f_dense", segment_dim=dim).group_by("segment_value").agg(pl.col("n_rows").sum())
    return dict(rows.iter_rows())


def test_query_bands_follow_traffic_share(tmp_path):
    config = make_config(tmp_path)
    # q_top has 5 of 10 events (50%), q_mid 3 (30%), q_a and q_b 1 each; one row per event
    queries = ["q_top"] * 5 + ["q_mid"] * 3 + ["q_a", "q_b"]
    frame = sample_frame({"f_dense": [1.0] * 10, "f_sparse": [0.0] * 10, "f_signed": [1.0] * 10},
                         query=queries)
    states, _ = compute_states(frame, ds=DAY, config=config)
    assert segment_rows(states, "query_band") == {"head": 5, "torso": 3, "tail": 2}


def test_query_band_counts_events_not_rows(tmp_path):
    config = make_config(tmp_path)
    # q_long has one event of 6 rows; q_x, q_y, q_z one row each: by events each query holds
    # 25%: q_long and q_x start before 50% (head), q_y and q_z before 80% (torso). By rows,
    # q_long alone would hold 67% and q_z would fall in the tail.
    frame = sample_frame({"f_dense": [1.0] * 9, "f_sparse": [0.0] * 9, "f_signed": [1.0] * 9},
                         query=["q_long"] * 6 + ["q_x", "q_y", "q_z"],
                         event_id=[0] * 6 + [1, 2, 3])
    states, _ = compute_states(frame, ds=DAY, config=config)
    assert segment_rows(states, "query_band") == {"head": 7, "torso": 2}


def test_query_bands_count_the_days_before_too(tmp_path):
    config = make_config(tmp_path)
    # Today q_new has 5 of 10 events and would be head alone; over the band days q_old
    # (55 earlier events) leads, and q_new's 5 of 65 events put it in the tail.
    frame = sample_frame({"f_dense": [1.0] * 10, "f_sparse": [0.0] * 10, "f_signed": [1.0] * 10},
                         query=["q_new"] * 5 + ["q_old"] * 5)
    history = pl.DataFrame({"query": ["q_old"], "n": [55]})
    states, _ = compute_states(frame, ds=DAY, config=config, band_history=history)
    assert segment_rows(states, "query_band") == {"head": 5, "tail": 5}
    alone, _ = compute_states(frame, ds=DAY, config=config)
    assert segment_rows(alone, "query_band") == {"head": 5, "torso": 5}


def test_the_days_kept_events_per_query_set_its_bands_as_counting_them_does(tmp_path):
    config = make_config(tmp_path)
    frame = sample_frame({"f_dense": [1.0] * 10, "f_sparse": [0.0] * 10, "f_signed": [1.0] * 10},
                         query=["q_top"] * 5 + ["q_mid"] * 3 + ["q_a", "q_b"])
    kept = frame.select("event_id", "query").unique().group_by("query").len("n")
    counted, _ = compute_states(frame, ds=DAY, config=config)
    read, _ = compute_states(frame, ds=DAY, config=config, day_events=kept)
    assert read.sort(read.columns).equals(counted.sort(counted.columns))
    # the compiled counts take the bands from the kept counts, not from the rows
    swapped = kept.with_columns(pl.col("query").replace({"q_top": "q_a", "q_a": "q_top"}))
    moved, _ = compute_states(frame, ds=DAY, config=config, day_events=swapped)
    assert segment_rows(moved, "query_band") == {"head": 1, "torso": 3, "tail": 6}


def test_product_age_and_unknown_values(tmp_path):
    config = make_config(tmp_path)
    seen = [DAY - timedelta(days=d) for d in (0, 29)] + [DAY - timedelta(days=30), None]
    frame = sample_frame({"f_dense": [1.0] * 4, "f_sparse": [0.0] * 4, "f_signed": [1.0] * 4},
                         product_first_seen=seen, region=["US", None, "DE", "DE"], query=["q1", None, "q1", "q1"])
    states, _ = compute_states(frame, ds=DAY, config=config)
    assert segment_rows(states, "product_age") == {"new": 2, "established": 1, "unknown": 1}
    # age bands nest in product_age: 0 and 29 days are new (0d, 14-29d), 30 is established
    assert segment_rows(states, "age_band") == {"0d": 1, "14-29d": 1, "30-89d": 1, "unknown": 1}
    assert segment_rows(states, "region") == {"US": 1, "unknown": 1, "DE": 2}
    assert segment_rows(states, "query_band")["unknown"] == 1


def test_segment_names_and_crosses(tmp_path):
    config = make_config(tmp_path)
    states, _ = compute_states(make_events(DAY, events=50).with_columns(
        pl.lit(0, pl.Int16).alias("window")), ds=DAY, config=config)
    dims = set(states["segment_dim"])
    assert dims == {"all", "product_group", "region", "query_band", "product_age", "age_band",
                    "region x query_band"}
    crossed = states.filter(segment_dim="region x query_band")["segment_value"]
    assert all(" x " in v for v in crossed)
    assert states.filter(segment_dim="all")["segment_value"].unique().to_list() == ["all"]


@settings(max_examples=40, deadline=None)
@given(
    values=st.lists(st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True,
                                                   width=32)), min_size=1, max_size=60),
    regions=st.lists(st.sampled_from(["US", "DE", "JP"]), min_size=60, max_size=60),
    windows=st.lists(st.integers(0, 3), min_size=60, max_size=60),
)
def test_states_match_a_brute_force_count_and_roll_up_exactly(tmp_path_factory, values, regions,
                                                              windows):
    config = make_config(tmp_path_factory.mktemp("c"))
    n = len(values)
    frame = sample_frame({"f_dense": values, "f_sparse": values, "f_signed": values},
                         region=regions[:n], window=windows[:n])
    states, _ = compute_states(frame, ds=DAY, config=config)
    present = [v is not None and not math.isnan(v) for v in values]
    for feature, passes in (("f_dense", lambda v: v > 0), ("f_signed", lambda v: v != 0)):
        covered = sum(p and passes(v) for p, v in zip(present, values))
        assert global_counts(states, feature) == (n, sum(present), covered)
        for dim in ("region", "query_band", "product_age", "region x query_band"):
            rolled = states.filter(feature=feature, segment_dim=dim)
            assert tuple(int(rolled[c].sum()) for c in ("n_rows", "n_present", "n_covered")) \
                == global_counts(states, feature)
    per_region = states.filter(feature="f_dense", segment_dim="region").group_by(
        "segment_value").agg(pl.col("n_rows").sum())
    expected = pl.Series(regions[:n]).value_counts()
    assert dict(per_region.iter_rows()) == dict(expected.iter_rows())


def test_rows_are_labelled_with_the_segments_coverage_counts_them_under(tmp_path):
    # The ranker explains and replays rows by these labels: each segment's rows must be the
    # n_rows coverage counts for it, query bands (from the day and the days before) included.
    config = make_config(tmp_path, segments={"crosses": [["region", "query_band"]], "head_share": 0.3})
    sample = make_events(DAY, events=400, seed=4).with_columns(pl.lit(0, pl.Int16).alias("window"))
    history = pl.DataFrame({"query": ["q3", "q7"], "n": [500, 200]})
    states, _ = compute_states(sample, ds=DAY, config=config, band_history=history)
    labels = coverage.segment_rows(sample, ds=DAY, config=config, band_history=history)
    assert labels.height == sample.height
    counted = {(d, v): n for d, v, n in states.filter(feature="f_dense").select(
        "segment_dim", "segment_value", "n_rows").iter_rows()}
    for dims in config.segments.names()[1:]:
        value = pl.concat_str(list(dims), separator=" x ")
        labelled = dict(labels.group_by(value.alias("v")).len().iter_rows())
        assert labelled == {v: n for (d, v), n in counted.items() if d == " x ".join(dims)}, dims
    assert set(labels["query_band"]) == {"head", "torso", "tail"}


def _sample_files(root, frame: pl.DataFrame) -> SampleFiles:
    """``frame`` written as a day's sample files (window=N/part-0.parquet), row groups of 7
    rows so a window is read in several batches, each with its own Parquet dictionaries."""
    fs, _ = storage.filesystem_for(root)
    files, windows = [], []
    for (window,), rows in sorted(frame.group_by("window")):
        path = root / f"window={window}" / "part-0.parquet"
        path.parent.mkdir(parents=True)
        rows.drop("window").write_parquet(path, row_group_size=7)
        files.append(str(path))
        windows.append(window)
    return SampleFiles(fs, files, windows, files)


def test_sample_files_read_the_same_rows_on_local_disk_and_elsewhere(tmp_path):
    # On a local disk polars decodes numbers, booleans and dates and pyarrow the rest; away
    # from it pyarrow decodes all. Row groups of 7 rows and batches of 5 cut across each other.
    import dataclasses

    import pyarrow.fs as pafs

    n = 60
    rng = np.random.default_rng(8)
    frame = make_events(DAY, events=20, seed=4).head(n).with_columns(
        pl.Series("window", rng.integers(0, 3, n), dtype=pl.Int16),
        pl.Series("f_float", [None if i % 9 == 0 else v for i, v in enumerate(rng.choice([np.nan, 0.0, 0.5], n))],
                  dtype=pl.Float32),
        pl.Series("f_flag", [None if i % 4 == 0 else i % 3 == 0 for i in range(n)], dtype=pl.Boolean),
        pl.when(pl.int_range(n) % 5 == 0).then(None).otherwise(pl.col("product_first_seen"))
        .alias("product_first_seen"))
    local = _sample_files(tmp_path / "sample", frame)
    elsewhere = dataclasses.replace(local, fs=pafs.SubTreeFileSystem("/", pafs.LocalFileSystem()))
    for columns, texts in ((None, []), (["window", "query", "f_float", "f_flag", "product_first_seen"], ["query"])):
        read = [files.batches(columns, dictionaries=texts, batch_size=5).read_all() for files in (local, elsewhere)]
        assert read[0].num_rows == n and read[0].schema == read[1].schema
        assert_frame_equal(pl.from_arrow(read[0]), pl.from_arrow(read[1]))  # NaN equal to NaN


def _counted_both_ways(sample, config, **kwargs) -> tuple[pl.DataFrame, pl.DataFrame]:
    keys = ["window", "feature", "segment_dim", "segment_value"]
    compiled, _ = compute_states(sample, ds=DAY, config=config, **kwargs)
    plain, _ = compute_states(sample, ds=DAY, config=config, counting="sql", **kwargs)
    return compiled.sort(keys), plain.sort(keys)


@pytest.mark.parametrize("batch_rows", [None, 97])
def test_compiled_counts_are_the_sql_counts_on_hostile_values(tmp_path, monkeypatch, batch_rows):
    # Every kind of value the SQL tells apart: NULL, NaN, infinities, a float32 just above a
    # threshold that is not a float32 (compared as doubles), integers, booleans, an all-NULL
    # column, a feature absent from the logs, and NULL or literal 'unknown' segment values;
    # in one batch, and in batches that start inside a byte of the validity bits.
    if batch_rows:
        monkeypatch.setattr("feco.coverage_kernel.BATCH_ROWS", batch_rows)
    n = 600
    rng = np.random.default_rng(3)
    floats = rng.choice([np.nan, np.inf, -np.inf, 0.0, 0.1, 0.25, -1.0, 2.0], n)
    frame = make_events(DAY, events=n // 3, seed=5).with_columns(
        pl.Series("window", rng.integers(0, 8, n), dtype=pl.Int16),
        pl.Series("f_dense", floats, dtype=pl.Float32),
        pl.Series("f_sparse", [None if drop else v for drop, v in zip(rng.random(n) < 0.2, floats)], dtype=pl.Float64),
        pl.Series("f_signed", rng.integers(-2, 3, n), dtype=pl.Int32),
        pl.Series("f_flag", rng.random(n) < 0.5, dtype=pl.Boolean),
        pl.lit(None, pl.Float64).alias("f_empty"),
        pl.when(pl.int_range(n) % 7 == 0).then(None).otherwise(pl.col("region")).alias("region"),
        pl.when(pl.int_range(n) % 11 == 0).then(pl.lit("unknown")).otherwise(pl.col("product_group"))
        .alias("product_group"),
        pl.when(pl.int_range(n) % 13 == 0).then(None).otherwise(pl.col("query")).alias("query"),
        pl.when(pl.int_range(n) % 5 == 0).then(None).otherwise(pl.col("product_first_seen"))
        .alias("product_first_seen"),
    )
    config = make_config(tmp_path, logs={"features": ["f_dense", "f_sparse", "f_signed", "f_flag", "f_empty",
                                                      "f_absent", "f_mean"]},
                         coverage={"rules": {"f_dense": "> 0.1", "f_signed": "!= 0", "f_sparse": "!= 0.25",
                                             "f_mean": "> reference_mean"},
                                   "reference": {"start": "2026-02-01", "end": "2026-02-07"}},
                         segments={"crosses": [["region", "query_band"], ["product_group", "product_age"]]})
    frame = frame.with_columns(pl.col("f_dense").alias("f_mean"))
    options = {"references": {"f_mean": 0.2}, "band_history": pl.DataFrame({"query": ["q3", "q99"], "n": [40, 9]})}
    compiled, plain = _counted_both_ways(frame, config, **options)
    assert compiled.height > 1000
    assert_frame_equal(compiled, plain)
    from_files = _counted_both_ways(_sample_files(tmp_path / "sample", frame), config, **options)
    assert_frame_equal(from_files[0], plain)
    assert_frame_equal(from_files[1], plain)


@settings(max_examples=25, deadline=None)
@given(values=st.lists(st.one_of(st.none(), st.floats(width=32)), min_size=1, max_size=40),
       groups=st.lists(st.sampled_from(["a", "b", None, COMPOSED, DECOMPOSED]), min_size=40, max_size=40),
       windows=st.lists(st.integers(0, 7), min_size=40, max_size=40),
       dimensions=st.sampled_from([[], ["region"], ["product_group", "query_band", "product_age"], ["age_band"]]))
def test_compiled_counts_are_the_sql_counts(tmp_path_factory, values, groups, windows, dimensions):
    config = make_config(tmp_path_factory.mktemp("c"), segments={"dimensions": dimensions})
    n = len(values)
    frame = sample_frame({"f_dense": values, "f_sparse": values, "f_signed": values},
                         region=groups[:n], product_group=groups[::-1][:n], query=groups[1:n + 1] + [None] * (n > 39),
                         window=windows[:n])
    assert_frame_equal(*_counted_both_ways(frame, config))


def test_compiled_age_bands_are_the_sql_age_bands_on_every_edge(tmp_path):
    # A product first seen on an edge's day, the day after and the day before, for every edge.
    config = make_config(tmp_path, segments={"dimensions": ["age_band"]})
    lows = [low for _, low in config.segments.age_bands()]
    seen = [DAY - timedelta(days=low + step) for low in lows for step in (-1, 0, 1)] + [None, DAY + timedelta(days=3)]
    frame = sample_frame({"f_dense": [1.0] * len(seen)}, product_first_seen=seen)
    compiled, plain = _counted_both_ways(frame, config)
    assert_frame_equal(compiled, plain)
    assert len(set(compiled.filter(segment_dim="age_band")["segment_value"])) == len(lows) + 1


def test_segment_columns_of_other_types_are_counted_by_the_sql(tmp_path):
    # Integer regions are labelled as the SQL casts them; the compiled counts leave them to it.
    config = make_config(tmp_path)
    frame = sample_frame({"f_dense": [1.0, 0.0, None]}, region=[7, 7, 8])
    compiled, plain = _counted_both_ways(frame, config)
    assert_frame_equal(compiled, plain)
    assert set(compiled.filter(segment_dim="region")["segment_value"]) == {"7", "8"}


def test_composed_and_decomposed_segment_values_are_one_segment(tmp_path):
    # Counted from a frame and from Parquet files (their dictionaries per row group), by the
    # compiled counts and the SQL; the ranker labels rows by segment_rows, as coverage counts them.
    config = make_config(tmp_path, segments={"crosses": [["region", "product_group"]]})
    n = 30
    frame = sample_frame({"f_dense": [1.0] * n}, region=[COMPOSED if i % 2 else DECOMPOSED for i in range(n)],
                         product_group=[DECOMPOSED if i % 3 else "unknown" for i in range(n)])
    compiled, plain = _counted_both_ways(frame, config)
    assert_frame_equal(compiled, plain)
    assert segment_rows(compiled, "region") == {COMPOSED: n}
    assert segment_rows(compiled, "region x product_group") == {f"{COMPOSED} x {COMPOSED}": 20,
                                                                f"{COMPOSED} x unknown": 10}
    from_files = _counted_both_ways(_sample_files(tmp_path / "sample", frame), config)
    assert_frame_equal(from_files[0], plain)
    assert_frame_equal(from_files[1], plain)
    labels = coverage.segment_rows(frame, ds=DAY, config=config)
    assert set(labels["region"]) == {COMPOSED} and set(labels["product_group"]) == {COMPOSED, "unknown"}
