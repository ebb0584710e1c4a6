"""The search-log generator: determinism, schema and layout, realism, incidents, CLI."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from feco.cli import main
from feco.errors import UsageError
from feco.generator import (
    FEATURE_FAMILIES,
    FEATURES,
    LOG_SCHEMA,
    Incident,
    Segment,
    World,
    generate_day,
    generate_logs,
    parse_incident,
)
from feco.generator.calendar import plan_day
from feco.generator.catalogue import query_table

MONDAY = dt.date(2026, 3, 2)
SATURDAY = dt.date(2026, 3, 7)
LAUNCH = dt.date(2026, 2, 1)
EVENTS = 3_000


def day(ds: dt.date = MONDAY, **kwargs) -> pl.DataFrame:
    options = {"events_per_day": EVENTS, "seed": 0, "new_region_launch": LAUNCH, **kwargs}
    return pl.from_arrow(generate_day(ds, **options))


def covered(frame: pl.DataFrame, feature: str) -> float:
    """Share of rows with the feature > 0; NULL counts as not covered."""
    return frame.select((pl.col(feature) > 0).fill_null(False).mean()).item()


@pytest.fixture(scope="module")
def monday() -> pl.DataFrame:
    return day()


# --- determinism -------------------------------------------------------------------------


def test_same_seed_gives_the_same_table_and_another_seed_does_not():
    first = generate_day(MONDAY, events_per_day=500, new_region_launch=LAUNCH)
    assert first.equals(generate_day(MONDAY, events_per_day=500, new_region_launch=LAUNCH))
    other = generate_day(MONDAY, events_per_day=500, seed=1, new_region_launch=LAUNCH)
    assert not first.equals(other)


def test_a_day_is_byte_identical_alone_or_inside_a_range(tmp_path):
    ranged = generate_logs(
        tmp_path / "range", start=MONDAY, days=3, events_per_day=300, new_region_launch=LAUNCH
    )
    alone = generate_logs(
        tmp_path / "alone",
        start=MONDAY + dt.timedelta(days=1),
        days=1,
        events_per_day=300,
        new_region_launch=LAUNCH,
    )
    middle = [p for p in ranged if "ds=2026-03-03" in str(p)]
    assert [p.read_bytes() for p in middle] == [p.read_bytes() for p in alone]


def test_files_hold_exactly_the_in_memory_day(tmp_path):
    generate_logs(tmp_path, start=MONDAY, days=1, events_per_day=400, new_region_launch=LAUNCH)
    files = sorted(tmp_path.glob("ds=*/hour=*/part-0.parquet"))
    on_disk = pl.concat([pl.read_parquet(f, hive_partitioning=False) for f in files])
    assert on_disk.equals(day(events_per_day=400))


# --- schema and layout -------------------------------------------------------------------


def test_feature_names_families_and_schema():
    assert len(FEATURES) == 33
    assert FEATURES == tuple(name for names in FEATURE_FAMILIES.values() for name in names)
    assert list(FEATURE_FAMILIES) == ["text", "metadata", "engagement", "personalisation", "price"]
    assert LOG_SCHEMA.names[:10] == [
        "event_ts", "event_id", "position", "product_id", "product_group", "region", "query",
        "product_first_seen", "logged_in", "label",
    ]  # fmt: skip
    table = generate_day(MONDAY, events_per_day=200, new_region_launch=LAUNCH)
    assert table.schema.equals(LOG_SCHEMA)
    assert str(table.schema.field("event_ts").type) == "timestamp[us, tz=UTC]"


def test_partition_layout_sorting_and_row_groups(tmp_path):
    files = generate_logs(tmp_path, start=MONDAY, days=2, events_per_day=300)
    assert len(files) == 48
    assert files[0] == tmp_path / "ds=2026-03-02" / "hour=00" / "part-0.parquet"
    assert not list(tmp_path.rglob("*.tmp"))
    parquet = pq.ParquetFile(files[20])
    assert "ds" not in parquet.schema_arrow.names and "hour" not in parquet.schema_arrow.names
    assert parquet.metadata.row_group(0).column(0).statistics.has_min_max
    frame = pl.read_parquet(files[20], hive_partitioning=False)
    assert frame["event_ts"].dt.hour().unique().to_list() == [20]
    assert frame.equals(frame.sort(["event_ts", "event_id", "position"]))


def test_event_ids_are_unique_across_days(monday):
    tuesday = day(MONDAY + dt.timedelta(days=1))
    ids = pl.concat([monday["event_id"].unique(), tuesday["event_id"].unique()])
    assert ids.n_unique() == len(ids)
    assert monday.group_by("event_id").agg(pl.col("event_ts").n_unique())["event_ts"].max() == 1


def test_rerunning_a_day_replaces_it_cleanly(tmp_path):
    generate_logs(tmp_path, start=MONDAY, days=1, events_per_day=300, seed=1)
    files = generate_logs(tmp_path, start=MONDAY, days=1, events_per_day=300, seed=2)
    assert sorted(tmp_path.rglob("*")) == sorted(
        {*files, *(f.parent for f in files), *(f.parent.parent for f in files)}
        | {tmp_path / "incidents.json", tmp_path / f"ds={MONDAY}" / "_SUCCESS"}  # the day is complete
    )
    assert json.loads((tmp_path / "incidents.json").read_text())["seed"] == 2


# --- realism -----------------------------------------------------------------------------


def test_night_has_fewer_events_than_evening(monday):
    per_hour = monday.group_by(pl.col("event_ts").dt.hour().alias("hour")).agg(
        pl.col("event_id").n_unique().alias("events")
    )
    events = dict(zip(per_hour["hour"], per_hour["events"]))
    night = sum(events[h] for h in (3, 4, 5))
    evening = sum(events[h] for h in (19, 20, 21))
    afternoon = sum(events[h] for h in (13, 14, 15))
    assert 3 * night < afternoon < evening


def test_lists_have_5_to_20_products_at_positions_1_to_n(monday):
    lists = monday.group_by("event_id").agg(
        pl.len().alias("n"),
        pl.col("position").min().alias("lo"),
        pl.col("position").max().alias("hi"),
    )
    assert lists["n"].min() == 5 and lists["n"].max() == 20
    assert (lists["lo"] == 1).all() and (lists["hi"] == lists["n"]).all()


def test_personalisation_is_zero_exactly_when_logged_out(monday):
    pers = FEATURE_FAMILIES["personalisation"]
    logged_out = monday.filter(~pl.col("logged_in"))
    assert (
        logged_out.select(pl.any_horizontal([pl.col(f) != 0 for f in pers]).any()).item() is False
    )
    logged_in = monday.filter(pl.col("logged_in"))
    assert covered(logged_in, "pers_category_affinity") > 0.5


def test_more_logged_out_traffic_at_weekends(monday):
    assert day(SATURDAY)["logged_in"].mean() < monday["logged_in"].mean() - 0.05


def test_engagement_is_sparser_for_new_products_and_tail_queries(monday):
    age = (pl.col("event_ts").dt.date() - pl.col("product_first_seen")).dt.total_days()
    new = monday.filter(age < 30)
    established = monday.filter(age >= 30)
    bands = plan_day(MONDAY, events_per_day=1, seed=0, new_region_launch=LAUNCH, world=World()).query_bands
    band_of = dict(zip(query_table(0).names.to_pylist(), bands.tolist()))
    band = monday["query"].replace_strict(band_of, return_dtype=pl.Int8)
    for feature in ("eng_ctr_30d", "eng_query_clicks_90d"):
        assert covered(new, feature) < 0.7 * covered(established, feature)
        assert covered(monday.filter(band == 2), feature) < 0.8 * covered(
            monday.filter(band == 0), feature
        )


def test_new_region_absent_before_launch_and_filling_in_after():
    before = day(LAUNCH - dt.timedelta(days=1))
    assert "BR" not in before["region"].to_list()
    early = day(LAUNCH + dt.timedelta(days=1)).filter(pl.col("region") == "BR")
    late = day(LAUNCH + dt.timedelta(days=60)).filter(pl.col("region") == "BR")
    assert 0 < early.height < late.height
    assert covered(early, "eng_ctr_30d") < 0.6 * covered(late, "eng_ctr_30d")


def test_engagement_coverage_wobbles_a_few_percent_from_day_to_day():
    days = [day(MONDAY + dt.timedelta(days=i), events_per_day=1_500) for i in range(14)]
    coverage = np.array([covered(d, "eng_ctr_7d") for d in days])
    relative_sd = coverage.std() / coverage.mean()
    assert 0.015 < relative_sd < 0.12


def test_labels_follow_the_important_features_and_not_the_unimportant_ones(monday):
    ctr = monday["eng_ctr_30d"]
    high = monday.filter(ctr >= ctr.filter(ctr > 0).quantile(0.75))["label"].mean()
    absent = monday.filter(ctr == 0)["label"].mean()
    assert high > 2 * absent
    images = monday["meta_image_count"]
    many = monday.filter(images >= 7)["label"].mean()
    few = monday.filter((images >= 1) & (images <= 3))["label"].mean()
    assert many == pytest.approx(few, rel=0.25)
    assert set(monday["label"].unique()) == {0, 1, 2, 3, 4}
    by_position = monday.group_by("position").agg(pl.col("label").mean()).sort("position")
    assert by_position["label"][0] > 3 * by_position["label"][9]


# --- incidents ---------------------------------------------------------------------------


def incident(**fields) -> Incident:
    defaults = {"feature": "eng_ctr_30d", "start": MONDAY, "days": 4, "share": 0.8}
    return Incident(**{**defaults, **fields})


def test_zero_step_incident_zeroes_that_share_and_touches_nothing_else(monday):
    hit = day(incidents=[incident()])
    assert covered(hit, "eng_ctr_30d") == pytest.approx(
        0.2 * covered(monday, "eng_ctr_30d"), rel=0.1
    )
    assert hit["eng_ctr_30d"].null_count() == 0
    assert hit.drop("eng_ctr_30d").equals(monday.drop("eng_ctr_30d"))


def test_null_incident_turns_values_into_nulls_not_zeros(monday):
    hit = day(incidents=[incident(kind="null", share=0.5)])
    assert hit["eng_ctr_30d"].null_count() == pytest.approx(0.5 * hit.height, rel=0.05)
    zeros = (hit["eng_ctr_30d"] == 0).sum()
    assert zeros <= (monday["eng_ctr_30d"] == 0).sum()


def test_decay_incident_grows_linearly_to_its_share():
    spec = incident(shape="decay", share=0.8, kind="null", days=4)
    shares = [spec.share_on(MONDAY + dt.timedelta(days=d)) for d in range(-1, 5)]
    assert shares == [0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 0.0]
    first = day(incidents=[spec])
    assert first["eng_ctr_30d"].null_count() / first.height == pytest.approx(0.2, abs=0.02)


def test_segment_incident_hits_only_its_segment(monday):
    hit = day(incidents=[incident(segment=Segment("region", "DE"), share=1.0)])
    de = pl.col("region") == "DE"
    assert covered(hit.filter(de), "eng_ctr_30d") == 0.0
    assert covered(monday.filter(de), "eng_ctr_30d") > 0.3
    assert hit.filter(~de).equals(monday.filter(~de))


def test_product_age_segment_uses_the_rows_day(monday):
    hit = day(incidents=[incident(segment=Segment("product_age", "new"), share=1.0)])
    age = (pl.col("event_ts").dt.date() - pl.col("product_first_seen")).dt.total_days()
    assert covered(hit.filter(age < 30), "eng_ctr_30d") == 0.0
    assert hit.filter(age >= 30).equals(monday.filter(age >= 30))


def test_incident_outside_its_days_changes_nothing(monday):
    later = incident(start=MONDAY + dt.timedelta(days=1))
    assert day(incidents=[later]).equals(monday)


def test_incidents_json_records_the_ground_truth(tmp_path):
    spec = "feature=price_deal_badge,start=2026-03-03,days=2,share=0.5,kind=null,shape=decay,segment=query_band:tail"
    assert main(["generate-logs", "--out", str(tmp_path), "--start", "2026-03-02", "--days", "3",
                 "--events-per-day", "200", "--seed", "9", "--incident", spec]) == 0  # fmt: skip
    truth = json.loads((tmp_path / "incidents.json").read_text())
    assert truth == {
        "seed": 9,
        "events_per_day": 200,
        "start": "2026-03-02",
        "days": 3,
        "new_region_launch": "2026-03-03",
        "incidents": [
            {
                "feature": "price_deal_badge",
                "start": "2026-03-03",
                "days": 2,
                "share": 0.5,
                "kind": "null",
                "shape": "decay",
                "segment": {"dim": "query_band", "value": "tail"},
            }
        ],
    }


def test_parse_incident_defaults():
    assert parse_incident("feature=eng_ctr_7d, start=2026-03-01, days=3, share=1") == Incident(
        "eng_ctr_7d", dt.date(2026, 3, 1), 3, 1.0, "zero", "step", None
    )


@pytest.mark.parametrize(
    ("spec", "named"),
    [
        ("feature=eng_ctr_3d,start=2026-03-01,days=3,share=0.5", "eng_ctr_3d"),
        ("feature=eng_ctr_7d,start=2026-02-30,days=3,share=0.5", "start='2026-02-30'"),
        ("feature=eng_ctr_7d,start=2026-03-01,days=0,share=0.5", "days='0'"),
        ("feature=eng_ctr_7d,start=2026-03-01,days=3,share=0", "share='0'"),
        ("feature=eng_ctr_7d,start=2026-03-01,days=3,share=1.5", "share='1.5'"),
        ("feature=eng_ctr_7d,start=2026-03-01,days=3,share=0.5,kind=nan", "kind='nan'"),
        ("feature=eng_ctr_7d,start=2026-03-01,days=3,share=0.5,shape=ramp", "shape='ramp'"),
        ("feature=eng_ctr_7d,start=2026-03-01,days=3,share=0.5,segment=city:Paris", "'city'"),
        ("feature=eng_ctr_7d,start=2026-03-01,days=3,share=0.5,segment=region:XX", "'XX'"),
        ("feature=eng_ctr_7d,start=2026-03-01,days=3", "missing share"),
        ("feature=eng_ctr_7d,start=2026-03-01,days=3,share=0.5,colour=red", "'colour'"),
        ("feature=eng_ctr_7d,start,days=3,share=0.5", "'start'"),
    ],
)
def test_parse_incident_errors_name_the_bad_part(spec, named):
    with pytest.raises(UsageError, match=re.escape(named)):
        parse_incident(spec)


def test_generate_logs_rejects_bad_arguments(tmp_path):
    with pytest.raises(UsageError, match="days"):
        generate_logs(tmp_path, start=MONDAY, days=0)
    with pytest.raises(UsageError, match="events per day"):
        generate_logs(tmp_path, start=MONDAY, days=1, events_per_day=0)
    with pytest.raises(UsageError, match="share"):
        generate_logs(tmp_path, start=MONDAY, days=1, incidents=[incident(share=2.0)])


# --- CLI ---------------------------------------------------------------------------------


def test_cli_writes_a_tiny_day_with_progress(tmp_path, capsys):
    out = tmp_path / "logs"
    code = main(["generate-logs", "--out", str(out), "--start", "2026-03-02", "--days", "2",
                 "--events-per-day", "100", "--new-region-launch", "2026-01-01"])  # fmt: skip
    assert code == 0
    captured = capsys.readouterr()
    assert captured.err.count("feco: generated ds=") == 2
    assert "48 files" in captured.out
    assert len(list(out.glob("ds=*/hour=*/part-0.parquet"))) == 48
    truth = json.loads((out / "incidents.json").read_text())
    assert truth["new_region_launch"] == "2026-01-01" and truth["incidents"] == []


def test_cli_reports_a_bad_incident_in_one_line(tmp_path, capsys):
    code = main(["generate-logs", "--out", str(tmp_path), "--start", "2026-03-02", "--days", "1",
                 "--incident", "feature=eng_ctr_30d,start=2026-03-02,days=1,share=0.5,kind=zeros"])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "kind='zeros'" in err
    assert not list(Path(tmp_path).iterdir())


@given(
    feature=st.sampled_from(FEATURES),
    start=st.dates(dt.date(2000, 1, 1), dt.date(2100, 1, 1)),
    days=st.integers(1, 400),
    share=st.floats(0.0, 1.0, exclude_min=True),
    kind=st.sampled_from(["zero", "null"]),
    shape=st.sampled_from(["step", "decay"]),
    segment=st.none() | st.sampled_from([Segment("region", "BR"), Segment("query_band", "tail")]),
)
def test_every_incident_round_trips_through_its_spec(
    feature, start, days, share, kind, shape, segment
):
    incident = Incident(feature, start, days, share, kind, shape, segment)
    parts = [f"feature={feature}", f"start={start}", f"days={days}", f"share={share!r}",
             f"kind={kind}", f"shape={shape}"]  # fmt: skip
    if segment is not None:
        parts.append(f"segment={segment.dim}:{segment.value}")
    assert parse_incident(",".join(parts)) == incident
    assert incident.share_on(start + dt.timedelta(days=days - 1)) == pytest.approx(share)


def test_hours_without_events_are_written_as_empty_files(tmp_path):
    files = generate_logs(tmp_path, start=MONDAY, days=1, events_per_day=1)
    sizes = [pq.ParquetFile(f).metadata.num_rows for f in files]
    assert len(files) == 24 and 0 in sizes and sum(sizes) >= 5
    assert all(pq.read_schema(f).equals(LOG_SCHEMA) for f in files)
