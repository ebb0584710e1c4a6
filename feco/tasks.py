"""The pipeline's steps, as plain functions the CLI, the Airflow DAGs and the tests call.

Each step takes the day it processes and the config (a loaded one, or a path) and is
idempotent: sample → sample_reference → compute_coverage → publish → notify, then report.
What each step writes is in its name and docstring: `sample` the day's sample,
`sample_reference` the reference period's samples and statistics (once), `compute_coverage`
only two staged files beside the day's sample; `publish` the whole day into the warehouse in
one transaction (coverage, the ranker's scores, alerts, incidents and their costs), `notify`
and `train_ranker` the warehouse too. Steps hand over through the day's sample folder
(feco.sample_folder) and the warehouse, so a scheduler can retry any step alone. Around them:
`check_logs` (are the day's logs complete?), `detect` (the alert rules again on a published
day), `train_ranker` (the weekly reference model) and `send_message` (a plain line to the
alert channels, for failures). Beside the pipeline, the writers that are not a day's step come
through here too, so every write holds the run lock: the paper's experiments
(`coverage_drop`, `coverage_drop_report`), the sampling study (`sampling_study`) and what
people on call do to incidents (`act_on_incident`, `silence`, `unsilence`).
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from feco import same_products, sampling, storage
from feco.config import Config, load_config
from feco.coverage import band_history, compute_states, day_events, first_window, reference_statistics
from feco.errors import ConfigError, DataError, UsageError
from feco.locking import run_lock
from feco.sample_folder import (
    SAME_PRODUCTS_FILE,
    STATES_FILE,
    STATUS_FILE,
    WINDOWS_FILE,
    is_sampled,
    read_sample,
    sample_files,
)
from feco.sampling.day_folder import discard_held, restore_held
from feco.sources import source_for
from feco.sources.logfiles import RESERVED_COLUMNS, not_measured
from feco.storage import partition_dir
from feco.warehouse import named_query, open_configured, publish_day, read_configured, replace_rows, transaction

if TYPE_CHECKING:  # the paper's modules load LightGBM: imported where an experiment runs
    from feco.paper.claims_report import ClaimsReport
    from feco.paper.datasets import Split
    from feco.paper.experiment import Grid, RunRecord, Training

# How often a running coverage-drop grid writes its finished runs; a stopped grid loses at most this much.
STORE_EVERY_SECONDS = 10.0


def as_date(ds: date | str) -> date:
    if isinstance(ds, date):
        return ds
    try:
        return date.fromisoformat(str(ds)[:10])
    except ValueError:
        raise UsageError(f"'{ds}' is not a date (YYYY-MM-DD)") from None


def finished_day(moment: datetime) -> date:
    """The last UTC day that has fully ended at ``moment``: the day a run ending then processes.

    A scheduled run's data interval ends at midnight (a manual run's, when it is triggered):
    the day before is complete, the day the moment falls in is not.
    """
    return moment.astimezone(UTC).date() - timedelta(days=1)


def as_config(config: Config | str | os.PathLike | None) -> Config:
    return config if isinstance(config, Config) else load_config(config)


def exclusive(step):
    """Run a step under the warehouse's run lock (see feco.locking), with ds and config parsed."""

    @functools.wraps(step)
    def locked(ds: date | str, config: Config | str | None = None, **options):
        ds, config = as_date(ds), as_config(config)
        with run_lock(config.paths.warehouse):
            return step(ds, config, **options)

    return locked


def check_logs(ds: date | str, config: Config | str | None = None, *, now: datetime | None = None):
    """Whether the day's logs are complete (see feco.readiness); reads only the file listing."""
    from feco.readiness import check_logs as check

    return check(as_date(ds), as_config(config), now=now or datetime.now(UTC))


@exclusive
def sample(ds: date | str, config: Config | str | None = None, *, allow_incomplete: bool = False,
           as_of: str | None = None) -> dict:
    """Sample the day's windows and write them under the samples folder.

    A day whose logs lack an hour a window reads is refused, unless ``allow_incomplete``:
    then such a window is sampled from what is there and recorded as missing hours. Logs in a
    table are read at its current snapshot or version, or at ``as_of`` (``[paths] logs_as_of``).
    """
    config = _logs_as_of(config, as_of)
    windows = _engine(config).write_sample(ds, config, allow_incomplete=allow_incomplete)
    rows = sample_files(ds, config.paths.samples).count_rows()
    return {"ds": ds.isoformat(), "events": int(windows["events_sampled"].sum()), "rows": rows}


