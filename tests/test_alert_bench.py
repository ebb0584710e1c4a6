"""The alert bench's instruments: scenario families drawn from a seed, and the page scorer."""

from __future__ import annotations

import sys
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path

import polars as pl
import pytest

from feco.paper.datasets import default_root

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from alert_scoring import holds, score_run
from alert_worlds import CLEAN_DAYS, FAMILIES, LTR_FAMILIES, scenario
from alerts_quality import SCORED_FROM_DAY
from alerts_sweep import seeds_of
from seen_sizes import band_overlap, day_noise

HAVE_LTR = all((default_root() / folder / "S1.txt").exists() for folder in ("mq2008", "mq2007_agg"))
GENERATED = [f for f in FAMILIES if f not in LTR_FAMILIES or HAVE_LTR]


@pytest.mark.parametrize("family", GENERATED)
def test_a_family_draws_its_world_and_schedule_from_the_seed(family):
    first, again, other = scenario(family, 1), scenario(family, 1), scenario(family, 2)
    assert first.specs == again.specs and first.world == again.world
    assert first.specs != other.specs
    for case in (first, other):
        incidents = case.incidents()  # every spec parses against the world's features
        features = [f for i in incidents for f in i.features]
        assert len(features) == len(set(features)) or family == "crossing", "an incident's features are its own"
        for incident in incidents:
            assert incident.start >= case.start + timedelta(days=CLEAN_DAYS)
            assert incident.start + timedelta(days=incident.days) < case.start + timedelta(days=case.days)
        kinds = {(i.shape, i.kind, len(i.features) > 1) for i in incidents}
        assert ("step", "null", False) in kinds and ("step", "zero", True) in kinds
        assert any(i.shape == "decay" for i in incidents)
        outages = [i for i in incidents if len(i.features) > 1]
        assert all(3 <= len(i.features) <= 9 and i.source for i in outages)


def test_family_worlds_span_what_they_promise():
    assert all(0.6 <= scenario("zipf", s).world.zipf_exponent <= 1.1 for s in range(5))
    weights = [w for s in range(5) for w in scenario("sizes", s).world.group_weights]
    assert min(weights) < 0.015 and max(weights) > 0.35
    churn = scenario("churn", 1).world
    assert churn.launch_every_days > 1 and churn.new_share >= 0.15 and churn.cohort_spread > 0
    assert len([i for i in scenario("outage", 1).incidents() if len(i.features) > 1]) >= 2


@pytest.mark.skipif(not HAVE_LTR, reason="the LTR families read ../shared/data/ltr")
def test_the_traffic_families_weekends_come_early_and_their_dataset_is_a_parameter():
    for seed in range(3):
        case = scenario("traffic", seed)
        saturdays = [d for d in range(case.days) if (case.start + timedelta(days=d)).weekday() == 5]
        assert SCORED_FROM_DAY <= saturdays[1] and 14 <= saturdays[2] <= 16  # the third paged on two known
        world = case.world
        assert world.weekend_heads >= 0.5 and world.group_skew > 0 and 2.3 <= world.calendar.holiday_volume <= 2.7
        assert [date.fromisoformat(d) > case.start + timedelta(days=CLEAN_DAYS) for d in world.calendar.holidays] == [True]
        assert scenario("traffic_nulls", seed).world.dataset == "mq2007agg"
        other = scenario("traffic@mq2007agg", seed)  # the same knobs on another set
        assert other.family == "traffic@mq2007agg" and other.world == replace(world, dataset="mq2007agg")
    with pytest.raises(SystemExit, match="base@mq2008"):
        scenario("base@mq2008", 1)
    assert len(seeds_of("traffic@webis_clueweb09", "held_out_dataset")) == 2


def test_a_crossing_world_fails_a_feature_twice_across_dimensions():
    for seed in range(3):
        incidents = scenario("crossing", seed).incidents()
        twice = [[i for i in incidents if i.features == (f,)] for f in {f for i in incidents for f in i.features}]
        pairs = [pair for pair in twice if len(pair) == 2]
        assert 1 <= len(pairs) <= 2 and all(len(pair) <= 2 for pair in twice)
        for decay, step in (sorted(pair, key=lambda i: i.shape) for pair in pairs):
            assert (decay.shape, step.shape) == ("decay", "step") and step.share >= 0.2
            assert decay.segment.dim != step.segment.dim  # crossing, neither holding the other
            assert decay.start < step.start and step.start + timedelta(days=step.days) <= decay.start + timedelta(
                days=decay.days)


