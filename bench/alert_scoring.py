"""Pages against the injected incidents: what a person paged by feco would have seen.

Read from the warehouse's ``incidents`` table: a page is a row whose ``event`` is ``opened``,
``escalated``, ``grew`` (a paged incident told of a feature it gained) or ``resolved``. An incident of feco *matches* an injected one when one of its
features (``features`` when the table has that column, else ``[feature]``) is among the
injected incident's, the two segments hold one another (``all`` holds everything, ``region=DE``
holds the cross ``DE x head``), and it opened (paged first; an incident tracked quietly before
opens on its first page) during the injected incident or up to 7 days after it. An incident
opened before also matches from a page in that span that tells of the injected failure: an
escalation whose headline, or a ``grew`` message whose newly listed feature, is one of its
features in a segment holding or held by its place (``told``). Over the scored days (from
day 7 on, the alerts' warm-up; a team is paged from its first days too):

- false opens, escalations and resolves a week: pages of incidents that match nothing
  injected, per 7 scored days; false pages are their sum;
- per injected incident: paged (opened or escalated) at all, within a day of onset, the delay
  to the first page, the severity of that page against the tier of the injected size as
  feco could see it (feco.alerts.severity's tiers; the loss in the segment feco names, a
  size within a day's noise of a tier's edge landing either side: ``seen_sizes``), for a decay
  the highest tier paged while it grew, by pages telling of it (their headline, or an alert
  they tell of, one of its features: an incident of another failure that took it in pages at
  that failure's tier), against the tier of the share it reached (or, where
  the page held an alert of a rule with a tier of its own, such as a team's floor, that tier;
  ``reached_injected_tier`` against the injected size, on its edge only), how many
  incidents carried it (a source outage should be one; counted in segments of at least 5%
  of the onset day's rows, where feco pages by default: one under ``page_min_share`` is
  listed to no one, ``outages_not_pageable``), the share of its features they
  listed, and the days from the data's recovery to the last of them resolving;
- a *target* is a step (zero or NULL, one feature or a source's) of at least 20% in a segment
  with at least 5% of the onset day's sampled rows;
- the first two weeks apart: pages about nothing in a world's first 14 days (its warm-up: no
  incident is injected before day 14), what a team meets first.
"""

from __future__ import annotations

import statistics
from datetime import date, timedelta

import polars as pl

from feco.alerts.rules import registry
from feco.alerts.severity import SEVERITY_NAME, TIERS
from feco.warehouse import fetch

PAGES = ("opened", "escalated", "grew")
TELLING = ("escalated", "grew")  # pages of an incident already open that may tell of a new failure
MATCH_AFTER_DAYS = 7
TARGET_SHARE = 0.2
TARGET_TRAFFIC = 0.05
ALL = ("all", "all")


def holds(outer: tuple[str, str], inner: tuple[str, str]) -> bool:
    """Whether segment ``outer`` holds segment ``inner`` (crosses read ``DE x head``).

    >>> holds(("region", "DE"), ("region x query_band", "DE x head"))
    True
    >>> holds(("region", "DE"), ("product_group", "books"))
    False
    """
    if outer == ALL or outer == inner:
        return True
    parts = zip(inner[0].split(" x "), inner[1].split(" x "))
    return " x " in inner[0] and outer in set(parts)


