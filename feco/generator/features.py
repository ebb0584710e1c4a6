"""The 33 logged features of each row, and the hidden utility users respond to.

Every feature is a monotone transform of a latent ``z`` built from a pair relevance ``r``
(query × product, stable across days), a product quality ``q`` (stable) and noise of its own.
A feature's ``signal`` (its contribution to utility before weighting) is a function of its
logged value, so the utility is a function of the clean features, as a ranker would see them.
Engagement weighs most; ``meta_image_count`` and ``price_deal_badge`` almost nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from feco.generator.calendar import DayPlan
from feco.generator.catalogue import (
    N_QUERIES,
    hash_ids,
    normal_from_uniform,
    uniforms,
)
from feco.generator.schema import NEW_REGION, REGIONS
from feco.generator.traffic import Rows

UTILITY_WEIGHTS: dict[str, float] = {
    "text_bm25_title": 0.30,
    "text_bm25_description": 0.08,
    "text_tfidf_title": 0.10,
    "text_exact_match": 0.15,
    "text_category_match": 0.25,
    "text_embedding_sim": 0.25,
    "text_title_coverage": 0.08,
    "meta_rating": 0.15,
    "meta_review_count": 0.10,
    "meta_image_count": 0.01,
    "meta_brand_match": 0.15,
    "meta_in_stock": 0.35,
    "meta_shipping_speed": 0.08,
    "meta_description_len": 0.02,
    "meta_seller_rating": 0.05,
    "eng_ctr_7d": 0.35,
    "eng_ctr_30d": 0.90,
    "eng_atc_rate_30d": 0.35,
    "eng_purchase_rate_30d": 0.40,
    "eng_query_clicks_90d": 0.30,
    "eng_query_purchases_90d": 0.35,
    "eng_views_7d": 0.10,
    "eng_dwell_time": 0.25,
    "pers_brand_affinity": 0.20,
    "pers_category_affinity": 0.15,
    "pers_price_affinity": 0.10,
    "pers_past_purchase": 0.30,
    "pers_recent_view": 0.25,
    "price_discount_pct": 0.12,
    "price_promo_flag": 0.05,
    "price_vs_category": 0.10,
    "price_coupon_value": 0.05,
    "price_deal_badge": 0.01,
}

# Engagement: (base presence, exponent on the query-popularity factor). Query-level counts
# need traffic on the query itself, so they thin out fastest in the tail.
_ENGAGEMENT_PRESENCE = {
    "eng_ctr_7d": (0.66, 1.0),
    "eng_ctr_30d": (0.84, 1.0),
    "eng_atc_rate_30d": (0.56, 1.0),
    "eng_purchase_rate_30d": (0.42, 1.0),
    "eng_query_clicks_90d": (0.78, 1.6),
    "eng_query_purchases_90d": (0.48, 1.6),
    "eng_views_7d": (0.95, 0.3),
    "eng_dwell_time": (0.62, 1.0),
}
_PERS_PRESENCE = {
    "pers_brand_affinity": 0.55,
    "pers_category_affinity": 0.75,
    "pers_price_affinity": 0.60,
    "pers_past_purchase": 0.10,
    "pers_recent_view": 0.25,
}
# Presence of one engagement feature follows a row-level "history" draw this often, so a
# product with a 30-day CTR usually has a 7-day one too.
_SHARED_PRESENCE = 0.8
_COLD_START_DAYS = 15.0
# Standard deviation of the weighted signal sum on typical traffic, measured once.
_UTILITY_SPREAD = 2.04
_NEW_REGION_FILL_DAYS = 21.0


@dataclass(frozen=True)
class Feature:
    """One feature's clean values for an hour of rows (``valid`` False marks NULL)."""

    values: np.ndarray
    valid: np.ndarray | None
    signal: np.ndarray


@dataclass(frozen=True)
class _Latents:
    r: np.ndarray
    q: np.ndarray
    pair: tuple[np.ndarray, ...]
    product: tuple[np.ndarray, ...]


def compute_features(
    rows: Rows, plan: DayPlan, *, hour: int, rng: np.random.Generator
) -> dict[str, Feature]:
    """All 33 features of one hour's rows, keyed by name in :data:`FEATURES` order."""
    latents = _latents(rows, plan.seed)
    return {
        **_text(rows, latents),
        **_metadata(rows, latents, rng),
        **_engagement(rows, latents, plan, hour=hour, rng=rng),
        **_personalisation(rows, latents, rng),
        **_price(latents, plan, hour=hour, rng=rng),
    }