@exclusive
def sample_reference(ds: date | str, config: Config | str | None = None) -> dict:
    """Freeze the statistics reference rules (``> reference_mean|median``) compare with.

    Once per reference period: the period's days not sampled yet are sampled, and each
    wanted statistic is computed over the period's samples and stored in
    ``coverage_reference``. Nothing happens when no rule uses a reference or they are stored
    already; ``ds`` only labels the result. compute_coverage reads what this stores.
    """
    wanted = _wanted_references(config)
    if not wanted:
        return {"ds": ds.isoformat(), "references": {}}
    stored = _stored_references(config)
    if stored.keys() == wanted.keys():
        return {"ds": ds.isoformat(), "references": stored}
    period = config.coverage.reference
    computed = reference_statistics(_period_sample(config), config=config)
    rows = pl.DataFrame({
        "feature": list(computed),
        "statistic": [wanted[f] for f in computed],
        "period_start": [period.start] * len(computed),
        "period_end": [period.end] * len(computed),
        "value": list(computed.values()),
    })
    with open_configured(config) as conn:
        replace_rows(conn, [("coverage_reference",
                             "period_start = $start AND period_end = $end AND list_contains($features, feature)",
                             {"start": period.start, "end": period.end, "features": list(computed)}, rows)])
    return {"ds": ds.isoformat(), "references": computed}


@exclusive
def compute_coverage(ds: date | str, config: Config | str | None = None) -> dict:
    """Count coverage states from the day's sample files (streaming) and stage them beside it;
    in a warehouse's first ``band_days`` days, count again the days of them staged before
    (they share the query bands of all of them sampled so far: feco.coverage.first_window);
    and the same products' coverage on the day and a week before (feco.same_products).

    A configured feature the day's logs lack is counted as never present (an incident), once
    the warehouse has found it on another day; before that it is a config error, with the
    logs' nearest column (a typo, or a column not logged yet, is no incident to page).

    Reads the day's samples (and, with ``band_days``, the other days of its band window, and
    the day a week before) and the stored reference statistics; writes only the staged files.
    """
    _refuse_features_never_found(ds, config)
    references = _stored_references(config)
    missing = _wanted_references(config).keys() - references.keys()
    if missing:
        period = config.coverage.reference
        raise DataError(f"no reference statistics stored for {', '.join(sorted(missing))} over "
                        f"{period.start} to {period.end}: run the sample_reference step first "
                        "(feco run and the feco_daily DAG do)")
    states, status = _stage_states(ds, config, references)
    restated = _restated_days(ds, config)
    for day in restated:
        _stage_states(day, config, references)
    same, not_counted = same_products.counts(ds, config=config, references=references)
    storage.write_parquet(same, storage.join(partition_dir(config.paths.samples, ds), SAME_PRODUCTS_FILE))
    missing = status.filter(pl.col("status") != "ok").get_column("feature").to_list()
    return {"ds": ds.isoformat(), "states": states.height, "missing_features": missing,
            "restated": [day.isoformat() for day in restated],
            "same_products": same.height if not_counted is None else f"not counted: {not_counted}"}


def _refuse_features_never_found(ds: date, config: Config) -> None:
    """A ConfigError for the configured features that neither the day's logs nor those of any
    other day in the warehouse hold, each with the logs' nearest column name."""
    columns = [c for c in sample_files(ds, config.paths.samples).schema if c not in RESERVED_COLUMNS]
    absent = [f for f in config.logs.features if f not in columns]
    if not absent:
        return
    found = set()
    if config.paths.warehouse.exists():
        with read_configured(config) as conn:
            found = set(named_query(conn, "features_found", {"features": absent, "ds": ds})["feature"])
    never = [f for f in absent if f not in found]
    if never:
        named = "; ".join(f"'{f}'" + "".join(f" (did you mean '{close}'?)"
                                             for close in difflib.get_close_matches(f, columns, n=1))
                          for f in never)
        raise ConfigError(f"[logs] features in {config.source} names columns the logs do not have on {ds}, nor on any "
                          f"other day the warehouse holds: {named}")