@pytest.mark.skipif(not HAVE_LTR, reason="the LTR families read ../shared/data/ltr")
def test_calendar_families_have_the_dynamics_they_promise():
    warm_up_end = START + timedelta(days=CLEAN_DAYS)
    for seed in range(3):
        weekday = scenario("weekday", seed).world.calendar
        assert weekday.weekend_volume <= 0.7 and sum(m < 1 for m in weekday.weekend_groups) == 3
        holidays = scenario("holiday", seed).world.calendar.holidays
        assert holidays and all(date.fromisoformat(d) > warm_up_end for d in holidays)
        rolled = scenario("rollout", seed)
        assert rolled.rolled_out and rolled.launch_day >= CLEAN_DAYS
        assert rolled.rolled_out not in {f for i in rolled.incidents() for f in i.features}
        assert any(i.kind == "zero_fill" for i in scenario("nullfill", seed).incidents())
        everything = scenario("calendar", seed)
        assert everything.is_ltr and everything.world.calendar.holidays and everything.rolled_out


def test_segments_hold_their_crosses_and_nothing_else():
    assert holds(("all", "all"), ("product_group", "books"))
    assert holds(("region", "DE"), ("region x query_band", "DE x head"))
    assert holds(("query_band", "head"), ("region x query_band", "DE x head"))
    assert not holds(("region", "DE"), ("region x query_band", "UK x head"))
    assert not holds(("region x query_band", "DE x head"), ("region", "DE"))


START = date(2026, 1, 5)


def day(offset: int) -> date:
    return START + timedelta(days=offset)


def page(offset, incident_id, features, segment, event, rank=4, opened=None):
    dim, value = segment.split(":")
    return {"ds": day(offset), "incident_id": incident_id, "features": features, "segment_dim": dim,
            "segment_value": value, "opened_ds": day(opened if opened is not None else offset), "status": "open",
            "paged_rank": rank, "event": event, "headline_rule": "drop_vs_moving_average"}


TRUTH = [
    {"feature": "eng_ctr_7d", "start": str(day(20)), "days": 2, "share": 0.9, "kind": "zero", "shape": "step",
     "segment": {"dim": "region", "value": "DE"}},
    {"feature": "eng_ctr_30d", "features": ["eng_ctr_30d", "eng_views_7d", "eng_dwell_time"], "source": "engagement",
     "start": str(day(30)), "days": 1, "share": 0.8, "kind": "zero", "shape": "step", "segment": None},
    {"feature": "meta_rating", "start": str(day(25)), "days": 10, "share": 0.6, "kind": "zero", "shape": "decay",
     "segment": None},
]


def scored(rows: list[dict], truth: list[dict] = TRUTH) -> dict:
    incidents = pl.DataFrame(rows, schema_overrides={"features": pl.List(pl.String)})
    shares = pl.DataFrame({"ds": [day(20)], "segment_dim": ["region"], "segment_value": ["DE"], "share": [0.14]})
    return score_run(incidents, shares, truth, first_scored=day(14), last_day=day(55), first_weeks_until=day(14))


def test_the_scorer_matches_pages_to_what_was_injected():
    result = scored([
        page(20, "de", ["eng_ctr_7d"], "region:DE", "opened"),
        page(24, "de", ["eng_ctr_7d"], "region:DE", "resolved", opened=20),  # 2 days after recovery
        page(26, "cross", ["eng_ctr_7d"], "region x query_band:DE x head", "opened"),  # within 7 days after
        page(21, "books", ["eng_ctr_7d"], "product_group:books", "opened"),  # another segment: false
        page(23, "books", ["eng_ctr_7d"], "product_group:books", "resolved", opened=21),
        page(5, "early", ["text_bm25_title"], "all:all", "opened"),  # before the scored days
        page(30, "a", ["eng_ctr_30d"], "all:all", "opened"),
        page(31, "b", ["eng_views_7d"], "region:UK", "opened"),  # the outage paged twice
        page(27, "decay", ["meta_rating"], "all:all", "opened", rank=2),
        page(31, "decay", ["meta_rating"], "all:all", "escalated", rank=3, opened=27),
        page(42, "late", ["meta_rating"], "all:all", "opened"),  # more than 7 days after the decay
    ])
    assert (result["false_opens"], result["false_escalations"], result["false_resolves"]) == (2, 0, 1)
    assert result["false_pages_per_week"] == pytest.approx(3 / 6)
    step, outage, decay = result["incidents"]
    assert step["target"] and step["paged_in_a_day"] and step["delay"] == 0 and step["severity_fits"]
    assert step["incidents_paged"] == 2 and step["resolve_lag"] is None  # the cross never resolved
    assert outage["incidents_paged"] == 2 and outage["features_listed"] == pytest.approx(2 / 3)
    assert decay["delay"] == 2 and decay["reached_severity"] == "high" and not decay["reached_tier_fits"]
    assert result["target_recall"] == {"n": 2, "hit": 2}
    assert result["outages_paged_once"] == {"n": 1, "hit": 0}
    assert result["decays_at_reached_tier"] == {"n": 1, "hit": 0}