def utility(features: dict[str, Feature]) -> np.ndarray:
    """The hidden utility: a weighted sum of the features' signals, scaled to unit spread."""
    total = np.zeros(len(next(iter(features.values())).values), dtype=np.float32)
    for name, feature in features.items():
        total += np.float32(UTILITY_WEIGHTS[name] / _UTILITY_SPREAD) * feature.signal
    return total


def _latents(rows: Rows, seed: int) -> _Latents:
    pair_key = rows.product_id * N_QUERIES + rows.query
    pair = uniforms(hash_ids(pair_key, seed=seed, stream=4)) + uniforms(
        hash_ids(pair_key, seed=seed, stream=5)
    )
    product = uniforms(hash_ids(rows.product_id, seed=seed, stream=2)) + uniforms(
        hash_ids(rows.product_id, seed=seed, stream=3)
    )
    return _Latents(
        r=normal_from_uniform(pair[0]),
        q=normal_from_uniform(product[0]),
        pair=pair,
        product=product,
    )


def _quantize(values: np.ndarray, step: float) -> np.ndarray:
    """Round to the precision a feature store would log; it also keeps Parquet small."""
    return (np.round(values / step) * step).astype(np.float32)


def _dense(values: np.ndarray, signal: np.ndarray) -> Feature:
    return Feature(values=values.astype(np.float32), valid=None, signal=signal.astype(np.float32))


def _text(rows: Rows, lat: _Latents) -> dict[str, Feature]:
    e = [normal_from_uniform(u) for u in lat.pair[1:7]]
    z_title = 0.75 * lat.r + 0.66 * e[0]
    bm25 = _quantize(np.maximum(0.0, 5.0 + 2.6 * z_title), 0.001)
    z_tfidf = 0.9 * z_title + 0.44 * e[1]
    tfidf = _quantize(np.maximum(0.0, 0.35 + 0.15 * z_tfidf), 0.0001)
    bm25_desc = _quantize(np.maximum(0.0, 3.0 + 2.2 * (0.5 * lat.r + 0.87 * e[2])), 0.001)
    exact = np.clip(np.floor((0.6 * lat.r + 0.8 * e[3] + 1.45) / 0.6) * 0.25, 0.0, 1.0)
    category = rows.category_match.astype(np.float32)
    embedding = _quantize(np.clip(0.55 + 0.15 * (0.8 * lat.r + 0.6 * e[4]), 0.001, 0.999), 0.001)
    coverage = _quantize(np.clip(0.6 + 0.25 * (0.5 * lat.r + 0.87 * e[5]), 0.0, 1.0), 0.01)
    return {
        "text_bm25_title": _dense(bm25, (bm25 - 5.0) / 2.6),
        "text_bm25_description": _dense(bm25_desc, (bm25_desc - 3.0) / 2.2),
        "text_tfidf_title": _dense(tfidf, (tfidf - 0.35) / 0.15),
        "text_exact_match": _dense(exact, exact * 4.0 - 2.0),
        "text_category_match": _dense(category, category * 2.0 - 1.0),
        "text_embedding_sim": _dense(embedding, (embedding - 0.55) / 0.15),
        "text_title_coverage": _dense(coverage, (coverage - 0.6) / 0.25),
    }


def _metadata(rows: Rows, lat: _Latents, rng: np.random.Generator) -> dict[str, Feature]:
    n = len(rows)
    u = lat.product
    # Reviews accumulate over a product's first half year, so new products often have none
    # and their rating is missing (NULL), not zero.
    potential = np.exp(1.5 + 2.5 * u[1] + 0.4 * lat.q)
    reviews = np.floor(potential * np.minimum(1.0, rows.age_days / 180.0)).astype(np.float32)
    has_reviews = reviews > 0
    rating = np.clip(np.round(4.0 + 0.45 * lat.q + 0.3 * normal_from_uniform(u[2]), 1), 1.0, 5.0)
    images = np.where(u[3] < 0.02, 0.0, np.floor(1.0 + 9.0 * (u[3] - 0.02) / 0.98))
    brand = (lat.pair[7] < 0.25 + 0.1 * np.tanh(lat.r)).astype(np.float32)
    in_stock = (rng.random(n, dtype=np.float32) < 0.94).astype(np.float32)
    shipping = 1.0 + np.floor(6.0 * u[4] ** 1.5)
    shipping_known = rng.random(n, dtype=np.float32) >= 0.03
    description = np.where(u[5] < 0.04, 0.0, np.round(np.exp(5.0 + 1.2 * u[5])))
    seller_known = u[6] >= 0.05
    seller = np.round(3.0 + 2.0 * np.sqrt(u[6]), 2)
    return {
        "meta_rating": _nullable(rating, has_reviews, (rating - 4.0) / 0.5),
        "meta_review_count": _dense(reviews, np.log1p(reviews) / 2.0 - 1.0),
        "meta_image_count": _dense(images, (images - 5.0) / 3.0),
        "meta_brand_match": _dense(brand, brand),
        "meta_in_stock": _dense(in_stock, (in_stock - 1.0) * 2.0),
        "meta_shipping_speed": _nullable(shipping, shipping_known, (3.0 - shipping) / 1.5),
        "meta_description_len": _dense(description, np.log1p(description) / 6.0 - 0.5),
        "meta_seller_rating": _nullable(seller, seller_known, (seller - 4.3) / 0.4),
    }