def load_incidents(conn) -> pl.DataFrame:
    """Every incident row with its features as a list (``[feature]`` before the column) and, for
    an escalation or a ``grew`` message, the alerts it tells of (``told``: its headline and
    the alerts of features the incident lists from that day on)."""
    columns = set(fetch(conn, "DESCRIBE incidents")["column_name"])
    features = "features" if "features" in columns else "CASE WHEN feature IS NULL THEN [] ELSE [feature] END"
    return fetch(conn, f"""
        WITH rows AS (
            SELECT *, {features} AS listed,
                   coalesce(lag({features}) OVER (PARTITION BY incident_id ORDER BY ds), []) AS listed_before
            FROM incidents),
        told AS (
            SELECT r.ds, r.incident_id,
                   list(struct_pack(feature := a.feature, segment_dim := a.segment_dim,
                                    segment_value := a.segment_value)) AS told
            FROM (SELECT *, unnest(alert_ids) AS alert_id FROM rows WHERE event IN {TELLING}) r
            JOIN alerts a ON a.ds = r.ds AND a.alert_id = r.alert_id
            WHERE a.alert_id = r.headline_alert_id OR NOT list_contains(r.listed_before, a.feature)
            GROUP BY ALL),
        held AS (
            SELECT r.ds, r.incident_id, list(DISTINCT a.rule ORDER BY a.rule) AS rules
            FROM (SELECT ds, incident_id, unnest(alert_ids) AS alert_id FROM incidents) r
            JOIN alerts a ON a.ds = r.ds AND a.alert_id = r.alert_id
            GROUP BY ALL)
        SELECT ds, incident_id, listed AS features, segment_dim, segment_value, opened_ds, status, paged_rank,
               event, headline_rule, headline_feature, coalesce(told, []) AS told, coalesce(rules, []) AS rules
        FROM rows LEFT JOIN told USING (ds, incident_id) LEFT JOIN held USING (ds, incident_id)
        LEFT JOIN (SELECT ds, alert_id AS headline_alert_id, feature AS headline_feature FROM alerts)
            USING (ds, headline_alert_id)
        ORDER BY ds, incident_id""")


def load_row_shares(conn) -> pl.DataFrame:
    """Each segment's share of the day's sampled rows."""
    return fetch(conn, "WITH rows AS (SELECT ds, segment_dim, segment_value, max(n_rows) AS n_rows FROM feco_daily "
                       "GROUP BY ALL) SELECT r.ds, r.segment_dim, r.segment_value, r.n_rows / a.n_rows AS share "
                       "FROM rows r JOIN rows a ON a.ds = r.ds AND a.segment_dim = 'all'")


def score_run(incidents: pl.DataFrame, shares: pl.DataFrame, truth: list[dict], *, first_scored: date,
              last_day: date, first_weeks_until: date, sizes: list[dict] | None = None) -> dict:
    """Everything scored in one run: false pages, those before ``first_weeks_until`` apart, and
    what happened to each injected incident; its tier against ``sizes`` (each incident's
    share in the segment feco names and one day's noise there, ``seen_sizes``) when given."""
    matches = _matches(incidents, truth)
    sizes = sizes or [{"share": row["share"], "noise": 0.0} for row in truth]
    per_incident = [_judge(i, truth_row, incidents, matches, shares, size)
                    for i, (truth_row, size) in enumerate(zip(truth, sizes, strict=True))]
    # a page is about nothing injected before the incident's pages about an injected one start
    earliest = {key: min(found.values()) for key, found in matches.items()}
    unmatched = incidents.filter(pl.col("ds") < pl.col("incident_id").replace_strict(
        earliest, default=date.max, return_dtype=pl.Date))
    scored_days = (last_day - first_scored).days + 1
    weeks = scored_days / 7
    paged = unmatched.filter(pl.col("event").is_not_null())
    false = paged.filter(pl.col("ds") >= first_scored)
    counts = {event: false.filter(pl.col("event") == event).height for event in (*PAGES, "resolved")}
    return {
        "scored_days": scored_days,
        "weeks": weeks,
        "false_opens": counts["opened"],
        "false_escalations": counts["escalated"],
        "false_resolves": counts["resolved"],
        "false_pages": sum(counts.values()),
        "false_opens_per_week": counts["opened"] / weeks,
        "false_resolves_per_week": counts["resolved"] / weeks,
        "false_pages_per_week": sum(counts.values()) / weeks,
        "first_weeks_false_pages": paged.filter(pl.col("ds") < first_weeks_until).height,
        "false_page_events": false.select(
            pl.col("ds").cast(pl.String), "event", pl.col("features").list.join("|").alias("features"),
            pl.format("{}:{}", "segment_dim", "segment_value").alias("segment"), "headline_rule",
            "incident_id").to_dicts(),
        "incidents": per_incident,
        **summarise(per_incident),
    }


