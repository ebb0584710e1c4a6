"""The feco configuration: one TOML file validated into typed models.

Every key is checked (unknown keys, wrong types, impossible sampling windows) and an error
names the key and the file. Relative paths resolve against the config file's folder, so a
config works from any working directory.
"""

from __future__ import annotations

import difflib
import fnmatch
import itertools
import math
import os
import re
import tomllib
from datetime import date, time
from pathlib import Path
from typing import Annotated, Literal, NamedTuple

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
    field_serializer,
    field_validator,
    model_validator,
)

from feco import dimensions
from feco.errors import ConfigError
from feco.sources import is_table
from feco.sources import resolve as resolve_table

DEFAULT_CONFIG = Path("configs/feco.toml")
MINUTES_PER_DAY = 24 * 60
SEGMENT_DIMENSIONS = dimensions.names()  # declared in feco.dimensions
Dimension = Literal[SEGMENT_DIMENSIONS]
# The log columns coverage, its alerts and the report run without, and what each turns on:
# (section, key, what is measured only with it). Each key defaults to a column of its own name.
OPTIONAL_COLUMNS = (
    ("logs", "label", "the NDCG of the served order and of the ranker (the reference ranker trains on the label), "
                      "the NDCG at risk and incidents ranked by cost"),
    ("ranker", "position", "the NDCG of the served order"),
    ("logs", "product_id", "the same products' coverage a week apart, which the decay rule weighs in product-age "
                           "segments"),
)


# Strict: TOML has types, so `windows = "8"` is a mistake to report, not a string to coerce.
# Paths and dates may still be written as strings.
FilePath = Annotated[Path, Field(strict=False)]
Day = Annotated[date, Field(strict=False)]
Seed = Annotated[int, Field(ge=0, le=2**31 - 1)]  # within a 32-bit integer, as tables store seeds

# Every number has an upper bound as well: past it a value is a slip (`events_per_window =
# 300000000000000000000`), which would otherwise overflow far from the config (a 32-bit column,
# a timedelta, a socket's timeout). Floats must be finite (`timeout_seconds = inf`, `nan`).
MAX_COUNT = 1_000_000_000  # events, rows, rounds, resamples: within a 32-bit column
MAX_DAYS = 3_660  # a span of days: ten years
MAX_SECONDS = 3_600  # a wait for a channel: past an hour it is down, not slow


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class Paths(_Model):
    """Logs and samples: a local folder or a URI such as ``s3://bucket/prefix`` (see
    feco.storage; credentials come from the environment, never from here). The warehouse is
    a local DuckDB file."""

    logs: FilePath | str
    samples: FilePath | str
    warehouse: FilePath
    report: FilePath | None = None  # the HTML report's folder; default: "report" beside the warehouse
    # An Airflow connection holding the object store's credentials (login, password, extra
    # endpoint_url / region_name); feco_daily exports it to the tasks' environment.
    airflow_connection: str | None = None
    # Logs in an Iceberg table (logs = "iceberg:CATALOG/NAMESPACE.TABLE"): the catalog's
    # properties beside pyiceberg's own configuration (secrets belong there); see feco.sources.iceberg.
    iceberg_catalog: dict[str, str] = Field(default_factory=dict)
    # Logs in a table: read it at this Iceberg snapshot id or Delta version, not the current
    # one (sample_windows.table_version records what each day read). Usually given for one
    # rerun (`feco run --as-of`) rather than kept here.
    logs_as_of: str | None = None

    @field_validator("warehouse", mode="before")
    @classmethod
    def _local_warehouse(cls, value):
        if "://" in str(value):
            raise ValueError("the warehouse is a local DuckDB file, not a URI")
        return value

    @field_validator("logs_as_of", mode="before")
    @classmethod
    def _version_as_text(cls, value):
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value  # a Delta version

    @model_validator(mode="after")
    def _as_of_a_table(self) -> Paths:
        if self.logs_as_of is not None and not is_table(self.logs):
            raise ValueError("logs_as_of pins a log table's snapshot or version, and logs is a folder")
        return self


class Source(_Model):
    """An upstream source: its features (names or shell-style patterns), and who to turn to
    when they fail, shown beside its incidents. ``name = ["eng_*"]`` is the short form of a
    ``[logs.sources.name]`` table with ``features`` only. The owner and the runbook change no
    computed result, so they are left out of the config's digest."""

    features: list[str] = Field(min_length=1)
    owner: str | None = Field(default=None, exclude=True)
    runbook: str | None = Field(default=None, exclude=True)


