"""Is a day of logs complete? The check a scheduled run waits on before it samples the day.

Logs land late: the last hour of a day may still be written when the day's run starts, and
sampling a partial day would publish coverage that looks like an outage. Two signals, from
the config's ``[readiness]``:

- ``marker``: a file the log pipeline writes into the day's partition when it is done
  (``_SUCCESS`` for Spark and Hive jobs). The most reliable signal, where there is one.
- otherwise, every hour partition the sampling windows read holds Parquet files and none of
  them changed in the last ``settle_minutes``.
- logs in a table (feco.log_tables) have no folder for a marker: the table's metadata must
  give every window data files, and its last commit be ``settle_minutes`` old.

The check only reads the file listing; it never opens a log file.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from feco import storage
from feco.config import Config
from feco.errors import DataError
from feco.log_tables import is_table, table_files
from feco.sampling import day_windows, hour_files, partition_dir


@dataclass(frozen=True)
class LogReadiness:
    ds: date
    ready: bool
    reason: str
    deadline: datetime  # when a scheduled run gives up waiting
    overdue: bool  # not ready, and past the deadline

    def give_up_line(self) -> str:
        return f"logs for {self.ds} not ready by {self.deadline:%Y-%m-%d %H:%M} UTC: {self.reason}"

    def waiting_line(self) -> str:
        """What a waiting check logs: why the day is not ready yet, and until when it waits."""
        return f"logs for {self.ds} not ready yet: {self.reason}; waiting until {self.deadline:%Y-%m-%d %H:%M} UTC"


def check_logs(ds: date, config: Config, *, now: datetime) -> LogReadiness:
    """Whether the logs of ``ds`` are complete at ``now`` (aware, UTC), and why not."""
    settings = config.readiness
    deadline = datetime.combine(ds + timedelta(days=1), time(), UTC) + timedelta(hours=settings.wait_hours)
    day = partition_dir(config.paths.logs, ds)
    if is_table(config.paths.logs):
        ready, reason = _table_settled(ds, config, now=now, settle=timedelta(minutes=settings.settle_minutes))
    elif settings.marker:
        ready = storage.exists(storage.join(day, settings.marker))
        reason = "marker present" if ready else _marker_missing(day, settings.marker)
    else:
        ready, reason = _settled(ds, config, now=now, settle=timedelta(minutes=settings.settle_minutes))
    return LogReadiness(ds, ready, reason, deadline, overdue=not ready and now >= deadline)


def _marker_missing(day, marker: str) -> str:
    """Why the marker is not there: a day with no logs at all (a date outside the logs, a
    typo) is told apart from a day still being written."""
    if not storage.is_dir(day):
        return f"the day has no logs: {day} does not exist"
    return f"no {marker} in {day}"


def _hours_read(ds: date, config: Config) -> list[int]:
    return sorted({hour for window in day_windows(ds, config) for hour in window.hours()})


def _settled(ds: date, config: Config, *, now: datetime, settle: timedelta) -> tuple[bool, str]:
    try:
        logs, files = hour_files(ds, config.paths.logs)
    except DataError as error:
        return False, str(error)
    hours = _hours_read(ds, config)
    missing = [f"{h:02d}" for h in hours if h not in files]
    day = partition_dir(config.paths.logs, ds)
    if missing:
        return False, f"hour partitions {', '.join(missing)} missing or empty under {day}"
    newest = max(_utc(info.mtime) for info in logs.fs.get_file_info([f for h in hours for f in files[h]]))
    if now - newest < settle:
        return False, f"files under {day} changed at {newest:%H:%M:%S} UTC, less than {settle} before {now:%H:%M:%S}"
    return True, f"{len(hours)} hour partitions present and unchanged for {settle}"


def _table_settled(ds: date, config: Config, *, now: datetime, settle: timedelta) -> tuple[bool, str]:
    """A table's day is complete when every window has data files and either the table already
    holds later events (the log job has moved on) or its last commit is ``settle`` old."""
    windows = day_windows(ds, config)
    day_end = datetime.combine(ds + timedelta(days=1), time(), UTC)
    bounds = [(w.start, w.end) for w in windows] + [(day_end, day_end + timedelta(days=366))]
    found = table_files(config.paths.logs, bounds, timestamp=config.logs.timestamp,
                        catalog=config.paths.iceberg_catalog)
    *days, later = found.windows
    empty = [str(w.index) for w, files in zip(windows, days) if not files]
    if empty:
        return False, f"the log table {config.paths.logs} has no data files for sampling windows {', '.join(empty)}"
    if later:
        return True, "every window has data files and the table holds later events"
    if now - found.committed_at < settle:
        return False, (f"the log table {config.paths.logs} was committed to at {found.committed_at:%H:%M:%S} UTC, "
                       f"less than {settle} before {now:%H:%M:%S}, and holds nothing later than {ds}")
    return True, f"every window has data files and the table's last commit is {settle} old"


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
