"""Where a day's logs come from: one module per source, behind one small protocol.

``[paths] logs`` names one:

- a folder (a path, or a URI in object storage) laid out ``ds=YYYY-MM-DD/hour=HH/*.parquet``
  (feco.sources.folder);
- ``iceberg:CATALOG/NAMESPACE.TABLE``, an Apache Iceberg table (feco.sources.iceberg);
- ``delta:LOCATION``, a Delta Lake table (feco.sources.delta).

Sampling, readiness and ``feco status`` ask the logs through ``LogSource`` alone, from
``source_for``. What the table sources share is in feco.sources.tables; what every source's
Parquet files share (the windows, footers, checks of the columns, reading a file as the logs'
rows) in feco.sources.logfiles.

This module imports no source: feco.config imports it (``is_table``, ``resolve``), and a
source's module is imported when that source is asked for.
"""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import polars as pl

    from feco.config import Config
    from feco.sources.logfiles import Window, WindowFiles

PREFIXES = ("iceberg:", "delta:")


class LogSource(Protocol):
    """What feco asks of the logs, wherever they are kept."""

    versioned: bool  # a read is of one snapshot or version (a table); False: files as they are (a folder)

    def window_files(self, ds: date, *, allow_incomplete: bool = False) -> tuple[pl.Schema, list[WindowFiles]]:
        """The logs' columns and each sampling window's files, once checked: a window without
        files is refused unless ``allow_incomplete``, and the columns hold what the config
        names. The input checks of both engines, with ``sampling.check_one_file_per_event``."""
        ...

    def settled(self, ds: date, *, now: datetime) -> tuple[bool, str]:
        """Whether the day's logs are complete at ``now`` (aware, UTC), and why (or why not);
        from listings and metadata alone, never a log file."""
        ...

    def version(self) -> str | None:
        """The snapshot or version a read would take now; None: none (a folder, an empty table)."""
        ...

    def where(self, ds: date, windows: list[Window]) -> str:
        """Where the rows of ``windows`` are looked for, for a refusal that names them."""
        ...

    def stamped_elsewhere(self, ds: date, windows: list[WindowFiles]) -> str:
        """``: <how>`` when the windows' files hold rows stamped in other times than the source
        places them (a writer in local time); else empty. For a refusal only: it may read files."""
        ...


def source_for(config: Config) -> LogSource:
    """The source ``[paths] logs`` names (see the module)."""
    location = config.paths.logs
    if not is_table(location):
        from feco.sources.folder import FolderLogs

        return FolderLogs(config)
    if location.startswith("iceberg:"):
        from feco.sources.iceberg import IcebergLogs

        return IcebergLogs(config)
    from feco.sources.delta import DeltaLogs

    return DeltaLogs(config)


def is_table(location) -> bool:
    """Whether ``[paths] logs`` names a table rather than a folder."""
    return isinstance(location, str) and location.startswith(PREFIXES)


def resolve(location: str, base: Path) -> str:
    """A Delta table's relative folder, resolved against the config's folder.

    Examples
    --------
    >>> resolve("delta:logs/events", Path("/etc/feco"))
    'delta:/etc/feco/logs/events'
    >>> resolve("iceberg:search/logs.events", Path("/etc/feco"))
    'iceberg:search/logs.events'
    """
    kind, _, rest = location.partition(":")
    if kind == "delta" and "://" not in rest:
        return f"delta:{(base / rest).resolve()}"
    return location
