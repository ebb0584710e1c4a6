"""The generator's world knobs (query concentration, catalogue churn, segment sizes) and its
source-outage incidents."""

from __future__ import annotations

import datetime as dt
import json
import re

import numpy as np
import polars as pl
import pytest

from feco.cli import main
from feco.errors import UsageError
from feco.generator import (
    FEATURE_FAMILIES,
    World,
    generate_day,
    generate_logs,
    parse_incident,
    parse_world,
)
from feco.generator.calendar import plan_day
from feco.generator.catalogue import query_table, week_bands
from feco.generator.incidents import check_incidents
from feco.generator.world import Calendar

MONDAY = dt.date(2026, 3, 2)
LAUNCH = dt.date(2026, 2, 1)
AGE = (pl.col("event_ts").dt.date() - pl.col("product_first_seen")).dt.total_days()


def day(ds: dt.date = MONDAY, *, events: int = 3_000, **kwargs) -> pl.DataFrame:
    return pl.from_arrow(generate_day(ds, events_per_day=events, new_region_launch=LAUNCH, **kwargs))


def covered(frame: pl.DataFrame, feature: str) -> float:
    return frame.select((pl.col(feature) > 0).fill_null(False).mean()).item()


# --- world knobs ----------------------------------------------------------------------


def test_the_default_world_is_the_generator_as_it_was(tmp_path):
    assert day(events=500).equals(day(events=500, world=World()))
    generate_logs(tmp_path / "plain", start=MONDAY, days=1, events_per_day=100)
    assert "world" not in json.loads((tmp_path / "plain" / "incidents.json").read_text())
    generate_logs(tmp_path / "flat", start=MONDAY, days=1, events_per_day=100, world=World(zipf_exponent=0.7))
    truth = json.loads((tmp_path / "flat" / "incidents.json").read_text())
    assert truth["world"]["zipf_exponent"] == 0.7 and len(truth["world"]["group_weights"]) == 10


def test_a_flatter_query_mix_spreads_the_head_over_more_queries():
    def bands(exponent):
        table = query_table(0, exponent)
        weights = np.diff(table.cdf, prepend=0.0)
        return weights, week_bands(weights, table.group, [(1.0, 1.0, None)])

    (steep_weights, steep), (flat_weights, flat) = bands(1.1), bands(0.6)
    assert (flat == 0).sum() > 20 * (steep == 0).sum()
    for weights, band in ((steep_weights, steep), (flat_weights, flat)):  # bands still split traffic 50/30/20
        shares = np.bincount(band, weights=weights)
        assert shares == pytest.approx([0.5, 0.3, 0.2], abs=0.01)
    events = {s: day(events=2_000, world=World(zipf_exponent=s)) for s in (0.6, 1.1)}
    assert events[0.6]["query"].n_unique() > 1.5 * events[1.1]["query"].n_unique()


def test_segment_sizes_follow_the_weights_from_1_to_50_percent():
    groups = (0.5, 0.2, 0.1, 0.06, 0.05, 0.03, 0.025, 0.015, 0.01, 0.01)
    regions = (0.5, 0.25, 0.15, 0.05, 0.04, 0.01)
    frame = day(events=6_000, world=World(group_weights=groups, region_weights=regions))
    group_share = frame["product_group"].value_counts(normalize=True)
    share = dict(zip(group_share["product_group"], group_share["proportion"]))
    assert share["electronics"] == pytest.approx(0.5, abs=0.06)
    assert share["automotive"] == pytest.approx(0.01, abs=0.008)
    events = frame.unique("event_id")["region"].value_counts(normalize=True)
    region_share = dict(zip(events["region"], events["proportion"]))
    assert region_share["US"] == pytest.approx(0.5 * 0.93, abs=0.04)  # BR holds ~7% by now
    assert region_share["IN"] == pytest.approx(0.01 * 0.93, abs=0.008)


