"""Is a day of logs complete? The check a scheduled run waits on before it samples the day.

Logs land late: the last hour of a day may still be written when the day's run starts, and
sampling a partial day would publish coverage that looks like an outage. The source the
config names (feco.sources) tells, from the config's ``[readiness]``:

- a folder: ``marker``, a file the log pipeline writes into the day's partition when it is
  done (``_SUCCESS`` for Spark and Hive jobs), the most reliable signal where there is one;
  otherwise, every hour partition the sampling windows read holds Parquet files and none of
  them changed in the last ``settle_minutes``;
- a table, which has no folder for a marker: its metadata must give every window data files,
  and its last commit be ``settle_minutes`` old (or the table hold later events).

The check only reads file listings and metadata; it never opens a log file.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from feco.config import Config
from feco.sources import source_for


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
    deadline = datetime.combine(ds + timedelta(days=1), time(), UTC) + timedelta(hours=config.readiness.wait_hours)
    ready, reason = source_for(config).settled(ds, now=now)
    return LogReadiness(ds, ready, reason, deadline, overdue=not ready and now >= deadline)