def _nullable(values: np.ndarray, valid: np.ndarray, signal: np.ndarray) -> Feature:
    return Feature(
        values=np.where(valid, values, 0.0).astype(np.float32),
        valid=valid,
        signal=np.where(valid, signal, 0.0).astype(np.float32),
    )


def _sparse(values: np.ndarray, present: np.ndarray, signal: np.ndarray) -> Feature:
    return Feature(
        values=np.where(present, values, 0.0).astype(np.float32),
        valid=None,
        signal=np.where(present, signal, 0.0).astype(np.float32),
    )


def _engagement_presence(rows: Rows, plan: DayPlan, *, hour: int) -> tuple[np.ndarray, np.ndarray]:
    """Row factor on engagement presence rates, and the query-popularity factor.

    The row factor holds cold start (young products), the new region filling in, product
    popularity and the hour's drift; each feature raises the query factor to its own power.
    """
    cold_start = 1.0 - 0.9 * np.exp(-rows.age_days / np.float32(_COLD_START_DAYS))
    popularity = 1.15 - 0.4 * rows.slot_rank
    factor = (cold_start * popularity * plan.hour_presence["engagement"][hour]).astype(np.float32)
    if plan.days_since_launch is not None:
        fill = 0.2 + 0.8 * (1.0 - np.exp(-plan.days_since_launch / _NEW_REGION_FILL_DAYS))
        factor[rows.region == REGIONS.index(NEW_REGION)] *= np.float32(fill)
    if plan.world.cohort_spread > 0:
        factor *= _cohort_factor(rows.first_seen, seed=plan.seed, spread=plan.world.cohort_spread)
    query_factor = 0.3 + 0.7 * plan.queries.popularity_score[rows.query]
    return factor, query_factor


def _cohort_factor(first_seen: np.ndarray, *, seed: int, spread: float) -> np.ndarray:
    """Each arrival day's own factor on engagement presence: log-normal, mean 1."""
    u, _, _, _ = uniforms(hash_ids(first_seen, seed=seed, stream=6))
    return np.exp(spread * normal_from_uniform(u) - spread**2 / 2).astype(np.float32)


def _engagement(
    rows: Rows, lat: _Latents, plan: DayPlan, *, hour: int, rng: np.random.Generator
) -> dict[str, Feature]:
    n = len(rows)
    present = _engagement_present(rows, plan, hour=hour, rng=rng)
    z = {
        name: 0.6 * lat.r + 0.4 * lat.q + 0.69 * rng.standard_normal(n, dtype=np.float32)
        for name in present
    }
    values = _engagement_values(z, rows, plan.queries.popularity_score)
    # Having engagement at all is worth something: engaged products are the known-good ones.
    return {name: _sparse(values[name], present[name], z[name] + 0.3) for name in present}


