"""An incident's replayed cost against what it measurably did, on generated logs at 150K
events a day: eng_ctr_7d loses 90% of its coverage in region DE for five days, and
meta_image_count (NULL while the model trained, so it never splits on it) 90% in region US.

The whole pipeline runs day by day (sample, coverage, score with daily SHAP, detect with the
replay), as `feco run` does. Slow: 21 generated days and a trained ranker, several minutes.
"""

from datetime import date, timedelta
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest

from feco import tasks
from feco.config import parse_config
from feco.evaluation import evaluate_labelled
from feco.generator import FEATURES, generate_logs, parse_incident
from feco.ranker.daily import events_frame, load_model, train_reference
from feco.ranker.model import predict_scores

START = date(2026, 3, 2)
TRAINED = START + timedelta(days=7)      # the model learns from the seven days before it
ONSET = START + timedelta(days=14)       # two weeks of history: drops page from here
INCIDENT_DAYS = 5
DAYS = [START + timedelta(days=i) for i in range(21)]
CLEAN = [d for d in DAYS if TRAINED <= d < ONSET]
BROKEN = [ONSET + timedelta(days=i) for i in range(INCIDENT_DAYS)]
AFTER = [d for d in DAYS if d > BROKEN[-1]]
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    folder = tmp_path_factory.mktemp("incident_cost")
    config = parse_config({
        "paths": {"logs": "logs", "samples": "samples", "warehouse": "feco.duckdb"},
        "logs": {"features": list(FEATURES)},
        "sampling": {"events_per_window": 1000, "seed": 1},
        "ranker": {"reference_days": 7, "validation_days": 1, "shap_rows": 3000},
        "alerts": {"severity": {"events": 20_000}},
    }, source=folder / "feco.toml")
    generate_logs(config.paths.logs, start=START, days=len(DAYS), events_per_day=150_000, seed=21, incidents=[
        parse_incident(f"feature=meta_image_count,start={START},days=7,share=1.0,kind=null"),
        parse_incident(f"feature=eng_ctr_7d,start={ONSET},days={INCIDENT_DAYS},share=0.9,segment=region:DE"),
        parse_incident(f"feature=meta_image_count,start={ONSET},days={INCIDENT_DAYS},share=0.9,segment=region:US"),
    ])
    for ds in DAYS:
        if ds == TRAINED:
            train_reference(ds, config)
        tasks.run_day(ds, config, deliver=False)
    return config


def query(config, text, params=None):
    with duckdb.connect(str(config.paths.warehouse), read_only=True) as conn:
        return conn.sql(text, params=params).pl()


def first_cost(config, feature, segment):
    costs = query(config, "SELECT c.* FROM incident_costs c JOIN incident_summary s USING (incident_id) "
                          "WHERE s.feature = $feature AND s.segment_dim = $dim AND s.segment_value = $value "
                          "ORDER BY c.ds LIMIT 1",
                  {"feature": feature, "dim": segment[0], "value": segment[1]})
    assert costs.height == 1, f"no replayed cost for {feature} in {segment}"
    return costs.row(0, named=True)


def pooled_ndcg8(config, days, segment=("region", "DE")):
    return query(config, "SELECT sum(ndcg8_sum) / sum(queries_evaluated) AS ndcg8 FROM ranker_daily "
                         "WHERE segment_dim = $dim AND segment_value = $value AND list_contains($days, ds)",
                 {"dim": segment[0], "value": segment[1], "days": days}).item()


def events_ndcg8(config, days, region="DE") -> np.ndarray:
    """NDCG@8 of each event of the region with a relevant row on ``days``, as ranker_daily scored them."""
    model = load_model(Path(query(config, "SELECT artifact FROM model_runs WHERE kind = 'reference'").item()))
    values = []
    for ds in days:  # a day at a time: event ids are unique within a day
        frame = events_frame([ds], config).filter(pl.col("region") == region)
        scored = frame.select("qid", "label", pl.Series("score", predict_scores(model, frame)))
        values.append(evaluate_labelled(scored, metrics=["ndcg@8"]).per_query["ndcg@8"].drop_nulls().to_numpy())
    return np.concatenate(values)