class _LogSchemaMethods(_Model):
    """LogSchema's checks and look-ups; its fields are declared with it, below."""

    @field_validator("features", check_fields=False)
    @classmethod
    def _unique(cls, features: list[str]) -> list[str]:
        duplicates = sorted({f for f in features if features.count(f) > 1})
        if duplicates:
            raise ValueError(f"feature listed twice: {', '.join(duplicates)}")
        for feature in features:
            _check_column_name(feature)
        return features

    @model_validator(mode="after")
    def _sources_name_features(self) -> LogSchema:
        owner: dict[str, str] = {}
        for source, spec in self.sources.items():
            for pattern in spec.features:
                matched = [f for f in self.features if fnmatch.fnmatchcase(f, pattern)]
                if not matched:
                    raise ValueError(f"sources.{source}: {pattern!r} matches no feature in logs.features")
                for feature in matched:
                    if owner.setdefault(feature, source) != source:
                        raise ValueError(f"feature {feature!r} is in two sources: {owner[feature]} and {source}")
        return self

    def source_features(self) -> dict[str, list[str]]:
        """Each source's features, in the order of ``features``."""
        return {source: [f for f in self.features if any(fnmatch.fnmatchcase(f, p) for p in spec.features)]
                for source, spec in self.sources.items()}

    def source_of(self, feature: str | None) -> str | None:
        """The upstream source ``feature`` comes from, or None.

        Examples
        --------
        >>> logs = LogSchema(features=["eng_ctr", "price"], sources={
        ...     "engagement": {"features": ["eng_*"], "owner": "#eng-data"}})
        >>> logs.source_of("eng_ctr"), logs.source_of("price"), logs.source_contact("engagement")
        ('engagement', None, ('#eng-data', None))
        """
        return next((source for source, features in self.source_features().items() if feature in features), None)

    def source_contact(self, source: str) -> tuple[str | None, str | None]:
        """The owner and the runbook configured for ``source`` (None where not given)."""
        spec = self.sources.get(source)
        return (spec.owner, spec.runbook) if spec else (None, None)

    @field_validator("sources", mode="before", check_fields=False)
    @classmethod
    def _short_form(cls, sources):
        if not isinstance(sources, dict):
            return sources
        for name, spec in sources.items():
            if not isinstance(spec, (list, dict)):  # a ValueError, which pydantic reports under the key
                raise ValueError(f"sources.{name}: give a list of features (or patterns), or a table with "  # noqa: TRY004
                                 "features, owner and runbook")
        return {name: {"features": spec} if isinstance(spec, list) else spec for name, spec in sources.items()}

    @field_serializer("sources", check_fields=False)
    def _as_written(self, sources: dict[str, Source]) -> dict[str, list[str]]:
        # the short form, so the config's digest is the one of a config written before tables
        return {name: spec.features for name, spec in sources.items()}


def _check_column_name(name: str) -> None:
    """Any column name works (quoted in SQL, looked up literally) except the sample's own
    ``window`` and names polars reads as a pattern rather than a name."""
    if name == "window":
        raise ValueError("'window' is the column feco's sample adds (the window number); "
                         "rename the column in the logs")
    if name == "*" or (name.startswith("^") and name.endswith("$")):
        raise ValueError(f"column name {name!r} reads as a pattern of columns in polars, "
                         "not as one column; rename it in the logs")


def _usable(name: str) -> str:
    _check_column_name(name)
    return name


ColumnName = Annotated[str, AfterValidator(_usable)]

# Built from feco.dimensions, which declares each segment dimension's [logs] key: a column per
# key, defaulting to the key itself. The fields keep this order: the config's digest
# (feco.tasks.config_digest) hashes them in it.
LogSchema = create_model(
    "LogSchema",
    __base__=_LogSchemaMethods,
    __module__=__name__,
    __doc__="""Column names in the team's own logs; nothing is renamed on their side.""",
    timestamp=(ColumnName, "event_ts"),
    event_id=(ColumnName, "event_id"),
    features=(list[str], Field(min_length=1)),
    **{key: (ColumnName, key) for key in dimensions.by_source()},  # product_group, region, query, ...
    label=(ColumnName, "label"),
    # A product's id, to compare the same products' coverage a week apart (feco.same_products):
    # new products turn over, and without it a cohort of them with fewer values reads as a decay.
    product_id=(ColumnName, "product_id"),
    # Upstream sources: features that come from one place and fail together, by name or by a
    # shell-style pattern (``engagement = ["eng_*"]``). Features of one source that drop on
    # the same day in the same segment are one incident. A feature in no source is its own.
    # A source written as a table also names its owner and runbook (see Source).
    sources=(dict[str, Source], Field(default_factory=dict)),
)