def test_new_share_and_lifetime_set_the_catalogue_age_mix():
    frame = day(world=World(new_share=0.3, lifetime_days=40.0)).with_columns(AGE.alias("age"))
    assert (frame["age"] < 30).mean() == pytest.approx(0.3, abs=0.03)
    assert frame.filter(pl.col("age") >= 30)["age"].median() < 70


def test_batch_launches_give_the_new_products_of_a_day_few_ages_and_turn_them_over():
    world = World(launch_every_days=10)
    first = day(world=world).with_columns(AGE.alias("age")).filter(pl.col("age") < 30)
    ages = sorted(first["age"].unique())
    assert len(ages) == 3 and np.diff(ages).tolist() == [10, 10]
    later = day(MONDAY + dt.timedelta(days=30), world=world).filter(AGE < 30)
    assert not set(first["product_id"]) & set(later["product_id"])
    # Right after a batch the new products are cold; 25 days on they have engagement.
    monthly = World(launch_every_days=30)
    batch_day = MONDAY + dt.timedelta(days=(0 - MONDAY.toordinal()) % 30)  # seed 0: batches on ordinals 0 mod 30
    fresh, aged = (covered(day(batch_day + dt.timedelta(days=d), world=monthly).filter(AGE < 30), "eng_ctr_30d")
                   for d in (0, 25))
    assert aged > 3 * fresh


def test_cohort_spread_makes_arrival_days_differ_in_coverage():
    def spread_between_cohorts(spread: float) -> float:
        frame = day(events=6_000, world=World(new_share=0.5, cohort_spread=spread)).filter(AGE.is_between(20, 29))
        per_cohort = frame.group_by("product_first_seen").agg((pl.col("eng_ctr_30d") > 0).mean().alias("c"))
        return per_cohort["c"].std()

    assert spread_between_cohorts(0.6) > 2 * spread_between_cohorts(0.0)


@pytest.mark.parametrize(
    ("spec", "named"),
    [
        ("zipf=0.8", "unknown key 'zipf'"),
        ("zipf_exponent=steep", "zipf_exponent='steep'"),
        ("zipf_exponent=5", "zipf_exponent=5.0"),
        ("group_weights=0.5|0.5", "needs 10 weights"),
        ("region_weights=0.5|0.5|0.5|0.1|0.1|0.1", "sum to 1"),
        ("launch_every_days=0", "launch_every_days=0"),
        ("new_share", "not key=value"),
    ],
)
def test_a_bad_world_spec_is_one_line_naming_the_part(spec, named):
    with pytest.raises(UsageError, match=re.escape(named)) as error:
        parse_world(spec)
    assert "\n" not in str(error.value)


def test_cli_world_flag_reaches_the_logs(tmp_path, capsys):
    out = tmp_path / "logs"
    assert main(["generate-logs", "--out", str(out), "--start", "2026-03-02", "--days", "1",
                 "--events-per-day", "200", "--world", "zipf_exponent=0.6,new_share=0.4"]) == 0  # fmt: skip
    assert json.loads((out / "incidents.json").read_text())["world"]["new_share"] == 0.4
    capsys.readouterr()
    assert main(["generate-logs", "--out", str(out), "--start", "2026-03-02", "--days", "1",
                 "--world", "new_share=2"]) == 2  # fmt: skip
    assert capsys.readouterr().err.strip() == "feco: error: world new_share=2.0 is not in [0, 1]"


# --- source outages -------------------------------------------------------------------


def outage(spec: str = "source=engagement[:6]", **extra: str):
    fields = {"start": MONDAY.isoformat(), "days": "1", "share": "1.0", "segment": "region:DE", **extra}
    return parse_incident(",".join([spec, *(f"{k}={v}" for k, v in fields.items())]))


def test_a_source_outage_names_its_features_and_source():
    six = outage()
    assert six.features == FEATURE_FAMILIES["engagement"][:6] and six.source == "engagement"
    assert outage("source=price").features == FEATURE_FAMILIES["price"]
    listed = outage("features=eng_ctr_7d|eng_dwell_time")
    assert listed.features == ("eng_ctr_7d", "eng_dwell_time") and listed.source == "engagement"
    assert outage("features=eng_ctr_7d|meta_rating").source is None  # two sources
    assert outage("feature=eng_ctr_7d").source is None and outage("feature=eng_ctr_7d").others == ()
    check_incidents([six, listed])  # round-trips through its spec