def summarise(per_incident: list[dict]) -> dict:
    """Recall, delays, severity and outage figures over a list of judged incidents."""
    def share(rows, key):
        return {"n": len(rows), "hit": sum(bool(r[key]) for r in rows)}

    targets = [r for r in per_incident if r["target"]]
    others = [r for r in per_incident if not r["target"]]
    steps_paged = [r for r in per_incident if r["shape"] == "step" and r["paged_in_a_day"]]
    decays_paged = [r for r in per_incident if r["shape"] == "decay" and r["paged"]]
    outages = [r for r in per_incident if len(r["features"]) > 1]
    pageable = [r for r in outages if r["traffic_share"] >= TARGET_TRAFFIC]
    return {
        "target_recall": share(targets, "paged_in_a_day"),
        "other_recall": share(others, "paged_in_time"),
        "delays": [r["delay"] for r in per_incident if r["delay"] is not None],
        "severity_at_first_page": share(steps_paged, "severity_fits"),
        "decays_at_reached_tier": share(decays_paged, "reached_tier_fits"),
        "decays_at_injected_tier": share(decays_paged, "reached_injected_tier"),
        "outages_paged_once": {"n": len(pageable), "hit": sum(r["incidents_paged"] == 1 for r in pageable)},
        "outages_not_pageable": len(outages) - len(pageable),
        "resolve_lags": [r["resolve_lag"] for r in per_incident if r["shape"] == "step" and r["resolve_lag"] is not None],
        "unresolved": sum(r["paged"] and r["shape"] == "step" and r["resolve_lag"] is None for r in per_incident),
    }


def _matches(incidents: pl.DataFrame, truth: list[dict]) -> dict[str, dict[int, date]]:
    """Each feco incident id with the injected incidents it matches on any of its days (its
    features and root segment may change as it grows), and for each the day its pages about
    it start: its first page, or for an incident opened before, the first page telling of it."""
    matches: dict[str, dict[int, date]] = {}

    def match(incident_id: str, index: int, since: date) -> None:
        found = matches.setdefault(incident_id, {})
        found[index] = min(since, found.get(index, since))

    # An incident tracked quietly before it pages opens, for the person paged, on its first page.
    first_page = (incidents.filter(pl.col("event").is_in(PAGES)).group_by("incident_id")
                  .agg(pl.col("ds").min().alias("paged_ds")))
    states = (incidents.join(first_page, on="incident_id", how="left")
              .select("incident_id", "features", "segment_dim", "segment_value",
                      pl.coalesce("paged_ds", "opened_ds").alias("opened_ds")).unique())
    for row in states.iter_rows(named=True):
        for i, t in enumerate(truth):
            if _matching(row, t):
                match(row["incident_id"], i, row["opened_ds"])
    for row in _telling_pages(incidents).iter_rows(named=True):
        for i, t in enumerate(truth):
            if _tells(row, t):
                match(row["incident_id"], i, row["ds"])
    return matches


def _telling_pages(incidents: pl.DataFrame) -> pl.DataFrame:
    if "told" not in incidents.columns:
        return incidents.clear()
    return incidents.filter(pl.col("event").is_in(TELLING))


def _tells(row: dict, truth: dict) -> bool:
    """Whether an escalation or ``grew`` page, in the injected incident's span, tells of it."""
    features = set(truth.get("features") or [truth["feature"]])
    injected = _place(truth)
    start = date.fromisoformat(truth["start"])
    last = start + timedelta(days=truth["days"] - 1 + MATCH_AFTER_DAYS)
    return start <= row["ds"] <= last and any(
        alert["feature"] in features and (holds(place, injected) or holds(injected, place))
        for alert in row["told"] for place in [(alert["segment_dim"], alert["segment_value"])])


