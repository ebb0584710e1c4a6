"""Writing generated days as hive-partitioned Parquet, one file per UTC hour."""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from feco.errors import UsageError
from feco.generator.day import check_volume, hour_table, make_plan
from feco.generator.incidents import Incident, check_incidents
from feco.generator.schema import FEATURES
from feco.generator.world import DEFAULT_WORLD, World

MANIFEST_NAME = "incidents.json"
# zstd level 1 makes files ~15% smaller than snappy or lz4 for ~0.3 s more per peak hour, which
# two writer threads mostly hide; see bench/generate_speed.py.
_COMPRESSION = {"compression": "zstd", "compression_level": 1}
# ~1/10 of a peak hour of a 1.6M-event day: a 10-minute window read skips most row groups.
ROW_GROUP_ROWS = 128 * 1024
_SORTED_BY = [pq.SortingColumn(0), pq.SortingColumn(1), pq.SortingColumn(2)]
# Numpy and the Parquet encoder release the GIL, so two hours in flight keep both cores busy.
_WORKERS = 2


def generate_logs(
    out: str | os.PathLike[str],
    *,
    start: dt.date,
    days: int,
    events_per_day: int = 100_000,
    seed: int = 0,
    incidents: Sequence[Incident] = (),
    new_region_launch: dt.date | None = None,
    world: World = DEFAULT_WORLD,
    progress: Callable[[dt.date], None] | None = None,
) -> list[Path]:
    """Generate ``days`` days of search logs under ``out``, one Parquet file per UTC hour.

    Files are ``out/ds=YYYY-MM-DD/hour=HH/part-0.parquet`` (the partition values are not
    columns), each written to a temporary name and renamed, rows sorted by
    (event_ts, event_id, position). Every hour is written, empty or not, so generating a day
    again replaces it whole; then an empty ``_SUCCESS`` marks the day complete, as a Spark or
    Hive job's output would be (``[readiness] marker``). The ground truth (arguments and incidents) goes to
    ``out/incidents.json``; the monitoring pipeline never reads it.

    Parameters
    ----------
    out
        Root folder of the logs; created if missing.
    start
        First UTC day.
    days
        Number of consecutive days.
    events_per_day
        Mean search events per day over a week (rows are ~12.5 times as many).
    seed
        World seed; one (seed, day, launch date, incidents) gives the same bytes in any range.
    incidents
        Incidents to inject (see :func:`parse_incident`).
    new_region_launch
        First day of ``BR`` traffic; defaults to ``start + days // 3``. Pass it explicitly to
        generate a period in several runs.
    world
        Query concentration, catalogue churn and segment sizes (see :class:`World`);
        recorded in the ground truth when it is not the default one.
    progress
        Called with each day once its files are written.

    Returns
    -------
    list of Path
        The files written, day by day and hour by hour.

    Examples
    --------
    >>> import datetime as dt, tempfile
    >>> files = generate_logs(tempfile.mkdtemp(), start=dt.date(2026, 3, 1), days=2, events_per_day=500)
    >>> len(files), files[0].parent.parent.name, files[0].parent.name
    (48, 'ds=2026-03-01', 'hour=00')
    """
    if days < 1:
        raise UsageError(f"days must be at least 1, got {days}")
    check_volume(events_per_day=events_per_day, seed=seed)
    check_incidents(incidents)
    if world.calendar.rollout and world.calendar.rollout[0] not in FEATURES:
        raise UsageError(f"world rollout: {world.calendar.rollout[0]!r} is not a generated feature")
    launch = (
        start + dt.timedelta(days=days // 3) if new_region_launch is None else new_region_launch
    )
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    manifest = _manifest(
        seed=seed,
        events_per_day=events_per_day,
        start=start,
        days=days,
        new_region_launch=launch,
        incidents=incidents,
        world=world,
    )
    write_manifest(root, manifest)

    def hours_of(ds: dt.date) -> Callable[[int], pa.Table]:
        plan = make_plan(ds, events_per_day=events_per_day, seed=seed, new_region_launch=launch, world=world)
        return functools.partial(hour_table, plan, incidents=incidents)

    return write_days(root, start=start, days=days, hours_of=hours_of, progress=progress)


SUCCESS_MARKER = "_SUCCESS"


def write_days(
    root: Path,
    *,
    start: dt.date,
    days: int,
    hours_of: Callable[[dt.date], Callable[[int], pa.Table]],
    progress: Callable[[dt.date], None] | None = None,
) -> list[Path]:
    """Write each day's 24 hour files (``hours_of(ds)(hour)`` is one hour's table), then the
    day's ``_SUCCESS`` marker; return the files written."""
    written: list[Path] = []
    with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
        for offset in range(days):
            ds = start + dt.timedelta(days=offset)
            write = functools.partial(_write_hour, root, ds, hours_of(ds))
            written += pool.map(write, range(24))
            (root / f"ds={ds.isoformat()}" / SUCCESS_MARKER).touch()
            if progress is not None:
                progress(ds)
    return written


def hour_path(root: Path, ds: dt.date, hour: int) -> Path:
    """Where the logs of one UTC hour live under ``root``."""
    return root / f"ds={ds.isoformat()}" / f"hour={hour:02d}" / "part-0.parquet"


def _write_hour(root: Path, ds: dt.date, table_of: Callable[[int], pa.Table], hour: int) -> Path:
    path = hour_path(root, ds, hour)
    table = table_of(hour)
    _atomic_write(path, lambda tmp: _write_parquet(table, tmp))
    return path


def _write_parquet(table: pa.Table, where: Path) -> None:
    pq.write_table(
        table, where, row_group_size=ROW_GROUP_ROWS, sorting_columns=_SORTED_BY, **_COMPRESSION
    )


def write_manifest(root: Path, manifest: dict) -> None:
    """The ground truth beside the logs, written whole or not at all."""
    _write_json(root / MANIFEST_NAME, manifest)


def _write_json(path: Path, content: dict) -> None:
    text = json.dumps(content, indent=2) + "\n"
    _atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def _atomic_write(path: Path, write: Callable[[Path], object]) -> None:
    """Write through a temporary file in the same folder, so readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # A run killed mid-write leaves its temporary file behind; the next run clears it.
    for stale in path.parent.glob(f".{path.name}.*.tmp"):
        stale.unlink(missing_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _manifest(
    *,
    seed: int,
    events_per_day: int,
    start: dt.date,
    days: int,
    new_region_launch: dt.date,
    incidents: Sequence[Incident],
    world: World,
) -> dict:
    manifest = {
        "seed": seed,
        "events_per_day": events_per_day,
        "start": start.isoformat(),
        "days": days,
        "new_region_launch": new_region_launch.isoformat(),
        "incidents": [incident.to_dict() for incident in incidents],
    }
    # The default world is the generator's own: manifests written before the knobs stay valid.
    return manifest if world == DEFAULT_WORLD else manifest | {"world": world.to_dict()}