class Sampling(_Model):
    windows: Annotated[int, Field(ge=1, le=MINUTES_PER_DAY)] = 8
    window_minutes: Annotated[int, Field(ge=1, le=MINUTES_PER_DAY)] = 10
    events_per_window: Annotated[int, Field(ge=1, le=MAX_COUNT)] = 200_000
    window_starts: list[str] | None = None
    seed: Seed = 0

    @model_validator(mode="after")
    def _windows_fit_in_a_day(self) -> Sampling:
        if self.windows * self.window_minutes > MINUTES_PER_DAY:
            raise ValueError(
                f"{self.windows} windows of {self.window_minutes} minutes do not fit in a day"
            )
        if self.window_starts is not None:
            _check_explicit_starts(self.window_starts, self.windows, self.window_minutes)
        return self

    def start_minutes(self) -> list[int]:
        """Minute of the day each window starts at, evenly spread unless configured."""
        if self.window_starts is not None:
            return [_minutes(s) for s in self.window_starts]
        spacing = MINUTES_PER_DAY / self.windows
        # Centre each window in its slice of the day, so no window straddles midnight.
        return [int(i * spacing + (spacing - self.window_minutes) / 2) for i in range(self.windows)]


def _minutes(hhmm: str) -> int:
    if not re.fullmatch(r"\d{2}:\d{2}", hhmm):
        raise ValueError(f"window start {hhmm!r} is not HH:MM")
    parsed = time.fromisoformat(hhmm)
    return parsed.hour * 60 + parsed.minute


def _check_explicit_starts(starts: list[str], windows: int, length: int) -> None:
    if len(starts) != windows:
        raise ValueError(f"{len(starts)} window_starts given for {windows} windows")
    minutes = [_minutes(s) for s in starts]
    if minutes != sorted(minutes):
        raise ValueError("window_starts must be in increasing order")
    for earlier, later in itertools.pairwise(minutes):
        if later < earlier + length:
            raise ValueError(f"windows starting at {earlier // 60:02d}:{earlier % 60:02d} and "
                             f"{later // 60:02d}:{later % 60:02d} overlap")
    if minutes[-1] + length > MINUTES_PER_DAY:
        raise ValueError(f"the window starting at {starts[-1]} runs past midnight")


_RULE = re.compile(r"^\s*(>|!=)\s*(reference_mean|reference_median|[-+]?\d+(\.\d*)?([eE][-+]?\d+)?)\s*$")


class CoverageRule(_Model):
    """When a value counts as covered: ``x > t``, ``x != t`` or ``x >`` a reference statistic."""

    op: Literal[">", "!="]
    threshold: float | None = None
    reference: Literal["mean", "median"] | None = None

    @classmethod
    def parse(cls, text: str) -> CoverageRule:
        match = _RULE.match(text)
        if not match:
            raise ValueError(
                f"coverage rule {text!r} is not one of '> T', '!= T', "
                "'> reference_mean', '> reference_median'"
            )
        op, operand = match.group(1), match.group(2)
        if operand.startswith("reference_"):
            if op != ">":
                raise ValueError(f"coverage rule {text!r}: reference rules use '>'")
            return cls(op=op, reference=operand.removeprefix("reference_"))
        threshold = float(operand)
        if not math.isfinite(threshold):  # float() reads 1e999 as infinity (_RULE refuses nan and inf)
            raise ValueError(f"coverage rule {text!r}: the threshold is not a finite number")
        return cls(op=op, threshold=threshold)

    def __str__(self) -> str:
        operand = f"reference_{self.reference}" if self.reference else f"{self.threshold:g}"
        return f"{self.op} {operand}"


class ReferencePeriod(_Model):
    start: Day
    end: Day

    @model_validator(mode="after")
    def _ordered(self) -> ReferencePeriod:
        if self.end < self.start:
            raise ValueError("reference period ends before it starts")
        return self

    def days_needed(self) -> int:
        """Days of the period that must hold ``min_rows`` sampled rows for it to count: half
        its days, rounded up.

        Examples
        --------
        >>> ReferencePeriod(start=date(2026, 1, 1), end=date(2026, 1, 7)).days_needed()
        4
        """
        return ((self.end - self.start).days + 2) // 2


def _valid_rule(text: str) -> str:
    CoverageRule.parse(text)
    return text


# Checked one by one, so that an error names the feature's key: coverage.rules.<feature>.
RuleText = Annotated[str, AfterValidator(_valid_rule)]


class Coverage(_Model):
    default_rule: RuleText = "> 0"
    rules: dict[str, RuleText] = Field(default_factory=dict)
    reference: ReferencePeriod | None = None

    def rule_for(self, feature: str) -> CoverageRule:
        return CoverageRule.parse(self.rules.get(feature, self.default_rule))