def test_a_step_that_resolves_reports_its_lag_and_a_quiet_run_has_no_false_pages():
    result = scored([
        page(20, "de", ["eng_ctr_7d"], "region:DE", "opened"),
        page(23, "de", ["eng_ctr_7d"], "region:DE", "resolved", opened=20),
    ])
    assert result["false_pages"] == 0 and result["incidents"][0]["resolve_lag"] == 1
    assert result["resolve_lags"] == [1] and result["unresolved"] == 0
    assert not result["incidents"][1]["paged"] and result["target_recall"] == {"n": 2, "hit": 1}


def test_a_page_of_an_incident_open_before_counts_when_it_tells_of_the_injected_failure():
    # An all-traffic incident open since day 15; on day 20 it grows by eng_ctr_7d in DE (the
    # injected step), on day 22 it escalates about another feature: only the first tells of it.
    def told(offset, event, alerts, rank=3):
        row = page(offset, "wide", ["meta_rating", "eng_ctr_7d"], "all:all", event, rank=rank, opened=15)
        return row | {"told": [{"feature": f, "segment_dim": d, "segment_value": v} for f, d, v in alerts]}

    opened = page(15, "wide", ["meta_rating"], "all:all", "opened", rank=3) | {"told": []}
    grew = told(20, "grew", [("eng_ctr_7d", "region", "DE")])
    other = told(22, "escalated", [("meta_rating", "all", "all")], rank=4)
    result = scored([opened, grew | {"event": None}, other])
    assert not result["incidents"][0]["paged"] and result["false_pages"] == 2  # before: silent, nothing matched
    result = scored([opened, grew, other])
    step = result["incidents"][0]
    assert step["paged_in_a_day"] and step["delay"] == 0 and step["severity_at_first_page"] == "high"
    assert result["false_opens"] == 1 and result["false_pages"] == 1  # the day-15 opening still counts


def test_a_decay_paged_critical_by_the_team_s_floor_is_at_its_tier():
    truth = [TRUTH[2] | {"share": 0.4}]  # a decay reaching 40%: high by its size
    opened = page(27, "decay", ["meta_rating"], "all:all", "opened", rank=2) | {"rules": ["decay_vs_reference"]}
    floor = page(31, "decay", ["meta_rating"], "all:all", "escalated", rank=4, opened=27)
    sized = scored([opened, floor | {"rules": ["decay_vs_reference"]}], truth)["incidents"][0]
    assert sized["reached_severity"] == "critical" and not sized["reached_tier_fits"]
    declared = scored([opened, floor | {"rules": ["below_floor", "decay_vs_reference"]}], truth)["incidents"][0]
    assert declared["reached_tier_fits"]


def test_a_tier_is_judged_against_the_loss_feco_could_see():
    # Held-out round 22: a 49% decay read 51% on its last day and paged critical; a 66% decay
    # of the generator's torso queries took 51% off feco's torso band and paged high.
    opened = page(27, "decay", ["meta_rating"], "all:all", "opened", rank=3)
    critical = page(31, "decay", ["meta_rating"], "all:all", "escalated", rank=4, opened=27)
    truth = [TRUTH[2] | {"share": 0.49}]
    exact = scored([opened, critical], truth)
    assert exact["decays_at_reached_tier"] == exact["decays_at_injected_tier"] == {"n": 1, "hit": 0}
    noisy = score(truth, [opened, critical], sizes=[{"share": 0.49, "noise": 0.04}])
    assert noisy["decays_at_reached_tier"] == {"n": 1, "hit": 1}
    assert noisy["decays_at_injected_tier"] == {"n": 1, "hit": 0}  # still reported as it was
    quiet = score(truth, [opened, critical], sizes=[{"share": 0.45, "noise": 0.04}])
    assert quiet["decays_at_reached_tier"] == {"n": 1, "hit": 0}  # 5 points off the edge: beyond the noise
    banded = score([TRUTH[2] | {"share": 0.66}], [opened], sizes=[{"share": 0.4, "noise": 0.0}])
    assert banded["decays_at_reached_tier"] == {"n": 1, "hit": 1} and banded["incidents"][0]["seen_share"] == 0.4