def _engagement_present(
    rows: Rows, plan: DayPlan, *, hour: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Which rows have each engagement feature; presence is shared across features mostly."""
    n = len(rows)
    factor, query_factor = _engagement_presence(rows, plan, hour=hour)
    history = rng.random(n, dtype=np.float32)
    present = {}
    for name, (base, exponent) in _ENGAGEMENT_PRESENCE.items():
        # Below _SHARED_PRESENCE the draw is the row's history; above it, rescaled, a fresh
        # uniform: the presence rate stays exactly p while features stay correlated.
        v = rng.random(n, dtype=np.float32)
        own = (v - _SHARED_PRESENCE) / (1.0 - _SHARED_PRESENCE)
        draw = np.where(v < _SHARED_PRESENCE, history, own)
        p = np.float32(base * plan.presence[name]) * factor * query_factor**exponent
        present[name] = draw < np.minimum(p, 0.99)
    return present


def _engagement_values(
    z: dict[str, np.ndarray], rows: Rows, popularity_score: np.ndarray
) -> dict[str, np.ndarray]:
    """Rates in (0, 1) at 1e-4 precision, counts of at least one, dwell time in seconds."""
    popularity = popularity_score[rows.query]
    return {
        "eng_ctr_7d": _rate(-2.4 + 0.8 * z["eng_ctr_7d"]),
        "eng_ctr_30d": _rate(-2.4 + 0.8 * z["eng_ctr_30d"]),
        "eng_atc_rate_30d": _rate(-3.3 + 0.8 * z["eng_atc_rate_30d"]),
        "eng_purchase_rate_30d": _rate(-4.2 + 0.8 * z["eng_purchase_rate_30d"]),
        "eng_query_clicks_90d": _count(1.5 + 2.0 * popularity + 0.8 * z["eng_query_clicks_90d"]),
        "eng_query_purchases_90d": _count(
            0.2 + 1.5 * popularity + 0.8 * z["eng_query_purchases_90d"]
        ),
        "eng_views_7d": _count(3.0 + (1.0 - rows.slot_rank) + 0.5 * z["eng_views_7d"]),
        "eng_dwell_time": _quantize(np.exp(3.2 + 0.4 * z["eng_dwell_time"]), 0.1),
    }


def _rate(logit: np.ndarray) -> np.ndarray:
    return np.maximum(_quantize(_sigmoid(logit), 1e-4), np.float32(1e-4))


def _count(log_mean: np.ndarray) -> np.ndarray:
    return np.maximum(np.float32(1.0), np.round(np.exp(log_mean)))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _personalisation(rows: Rows, lat: _Latents, rng: np.random.Generator) -> dict[str, Feature]:
    n = len(rows)
    features = {}
    for name, base in _PERS_PRESENCE.items():
        # Logged-out traffic has no user, so every personalisation feature is exactly zero.
        present = rows.logged_in & (rng.random(n, dtype=np.float32) < base)
        z = 0.5 * lat.r + 0.87 * rng.standard_normal(n, dtype=np.float32)
        if name == "pers_past_purchase":
            values = 1.0 + np.floor(np.clip(z + 1.0, 0.0, 2.9))
        else:
            values = np.maximum(_quantize(_sigmoid(z), 0.001), 0.001)
        features[name] = _sparse(values, present, z + 0.2)
    return features


def _price(
    lat: _Latents, plan: DayPlan, *, hour: int, rng: np.random.Generator
) -> dict[str, Feature]:
    n = len(lat.r)
    drift = plan.hour_presence["price"][hour]
    level = normal_from_uniform(lat.product[7])
    vs_category = _quantize(0.3 * level, 0.001)
    price_known = rng.random(n, dtype=np.float32) >= 0.015
    discounted = (
        rng.random(n, dtype=np.float32) < 0.22 * plan.presence["price_discount_pct"] * drift
    )
    discount = 5.0 + np.round(45.0 * rng.random(n, dtype=np.float32) ** 1.5)
    # A promotion flag only comes with a discount; the day's promo drift scales both.
    promo_share = min(
        1.0, 0.6 * plan.presence["price_promo_flag"] / plan.presence["price_discount_pct"]
    )
    promo = discounted & (rng.random(n, dtype=np.float32) < promo_share)
    coupon = rng.random(n, dtype=np.float32) < 0.07 * plan.presence["price_coupon_value"] * drift
    coupon_value = np.array([1.0, 2.0, 5.0, 10.0, 20.0], dtype=np.float32)[rng.integers(0, 5, n)]
    badge = rng.random(n, dtype=np.float32) < 0.10 * plan.presence["price_deal_badge"] * drift
    ones = np.ones(n, dtype=np.float32)
    return {
        "price_discount_pct": _sparse(discount, discounted, discount / 30.0),
        "price_promo_flag": _sparse(ones, promo, ones),
        "price_vs_category": _nullable(vs_category, price_known, -level),
        "price_coupon_value": _sparse(coupon_value, coupon, np.log1p(coupon_value) / 2.0),
        "price_deal_badge": _sparse(ones, badge, ones),
    }