class Segments(_Model):
    dimensions: list[Dimension] = Field(default_factory=lambda: list(SEGMENT_DIMENSIONS))
    crosses: list[list[Dimension]] = Field(default_factory=list)
    # Days of samples whose query counts set the bands, the day itself included (a warehouse's
    # first band_days days share the bands of all of them: feco.coverage.first_window). One
    # day's sample puts most queries near the torso/tail edge in a band by chance (a 30% drop
    # in tail queries measured 15%); at a few thousand sampled searches a day over tens of
    # thousands of queries a week's still put a tail failure at two thirds of its depth, four
    # weeks' (the templates' 28) nearer: nine tenths and under three quarters in the bench's
    # worlds. 7 here: a warehouse counted with a week's bands keeps them (its reference period
    # was counted with them).
    band_days: Annotated[int, Field(ge=1, le=MAX_DAYS)] = 7
    head_share: Annotated[float, Field(gt=0, lt=1)] = 0.5
    torso_share: Annotated[float, Field(gt=0, lt=1)] = 0.3
    new_product_days: Annotated[int, Field(ge=1, le=MAX_DAYS)] = 30
    # Product age bands by days since first seen ('0d', '1-2d', '3-6d', '7-13d', '14-29d',
    # '30-89d', '90d+'): cold start by age, and what explains a segment's coverage when its
    # mix of product ages changes (a batch of new products lands: on its first day none of it
    # has engagement yet, so the youngest bands are narrow). new_product_days is one of the
    # edges, so the bands nest in product_age.
    age_band_days: list[Annotated[int, Field(ge=1, le=MAX_DAYS)]] = Field(default_factory=lambda: [1, 3, 7, 14, 30, 90],
                                                              min_length=1)

    @model_validator(mode="after")
    def _consistent(self) -> Segments:
        if self.head_share + self.torso_share >= 1:
            raise ValueError("head_share + torso_share must leave a tail (< 1)")
        if self.age_band_days != sorted(set(self.age_band_days)):
            raise ValueError(f"age_band_days {self.age_band_days} must grow, each edge once")
        if self.new_product_days not in self.age_band_days:
            raise ValueError(f"new_product_days ({self.new_product_days}) must be one of age_band_days "
                             f"{self.age_band_days}, so that the age bands nest in new and established")
        for cross in self.crosses:
            if len(cross) < 2 or len(set(cross)) != len(cross):
                raise ValueError(f"cross {cross} needs two or more different dimensions")
        return self

    def age_bands(self) -> list[tuple[str, int]]:
        """(label, lower edge in days) of each age band, youngest first: ('0d', 0), ('1-2d', 1) ... ('90d+', 90)."""
        edges = [0, *self.age_band_days]
        return ([(f"{low}d" if high == low + 1 else f"{low}-{high - 1}d", low) for low, high in itertools.pairwise(edges)]
                + [(f"{edges[-1]}d+", edges[-1])])

    def new_age_bands(self) -> list[str]:
        """The age bands of product_age = 'new'."""
        return [label for label, low in self.age_bands() if low < self.new_product_days]

    def names(self) -> list[tuple[str, ...]]:
        """Every segment dimension to compute, as column tuples; ``()`` is the global one."""
        return [()] + [(d,) for d in self.dimensions] + [tuple(c) for c in self.crosses]


class DropSettings(_Model):
    """Coverage below what the previous days predict by a share, an amount, k standard errors
    of the day's value (the spread of its windows) and the false-page budget's critical value
    of the previous days' spread (docs/alerts.md)."""

    relative: Annotated[float, Field(ge=0, lt=1)] = 0.10
    absolute: Annotated[float, Field(ge=0, lt=1)] = 0.02
    k: Annotated[float, Field(ge=0, le=100)] = 3.0
    # A segment (not all traffic) is judged against the rest of traffic (its usual ratio to
    # it), which a day-to-day swing common to all traffic does not move; the swing itself is
    # judged once, in all traffic. false: segments are judged on their own days.
    against_rest: bool = True
    baseline_days: Annotated[int, Field(ge=1, le=MAX_DAYS)] = 7
    # Days whose daily values give the day-to-day spread: eight weeks hold the weekly pattern
    # twice over, one bad day among them does not mask the days after it, and a spread learnt
    # from more days is surer (a smaller critical value on more degrees of freedom).
    spread_days: Annotated[int, Field(ge=2, le=MAX_DAYS)] = 56
    # Persistence: the drop must show in at least this many of the day's windows (0: off).
    min_windows: Annotated[int, Field(ge=0, le=MINUTES_PER_DAY)] = 0


class DecaySettings(_Model):
    """The moving average has fallen below a frozen reference period's coverage by a share, an
    amount and the false-page budget's critical value of the difference's spread: the days'
    noise and how much the series' weekly level wanders (docs/alerts.md)."""

    relative: Annotated[float, Field(gt=0, lt=1)] = 0.09
    absolute: Annotated[float, Field(ge=0, lt=1)] = 0.01
    reference: ReferencePeriod | None = None
    # The weekly level's usual movement is measured over whole weeks at most this many days back.
    wander_days: Annotated[int, Field(ge=21, le=MAX_DAYS)] = 84
    # A rise held this many days in a row (every day above the reference by the relative and
    # absolute margins: a launch, a rollout filling in) becomes the series' reference.
    follow_days: Annotated[int, Field(ge=1, le=MAX_DAYS)] = 7


class MissingSettings(_Model):
    """The share of NULL/NaN values rose above its baseline (apart from zeros)."""

    absolute: Annotated[float, Field(gt=0, le=1)] = 0.05