def score(truth: list[dict], rows: list[dict], *, sizes: list[dict]) -> dict:
    incidents = pl.DataFrame(rows, schema_overrides={"features": pl.List(pl.String)})
    shares = pl.DataFrame({"ds": [day(20)], "segment_dim": ["region"], "segment_value": ["DE"], "share": [0.14]})
    return score_run(incidents, shares, truth, first_scored=day(14), last_day=day(55), first_weeks_until=day(14),
                     sizes=sizes)


def test_feco_s_band_holds_some_of_the_generator_s_other_bands():
    covered = pl.DataFrame({"query": ["a", "a", "b", "c", "d"]})  # a row per covered value
    feco = pl.DataFrame({"query": ["a", "b", "c", "d"], "band": ["torso", "torso", "torso", "tail"]})
    generator = pl.DataFrame({"query": ["a", "b", "c", "d"], "generator_band": ["torso", "head", "torso", "torso"]})
    assert band_overlap(covered, feco, generator, "torso") == pytest.approx(3 / 4)
    assert band_overlap(covered, feco, generator, "head") is None


def test_a_day_s_noise_is_the_robust_spread_of_its_changes_relative_to_the_level():
    steady = [0.50, 0.52, 0.50, 0.52, 0.50, 0.52, 0.50, 0.52]  # changes of ±0.02
    weekend = [0.50, 0.52, 0.50, 0.52, 0.50, 0.30, 0.30, 0.52]  # a weekend's swing is left out
    daily = pl.DataFrame({"feature": ["f"] * 8 + ["g"] * 8, "ds": [day(i) for i in range(8)] * 2,
                          "coverage": steady + weekend})
    noise = day_noise(daily.filter(pl.col("feature") == "f"))
    assert noise == pytest.approx(1.4826 * 0.02 / 2 ** 0.5 / 0.51, rel=1e-6)
    assert day_noise(daily) < 0.05
    assert day_noise(daily.head(1)) is None


def test_a_decay_s_tier_is_read_from_the_pages_that_tell_of_it():
    # Held-out round 23 (crossing 31543, 40K): a 49% decay paged high by its own incident was
    # merged on its 13th day into the source's critical outage of another feature; the critical
    # page told of that feature, not of the decay.
    truth = [TRUTH[2] | {"share": 0.4}]  # high by its size
    own = page(27, "decay", ["meta_rating"], "all:all", "opened", rank=3) | {"headline_feature": "meta_rating"}
    outage = page(31, "source", ["eng_ctr_30d", "meta_rating"], "all:all", "opened", rank=4)
    about_another = scored([own, outage | {"headline_feature": "eng_ctr_30d"}], truth)
    assert about_another["incidents"][0]["reached_severity"] == "high"
    assert about_another["decays_at_reached_tier"] == {"n": 1, "hit": 1}
    about_it = scored([own, outage | {"headline_feature": "meta_rating"}], truth)
    assert about_it["decays_at_reached_tier"] == {"n": 1, "hit": 0}


def test_an_outage_in_a_segment_too_small_to_page_is_counted_apart():
    outage = TRUTH[1] | {"segment": {"dim": "region", "value": "DE"}, "start": str(day(20))}
    rows = [page(20, "src", ["eng_ctr_30d", "eng_views_7d"], "region:DE", "opened")]
    incidents = pl.DataFrame(rows, schema_overrides={"features": pl.List(pl.String)})

    def in_a_segment_of(share):
        shares = pl.DataFrame({"ds": [day(20)], "segment_dim": ["region"], "segment_value": ["DE"], "share": [share]})
        return score_run(incidents, shares, [outage], first_scored=day(14), last_day=day(55),
                         first_weeks_until=day(14))

    assert in_a_segment_of(0.14)["outages_paged_once"] == {"n": 1, "hit": 1}
    small = in_a_segment_of(0.04)  # under page_min_share: listed, paged to no one, as configured
    assert small["outages_paged_once"] == {"n": 0, "hit": 0} and small["outages_not_pageable"] == 1