def test_the_replayed_cost_agrees_with_the_change_measured_in_the_segment(pipeline):
    cost = first_cost(pipeline, "eng_ctr_7d", ("region", "DE"))
    assert cost["ds"] == ONSET and cost["onset"] == ONSET
    assert (cost["reference_start"], cost["reference_end"], cost["reference_days"]) == (CLEAN[0], CLEAN[-1], 7)
    assert cost["features"] == ["eng_ctr_7d"] and cost["loss_kinds"] == ["zero"]
    assert cost["loss_shares"][0] == pytest.approx(0.9, abs=0.05)
    broken, clean = events_ndcg8(pipeline, BROKEN), events_ndcg8(pipeline, CLEAN)
    measured = broken.mean() - clean.mean()
    assert measured == pytest.approx(pooled_ndcg8(pipeline, BROKEN) - pooled_ndcg8(pipeline, CLEAN), abs=1e-9)
    # The measured change compares other events on other days, so it carries their spread
    # (about 0.28 an event) where the replay's paired change carries only the change's: the
    # two agree when they differ by less than both errors together, at 95%.
    measured_se = np.hypot(broken.std(ddof=1) / np.sqrt(len(broken)), clean.std(ddof=1) / np.sqrt(len(clean)))
    replay_se = (cost["d_ndcg8_high"] - cost["d_ndcg8_low"]) / (2 * 1.96)
    print(f"\neng_ctr_7d -90% in DE: replayed {cost['d_ndcg8']:+.4f} ({cost['d_ndcg8_low']:+.4f} to "
          f"{cost['d_ndcg8_high']:+.4f}) over {cost['events']} events; measured {measured:+.4f} "
          f"(±{1.96 * measured_se:.4f}) over {len(broken)} events against {len(clean)}; replay interval "
          f"contains it: {cost['d_ndcg8_low'] <= measured <= cost['d_ndcg8_high']}")
    assert abs(measured - cost["d_ndcg8"]) <= 1.96 * np.hypot(measured_se, replay_se)
    assert cost["d_ndcg8"] < 0  # a loss, though at this scale its interval does not exclude 0


def test_a_feature_the_model_does_not_use_costs_nothing(pipeline):
    cost = first_cost(pipeline, "meta_image_count", ("region", "US"))
    assert cost["loss_shares"][0] == pytest.approx(0.9, abs=0.05)
    print(f"\nmeta_image_count -90% in US (never split on): replayed {cost['d_ndcg8']:+.4f} "
          f"({cost['d_ndcg8_low']:+.4f} to {cost['d_ndcg8_high']:+.4f}) over {cost['events']} events")
    assert cost["d_ndcg8_low"] <= 0 <= cost["d_ndcg8_high"]
    assert cost["severity"] == "low"


def test_the_broken_features_attribution_in_its_segment_falls_during_the_incident_and_returns(pipeline):
    shares = dict(query(pipeline, "SELECT ds, shap_share FROM shap_daily_share WHERE feature = 'eng_ctr_7d' "
                                  "AND segment_dim = 'region' AND segment_value = 'DE' ORDER BY ds").iter_rows())
    print("\neng_ctr_7d's daily share of |SHAP| in DE: " + ", ".join(f"{d:%m-%d} {s:.3f}" for d, s in shares.items()))
    during = [shares[d] for d in BROKEN]
    assert max(during) < min(shares[d] for d in CLEAN)
    assert min(shares[d] for d in AFTER) > max(during)
    elsewhere = dict(query(pipeline, "SELECT ds, shap_share FROM shap_daily_share WHERE feature = 'eng_ctr_7d' "
                                     "AND segment_dim = 'region' AND segment_value = 'UK'").iter_rows())
    assert min(elsewhere[d] for d in BROKEN) > max(during)  # only where it broke


def test_the_incident_pages_with_its_cost(pipeline):
    incident = query(pipeline, "SELECT * FROM incidents WHERE feature = 'eng_ctr_7d' AND event = 'opened'")
    assert incident.height == 1 and incident["ds"][0] == ONSET
    assert "costs an estimated" in incident["detail"][0] and "NDCG@8 in region=DE" in incident["detail"][0]
    unused = query(pipeline, "SELECT bool_or(event IS NOT NULL) AS paged FROM incidents "
                             "WHERE feature = 'meta_image_count' AND ds >= $onset", {"onset": ONSET})
    assert unused["paged"][0] is not True  # it costs nothing: listed, not paged