class PagerDutySettings(_Model):
    """PagerDuty's Events API v2 (feco.alerts.channels.pagerduty). The routing key is a secret:
    from the environment variable named here, or the Airflow connection's password."""

    routing_key_env: str | None = "FECO_PAGERDUTY_ROUTING_KEY"
    airflow_connection: str | None = None
    url: str = "https://events.pagerduty.com/v2/enqueue"  # the EU service: events.eu.pagerduty.com
    source: str = "feco"  # payload.source: the system PagerDuty shows as affected

    @field_validator("url")
    @classmethod
    def _http(cls, url: str) -> str:
        if not url.startswith(("https://", "http://")):
            raise ValueError("must be an http(s) URL")
        return url


class SlackSettings(_Model):
    """A Slack incoming webhook (feco.alerts.channels.slack). Its URL is a secret: from the
    environment variable named here, or the Airflow connection (as the Slack provider's
    ``slackwebhook`` connection holds it)."""

    webhook_url_env: str | None = "FECO_SLACK_WEBHOOK_URL"
    airflow_connection: str | None = None


class Notify(_Model):
    """Where incident messages go. Secrets never live here: only the names of where to find them."""

    jsonl: FilePath | None = None
    webhook_url_env: str | None = "FECO_WEBHOOK_URL"
    airflow_connection: str | None = None
    # One request may take this long in all (connect, send, answer), not per socket read.
    timeout_seconds: Annotated[float, Field(gt=0, le=MAX_SECONDS)] = 5.0
    # A run's whole delivery ends by then; what is not sent by then is failed and retried.
    deadline_seconds: Annotated[float, Field(gt=0, le=MAX_SECONDS)] = 30.0
    # More pending messages than this on a channel (after a backfill or an outage): one digest.
    digest_after: Annotated[int, Field(ge=1, le=MAX_COUNT)] = 3
    # The report's path (relative to the config's folder) or URL, named in a digest and linked
    # from a Slack message.
    report: str | None = None
    # Incidents that page no one ([alerts.incidents] page_*: too mild, too small, a cross, an age
    # band, too little history) go, at low urgency, to one message a day on every channel but
    # PagerDuty, which receives pages only; false: they are listed (`feco alerts`, the report) only.
    daily_digest: bool = True
    # Channels a team receives pages in, on when their table is present.
    pagerduty: PagerDutySettings | None = None
    slack: SlackSettings | None = None


class Incidents(_Model):
    """When an incident resolves and which ones page a person."""

    # Days in a row its segment must be back within its normal band to resolve.
    resolve_days: Annotated[int, Field(ge=1, le=MAX_DAYS)] = 2
    # Incidents milder than this, or whose headline segment holds less than this share of the
    # day's rows, page no one: they are listed and go to the daily digest ([alerts.notify]
    # daily_digest), at low urgency.
    page_min_severity: Literal["low", "medium", "high", "critical"] = "medium"
    page_min_share: Annotated[float, Field(ge=0, le=1)] = 0.05
    # Crosses of dimensions multiply the cells judged (and so the false alarms); their
    # incidents are tracked and listed, and page only when this is on.
    page_crosses: bool = False
    # Product age bands chart cold start and explain a segment's mix of ages; their incidents
    # are tracked and listed (product_age pages for new products), and page only when this is on.
    page_age_bands: bool = False
    # Days of history before a drop or a NULL rise pages: the rules learn the weekly pattern from
    # two of every weekday, and before that a weekday swing looks like a failure. Incidents are
    # tracked and listed from the first day; collapses, floors and missing columns page from the
    # first days.
    page_after_days: Annotated[int, Field(ge=0, le=MAX_DAYS)] = 14


class CostTiers(_Model):
    """NDCG@8 losses (positive numbers) that make an incident critical, high or medium."""

    critical: Annotated[float, Field(gt=0, lt=1)] = 0.01
    high: Annotated[float, Field(gt=0, lt=1)] = 0.005
    medium: Annotated[float, Field(gt=0, lt=1)] = 0.002

    @model_validator(mode="after")
    def _ordered(self) -> CostTiers:
        if not self.critical > self.high > self.medium:
            raise ValueError("tiers must shrink: critical > high > medium")
        return self


class SeveritySettings(_Model):
    """How incidents are ranked. ``cost``: by the NDCG the replayed coverage loss costs the
    model that scores the day (feco.ranker.replay), tiered on the loss the evidence supports
    (feco.alerts.cost_severity.costed_tier); ``importance``: the drop weighted by the feature's
    SHAP share. Without a model, both use the drop alone."""

    by: Literal["cost", "importance"] = "cost"
    tiers: CostTiers = Field(default_factory=CostTiers)
    # The replay's reference: this many clean sampled days before the incident's onset (among
    # the lookback_days before it), at most `events` of their events in its segment.
    reference_days: Annotated[int, Field(ge=1, le=MAX_DAYS)] = 7
    lookback_days: Annotated[int, Field(ge=1, le=MAX_DAYS)] = 28
    events: Annotated[int, Field(ge=10, le=MAX_COUNT)] = 5_000
    resamples: Annotated[int, Field(ge=100, le=MAX_COUNT)] = 1_000
    seed: Seed = 1

    @model_validator(mode="after")
    def _reference_inside_lookback(self) -> SeveritySettings:
        if self.reference_days > self.lookback_days:
            raise ValueError("reference_days must not exceed lookback_days")
        return self