def test_a_source_outage_hits_all_its_features_on_the_same_rows_and_nothing_else():
    clean = day()
    hit = day(incidents=[outage(kind="null", share="0.5")])
    de = pl.col("region") == "DE"
    affected = FEATURE_FAMILIES["engagement"][:6]
    nulls = hit.filter(de).select(pl.col(f).is_null() for f in affected)
    assert nulls.select(pl.all().mean()).row(0) == pytest.approx((0.5,) * 6, abs=0.05)
    assert nulls.select(pl.all_horizontal(pl.all()) == pl.any_horizontal(pl.all())).to_series().all()
    assert hit.filter(~de).equals(clean.filter(~de))
    untouched = [c for c in clean.columns if c not in affected]
    assert hit.select(untouched).equals(clean.select(untouched))


def test_a_source_outage_is_in_the_ground_truth(tmp_path):
    spec = "source=engagement[:3],start=2026-03-02,days=1,share=0.9,segment=region:DE"
    assert main(["generate-logs", "--out", str(tmp_path), "--start", "2026-03-02", "--days", "1",
                 "--events-per-day", "200", "--incident", spec]) == 0  # fmt: skip
    truth = json.loads((tmp_path / "incidents.json").read_text())["incidents"][0]
    assert truth["feature"] == "eng_ctr_7d" and truth["source"] == "engagement"
    assert truth["features"] == ["eng_ctr_7d", "eng_ctr_30d", "eng_atc_rate_30d"]


@pytest.mark.parametrize(
    ("spec", "named"),
    [
        ("source=billing", "source='billing'"),
        ("source=engagement[:9]", "engagement has 8 features"),
        ("source=engagement[3]", "source='engagement[3]'"),
        ("features=eng_ctr_7d|eng_ctr_7d", "names a feature twice"),
        ("features=eng_ctr_7d|eng_ctr_3d", "eng_ctr_3d"),
        ("feature=eng_ctr_7d,source=engagement", "one of feature, features, source"),
    ],
)
def test_a_bad_outage_spec_is_one_line_naming_the_part(spec, named):
    with pytest.raises(UsageError, match=re.escape(named)) as error:
        outage(spec)
    assert "\n" not in str(error.value)


# --- the calendar -------------------------------------------------------------------------


SATURDAY = MONDAY + dt.timedelta(days=5)


def events(frame: pl.DataFrame) -> int:
    return frame["event_id"].n_unique()


def test_weekends_growth_and_holidays_set_the_volume():
    quiet = World(calendar=Calendar(weekend_volume=0.6))
    assert events(day(SATURDAY, events=4_000, world=quiet)) / events(day(MONDAY, events=4_000, world=quiet)) \
        == pytest.approx(0.6, abs=0.05)
    growing = World(calendar=Calendar(weekly_growth=0.1))
    later = MONDAY + dt.timedelta(days=28)
    assert events(day(later, events=4_000, world=growing)) / events(day(MONDAY, events=4_000, world=growing)) \
        == pytest.approx(1.1 ** 4, rel=0.05)
    holiday = World(calendar=Calendar(holidays=(MONDAY.isoformat(),), holiday_volume=2.5))
    assert events(day(MONDAY, events=2_000, world=holiday)) / events(day(MONDAY, events=2_000)) \
        == pytest.approx(2.5, rel=0.05)


