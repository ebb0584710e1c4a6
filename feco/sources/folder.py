"""Logs in a folder laid out ``ds=YYYY-MM-DD/hour=HH/*.parquet``, local or in object storage.

A window reads the files of the hour folders it overlaps (``hour_files``), once their footers
show the same columns (``window_files``). A day is complete when the log pipeline's marker
file is in its folder (``[readiness] marker``), or else when every hour a window reads has
files and none changed in the last ``settle_minutes`` (``settled``): the check reads the
listing only, never a log file.

pyarrow (through feco.storage and feco.sources.logfiles) is imported where files are read or
listed: ``feco status`` takes a folder's source only to learn that it has no version, and
stays quick without it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING

import polars as pl

from feco.config import Config
from feco.errors import DataError

if TYPE_CHECKING:
    from feco.sources.logfiles import Footers, LogFiles, Window, WindowFiles
    from feco.storage import Location

_HOUR_FOLDER = re.compile(r"hour=(\d{1,2})")


@dataclass(frozen=True)
class FolderLogs:
    """The ``LogSource`` of logs in a folder (see the module)."""

    config: Config
    versioned = False  # a folder's files are read as they are, at no snapshot or version

    def window_files(self, ds: date, *, allow_incomplete: bool = False) -> tuple[pl.Schema, list[WindowFiles]]:
        return window_files(ds, self.config, allow_incomplete=allow_incomplete)

    def settled(self, ds: date, *, now: datetime) -> tuple[bool, str]:
        return settled(ds, self.config, now=now)

    def version(self) -> str | None:
        return None

    def where(self, ds: date, windows: list[Window]) -> str:
        from feco.storage import partition_dir

        return f"{_folders(h for w in windows for h in w.hours())} under {partition_dir(self.config.paths.logs, ds)}"

    def stamped_elsewhere(self, ds: date, windows: list[WindowFiles]) -> str:
        return _hour_folders_disagree(ds, self.config, windows)


def hour_files(ds: date, logs: Location) -> tuple[LogFiles, dict[int, list[str]]]:
    """The day's Parquet files, and their paths by hour. Files and folders named ``.*`` or
    ``_*`` are left out, as Spark and Hive do; any other file must sit in a folder ``hour=0``
    … ``hour=23``."""
    from feco import storage
    from feco.sources.logfiles import LogFiles

    day = storage.partition_dir(logs, ds)
    if not storage.is_dir(day):
        raise DataError(f"no log partition for {ds}: {day} does not exist{_days_held(logs, ds)}")
    fs, day_path = storage.filesystem_for(day)
    paths = storage.files_under(day)
    by_hour: dict[int, list[str]] = {}
    for path in paths:
        folder, _, name = path.removeprefix(day_path.rstrip("/") + "/").rpartition("/")
        hour = _HOUR_FOLDER.fullmatch(folder)
        if not folder:
            raise DataError(f"log file {name!r} is in {day} itself, not in an hour folder hour=00 … hour=23 "
                            "within it: feco reads ds=YYYY-MM-DD/hour=HH/*.parquet (move the day's files into "
                            "the folders of their hours)")
        if not hour or int(hour.group(1)) > 23:
            raise DataError(f"log file {name!r} is in folder {folder!r} of {day}, not in an hour folder "
                            "hour=00 … hour=23 (rename the folder, or move the file)")
        by_hour.setdefault(int(hour.group(1)), []).append(path)
    if not by_hour:
        raise DataError(f"empty log partition for {ds}: no hour=HH/*.parquet files under {day}")
    return LogFiles(fs, paths, [str(storage.location_of(day, day_path, p)) for p in paths]), by_hour


def _days_held(logs: Location, ds: date) -> str:
    """What the logs hold instead of ``ds``'s folder: the day under another name (``ds=20261001``,
    ``dt=2026-10-01``), else the first and last day folders, else that there are none."""
    import pyarrow.fs as pafs

    from feco import storage

    fs, path = storage.filesystem_for(logs)
    folders = sorted(info.base_name for info in fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
                     if info.type == pafs.FileType.Directory)
    same_day = [name for name in folders if re.sub(r"\D", "", name) == ds.strftime("%Y%m%d")]
    if same_day:
        return (f"; the logs hold {same_day[0]!r}, which names that day otherwise: feco reads day folders named "
                f"ds=YYYY-MM-DD (rename it ds={ds.isoformat()})")
    days = [name for name in folders if re.fullmatch(r"ds=\d{4}-\d{2}-\d{2}", name)]
    if days:
        return f" (the logs hold {days[0]} to {days[-1]})"
    return f"; {logs} holds no day folder named ds=YYYY-MM-DD"


def window_files(ds: date, config: Config, *, allow_incomplete: bool = False) -> tuple[pl.Schema, list[WindowFiles]]:
    """The logs' columns and each window's hour files, once the files have been checked:
    every hour a window reads has files (unless ``allow_incomplete``), and their footers show
    the same columns (in any order) of the same types, the timestamp and the event id among
    them."""
    from feco.sources.logfiles import day_windows, read_footers, timestamp_counts, with_counts

    day_files, by_hour = hour_files(ds, config.paths.logs)
    windows = day_windows(ds, config)
    missing = [[h for h in w.hours() if h not in by_hour] for w in windows]
    if any(missing) and not allow_incomplete:
        raise DataError(_missing_hours_message(ds, config, windows, missing))
    read = [day_files.subset([f for h in w.hours() for f in by_hour.get(h, [])]) for w in windows]
    footers = read_footers(day_files.subset(list(dict.fromkeys(f for files in read for f in files.paths))))
    schema = _check_log_schema(footers, config=config)
    counts = timestamp_counts(footers, config.logs.timestamp, day_files.fs, day=ds)
    return schema, with_counts(windows, read, missing, counts)


def _missing_hours_message(ds: date, config: Config, windows: list[Window], missing: list[list[int]]) -> str:
    from feco.sources.logfiles import named
    from feco.storage import partition_dir

    affected = named([w for w, hs in zip(windows, missing) if hs])
    return (f"the logs of {ds} have no files for {_folders(h for hs in missing for h in hs)} under "
            f"{partition_dir(config.paths.logs, ds)}, which sampling windows {affected} read: complete the logs, "
            "or run with --allow-incomplete to record those windows as missing")


def _folders(hours: Iterable[int]) -> str:
    return ", ".join(f"hour={h:02d}" for h in sorted(set(hours)))


def _hour_folders_disagree(ds: date, config: Config, windows: list[WindowFiles]) -> str:
    """``: <how>`` when most rows of the hour files the windows read are stamped a whole
    number of hours (not 0) away from their folder's hour, as when the logs are written in
    local time; else empty. It reads the files' timestamp column, so only a refusal asks."""
    import pyarrow.parquet as pq

    from feco.sources.logfiles import utc_day

    paths = list(dict.fromkeys(p for w in windows for p in w.files.paths))
    if not paths:
        return ""
    fs, ts, (midnight, _) = windows[0].files.fs, config.logs.timestamp, utc_day(ds)
    folder = {p: int(_HOUR_FOLDER.fullmatch(p.rsplit("/", 2)[-2]).group(1)) for p in paths}
    shifts = pl.concat([
        (pl.from_arrow(pq.ParquetFile(fs.open_input_file(p)).read(columns=[ts]).column(0)).dt.epoch("s")
         - int(midnight.timestamp())) // 3600 - folder[p]
        for p in paths
    ]).drop_nulls()
    if shifts.is_empty():
        return ""
    shift, rows = shifts.value_counts(sort=True).row(0)
    if shift == 0 or 2 * rows <= shifts.len():
        return ""
    example = next((h for h in sorted(folder.values()) if 0 <= h + shift < 24), min(folder.values()))
    hours = f"{abs(shift)} hour{'s' if abs(shift) > 1 else ''} {'later' if shift > 0 else 'earlier'}"
    return (f": the rows in the hour folders are stamped {hours} than their folder (UTC; hour={example:02d} holds "
            f"rows stamped {(example + shift) % 24:02d}:xx): timestamps and hour folders disagree, and feco reads "
            "hour folders and naive timestamps as UTC: are the timestamps or the folders in local time?")