class Readiness(_Model):
    """When a day's logs count as complete, so a scheduled run does not sample a partial day.

    With ``marker`` the log pipeline's own signal decides (a file such as ``_SUCCESS`` in the
    day's partition); without it, every hour partition the sampling windows read must be
    present and unchanged for ``settle_minutes``. A scheduled run gives up ``wait_hours`` after
    the day has ended.
    """

    marker: str | None = None
    settle_minutes: Annotated[float, Field(ge=0, le=MINUTES_PER_DAY)] = 30.0
    wait_hours: Annotated[float, Field(gt=0, le=24 * 7)] = 6.0


class Alerts(_Model):
    # Pages a week about nothing wrong (an incident's opening and its resolution are two) the
    # team accepts for the whole warehouse: it sets every coverage rule's critical value.
    false_pages_per_week: Annotated[float, Field(gt=0, le=MAX_COUNT)] = 0.5
    warmup_days: Annotated[int, Field(ge=0, le=MAX_DAYS)] = 7
    min_rows: Annotated[int, Field(ge=0, le=MAX_COUNT)] = 500
    # A day whose sampled events fall below this share of their usual level (the last week's
    # median, or the same weekday's over four weeks when lower) raises volume_drop.
    volume_drop: Annotated[float, Field(gt=0, lt=1)] = 0.5
    # Search traffic has a weekly rhythm (weekend shoppers differ). The drop rule compares a
    # day with the baseline shifted by its weekday's usual deviation; both rules measure the
    # day-to-day spread net of it. Applied where every weekday has two days to learn from.
    weekly: bool = True
    # All traffic and the product-age segments are judged against their own history only while
    # their mix of product ages shares at least this much with it (new products launched in
    # monthly batches replace the segment wholesale: its past says nothing of its present).
    min_age_overlap: Annotated[float, Field(ge=0, le=1)] = 0.5
    drop: DropSettings = Field(default_factory=DropSettings)
    decay: DecaySettings = Field(default_factory=DecaySettings)
    missing: MissingSettings = Field(default_factory=MissingSettings)
    floor: dict[str, Annotated[float, Field(ge=0, le=1)]] = Field(default_factory=dict)
    incidents: Incidents = Field(default_factory=Incidents)
    severity: SeveritySettings = Field(default_factory=SeveritySettings)
    notify: Notify = Field(default_factory=Notify)


def _default_lightgbm_params() -> dict[str, float | int | str]:
    return {"objective": "lambdarank", "learning_rate": 0.05, "num_leaves": 31,
            "min_data_in_leaf": 20, "feature_fraction": 0.9, "bagging_fraction": 0.8,
            "bagging_freq": 1, "lambdarank_truncation_level": 20, "num_threads": 2,
            "seed": 1, "deterministic": True, "force_col_wise": True, "verbose": -1}


class ServingModel(_Model):
    """The team's own model (feco.ranker.serving): a LightGBM model file it serves, scored,
    explained and replayed from ``valid_from`` on instead of the reference ranker."""

    file: FilePath
    valid_from: Day
    # The model's feature names -> log columns; a name left out is a log column of that name.
    features: dict[str, str] = Field(default_factory=dict)
    label: str | None = None  # the graded label its NDCG is taken on; default [logs] label
    # Its last training day, when known: the replay then takes clean days after it only.
    trained_until: Day | None = None


class Ranker(_Model):
    """The reference LightGBM lambdarank model: parameters, training period, artifacts; the
    team's own model, when it names one; how the daily attribution samples rows."""

    params: dict[str, float | int | str | bool] = Field(default_factory=_default_lightgbm_params)
    num_boost_round: Annotated[int, Field(ge=1, le=MAX_COUNT)] = 500
    early_stopping_rounds: Annotated[int, Field(ge=1, le=MAX_COUNT)] = 30
    # Trained on the sampled days before the training date; the last days validate.
    reference_days: Annotated[int, Field(ge=2, le=MAX_DAYS)] = 14
    validation_days: Annotated[int, Field(ge=1, le=MAX_DAYS)] = 2
    models: FilePath = Path("models")
    shap_sample_rows: Annotated[int, Field(ge=1, le=MAX_COUNT)] = 5_000
    # The score step's daily SHAP per segment: all the day's sampled rows, or a seeded sample
    # of this many when there are more (exact TreeSHAP costs about a hundred predictions a row).
    shap_rows: Annotated[int, Field(ge=1, le=MAX_COUNT)] = 250
    # ... and at least this many rows of each segment that can page, drawn within it: 250 rows
    # a day hold ~37 of a 15% segment, too few to see a rank-10 feature's drop there.
    shap_segment_rows: Annotated[int, Field(ge=0, le=MAX_COUNT)] = 200
    segments: list[Literal["region"]] = Field(default_factory=lambda: ["region"])
    # The served order (1 = shown first), for the NDCG of what was served.
    position: str = "position"
    seed: Seed = 1
    # The scheduled ranker DAG retrains when the model valid on the next day is this old.
    retrain_days: Annotated[int, Field(ge=1, le=MAX_DAYS)] = 7
    model: ServingModel | None = None

    @model_validator(mode="after")
    def _validation_inside_reference(self) -> Ranker:
        if self.validation_days >= self.reference_days:
            raise ValueError("validation_days must be fewer than reference_days")
        return self