def test_a_weekend_and_a_holiday_shift_the_query_mix_and_one_group_has_its_own_weekend():
    groups = (1.0,) * 9 + (0.4,)  # the last product group is searched for in its tail at weekends
    world = World(calendar=Calendar(weekend_mix=0.8, weekend_groups=groups, holidays=(MONDAY.isoformat(),),
                                    holiday_mix=0.6))
    weekday, weekend = day(MONDAY - dt.timedelta(days=7), events=8_000, world=world), day(SATURDAY, events=8_000, world=world)
    head = query_table(0).names[:100].to_pylist()  # the 100 most popular queries of the plain mix

    def head_share(frame: pl.DataFrame) -> float:
        return frame.group_by("event_id").agg(pl.col("query").first()).select(pl.col("query").is_in(head).mean()).item()

    assert head_share(weekend) < 0.8 * head_share(weekday)
    assert head_share(day(MONDAY, events=8_000, world=world)) < 0.6 * head_share(weekday)
    last_group = pl.col("product_group") == "automotive"
    own = {name: covered(frame.filter(last_group), "eng_ctr_30d") / covered(frame.filter(~last_group), "eng_ctr_30d")
           for name, frame in (("weekday", weekday), ("weekend", weekend))}
    assert own["weekend"] < own["weekday"] - 0.1  # its ratio to the rest of traffic moves at weekends


def test_a_failure_of_tail_queries_hits_the_same_queries_on_a_weekend_s_mix():
    world = World(calendar=Calendar(weekend_mix=0.6))
    spec = f"feature=eng_ctr_30d,segment=query_band:tail,start={SATURDAY},days=1,share=1.0"
    hit = day(SATURDAY, events=8_000, world=world, incidents=[parse_incident(spec)])
    clean = day(SATURDAY, events=8_000, world=world)
    monday = plan_day(MONDAY, events_per_day=1, seed=0, new_region_launch=LAUNCH, world=world)
    tail = [name for name, band in zip(query_table(0).names.to_pylist(), monday.query_bands) if band == 2]
    present = clean["eng_ctr_30d"] > 0
    zeroed = present & (hit["eng_ctr_30d"] == 0)
    assert zeroed.sum() > 0
    assert zeroed.equals(present & clean["query"].is_in(tail))  # the tail of a Monday, not Saturday's own


def test_a_week_s_searches_fall_half_in_the_head_band_whatever_the_weekend_mix():
    # A team's head band is the queries that make half of its traffic over weeks (weekends
    # included); a failure "in head queries" hits those, so the generator's band is theirs.
    calendar = Calendar(weekend_volume=0.6, weekend_mix=0.6, weekend_groups=(0.4,) + (1.0,) * 9)
    world = World(calendar=calendar)
    week = pl.concat([day(MONDAY + dt.timedelta(days=d), events=20_000, world=world) for d in range(7)])
    bands = plan_day(MONDAY, events_per_day=1, seed=0, new_region_launch=LAUNCH, world=world).query_bands
    head = [name for name, band in zip(query_table(0).names.to_pylist(), bands) if band == 0]
    assert week.unique("event_id")["query"].is_in(head).mean() == pytest.approx(0.5, abs=0.02)


def test_a_rollout_reaches_the_regions_one_after_another():
    rollout = ("pers_recent_view", MONDAY.isoformat(), 7, 0.25)
    world = World(calendar=Calendar(rollout=rollout))
    before, during, after = (day(MONDAY + dt.timedelta(days=d), events=6_000, world=world) for d in (-1, 3, 8))
    plain = day(MONDAY + dt.timedelta(days=-1), events=6_000)
    by_region = lambda frame: frame.group_by("region").agg((pl.col("pers_recent_view") > 0).mean().alias("c"))
    assert covered(before, "pers_recent_view") == pytest.approx(0.25 * covered(plain, "pers_recent_view"), rel=0.15)
    levels = by_region(during)["c"].to_numpy()
    assert levels.min() < 0.5 * levels.max()  # some regions reached, others not yet
    assert covered(after, "pers_recent_view") > 3 * covered(before, "pers_recent_view")


def test_a_zero_fill_failure_writes_zeros_over_nulls():
    spec = f"feature=meta_rating,start={MONDAY},days=1,share=1.0,kind=zero_fill"
    clean, failed = day(), day(incidents=[parse_incident(spec)])
    assert clean["meta_rating"].null_count() > 0 and failed["meta_rating"].null_count() == 0
    assert covered(failed, "meta_rating") == 0.0