def _stage_states(ds: date, config: Config, references: dict[str, float]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Count the day's states and stage them and its feature status beside its sample."""
    states, status = compute_states(sample_files(ds, config.paths.samples), ds=ds, config=config,
                                    references=references, band_history=band_history(ds, config),
                                    day_events=day_events(ds, config))
    day = partition_dir(config.paths.samples, ds)
    storage.write_parquet(states, storage.join(day, STATES_FILE))
    storage.write_parquet(status, storage.join(day, STATUS_FILE))
    return states, status


def _restated_days(ds: date, config: Config) -> list[date]:
    """The other days of the warehouse's first band window, when ``ds`` is one of them, whose
    states were staged: their query bands move with each day of it counted."""
    return [day for day in first_window(ds, config)
            if day != ds and storage.exists(storage.join(partition_dir(config.paths.samples, day), STATES_FILE))]


def _logs_as_of(config: Config, as_of: str | None) -> Config:
    """The config reading its log table at ``as_of``, when given."""
    if as_of is None:
        return config
    if not source_for(config).versioned:
        raise UsageError(f"--as-of {as_of} pins a log table's snapshot or version, and the logs are a folder "
                         f"({config.paths.logs})")
    return config.model_copy(update={"paths": config.paths.model_copy(update={"logs_as_of": str(as_of)})})


def _engine(config: Config):
    """The module that samples: feco.sampling (DuckDB engine) or feco.spark_engine."""
    if config.engine == "spark":
        from feco import spark_engine

        return spark_engine
    return sampling


@exclusive
def publish(ds: date | str, config: Config | str | None = None, *, rescore: bool = False) -> dict:
    """Replace the day in the warehouse, in one transaction: its staged sample summary and
    coverage states, the optional log columns its logs lack, the served order's and the
    serving model's scores of its sample, the NDCG its coverage puts at risk, and the alerts,
    incidents and costs detected on them. A reader, and a run killed at any point, see the
    previous day or the complete new one; never new coverage beside the previous run's alerts.
    Once it commits, the day's previous sample, held since the sample step swapped in the new
    one, is dropped (feco.sampling.day_folder). In a warehouse's first ``band_days`` days the
    coverage states of the published days of them are replaced too, as the coverage step
    counted them again with the day's query bands (their alerts, unjudged segments, incidents
    and scores stay as detected). A day the team's model scored is scored by that version
    again, unless ``rescore``: then by the model file as it is now (feco.ranker.serving)."""
    from feco.ranker.at_risk import store_ndcg_at_risk
    from feco.ranker.daily import score_day

    windows, states, status = _staged(ds, config)
    same = _staged_same_products(ds, config)
    run = pl.DataFrame({
        "ds": [ds],
        "published_at": [datetime.now(UTC)],
        "events_sampled": [int(windows["events_sampled"].sum())],
        "rows_sampled": [int(states.filter(segment_dim="all", feature=config.logs.features[0])["n_rows"].sum())],
        "features": [len(config.logs.features)],
        "config_digest": [config_digest(config)],
    })
    with open_configured(config) as conn, transaction(conn):
        publish_day(conn, ds, {"sample_windows": windows, "coverage_states": states,
                               "feature_status": status, "same_products": same, "runs": run,
                               "columns_absent": _columns_absent(ds, config)})
        restated = _republish_restated(conn, ds, config)
        ranker = score_day(conn, ds, config=config, rescore=rescore)
        at_risk = store_ndcg_at_risk(conn, ds, config=config)
        alerts = _detect(conn, ds, config)
    discard_held(ds, config)
    return {"ds": ds.isoformat(), "events": run["events_sampled"][0], "rows": run["rows_sampled"][0],
            "restated": [day.isoformat() for day in restated], "ranker": ranker, "ndcg_at_risk": at_risk,
            "alerts": alerts}


def _columns_absent(ds: date, config: Config) -> pl.DataFrame:
    """The day's ``columns_absent`` rows: the optional log columns its sample lacks."""
    absent = not_measured(sample_files(ds, config.paths.samples).schema, config=config)
    return pl.DataFrame({"ds": [ds] * len(absent), "config_key": [o.key for o in absent],
                         "column_name": [o.column for o in absent]},
                        schema={"ds": pl.Date, "config_key": pl.String, "column_name": pl.String})


def _republish_restated(conn, ds: date, config: Config) -> list[date]:
    """Replace the coverage states of the published days that counting ``ds`` restated."""
    days = _restated_days(ds, config)
    published = named_query(conn, "published_days", {"days": days})["ds"].to_list() if days else []
    replace_rows(conn, [("coverage_states", "ds = $ds", {"ds": day}, _staged(day, config)[1]) for day in published])
    return published


def _staged(ds: date, config: Config) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The sample summary, states and feature status compute_coverage staged beside the sample."""
    day = partition_dir(config.paths.samples, ds)
    staged = {name: storage.join(day, name) for name in (WINDOWS_FILE, STATES_FILE, STATUS_FILE)}
    absent = [str(p) for p in staged.values() if not storage.exists(p)]
    if absent:
        raise DataError(f"nothing staged to publish for {ds}: missing {', '.join(absent)}")
    windows, states, status = (storage.read_parquet(p) for p in staged.values())
    # "window" is a keyword in SQL: the warehouse's tables name the column window_index
    return windows.rename({"window": "window_index"}), states.rename({"window": "window_index"}), status


def _staged_same_products(ds: date, config: Config) -> pl.DataFrame:
    """The same products' counts compute_coverage staged (none from a release before them)."""
    path = storage.join(partition_dir(config.paths.samples, ds), SAME_PRODUCTS_FILE)
    return storage.read_parquet(path) if storage.exists(path) else same_products.empty()


@exclusive
def detect(ds: date | str, config: Config | str | None = None) -> dict:
    """Run the alert rules again on the published day (after a change of alert settings) and
    replace its alerts, incidents and costs, in one transaction; ``publish`` does this too."""
    with open_configured(config) as conn, transaction(conn):
        return _detect(conn, ds, config)


def _detect(conn, ds: date, config: Config) -> dict:
    """Run the alert rules on the day as the connection sees it, track its incidents and
    replace both.

    Severity weighs each drop by the feature's importance in the ranker that scored the day,
    and the text gives the day's measured NDCG@8 change, when a ranker is known. With
    ``[alerts.severity] by = "cost"`` (the default) the incidents are then ranked by what
    their loss costs that ranker, replayed (feco.ranker.incident_cost, handed to
    feco.alerts.cost_severity; table incident_costs).
    """
    from feco.alerts.cost_severity import with_costs
    from feco.alerts.detect import judge_day
    from feco.alerts.incidents import track_incidents
    from feco.ranker.incident_cost import incident_cost
    from feco.ranker.store import importance_shares, ndcg_changes

    importance = importance_shares(conn, ds)
    alerts, unjudged, reference_moves = judge_day(conn, ds, config=config, importance=importance,
                                                  ndcg_change=ndcg_changes(conn, ds))
    carried = named_query(conn, "incidents_carried", {"ds": ds, "lag_days": config.moving_average_days})
    coverage = named_query(conn, "day_coverage", {"ds": ds})
    history_days = named_query(conn, "history_days", {"ds": ds}).item()

    def track(alerts: pl.DataFrame) -> pl.DataFrame:
        return track_incidents(alerts, carried, coverage, ds=ds, settings=config.alerts.incidents,
                               history_days=history_days, sources=config.logs.source_features(),
                               segments=config.segments)

    alerts, incidents, costs = with_costs(ds, config=config, alerts=alerts, track=track,
                                          cost=incident_cost(conn, ds, config=config), shares=importance or {})
    publish_day(conn, ds, {"alerts": alerts, "unjudged": unjudged, "reference_moves": reference_moves,
                           "incidents": incidents, "incident_costs": costs})
    events = incidents.drop_nulls("event")
    return {"ds": ds.isoformat(), "alerts": alerts.height,
            "incidents": incidents.filter(pl.col("status") != "resolved").height,
            "messages": dict(events.group_by("event").len().sort("event").iter_rows())}


@exclusive
def notify(ds: date | str, config: Config | str | None = None, *, webhook_url: str | None = None,
           secrets: dict[str, str] | None = None, echo=print, backfill_from: date | None = None) -> dict:
    """Deliver the incident messages not delivered yet (this day's and pending ones from days
    before: one digest when there are many). After a backfill from ``backfill_from`` to ``ds``:
    one digest for the backfill, and a message apart for each incident still live on ``ds``.
    ``secrets``: channel secrets found elsewhere than the environment (the DAG's connections)."""
    from feco.alerts.notify import notify_alerts

    with open_configured(config) as conn:
        return notify_alerts(conn, ds, settings=config.alerts.notify, webhook_url=webhook_url, secrets=secrets,
                             echo=echo, backfill_from=backfill_from, sources=config.logs.source_features())


@exclusive
def report(ds: date | str, config: Config | str | None = None, *, out: Path | None = None,
           segment_dim: str = "region", cold_start_features: list[str] | None = None) -> dict:
    """Write the HTML report of the whole warehouse into ``out`` (default ``paths.report``), once
    the day is in it. ``segment_dim``, ``cold_start_features``: see feco.report.write_report."""
    from feco.report import write_report

    page = write_report(config.paths.warehouse, out or config.paths.report, segment_dim=segment_dim,
                        cold_start_features=cold_start_features, config=config)
    return {"ds": ds.isoformat(), "report": str(page)}


@exclusive
def train_ranker(ds: date | str, config: Config | str | None = None, *, when_due: bool = False) -> dict:
    """Train the reference ranker valid from ``ds`` on the sampled days before it.

    With ``when_due`` (the scheduled DAG) it trains only when the model that would score
    ``ds`` is missing or ``ranker.retrain_days`` old, once all ``ranker.reference_days``
    days before ``ds`` are sampled and while the logs have a label; otherwise it returns why
    it did not.
    """
    from feco.ranker.daily import sampled_days_before, train_reference
    from feco.ranker.store import current_model

    if when_due:
        with open_configured(config) as conn:
            model = current_model(conn, ds)
        age = (ds - model["valid_from"]).days if model else None
        sampled = sampled_days_before(ds, config)
        if age is not None and age < config.ranker.retrain_days:
            return {"ds": ds.isoformat(), "trained": False, "why": f"model {model['version']} is {age} days old"}
        if len(sampled) < config.ranker.reference_days:
            return {"ds": ds.isoformat(), "trained": False,
                    "why": f"{len(sampled)} of {config.ranker.reference_days} reference days sampled"}
        if config.logs.label not in sample_files(sampled[-1], config.paths.samples).schema:
            return {"ds": ds.isoformat(), "trained": False,
                    "why": f"the logs have no label column '{config.logs.label}' ([logs] label) to train on"}
    return {"ds": ds.isoformat(), "trained": True} | train_reference(ds, config)


def send_message(text: str, config: Config | str | None = None, *, webhook_url: str | None = None,
                 secrets: dict[str, str] | None = None, echo=print) -> dict[str, str]:
    """Send one plain line (a failed step, logs not ready) through the alert channels."""
    from feco.alerts.notify import send_message as send

    return send(text, settings=as_config(config).alerts.notify, webhook_url=webhook_url, secrets=secrets, echo=echo)


def coverage_drop(split: Split, config: Config | str | None = None, *, grid: Grid, training: Training,
                  echo=print) -> pl.DataFrame:
    """Run the paper's coverage-drop experiment on one fold (``split``, feco.paper.datasets),
    storing each run as it finishes and skipping the cells stored before, so a stopped grid
    resumes; return the experiment's stored cells. ``echo`` gets a line per run.

    A grid trains for hours: each write holds the run lock and the warehouse for a moment,
    every ``STORE_EVERY_SECONDS``, so the daily steps and readers get them in between.
    """
    from feco.paper.experiment import cell_count, correlations, coverage_drop_runs, experiment_id
    from feco.paper.store import finished_cells, store_correlations

    config = as_config(config)
    exp_id = experiment_id(split, grid, training)
    with _writing(config) as conn:
        skip = finished_cells(conn, exp_id)
    planned, done, started = cell_count(split, grid), 0, time.monotonic()
    echo(f"== {exp_id}: {planned} cells planned, {len(skip)} already stored")
    pending, stored_at = [], time.monotonic()
    for record in coverage_drop_runs(split, grid=grid, training=training, skip=skip):
        pending.append(record)
        # Short writes every few seconds, not one per run: opening the warehouse took as long as
        # a test-mode cell.
        if time.monotonic() - stored_at >= STORE_EVERY_SECONDS:
            _store_runs(config, pending)
            pending, stored_at = [], time.monotonic()
        run, cell = record.model_run, record.cell
        done += cell is not None
        change = "" if cell is None else f"  Δ {cell['d_ndcg8']:+.4f}"
        echo(f"   {run['run_id'].removeprefix(exp_id + ':')}: NDCG@8 {run['ndcg8']:.4f} (feco){change}"
             f"  [{done}/{planned - len(skip)} new cells, {time.monotonic() - started:.0f}s]")
    _store_runs(config, pending)
    with _writing(config) as conn:
        cells = named_query(conn, "coverage_drop_cells").filter(pl.col("experiment_id") == exp_id)
        store_correlations(conn, exp_id, correlations(cells))
    return cells


def coverage_drop_report(config: Config | str | None = None, *, resamples: int, effect: float) -> ClaimsReport:
    """Test the paper's claims on the stored coverage-drop grid, store every test in
    ``coverage_drop_claim_tests`` and return the report (feco.paper.claims_report).

    The bootstrap takes minutes: the warehouse is held only to read the grid and to store the tests.
    """
    from feco.paper.claims_report import build_report, claim_tests
    from feco.paper.store import store_claim_tests

    config = as_config(config)
    warehouse = config.paths.warehouse
    if not warehouse.exists():
        raise DataError(f"no warehouse at {warehouse}: run `feco experiment coverage-drop` first")
    # Opened for writing: it brings an older warehouse's schema up to date before the queries
    # read columns it lacked.
    with _writing(config) as conn:
        cells, deltas, references, shifts = (named_query(conn, f"coverage_drop_{name}") for name in
                                             ("cells", "query_deltas", "reference_runs", "importance_shift"))
    if cells.is_empty():
        raise DataError(f"no coverage-drop cells in {warehouse}: run `feco experiment coverage-drop` first")
    report = build_report(cells, deltas, references, shifts, resamples=resamples, effect=effect)
    with _writing(config) as conn:
        store_claim_tests(conn, claim_tests(report))
    return report


def sampling_study(ds: date | str, config: Config | str | None = None, *, windows: list[int],
                   events_per_window: list[int], repeats: int = 3, store: bool = True,
                   progress: Callable[[str], None] | None = None) -> pl.DataFrame:
    """Run the sampling study on the day's logs (feco.sampling.study) and, unless told not to,
    replace the day's rows of ``sampling_study`` with it. The study reads logs for minutes and
    writes nothing: only storing holds the run lock."""
    from feco.sampling import study

    ds, config = as_date(ds), as_config(config)
    result = study.run_study(ds, config, windows=windows, events_per_window=events_per_window, repeats=repeats,
                             progress=progress)
    if store:
        with _writing(config) as conn:
            study.store_study(conn, result)
    return result


def act_on_incident(incident: str, config: Config | str | None = None, *, action: str, by: str | None = None,
                    reason: str | None = None, until: str | datetime | None = None,
                    now: datetime | None = None) -> dict:
    """Record what someone on call did to an incident (feco.alerts.oncall: 'ack', 'snooze' with
    ``until``, 'resolve', 'noise'), under the run lock; ``by`` defaults to the login name."""
    from feco.alerts import oncall

    config, now = as_config(config), now or datetime.now(UTC)
    if action == "snooze" and until is None:
        raise UsageError("a snooze needs --until")
    with _on_call(config) as conn:
        return oncall.act_on_incident(conn, incident, action=action, actor=by or oncall.default_actor(),
                                      reason=reason, until=_until(until, now), now=now)


def silence(config: Config | str | None = None, *, until: str | datetime, reason: str, feature: str | None = None,
            segment: str | None = None, source: str | None = None, by: str | None = None,
            now: datetime | None = None) -> dict:
    """Silence the incidents of a feature, a segment (``dim=value``) and/or an upstream source
    until ``until`` (planned work): their messages are held, not sent, and say why."""
    from feco.alerts import oncall

    config, now = as_config(config), now or datetime.now(UTC)
    _known(feature, config.logs.features, "--feature", "[logs] features")
    _known(source, list(config.logs.sources), "--source", "[logs.sources]")
    with _on_call(config) as conn:
        return oncall.silence(conn, feature=feature, segment=segment, source=source, until=_until(until, now),
                              reason=reason, actor=by or oncall.default_actor(), now=now)


def unsilence(silence_id: str, config: Config | str | None = None, *, by: str | None = None,
              reason: str | None = None, now: datetime | None = None) -> dict:
    """Lift a silence before its end: the messages it held are sent by the next notify."""
    from feco.alerts import oncall

    config = as_config(config)
    with _on_call(config) as conn:
        return oncall.unsilence(conn, silence_id, actor=by or oncall.default_actor(), reason=reason,
                                now=now or datetime.now(UTC))


def _on_call(config: Config):
    """The warehouse open for an on-call action: one that exists (an action creates none)."""
    if not config.paths.warehouse.exists():
        raise DataError(f"no warehouse at {config.paths.warehouse}: no incident to act on")
    return _writing(config)


def _until(until: str | datetime | None, now: datetime) -> datetime | None:
    from feco.alerts.oncall import parse_until

    return parse_until(until.isoformat() if isinstance(until, datetime) else until, now=now) if until else None


def _known(name: str | None, names: list[str], option: str, where: str) -> None:
    if name is not None and name not in names:
        near = difflib.get_close_matches(name, names, n=1)
        raise UsageError(f"{option} '{name}' is not in {where}" + (f"; did you mean '{near[0]}'?" if near else ""))


@contextmanager
def _writing(config: Config) -> Iterator:
    """The config's warehouse open for writing under the run lock, for a writer that is not a
    day's step (those take the lock with ``exclusive``)."""
    with run_lock(config.paths.warehouse), open_configured(config) as conn:
        yield conn


def _store_runs(config: Config, records: list[RunRecord]) -> None:
    """Store the finished coverage-drop runs in one opening of the warehouse."""
    from feco.paper.store import store_run

    with _writing(config) as conn:
        for record in records:
            store_run(conn, record)


@exclusive
def run_day(ds: date | str, config: Config | str | None = None, *, deliver: bool = True,
            allow_incomplete: bool = False, as_of: str | None = None, rescore: bool = False, echo=print) -> dict:
    """Sample, count and publish one day (its coverage, scores, alerts and incidents); deliver
    its alerts unless told not to. ``allow_incomplete``, ``as_of``: see ``sample``; ``rescore``:
    see ``publish``.

    A team model file that is not a model is refused first, before the run touches anything. A
    failure before the publish commits (a full disk) puts the day's previous sample back, so
    the samples folder and the warehouse keep agreeing about the day."""
    from feco.ranker.serving import served_file

    served_file(ds, config)
    sample(ds, config, allow_incomplete=allow_incomplete, as_of=as_of)
    try:
        sample_reference(ds, config)
        compute_coverage(ds, config)
        result = publish(ds, config, rescore=rescore)
    except BaseException:
        restore_held(ds, config)
        raise
    if deliver:
        result["delivered"] = notify(ds, config, echo=echo)
    return result


def config_digest(config: Config) -> str:
    """A short digest of everything that changes computed results (not where files live)."""
    settings = config.model_dump_json(exclude={"paths": True, "readiness": True, "engine": True, "spark": True,
                                               "alerts": {"notify"}, "ranker": {"models", "retrain_days"}})
    return hashlib.sha256(settings.encode()).hexdigest()[:12]


def _stored_references(config: Config) -> dict[str, float]:
    """The stored reference statistics the config's rules want, by feature (as many as are
    stored; none when no rule wants one)."""
    wanted = _wanted_references(config)
    if not wanted or not config.paths.warehouse.exists():
        return {}
    period = config.coverage.reference
    with read_configured(config) as conn:
        stored = named_query(conn, "coverage_reference_for_period", {"start": period.start, "end": period.end})
    return {f: v for f, statistic, v in stored.iter_rows() if wanted.get(f) == statistic}


def _wanted_references(config: Config) -> dict[str, str]:
    """The statistic (mean, median) each feature's rule compares with, for reference rules."""
    wanted = {f: config.coverage.rule_for(f).reference for f in config.logs.features}
    return {f: statistic for f, statistic in wanted.items() if statistic}


def _period_sample(config: Config) -> pl.DataFrame:
    """The reference period's sampled rows, sampling any day not sampled yet."""
    period = config.coverage.reference
    days = [period.start + timedelta(days=i) for i in range((period.end - period.start).days + 1)]
    frames = []
    for day in days:
        if not is_sampled(day, config.paths.samples):
            sample(day, config)
        frames.append(read_sample(day, config.paths.samples)[0])
    return pl.concat(frames, how="diagonal_relaxed")