class AirflowTasks(_Model):
    """How the Airflow DAGs retry a failed task. Read where the DAGs are parsed (from
    $FECO_CONFIG), so a change applies from the next parse, not to runs already queued."""

    retries: Annotated[int, Field(ge=0, le=100)] = 2
    retry_delay_minutes: Annotated[float, Field(ge=0, le=MINUTES_PER_DAY)] = 5.0


class Spark(_Model):
    """The Spark engine's session. Unset ``master``: spark-submit's, else local mode."""

    master: str | None = None
    conf: dict[str, str] = Field(default_factory=dict)


class OptionalColumn(NamedTuple):
    key: str  # as a user writes it: "[logs] label"
    column: str
    named: bool  # the config names it (rather than leaving it to its default)
    turns_on: str  # what is measured only with it


class Config(_Model):
    moving_average_days: Annotated[int, Field(ge=1, le=366)] = 7
    # Where the day is sampled: in this process, or on Spark, a window to a task running the
    # same code. Both choose the same events; coverage is counted here either way.
    engine: Literal["duckdb", "spark"] = "duckdb"
    spark: Spark = Field(default_factory=Spark)
    paths: Paths
    logs: LogSchema
    readiness: Readiness = Field(default_factory=Readiness)
    sampling: Sampling = Field(default_factory=Sampling)
    coverage: Coverage = Field(default_factory=Coverage)
    segments: Segments = Field(default_factory=Segments)
    alerts: Alerts = Field(default_factory=Alerts)
    ranker: Ranker = Field(default_factory=Ranker)
    airflow: AirflowTasks = Field(default_factory=AirflowTasks)
    source: Path = Field(default=Path("<memory>"), exclude=True)

    def optional_columns(self) -> list[OptionalColumn]:
        """The log columns of OPTIONAL_COLUMNS as configured: one the config names must be in
        the logs; one left to its default name is used where the logs have it."""
        return [OptionalColumn(f"[{section}] {key}", getattr(getattr(self, section), key),
                               key in getattr(self, section).model_fields_set, turns_on)
                for section, key, turns_on in OPTIONAL_COLUMNS]

    def decay_reference(self) -> ReferencePeriod | None:
        """The frozen reference period the decay rule compares against: its own, else coverage's."""
        return self.alerts.decay.reference or self.coverage.reference

    @model_validator(mode="after")
    def _rules_name_features(self) -> Config:
        for section, names in (("coverage.rules", self.coverage.rules),
                               ("alerts.floor", self.alerts.floor)):
            unknown = sorted(set(names) - set(self.logs.features))
            if unknown:
                raise ValueError(f"{section} names features not in logs.features: {unknown}")
        uses_reference = any(
            self.coverage.rule_for(f).reference for f in self.logs.features
        )
        if uses_reference and self.coverage.reference is None:
            raise ValueError("a reference coverage rule needs [coverage.reference] start and end")
        if self.alerts.drop.min_windows > self.sampling.windows:
            raise ValueError(f"alerts.drop.min_windows ({self.alerts.drop.min_windows}) exceeds "
                             f"sampling.windows ({self.sampling.windows}): the drop rule could never fire")
        return self


def config_path(path: str | os.PathLike | None = None) -> Path:
    """The config to use: the argument, else $FECO_CONFIG, else ``configs/feco.toml``."""
    return Path(path or os.environ.get("FECO_CONFIG") or DEFAULT_CONFIG)