def _matching(row: dict, truth: dict) -> bool:
    features = set(truth.get("features") or [truth["feature"]])
    place = (row["segment_dim"], row["segment_value"])
    injected = _place(truth)
    start = date.fromisoformat(truth["start"])
    last = start + timedelta(days=truth["days"] - 1 + MATCH_AFTER_DAYS)
    return bool(features & set(row["features"] or [])) and (holds(place, injected) or holds(injected, place)) \
        and start <= row["opened_ds"] <= last


def _place(truth: dict) -> tuple[str, str]:
    segment = truth["segment"]
    return (segment["dim"], segment["value"]) if segment else ALL


def _judge(index: int, truth: dict, incidents: pl.DataFrame, matches: dict[str, dict[int, date]],
           shares: pl.DataFrame, size: dict) -> dict:
    start = date.fromisoformat(truth["start"])
    end = start + timedelta(days=truth["days"] - 1)
    since = {key: found[index] for key, found in matches.items() if index in found}
    mine = incidents.filter(pl.col("incident_id").is_in(list(since)))
    pages = (mine.filter(pl.col("event").is_in(PAGES))
             .filter(pl.col("ds") >= pl.col("incident_id").replace_strict(since, return_dtype=pl.Date)).sort("ds"))
    first = pages.row(0, named=True) if pages.height else None
    delay = (first["ds"] - start).days if first else None
    features = truth.get("features") or [truth["feature"]]
    traffic = _traffic_share(shares, _place(truth), start)
    fitting, injected = _fitting_tiers(size["share"], size["noise"]), _fitting_tiers(truth["share"])
    grown = _telling_of(pages.filter(pl.col("ds") <= end), features)
    reached = SEVERITY_NAME[grown["paged_rank"].max()] if grown.height else None
    declared = _declared_tiers(grown)
    paged_ids = pages["incident_id"].unique().to_list()
    listed = set().union(*mine.filter(pl.col("incident_id").is_in(paged_ids))["features"].to_list()) & set(features)
    shape = truth["shape"]
    return {
        "features": features,
        "segment": ":".join(_place(truth)),
        "start": truth["start"],
        "days": truth["days"],
        "share": truth["share"],
        "kind": truth["kind"],
        "shape": shape,
        "seen_share": size["share"],
        "day_noise": size["noise"],
        "traffic_share": traffic,
        "target": shape == "step" and truth["share"] >= TARGET_SHARE and traffic >= TARGET_TRAFFIC,
        "paged": first is not None,
        "paged_in_a_day": delay is not None and delay <= 1,
        "paged_in_time": delay is not None and (first["ds"] <= end if shape == "decay" else delay <= 1),
        "delay": delay,
        "first_page_at": f"{first['segment_dim']}:{first['segment_value']}" if first else None,
        "severity_at_first_page": SEVERITY_NAME[first["paged_rank"]] if first else None,
        "expected_severity": fitting[0],
        "severity_fits": first is not None and SEVERITY_NAME[first["paged_rank"]] in fitting + _declared_tiers(pages[:1]),
        "reached_severity": reached,
        "reached_tier_fits": reached in fitting + declared,
        "reached_injected_tier": reached in injected + declared,
        "incidents_paged": len(paged_ids),
        "features_listed": len(listed) / len(features),
        "resolve_lag": _resolve_lag(mine, paged_ids, end),
    }


def _telling_of(pages: pl.DataFrame, features: list[str]) -> pl.DataFrame:
    """The pages whose headline, or an alert they tell of, is one of the features: an incident
    of another failure that took the feature in (a source's outage the same day) pages at that
    failure's tier, not at the tier of what it took in."""
    if "headline_feature" not in pages.columns:
        return pages
    told = pl.col("told").list.eval(pl.element().struct.field("feature").is_in(features)).list.any() \
        if "told" in pages.columns else pl.lit(False)
    return pages.filter(pl.col("headline_feature").is_in(features) | pl.col("headline_feature").is_null() | told)


