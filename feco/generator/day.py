"""One hour, and one day, of search logs as Arrow tables."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from feco.errors import UsageError
from feco.generator.behaviour import draw_labels, rank_lists
from feco.generator.calendar import MAX_EVENTS_PER_DAY, DayPlan, plan_day
from feco.generator.features import Feature, compute_features, utility
from feco.generator.incidents import Incident, check_incidents, incident_mask
from feco.generator.schema import LOG_SCHEMA, NEW_PRODUCT_DAYS, PRODUCT_GROUPS, REGIONS
from feco.generator.traffic import Rows, draw_rows
from feco.generator.world import DEFAULT_WORLD, World

_GROUP_NAMES = pa.array(PRODUCT_GROUPS, type=pa.string())
_REGION_NAMES = pa.array(REGIONS, type=pa.string())


def generate_day(
    ds: dt.date,
    *,
    events_per_day: int = 100_000,
    seed: int = 0,
    incidents: Sequence[Incident] = (),
    new_region_launch: dt.date,
    world: World = DEFAULT_WORLD,
) -> pa.Table:
    """Generate one whole day of search logs in memory.

    Parameters
    ----------
    ds
        The UTC day.
    events_per_day
        Mean search events per day over a week; the day's own count varies with the weekday
        and a small random wobble. Each event shows 5–20 products (one row each).
    seed
        World seed. One (seed, ds) gives the same day whatever range it is generated in.
    incidents
        Incidents to inject; those not active on ``ds`` are ignored.
    new_region_launch
        First day of traffic from the new region (``BR``).
    world
        Query concentration, catalogue churn and segment sizes (see :class:`World`).

    Returns
    -------
    pyarrow.Table
        Rows in :data:`LOG_SCHEMA`, sorted by (event_ts, event_id, position).

    Examples
    --------
    >>> import datetime as dt
    >>> day = generate_day(dt.date(2026, 3, 2), events_per_day=500, new_region_launch=dt.date(2026, 3, 1))
    >>> day.schema.field("event_ts").type
    TimestampType(timestamp[us, tz=UTC])
    """
    check_incidents(incidents)
    plan = make_plan(
        ds, events_per_day=events_per_day, seed=seed, new_region_launch=new_region_launch, world=world
    )
    return pa.concat_tables(hour_table(plan, hour, incidents=incidents) for hour in range(24))


def make_plan(
    ds: dt.date, *, events_per_day: int, seed: int, new_region_launch: dt.date, world: World = DEFAULT_WORLD
) -> DayPlan:
    """Validate arguments and draw the day-level plan of ``ds``."""
    check_volume(events_per_day=events_per_day, seed=seed)
    return plan_day(
        ds, events_per_day=events_per_day, seed=seed, new_region_launch=new_region_launch, world=world
    )


def check_volume(*, events_per_day: int, seed: int) -> None:
    """Reject an event volume or seed the generator cannot honour."""
    if not 1 <= events_per_day <= MAX_EVENTS_PER_DAY:
        raise UsageError(
            f"events per day must be between 1 and {MAX_EVENTS_PER_DAY:,}, got {events_per_day}"
        )
    if seed < 0:
        raise UsageError(f"seed must be a non-negative integer, got {seed}")


def hour_table(plan: DayPlan, hour: int, *, incidents: Sequence[Incident] = ()) -> pa.Table:
    """The rows of one UTC hour of ``plan.ds`` (possibly none), sorted by (event_ts, event_id)."""
    rng = np.random.default_rng(plan.hour_seeds[hour])
    rows = draw_rows(plan, hour, rng)
    features = compute_features(rows, plan, hour=hour, rng=rng)
    hidden = utility(features)
    order, position = rank_lists(rows.event_index, hidden, rng)
    clean = {name: _reorder(feature, order) for name, feature in features.items()}
    past_purchase = clean["pers_past_purchase"][0] > 0
    label = draw_labels(hidden[order], position, past_purchase=past_purchase, rng=rng)
    logged = _apply_incidents(clean, rows, order, plan=plan, hour=hour, incidents=incidents)
    logged = apply_rollout(logged, rows.region[order], plan=plan, hour=hour)
    return _table(rows, order, position=position, label=label, features=logged, plan=plan)


def _reorder(feature: Feature, order: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """A feature's (values, valid) in shown order; the signal is spent once utility is known."""
    return feature.values[order], None if feature.valid is None else feature.valid[order]