def load_config(path: str | os.PathLike | None = None) -> Config:
    """Read and validate a feco TOML config.

    Examples
    --------
    >>> template = Path(__file__).parents[1] / "configs" / "template.toml"
    >>> config = load_config(template)
    >>> config.sampling.windows, config.paths.warehouse
    (8, PosixPath('/path/to/feco/feco.duckdb'))
    """
    source = config_path(path).resolve()
    if source.is_dir():
        raise ConfigError(f"{source} is a folder: give the config file itself, e.g. {source / 'feco.toml'}")
    try:
        raw = tomllib.loads(source.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            f"config file {source} not found (pass --config PATH or set FECO_CONFIG)"
        ) from None
    except OSError as error:
        raise ConfigError(f"cannot read config file {source}: {error.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ConfigError(f"{source}: not valid TOML: {error}") from None
    return parse_config(raw, source=source)


def parse_config(raw: dict, *, source: Path) -> Config:
    """Validate a config dictionary read from ``source``; relative paths resolve against it."""
    try:
        config = Config.model_validate({**raw, "source": source})
    except ValidationError as error:
        raise ConfigError(f"{source}: {_describe(error)}") from None
    base = source.parent
    resolved = {name: value if "://" in str(value) else (base / value).resolve()
                for name, value in config.paths.model_dump(exclude={"airflow_connection", "iceberg_catalog",
                                                                     "logs_as_of"}).items()
                if value}
    if is_table(config.paths.logs):  # a table's name, not a folder
        resolved["logs"] = resolve_table(config.paths.logs, base)
    resolved.setdefault("report", resolved["warehouse"].parent / "report")
    notify = config.alerts.notify
    if notify.jsonl is not None:
        notify = notify.model_copy(update={"jsonl": (base / notify.jsonl).resolve()})
    if notify.report is not None and "://" not in notify.report:  # a URL stays as it is
        notify = notify.model_copy(update={"report": str((base / notify.report).resolve())})
    alerts = config.alerts.model_copy(update={"notify": notify})
    serving = config.ranker.model
    if serving is not None:
        serving = serving.model_copy(update={"file": (base / serving.file).resolve()})
    ranker = config.ranker.model_copy(update={"models": (base / config.ranker.models).resolve(), "model": serving})
    paths = config.paths.model_copy(update=resolved)
    return config.model_copy(update={"paths": paths, "alerts": alerts, "ranker": ranker})


def _describe(error: ValidationError) -> str:
    problems: dict[str, list[str]] = {}
    for item in _within_its_own_type(error.errors()):
        key = ".".join(str(part) for part in item["loc"] if part not in _UNION_MEMBERS) or "(top level)"
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            message = "unknown key" + _did_you_mean(item["loc"])
        elif item["type"] == "missing":
            message = "required key is missing"
        problems.setdefault(key, []).append(message)
    return "; ".join(f"key '{key}': {_either(messages)}" for key, messages in problems.items())


def _either(messages: list[str]) -> str:
    """'Input should be a valid integer or a valid string', from a union's members."""
    first, *others = messages
    return " or ".join([first, *(m.removeprefix("Input should be ") for m in others)])


# How pydantic names the member of a union (ranker.params' values) a value was tried against.
_UNION_MEMBERS = {"float", "int", "str", "bool"}
_TYPE_MISMATCHES = {"float_type", "int_type", "string_type", "bool_type"}


def _within_its_own_type(items: list[dict]) -> list[dict]:
    """A value tried against each member of a union fails each: ``nan`` is no int, no string
    and no bool, but what is wrong with it is that it is not finite. Where a value failed a
    member of its own type, that is the error; the others are dropped."""
    def key(item: dict) -> tuple:
        return tuple(part for part in item["loc"] if part not in _UNION_MEMBERS)

    own_type = {key(item) for item in items if item["loc"] and item["loc"][-1] in _UNION_MEMBERS
                and item["type"] not in _TYPE_MISMATCHES}
    return [item for item in items if key(item) not in own_type or item["type"] not in _TYPE_MISMATCHES]


def _did_you_mean(loc: tuple) -> str:
    """'; did you mean 'windows'?' for an unknown key near one its table knows, else ''.

    Examples
    --------
    >>> _did_you_mean(("sampling", "window")), _did_you_mean(("alerts", "drop", "relativ"))
    ("; did you mean 'windows'?", "; did you mean 'relative'?")
    """
    known = _keys_at(Config, loc[:-1])
    close = difflib.get_close_matches(str(loc[-1]), known, n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


def _keys_at(model: type[BaseModel], path: tuple) -> list[str]:
    """The keys of the table at ``path`` of ``model`` (none when it is not a model's table).
    A part naming no field is a dict's key or pydantic's name of a union's member: skipped."""
    for part in path:
        field = model.model_fields.get(str(part))
        if field is None:
            continue
        models = [t for t in _inner_types(field.annotation) if isinstance(t, type) and issubclass(t, BaseModel)]
        if not models:
            return []
        model = models[0]
    return [name for name in model.model_fields if (model, name) != (Config, "source")]  # source: set by feco


def _inner_types(annotation) -> list:
    """The types an annotation holds: the members of a union, the values of a dict."""
    from typing import get_args, get_origin

    arguments = get_args(annotation)
    if not arguments:
        return [annotation]
    if get_origin(annotation) is dict:
        arguments = arguments[1:]
    return [inner for argument in arguments for inner in _inner_types(argument)]
