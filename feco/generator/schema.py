"""The log schema the generator writes and the pipeline config is written against.

One row per (search event, shown product). The names, their order and the Arrow types here are
a contract: the sampling, coverage and ranking code select columns by these names.
"""

from __future__ import annotations

import pyarrow as pa

FEATURE_FAMILIES: dict[str, tuple[str, ...]] = {
    "text": (
        "text_bm25_title",
        "text_bm25_description",
        "text_tfidf_title",
        "text_exact_match",
        "text_category_match",
        "text_embedding_sim",
        "text_title_coverage",
    ),
    "metadata": (
        "meta_rating",
        "meta_review_count",
        "meta_image_count",
        "meta_brand_match",
        "meta_in_stock",
        "meta_shipping_speed",
        "meta_description_len",
        "meta_seller_rating",
    ),
    "engagement": (
        "eng_ctr_7d",
        "eng_ctr_30d",
        "eng_atc_rate_30d",
        "eng_purchase_rate_30d",
        "eng_query_clicks_90d",
        "eng_query_purchases_90d",
        "eng_views_7d",
        "eng_dwell_time",
    ),
    "personalisation": (
        "pers_brand_affinity",
        "pers_category_affinity",
        "pers_price_affinity",
        "pers_past_purchase",
        "pers_recent_view",
    ),
    "price": (
        "price_discount_pct",
        "price_promo_flag",
        "price_vs_category",
        "price_coupon_value",
        "price_deal_badge",
    ),
}

FEATURES: tuple[str, ...] = tuple(name for names in FEATURE_FAMILIES.values() for name in names)

# Traffic shares are deliberately unequal so that segment sizes differ by an order of magnitude.
PRODUCT_GROUPS: tuple[str, ...] = (
    "electronics",
    "fashion",
    "home",
    "books",
    "beauty",
    "grocery",
    "toys",
    "sports",
    "garden",
    "automotive",
)
GROUP_WEIGHTS: tuple[float, ...] = (0.20, 0.16, 0.14, 0.10, 0.09, 0.08, 0.07, 0.07, 0.05, 0.04)

# The last region is the one launched mid-period; the others share the remaining traffic.
REGIONS: tuple[str, ...] = ("US", "UK", "DE", "FR", "JP", "IN", "BR")
REGION_WEIGHTS: tuple[float, ...] = (0.38, 0.16, 0.14, 0.10, 0.13, 0.09)
NEW_REGION = REGIONS[-1]

QUERY_BANDS: tuple[str, ...] = ("head", "torso", "tail")
PRODUCT_AGES: tuple[str, ...] = ("new", "established")
NEW_PRODUCT_DAYS = 30

# The columns every generated log starts with (this generator's and the LTR world's).
ROW_FIELDS = (
    pa.field("event_ts", pa.timestamp("us", tz="UTC"), nullable=False),
    pa.field("event_id", pa.int64(), nullable=False),
    pa.field("position", pa.int16(), nullable=False),
    pa.field("product_id", pa.int64(), nullable=False),
    pa.field("product_group", pa.string(), nullable=False),
    pa.field("region", pa.string(), nullable=False),
    pa.field("query", pa.string(), nullable=False),
    pa.field("product_first_seen", pa.date32(), nullable=False),
)
LABEL_FIELD = pa.field("label", pa.int8(), nullable=False)

LOG_SCHEMA = pa.schema(
    [
        *ROW_FIELDS,
        pa.field("logged_in", pa.bool_(), nullable=False),
        LABEL_FIELD,
        *(pa.field(name, pa.float32()) for name in FEATURES),
    ]
)
