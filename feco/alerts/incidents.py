"""Incidents: one feature's alerts over a span of days, as one thing to page about.

Alerts are per day, rule and segment; a person wants one message when something breaks, one
when it gets worse and one when it is over. Each day, every alert of a feature attaches to
an unresolved incident of that feature (or of its upstream source) whose segment holds it
(``feco.alerts.nesting``: an age band lies within its product age), or opens one: an alert
elsewhere is another failure, not more of the same. The incident's segment (its root) is the
headline segment of its first day: the most severe alert, then one not in a cross nor an age
band, then the largest drop, then the smallest segment, among the roll-up's headlines (so an
outage in one product group heads its incident, not the query band it happens to dent).
Features of one upstream source that newly fail on the same day in the same segment (or each
in one holding all their headlines), all by steps or all by decays, open one incident (a
source outage, or its data thinning out), listing them; one that gains a feature of its
source failing in its first days says so when paged (``grew``); a feature failing later is
its own failure. A feature that
steps as severely as an incident listing it has been, after a day on which that incident held
none of its alerts, fails anew: its own incident, though the first one's segment holds it.
An incident resolves when its segment has been back within its normal band (at or above the
threshold of the alert that opened it, no alert of the feature firing) for ``resolve_days``
days in a row.

An incident whose root segment's observed coverage is back within its normal band is
recovered from that day on (``incident_summary.recovered_ds``), though it stays open until
``resolve_days`` such days have passed. A decay alert on a day whose coverage is already back
above its threshold, or in a segment whose rows cross those of an incident of its feature (a
source's: of any of its features) resolved in the week before, or within the segment of one
recovered today, is lagging (its 7-day average still holds the bad days): it is attached
where an incident is open, but it neither opens one, nor heads one, nor keeps one from
resolving: the memory of a failure is not news of it, and the incident's headline stays its
last failing day's. Decays the roll-up groups under a decay an incident holds go with that
incident: an outage's days are in the 7-day average of every segment its rows cross.

The state of a day is computed from that day's alerts and the previous tracked day's rows
only, so re-running a day leaves the same rows, and a message's id is stable.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
from datetime import date

import polars as pl

from feco.alerts.nesting import Nesting, Segment
from feco.alerts.rules import COVERAGE, LEARNT, STEP, registry, segment_name
from feco.alerts.rules.collapse import CollapseRule
from feco.alerts.rules.decay import DecayRule
from feco.alerts.rules.drop import DropRule
from feco.alerts.severity import SEVERITY_NAME, SEVERITY_RANK
from feco.config import Incidents, Segments

SCHEMA = {
    "ds": pl.Date, "incident_id": pl.String, "feature": pl.String, "segment_dim": pl.String,
    "segment_value": pl.String, "opened_ds": pl.Date, "status": pl.String, "severity": pl.String,
    "severity_rank": pl.Int32, "paged_rank": pl.Int32, "normal_floor": pl.Float64,
    "root_coverage": pl.Float64, "normal_days": pl.Int32, "rows_lost": pl.Int64,
    "headline_alert_id": pl.String, "headline_rule": pl.String, "headline_dim": pl.String,
    "headline_value": pl.String, "alert_ids": pl.List(pl.String), "event": pl.String,
    "message_id": pl.String, "detail": pl.String, "source": pl.String, "features": pl.List(pl.String),
    "not_paged": pl.String,
}

# The collapse rule speaks only where the drop rule did not fire (``feco.alerts.detect``): on
# one day a feature's drops and collapses are one failure, each rule seen where it could see
# it (an outage of established products is a drop there, and a collapse of every product
# group alike, which the drop rule, judging each against the rest, rightly leaves alone).
ONE_FAILURE = {DropRule.name: (CollapseRule.name,), CollapseRule.name: (DropRule.name,)}
# A source's failure shows in its features within a day or two of each other (daily jobs, a
# decay crossing its threshold a day later); a feature of the source failing after that is a
# failure of its own, paged at its own tier, not news of an outage weeks old.
SOURCE_JOIN_DAYS = 3


def track_incidents(
    alerts: pl.DataFrame,
    carried: pl.DataFrame,
    coverage: pl.DataFrame,
    *,
    ds: date,
    settings: Incidents,
    history_days: int,
    sources: dict[str, list[str]] | None = None,
    segments: Segments | None = None,
) -> pl.DataFrame:
    """The incidents' rows for ``ds``: those carried from the day before and those opened today.

    ``alerts`` are the day's alerts (as ``detect_alerts`` returns them), ``carried`` the
    unresolved incidents of the previous tracked day and those resolved in the moving
    average's days before, with the features of the alerts each held that day
    (``incidents_carried.sql``: ``alerted_features``), and ``coverage`` the day's coverage per
    feature and segment (``day_coverage.sql``). ``history_days``: days published before ``ds``.
    ``sources``: each upstream source's features (``LogSchema.source_features``); features of
    one source that fail on the same day in the same segment are one incident. ``segments``:
    the configured segments (which age band lies within which product age; default the
    default config's).

    Examples
    --------
    As the detect step calls it (not run as a doctest: it needs the day's alerts and the stored incidents)::

        rows = track_incidents(alerts, carried, coverage, ds=ds, settings=settings, history_days=20)
        rows.filter(pl.col("event").is_not_null())  # the messages due today
    """
    day = _Day(ds, settings, coverage, history_days=history_days,
               recently_resolved=_by_each_feature(carried.filter(pl.col("status") == "resolved")), sources=sources or {},
               nesting=Nesting(segments or Segments()))
    todays = _by_feature(alerts, order="alert_id")
    unresolved = [_with_features(row) for row in carried.filter(pl.col("status") != "resolved").sort("incident_id")
                  .iter_rows(named=True)]
    held = {state["incident_id"]: state.pop("alerted_features") for state in unresolved if "alerted_features" in state}
    rows = day.track(todays, unresolved, held=held)
    return pl.DataFrame(rows, schema=SCHEMA, orient="row").sort("incident_id")


def _with_features(row: dict) -> dict:
    """A stored incident with its features listed (rows written before sources had none)."""
    return row | {"features": list(row.get("features") or ([row["feature"]] if row["feature"] else []))}


def _by_feature(frame: pl.DataFrame, *, order: str) -> dict[str | None, list[dict]]:
    grouped: dict[str | None, list[dict]] = {}
    for row in frame.sort(order).iter_rows(named=True):
        grouped.setdefault(row["feature"], []).append(row)
    return grouped


def _by_each_feature(incidents: pl.DataFrame) -> dict[str, list[dict]]:
    """Each feature's incidents, a source's incident under every feature it lists (a decay of
    any of them in the week after is the outage's lag, not only one of its lead feature)."""
    grouped: dict[str, list[dict]] = {}
    for row in incidents.sort("incident_id").iter_rows(named=True):
        for feature in _with_features(row)["features"]:
            grouped.setdefault(feature, []).append(row)
    return grouped


class _Day:
    """What one day knows: its date, the settings, every segment's coverage that day, the
    features of each upstream source and which segment lies within which."""

    def __init__(self, ds: date, settings: Incidents, coverage: pl.DataFrame, *, history_days: int,
                 recently_resolved: dict[str | None, list[dict]], sources: dict[str, list[str]], nesting: Nesting):
        self.ds, self.settings, self.recently_resolved, self.nesting = ds, settings, recently_resolved, nesting
        self.history_days, self.sources = history_days, sources
        self.source_of = {feature: name for name, features in sources.items() for feature in features}
        self.coverage = {(f, d, v): c for f, d, v, _, c in coverage.iter_rows()}
        self.rows = {(f, d, v): n for f, d, v, n, _ in coverage.iter_rows()}
        self.total_rows = max((n for _, d, _, n, _ in coverage.iter_rows() if d == "all"), default=0)
        self.recovered: dict[str, list[dict]] = {}  # feature -> its incidents back in band today (set by track)
        self.failing: set[str | None] = set()  # features with a live alert today (set by track)
        self.released: set[tuple[str, str | None]] = set()  # (incident, feature failing anew), set by track
        self.joined: dict[str, list[dict]] = {}  # incident id -> headlines of features it gained today

    def is_live(self, alert: dict) -> bool:
        """False for a lagging decay: the day's coverage is back above its threshold, or an
        incident that can explain it resolved within the moving average's days, or one holding
        its segment is back within its normal band today (the 7-day average still holds their
        bad days: an outage of established products is in all traffic's average too)."""
        if alert["rule"] != DecayRule.name:
            return True
        today = self.coverage.get((alert["feature"], alert["segment_dim"], alert["segment_value"]))
        if today is not None and today >= alert["threshold"]:
            return False
        # a recovered incident explains only what its segment holds: a crossing decay is more
        # likely another failure while the incident is open (after it resolved, _explains weighs it)
        recovered = self.recovered.get(alert["feature"], [])
        if any(self.nesting.contains(_segment(state), _segment(alert)) for state in recovered):
            return False
        return not any(self._explains(state, alert) for state in self.recently_resolved.get(alert["feature"], []))

    def _back_in_band(self, state: dict) -> bool:
        """Whether the incident's root segment is observed back within its normal band today
        (unlike ``_within_band``, not when either is unknown: nothing then says it recovered)."""
        today = self._root_coverage(state)
        return today is not None and state["normal_floor"] is not None and today >= state["normal_floor"]

    def _explains(self, resolved: dict, alert: dict) -> bool:
        """Whether a resolved incident's days can explain a decay's loss: its segment holds the
        decay's, or shares rows with it, as many as the loss at least (a failure of a tenth of
        the rows cannot take 45% off an average). The rows shared: the resolved segment's
        rows when the decay's holds it, else its share of all traffic (the dimensions taken
        as independent)."""
        failed, decaying = _segment(resolved), _segment(alert)
        if self.nesting.contains(failed, decaying):
            return True
        if not self.nesting.overlap(failed, decaying):
            return False
        rows = lambda segment: self.rows.get((alert["feature"], *segment), 0)
        of = rows(decaying) if self.nesting.contains(decaying, failed) else self.total_rows
        return of > 0 and alert["drop_rel"] <= rows(failed) / of

    def track(self, todays: dict[str | None, list[dict]], incidents: list[dict],
              held: dict[str, list[str]]) -> list[dict]:
        """Every incident's row today. First, features failing anew leave the incidents that
        list them (``_release``), an incident not paged yet that decays again spreads over the
        day's other decaying places (``_spread``), and the features of a source that newly fail
        on one day in one segment open one incident together (``_outages``); then each
        feature's alerts attach (``_attach``). ``held``: the features of the alerts each
        incident held the day before."""
        for state in filter(self._back_in_band, incidents):
            for feature in state["features"]:
                self.recovered.setdefault(feature, []).append(state)
        live = {feature: [alert for alert in alerts if self.is_live(alert)] for feature, alerts in todays.items()}
        self.failing = {feature for feature, alerts in live.items() if alerts}
        self._release(incidents, live, held)
        before = {state["incident_id"]: (_segment(state), state["features"]) for state in incidents}
        for feature in sorted(live, key=str):
            if live[feature]:
                _spread(self.nesting, self._covering(incidents, feature), live[feature])
        incidents += self._outages(live, incidents)
        attached: dict[str, list[dict]] = {state["incident_id"]: [] for state in incidents}
        for feature in sorted(todays, key=str):
            for alert, home in self._attach(feature, todays[feature], live[feature], incidents):
                attached.setdefault(home["incident_id"], []).append(alert)
        # only an incident that moved or grew today takes in another: one a feature failed anew
        # out of does not swallow that feature's new incident in a segment it holds
        changed = [state for state in incidents
                   if before.get(state["incident_id"]) != (_segment(state), state["features"])]
        return [self._merged(state, wider) if (wider := _wider(self.nesting, changed, state))
                else self._carry(state, attached[state["incident_id"]]) for state in incidents]

    def _covering(self, incidents: list[dict], feature: str | None) -> list[dict]:
        """The incidents a feature's alerts may join: those that list it, and its source's in
        the incident's first ``SOURCE_JOIN_DAYS`` days while another of that incident's
        features is failing today (once they have recovered, or later, a feature of the source
        failing is a new failure, paged as such) and no incident from before today lists it;
        never one it fails anew out of (``_release``)."""
        source = self.source_of.get(feature)
        open_to = [state for state in incidents if (state["incident_id"], feature) not in self.released]
        own = [state for state in open_to if feature in (state["features"] or [state["feature"]])]
        if any(state["opened_ds"] != self.ds for state in own):  # it fails on its own since before today
            source = None
        return own + [state for state in open_to if source is not None and state["source"] == source
                      and state not in own and (self.ds - state["opened_ds"]).days < SOURCE_JOIN_DAYS
                      and any(other in self.failing for other in state["features"])]

    def _release(self, incidents: list[dict], live: dict[str | None, list[dict]], held: dict[str, list[str]]) -> None:
        """A feature that steps today at least as severely as an incident that lists it has
        been, where that incident held none of its alerts the day before, fails anew: a new
        failure, its own incident, though that incident's segment holds it (a source's outage
        in all traffic holds every segment, and lists the feature for weeks). A milder step is
        the incident's aftermath (a holiday's torso queries, a few days on). A source's incident
        stops listing it."""
        step = {feature: max(SEVERITY_RANK[alert["severity"]] for alert in steps)
                for feature, alerts in live.items()
                if (steps := [alert for alert in alerts if alert["rule"] in registry.names(STEP)])}
        for state in incidents:
            anew = [feature for feature in state["features"] if step.get(feature, 0) >= state["severity_rank"]
                    and state["incident_id"] in held and feature not in held[state["incident_id"]]]
            self.released |= {(state["incident_id"], feature) for feature in anew}
            if state["source"] and len(anew) < len(state["features"]):
                state["features"] = [feature for feature in state["features"] if feature not in anew]

    def _attach(self, feature: str | None, alerts: list[dict], live: list[dict],
                incidents: list[dict]) -> list[tuple[dict, dict]]:
        """(alert, incident) for one feature's alerts today. The most severe live alert (the
        headline) continues the widest incident whose segment holds it, else widens one whose
        segment its own holds, else joins one in a crossing segment whose loss explains it
        (``_crossed``), else opens a new one (a step under a decay of days joins none of them:
        ``_joinable``); its roll-up group (the alerts of its rule,
        one headline per feature and rule) goes with it, and so do the groups of rules that see
        the same failure in other places (``ONE_FAILURE``). Decays go with the incident holding
        their roll-up headline (``_held_decays``: new products' decay in the head queries'
        outage). Live alerts of another rule that no incident holds are another failure: the
        next headline among them. Every alert attaches to the widest incident that holds it,
        else to its group's (``_home``: a source's later outage holds none of a feature's older
        failure)."""
        covering = self._covering(incidents, feature)
        # rule -> the incident its roll-up group joined (its headline lagging or not: an
        # outage's region recovered before the product ages its rows are most of)
        homes = _held_decays(self.nesting, alerts, covering)
        remaining = [alert for alert in live if alert["rule"] not in homes]
        while remaining:
            head = self._headline(remaining)
            joinable = self._joinable(covering, head)
            home = (_holder(self.nesting, joinable, head) or _widened(self.nesting, joinable, head)
                    or self._crossed(joinable, head, alerts))
            if home is None:
                home = self._opened(feature, head)
                incidents.append(home)
            elif feature not in home["features"]:
                home["features"] = sorted(home["features"] + [feature])
                self.joined.setdefault(home["incident_id"], []).append(head)
            homes[head["rule"]] = home
            for rule in ONE_FAILURE.get(head["rule"], ()):
                homes.setdefault(rule, home)
            covering = self._covering(incidents, feature)
            homes = _held_decays(self.nesting, alerts, covering) | homes
            remaining = [alert for alert in remaining if alert["rule"] not in homes
                         and _holder(self.nesting, self._joinable(covering, alert), alert) is None]
        pairs = [(alert, _home(self.nesting, self._joinable(covering, alert), alert, homes.get(alert["rule"])))
                 for alert in alerts]
        return [(alert, home) for alert, home in pairs if home is not None]

    def _joinable(self, incidents: list[dict], alert: dict) -> list[dict]:
        """The incidents the alert may join: not, for a step in a narrower segment, a decay
        open for ``SOURCE_JOIN_DAYS`` or more (its headline a decay the day before): a sudden
        fall on top of a slow one is a failure of its own, paged at its own tier."""
        if alert["rule"] not in registry.names(STEP):
            return incidents
        return [state for state in incidents
                if state.get("headline_rule") != DecayRule.name or _segment(state) == _segment(alert)
                or (self.ds - state["opened_ds"]).days < SOURCE_JOIN_DAYS]

    def _crossed(self, incidents: list[dict], head: dict, alerts: list[dict]) -> dict | None:
        """The feature's incident in a segment crossing the headline's whose loss today explains
        it: a failure of head queries shows in every product age and group that searches them,
        by their rows among head queries. Explained: the headline lost no larger share, and no
        more rows, than the incident's segment did today against its alerts' baseline (its
        coverage of the day, not the 7-day average a decay reads). A larger fall is another failure."""
        feature, segment = head["feature"], _segment(head)
        for state in incidents:
            place = _segment(state)
            baselines = [alert["baseline"] for alert in alerts
                         if _segment(alert) == place and alert.get("baseline") is not None]
            today = self.coverage.get((feature, *place))
            if not baselines or max(baselines) <= 0 or today is None or not self.nesting.overlap(segment, place):
                continue  # (one holding the headline, or held by it, took it before: _holder, _widened)
            baseline = max(baselines)
            lost_rows = (baseline - today) * self.rows[(feature, *place)]
            if _size(head) <= 1 - today / baseline and _rows_lost(head) <= lost_rows:
                return state
        return None

    def _outages(self, live: dict[str | None, list[dict]], incidents: list[dict]) -> list[dict]:
        """One incident per source, segment and kind of failure where two or more of the
        source's features newly fail today (their headlines all a step rule's, or all a
        decay's, held by no incident yet; headlines in different segments count together where
        each feature fails so in one holding them all, ``_outage_groups``)."""
        opened = []
        for source, features in self.sources.items():
            heads: dict[frozenset[str], dict[Segment, list[dict]]] = {}
            for feature in features:
                if not live.get(feature):
                    continue
                head = self._headline(live[feature])
                rules = _failing_together(head["rule"])
                covering = self._covering(incidents, feature)
                if rules and _holder(self.nesting, covering, head) is None and not any(
                        self.nesting.contains(_segment(head), _segment(state)) for state in covering):
                    heads.setdefault(rules, {}).setdefault(_segment(head), []).append(head)
            for rules, by_segment in heads.items():
                for segment, failing in _outage_groups(self.nesting, by_segment, live, rules):
                    if len(failing) >= 2:
                        lead = self._headline(failing)
                        place = lead if _segment(lead) == segment else self._headline(
                            [alert for alert in live[lead["feature"]]
                             if _segment(alert) == segment and alert["rule"] in rules])
                        opened.append(self._opened(lead["feature"], place, source=source,
                                                   features=sorted(head["feature"] for head in failing)))
        return opened

    def _opened(self, feature: str | None, head: dict, *, source: str | None = None,
                features: list[str] | None = None) -> dict:
        root = (head["segment_dim"], head["segment_value"])
        # a source's decay opens beside its outage in the same place: another id
        kind = [head["rule"]] if source and head["rule"] == DecayRule.name else []
        return {
            "incident_id": _digest(self.ds, source or feature, *root, *kind), "feature": feature,
            "segment_dim": root[0], "segment_value": root[1], "opened_ds": self.ds, "status": "new",
            "severity": head["severity"], "severity_rank": SEVERITY_RANK[head["severity"]],
            "paged_rank": 0, "normal_days": 0, "rows_lost": 0,
            "normal_floor": _floor(head), "source": source,
            "features": features or ([feature] if feature else []),
        }

    def _carry(self, state: dict, attached: list[dict]) -> dict:
        status = "open" if state["status"] == "new" else "ongoing"
        live = [alert for alert in attached if self.is_live(alert)]
        if live:
            return self._today(state | {"normal_days": 0}, attached, self._headline(live), status=status)
        normal_days = state["normal_days"] + 1 if self._within_band(state) else 0
        if normal_days >= self.settings.resolve_days:
            status = "resolved"
        return self._today(state | {"normal_days": normal_days}, attached, None, status=status)

    def _merged(self, state: dict, wider: dict) -> dict:
        """An incident that another, widened over its segment, now holds: resolved into it (a
        message if it was paged, so it is not left open where the team tracks it)."""
        row = self._today(state, [], None, status="resolved")
        return row | {"detail": f"{describe_place(state)}: merged into {describe_place(wider)}"}

    def _within_band(self, state: dict) -> bool:
        today = self._root_coverage(state)
        return today is None or state["normal_floor"] is None or today >= state["normal_floor"]

    def _root_coverage(self, state: dict) -> float | None:
        return self.coverage.get((state["feature"], state["segment_dim"], state["segment_value"]))

    def _headline(self, alerts: list[dict]) -> dict:
        """In a segment that pages (a cross of dimensions or an age band pages no one by
        default: a NULL rise in all traffic must not go unpaged under a critical drop in DE x
        head), then most severe, then not a cross nor an age band (a 30% drop in tail queries
        must not hide under a 21% one in DE x torso, nor an outage of new products under its
        33% in band 7-13d), then largest drop, then smallest segment, among the roll-up's
        headlines and what it grouped under a segment that does not hold it (one headline per
        rule and day: the largest drop, so a cross more often than not)."""
        by_id = {alert["alert_id"]: alert for alert in alerts}

        def heads_a_place(alert: dict) -> bool:
            parent = by_id.get(alert["parent_id"])
            return parent is None or not self.nesting.contains(_segment(parent), _segment(alert))

        heads = [alert for alert in alerts if heads_a_place(alert)] or alerts
        return min(heads, key=lambda a: (self._pages_no_one(a) is not None, -SEVERITY_RANK[a["severity"]], _narrow(a),
                                         -_size(a), a["n_rows"] or 0, a["alert_id"]))

    def _pages_no_one(self, segment: dict) -> str | None:
        """Why a segment pages no one whatever its alerts: a cross of dimensions or an age band,
        unless configured to page; None when it may page."""
        if " x " in segment["segment_dim"] and not self.settings.page_crosses:
            return "not paged: a cross of dimensions (page_crosses is off)"
        if segment["segment_dim"] == "age_band" and not self.settings.page_age_bands:
            return "not paged: an age band (page_age_bands is off)"
        return None

    def _not_paged(self, head: dict, state: dict) -> str | None:
        """Why the headline pages no one, None when it pages: severe enough, and in a segment
        large enough (the headline's, or the incident's when it has spread wider), or of an
        incident paged before."""
        settings = self.settings
        if SEVERITY_RANK[head["severity"]] < SEVERITY_RANK[settings.page_min_severity]:
            return f"not paged: {head['severity']}, milder than page_min_severity ({settings.page_min_severity})"
        # a rule judged against a weekly pattern: before two of every weekday a weekend's usual
        # swing looks like its failure; a collapse, a floor or a missing column pages from the start
        if head["rule"] in registry.names(LEARNT) and self.history_days < settings.page_after_days:
            what = "drops" if head["rule"] == DropRule.name else "NULL rises"
            return (f"not paged: {self.history_days} days of history, {what} page from {settings.page_after_days} "
                    "(page_after_days: the weekly pattern is learnt from two of every weekday)")
        place = head if self.nesting.contains(_segment(head), _segment(state)) else state
        # the headline's segment, the one paged about and the incident's root: an incident in an
        # age band pages no one though a product age's decay (the one holding it, too) heads it
        for segment in (head, place, state):
            if reason := self._pages_no_one(segment):
                return reason
        # a paged incident's team hears it grow though its segment dipped under the share
        if place["segment_dim"] == "all" or state.get("paged_rank"):
            return None
        rows = head["n_rows"] if place is head else self.rows.get((state["feature"], *_segment(state)))
        if (rows or 0) >= settings.page_min_share * self.total_rows:
            return None
        share = (rows or 0) / self.total_rows if self.total_rows else 0.0
        return f"not paged: {share:.1%} of the day's rows, under page_min_share ({settings.page_min_share:.0%})"

    def _today(self, state: dict, attached: list[dict], head: dict | None, *, status: str) -> dict:
        rank, paged = state["severity_rank"], state["paged_rank"]
        event = not_paged = None
        news: list[dict] = []
        if head is not None:
            head_rank = SEVERITY_RANK[head["severity"]]
            rank = max(rank, head_rank)
            if head_rank > paged:
                not_paged = self._not_paged(head, state)
                if not_paged is None:
                    event, paged = ("escalated" if paged else "opened"), head_rank
            news = self._joined_news(state) if paged else []
            if news and event is None:  # paged already, told what it gained
                event = "grew"
            told = [f"{alert['feature']} fails too: {alert['detail']}" for alert in news]
            detail = self._outage_line(state) + "; ".join(told + ([] if head in news else [head["detail"]]))
            lost = round(_rows_lost(head))
        else:
            if status == "resolved" and paged:
                event = "resolved"
            detail = self._recovery_detail(state, status)
            lost = 0
        severity = SEVERITY_NAME[rank]
        return state | {
            "ds": self.ds, "status": status, "severity": severity, "severity_rank": rank,
            "paged_rank": paged, "root_coverage": self._root_coverage(state),
            "rows_lost": max(state["rows_lost"], lost),
            "headline_alert_id": head and head["alert_id"], "headline_rule": head and head["rule"],
            "headline_dim": head and head["segment_dim"], "headline_value": head and head["segment_value"],
            "alert_ids": [alert["alert_id"] for alert in attached], "event": event,
            "message_id": event and _digest(state["incident_id"], event, severity,
                                            *(alert["feature"] for alert in news if event == "grew")),
            "detail": detail, "not_paged": not_paged,
        }

    def _joined_news(self, state: dict) -> list[dict]:
        """Headlines of features this paged incident gained today that would page on their own
        (in their own segment): a second feature of a source failing while the first still
        is, told as such rather than folded in silently."""
        return [head for head in self.joined.get(state["incident_id"], []) if self._not_paged(head, head) is None]

    def _outage_line(self, state: dict) -> str:
        """'engagement: 6 of 9 features in region=DE (eng_a, ...); ' for a source's incident."""
        if not state["source"]:
            return ""
        features = state["features"]
        return (f"{state['source']}: {len(features)} of {len(self.sources.get(state['source'], features))} features "
                f"in {segment_name(state)} ({', '.join(features)}); ")

    def _recovery_detail(self, state: dict, status: str) -> str:
        where = describe_place(state)
        if not state["normal_days"]:
            return f"{where}: no alert today, still below its normal band"
        days = f"{state['normal_days']} day{'s' if state['normal_days'] != 1 else ''}"
        verb = "resolved" if status == "resolved" else "recovered"
        return f"{where}: {verb}, back within its normal band for {days} (opened {state['opened_ds']})"


def _widened(nesting: Nesting, incidents: list[dict], head: dict) -> dict | None:
    """The most severe incident whose segment the headline's holds, moved up to it: an outage
    that spreads (or a decay seen in one place first) stays one incident."""
    segment = _segment(head)
    held = [state for state in incidents if nesting.contains(segment, _segment(state))]
    if not held:
        return None
    home = max(held, key=_seniority)
    home.update(segment_dim=segment[0], segment_value=segment[1], normal_floor=_floor(head))
    return home


def _wider(nesting: Nesting, incidents: list[dict], state: dict) -> dict | None:
    """The widest other incident of the same features whose segment strictly holds this one's
    (one widened over it today), None if none does."""
    segment = _segment(state)
    holding = [other for other in incidents if state["features"] and other is not state
               and _segment(other) != segment and set(state["features"]) <= set(other["features"])
               and nesting.contains(_segment(other), segment) and not _later_source(other, [state])]
    return min(holding, key=lambda other: nesting.depth(_segment(other)), default=None)


def _spread(nesting: Nesting, incidents: list[dict], live: list[dict]) -> None:
    """Move the most senior incident not paged yet that decays today up to the smallest segment
    holding it and the day's other decaying places (decays not grouped under another alert,
    nor held by another incident): a slow decline crosses its threshold in one product group,
    then in another, before all traffic, and is one incident, paged once. Steps are left
    alone: a sudden outage shows everywhere it is on its first day, and a small cell's noise
    the same day must not carry it to all traffic."""
    live = [alert for alert in live if alert["rule"] == DecayRule.name]
    firing = [state for state in incidents
              if not state["paged_rank"] and any(nesting.contains(_segment(state), _segment(alert)) for alert in live)]
    if not firing:
        return
    home = max(firing, key=_seniority)
    others = [_segment(state) for state in incidents if state is not home]
    places = [_segment(alert) for alert in live
              if alert["status"] == "open" and not any(nesting.contains(other, _segment(alert)) for other in others)]
    root = functools.reduce(nesting.common_root, places, _segment(home))
    if root != _segment(home):
        in_root = [alert for alert in live if _segment(alert) == root]
        home.update(segment_dim=root[0], segment_value=root[1],
                    normal_floor=_floor(max(in_root, key=_size)) if in_root else None)


def _failing_together(rule: str) -> frozenset[str] | None:
    """The rules whose headlines of a source's features make one failure with this one's: the
    step rules (an outage), or the decay rule (a source's data thinning out in one place, as
    a batch of new products with less engagement history does to all its features at once);
    None for a rule whose alerts are each feature's own."""
    if rule in registry.names(STEP):
        return frozenset(registry.names(STEP))
    return frozenset({DecayRule.name}) if rule == DecayRule.name else None


def _outage_groups(nesting: Nesting, heads: dict[Segment, list[dict]], live: dict[str | None, list[dict]],
                   rules: frozenset[str]) -> list[tuple[Segment, list[dict]]]:
    """(segment, headlines) of a source's newly failing features, one group per segment of
    their headlines, two groups joined where every one of their features has a live alert of
    the ``rules``: at the smallest segment holding both (an outage of all traffic collapses
    every product group alike, and which one a feature's headline names is noise), else at
    the one of the two the other holds (an outage of torso queries that one feature's loss
    at the bands' edge headlines in all traffic)."""
    groups = sorted(heads.items())

    def fails_in(segment: Segment, members: list[dict]) -> bool:
        return all(any(_segment(alert) == segment and alert["rule"] in rules
                       for alert in live[head["feature"]]) for head in members)

    for (a, first), (b, second) in itertools.combinations(groups, 2):
        inner = [b] if nesting.contains(a, b) else [a] if nesting.contains(b, a) else []
        for place in [nesting.common_root(a, b), *inner]:
            if fails_in(place, first + second):
                rest = {segment: members for segment, members in groups if segment not in (a, b)}
                return _outage_groups(nesting, rest | {place: rest.get(place, []) + first + second}, live, rules)
    return groups


def _seniority(state: dict) -> tuple:
    """Paged first, then the more severe, the larger loss, the more features (a source's
    outage before an incident one of its features opened elsewhere the same day)."""
    return (state["paged_rank"], state["severity_rank"], state["rows_lost"], len(state["features"]),
            state["incident_id"])


def _held_decays(nesting: Nesting, alerts: list[dict], incidents: list[dict]) -> dict[str, dict]:
    """{the decay rule: the incident} when one holds the decays' roll-up headline (their one alert
    without a parent): the 7-day average holds an outage's days in every segment its rows
    cross, and those decays are grouped under the outage's own. A step elsewhere is another
    failure, even when grouped under a larger one."""
    heads = [alert for alert in alerts if alert["rule"] == DecayRule.name and alert["parent_id"] is None]
    home = _holder(nesting, incidents, heads[0]) if len(heads) == 1 else None
    return {DecayRule.name: home} if home is not None else {}


def _holder(nesting: Nesting, incidents: list[dict], alert: dict) -> dict | None:
    """The widest incident whose segment holds the alert's, None if none does: once an incident
    has widened over another, what falls in both belongs to the wider one."""
    holding = [state for state in incidents if nesting.contains(_segment(state), _segment(alert))]
    holding = [state for state in holding if not _later_source(state, holding)]
    return min(holding, key=lambda state: nesting.depth(_segment(state)), default=None)


def _home(nesting: Nesting, incidents: list[dict], alert: dict, group_home: dict | None) -> dict | None:
    """The widest incident holding the alert, else its roll-up group's; the group's where the
    widest is a source's opened days after the group's own (a decay's echo in all traffic
    stays with the decay, not with its source's later outage there)."""
    holder = _holder(nesting, incidents, alert)
    if holder is None or (group_home is not None and _later_source(holder, [group_home])):
        return group_home
    return holder


def _later_source(state: dict, others: list[dict]) -> bool:
    """Whether ``state`` is a source's incident opened ``SOURCE_JOIN_DAYS`` or more after a
    feature's own incident among ``others``: that feature was failing on its own before the
    source failed, and what its own incident holds stays with it (a decay of weeks is not
    resolved with a day's outage of its source)."""
    return bool(state["source"]) and any(
        not other["source"] and (state["opened_ds"] - other["opened_ds"]).days >= SOURCE_JOIN_DAYS
        for other in others)


def describe_place(row: dict) -> str:
    """'feature in segment' for an incident row ('source (N features) in segment' for a source's)."""
    if row.get("source"):
        return f"{row['source']} ({len(row['features'])} features) in {segment_name(row)}"
    return f"{row['feature'] or 'sampled volume'} in {segment_name(row)}"


def _segment(row: dict) -> Segment:
    return row["segment_dim"], row["segment_value"]


def _narrow(alert: dict) -> bool:
    """A cross of dimensions or an age band: segments that page no one by default."""
    return " x " in alert["segment_dim"] or alert["segment_dim"] == "age_band"


def _floor(alert: dict) -> float | None:
    """The coverage below which the alert's segment is not back to normal."""
    return alert["threshold"] if alert["rule"] in registry.names(COVERAGE) else None


def _rows_lost(alert: dict) -> float:
    return (alert["n_rows"] or 0) * abs(alert["drop_abs"] or 0.0)


def _size(alert: dict) -> float:
    return abs(alert["drop_rel"] if alert["drop_rel"] is not None else alert["drop_abs"] or 0.0)


def _digest(*parts) -> str:
    return hashlib.sha1("|".join(str(part) for part in parts).encode()).hexdigest()[:16]