def _apply_incidents(
    clean: dict[str, tuple[np.ndarray, np.ndarray | None]],
    rows: Rows,
    order: np.ndarray,
    *,
    plan: DayPlan,
    hour: int,
    incidents: Sequence[Incident],
) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """Logged (values, valid) per feature: the clean ones with active incidents applied."""
    logged = dict(clean)
    active = [(i, inc) for i, inc in enumerate(incidents) if inc.share_on(plan.ds) > 0]
    if not active:
        return logged
    segments = _segment_codes(rows, order, plan=plan)
    for index, incident in active:
        # Each incident has its own stream so adding one leaves the others' rows unchanged.
        rng = np.random.default_rng(
            np.random.SeedSequence([plan.seed, plan.ds.toordinal(), hour, 1 + index])
        )
        hit = incident_mask(incident, plan.ds, segments, rng=rng)
        for feature in incident.features:  # an outage hits all its features on the same rows
            logged[feature] = corrupt(*logged[feature], hit=hit, kind=incident.kind)
    return logged


def corrupt(
    values: np.ndarray, valid: np.ndarray | None, *, hit: np.ndarray, kind: str
) -> tuple[np.ndarray, np.ndarray | None]:
    """A feature's (values, valid) with the ``hit`` rows zeroed: NULL for ``kind="null"``, and
    a NULL overwritten by the 0 too for ``kind="zero_fill"``."""
    values = np.where(hit, np.float32(0.0), values)
    if kind == "null":
        valid = ~hit if valid is None else valid & ~hit
    elif kind == "zero_fill" and valid is not None:
        valid = valid | hit
    return values, valid


def apply_rollout(
    logged: dict[str, tuple[np.ndarray, np.ndarray | None]], region: np.ndarray, *, plan: DayPlan, hour: int
) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """Logged (values, valid) with the calendar's rollout applied: in the regions it has not
    reached yet, all but ``kept`` of its feature's rows log 0 (see Calendar.rollout)."""
    calendar = plan.world.calendar
    reached = calendar.rollout_reached(plan.ds, len(REGIONS), plan.seed)
    if reached is None:
        return logged
    feature, _, _, kept = calendar.rollout
    # Stream 0 of the hour: incidents take 1, 2, …, so a rollout leaves their rows unchanged.
    rng = np.random.default_rng(np.random.SeedSequence([plan.seed, plan.ds.toordinal(), hour, 0]))
    hidden = ~reached[region] & (rng.random(len(region)) >= kept)
    return logged | {feature: corrupt(*logged[feature], hit=hidden, kind="zero")}


def _segment_codes(rows: Rows, order: np.ndarray, *, plan: DayPlan) -> dict[str, np.ndarray]:
    """Each ordered row's code in every segment dim an incident can be confined to."""
    return {
        "product_group": rows.group[order],
        "region": rows.region[order],
        "query_band": plan.query_bands[rows.query[order]],
        "product_age": (rows.age_days[order] >= NEW_PRODUCT_DAYS).astype(np.int8),
    }


def _table(
    rows: Rows,
    order: np.ndarray,
    *,
    position: np.ndarray,
    label: np.ndarray,
    features: dict[str, tuple[np.ndarray, np.ndarray | None]],
    plan: DayPlan,
) -> pa.Table:
    # Event-level columns are constant within an event, so they need no reordering.
    columns = [
        pa.array(rows.event_ts, type=pa.timestamp("us", tz="UTC")),
        pa.array(rows.event_id, type=pa.int64()),
        pa.array(position, type=pa.int16()),
        pa.array(rows.product_id[order], type=pa.int64()),
        pc.take(_GROUP_NAMES, pa.array(rows.group[order])),
        pc.take(_REGION_NAMES, pa.array(rows.region)),
        pc.take(plan.queries.names, pa.array(rows.query)),
        pa.array(rows.first_seen[order], type=pa.date32()),
        pa.array(rows.logged_in, type=pa.bool_()),
        pa.array(label, type=pa.int8()),
    ]
    for values, valid in features.values():
        columns.append(pa.array(values, type=pa.float32(), mask=None if valid is None else ~valid))
    return pa.Table.from_arrays(columns, schema=LOG_SCHEMA)