def _check_log_schema(footers: Footers, *, config: Config) -> pl.Schema:
    """The logs' columns (those of the first file), once every file has the same columns of the
    same types, in any order, with the timestamp and the event id among them."""
    from feco.sources.logfiles import check_columns

    if not footers.metadata:
        return pl.Schema()
    # as polars reads them: Parquet's string and large_string are both String
    schemas = {footers.name(path): pl.from_arrow(footer.schema.to_arrow_schema().empty_table()).schema
               for path, footer in footers.metadata.items()}
    (first, columns), *others = schemas.items()
    for path, schema in others:
        for name in [*columns, *schema]:
            if name not in schema or name not in columns:
                has, lacks = (first, path) if name in columns else (path, first)
                raise DataError(f"the logs' columns differ: {has} has column '{name}', {lacks} does not")
            if schema[name] != columns[name]:
                raise DataError(f"the logs' columns differ: column '{name}' is {columns[name]} in {first}, "
                                f"{schema[name]} in {path}")
    check_columns(columns, first, config=config)
    return columns


def settled(ds: date, config: Config, *, now: datetime) -> tuple[bool, str]:
    """Whether the day's folder holds the marker (``[readiness] marker``), or else whether every
    hour a window reads has files, none changed in the last ``settle_minutes``."""
    from feco import storage

    settings = config.readiness
    if settings.marker:
        day = storage.partition_dir(config.paths.logs, ds)
        ready = storage.exists(storage.join(day, settings.marker))
        return ready, "marker present" if ready else _marker_missing(day, settings.marker)
    return _settled(ds, config, now=now, settle=timedelta(minutes=settings.settle_minutes))


def _marker_missing(day, marker: str) -> str:
    """Why the marker is not there: a day with no logs at all (a date outside the logs, a
    typo) is told apart from a day still being written."""
    from feco import storage

    if not storage.is_dir(day):
        return f"the day has no logs: {day} does not exist"
    return f"no {marker} in {day}"


def _hours_read(ds: date, config: Config) -> list[int]:
    from feco.sources.logfiles import day_windows

    return sorted({hour for window in day_windows(ds, config) for hour in window.hours()})


def _settled(ds: date, config: Config, *, now: datetime, settle: timedelta) -> tuple[bool, str]:
    from feco.storage import partition_dir

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


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