def _traffic_share(shares: pl.DataFrame, place: tuple[str, str], onset: date) -> float:
    if place == ALL:
        return 1.0
    day = shares.filter((pl.col("ds") == onset) & (pl.col("segment_dim") == place[0])
                        & (pl.col("segment_value") == place[1]))
    return float(day["share"][0]) if day.height else 0.0


def _fitting_tiers(share: float, noise: float = 0.0) -> list[str]:
    """The tier of the size, then those of sizes within a day's ``noise`` of it (a size on a
    tier's edge, or within the noise of one, is read on either side of it).

    >>> _fitting_tiers(0.5), _fitting_tiers(0.49), _fitting_tiers(0.49, noise=0.04)
    (['critical', 'high'], ['high'], ['high', 'critical'])
    """
    tiers = []
    for size in (share, share * 0.999, share - noise, share + noise):
        tier = next((name for bound, name in TIERS if size >= bound), "low")
        tiers += [tier] if tier not in tiers else []
    return tiers


def _declared_tiers(pages: pl.DataFrame) -> list[str]:
    """The tiers of rules with a fixed one among the alerts the pages held: a floor the team
    drew is critical whatever the size, so a page at that tier is at the tier it should be."""
    if "rules" not in pages.columns:
        return []
    fixed = (registry.rule_named(rule) for rules in pages["rules"] for rule in rules)
    return [rule.severity for rule in fixed if rule is not None and rule.severity is not None]


def _resolve_lag(mine: pl.DataFrame, paged_ids: list[str], end: date) -> int | None:
    """Days from the first day of recovered data to the last paged incident resolving (None
    while one of them is still open at the end of the run)."""
    if not paged_ids:
        return None
    resolved = mine.filter(pl.col("incident_id").is_in(paged_ids) & (pl.col("event") == "resolved"))
    if resolved["incident_id"].n_unique() < len(paged_ids):
        return None
    return (resolved["ds"].max() - (end + timedelta(days=1))).days


def pooled(results: list[dict]) -> dict:
    """Figures pooled over runs (counts summed), with the per-run range of the rates."""
    weeks = sum(r["weeks"] for r in results)

    def rate(key):
        return {"pooled": sum(r[key] for r in results) / weeks,
                "range": (min(r[key] / r["weeks"] for r in results), max(r[key] / r["weeks"] for r in results))}

    def ratio(key):  # over the runs that have it (results of earlier bench code may not)
        having = [r for r in results if key in r]
        n, hit = sum(r[key]["n"] for r in having), sum(r[key]["hit"] for r in having)
        per_run = [r[key]["hit"] / r[key]["n"] for r in having if r[key]["n"]]
        return {"n": n, "hit": hit, "range": (min(per_run), max(per_run)) if per_run else None}

    delays = [d for r in results for d in r["delays"]]
    lags = [d for r in results for d in r["resolve_lags"]]
    return {
        "runs": len(results), "weeks": weeks,
        "false_opens": rate("false_opens"), "false_resolves": rate("false_resolves"),
        "false_pages": rate("false_pages"),
        "first_weeks": [r.get("first_weeks_false_pages") for r in results],
        **{key: ratio(key) for key in ("target_recall", "other_recall", "severity_at_first_page",
                                       "decays_at_reached_tier", "decays_at_injected_tier",
                                       "outages_paged_once")},
        "median_delay": statistics.median(delays) if delays else None,
        "resolve_lag": (statistics.median(lags), max(lags)) if lags else None,
        "unresolved": sum(r["unresolved"] for r in results),
        "outages_not_pageable": sum(r.get("outages_not_pageable", 0) for r in results),
    }
