"""Generated days of lake scale for bench/lake_scale.py: 25M rows and more, in bounded memory.

The generator builds a day hour by hour in memory, so a 400M-row day at once would need tens
of GB. A large day is instead the union of ``parts`` independent generated days of about 25M
rows (seeds 11, 12, …), each part's event ids shifted past the previous parts' so events stay
unique; each hour folder then holds one file per part, as a day written by several loggers
would. Parts are generated once under ``root/parts`` and hard-linked into each day's folder,
so the 25M, 100M and 400M days share their files.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from datetime import date
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

EVENTS_PER_PART = 2_000_000  # about 25M rows


def lake_day(root: Path, ds: date, *, parts: int) -> Path:
    """The logs root of a day made of ``parts`` parts (``parts`` × ~25M rows)."""
    logs = root / f"logs_{parts}x"
    for part in range(parts):
        source = _part(root / "parts", ds, part)
        for hour in range(24):
            target = logs / f"ds={ds}" / f"hour={hour:02d}" / f"part-{part}.parquet"
            if not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                os.link(source / f"hour={hour:02d}.parquet", target)
    return logs


def _part(store: Path, ds: date, part: int) -> Path:
    from feco.generator.day import hour_table, make_plan
    from feco.generator.writer import ROW_GROUP_ROWS

    folder = store / f"part-{part}"
    if (folder / "_done").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    plan = make_plan(ds, events_per_day=EVENTS_PER_PART, seed=11 + part, new_region_launch=ds)
    shift = part * 2 * EVENTS_PER_PART  # a part never has more than twice its mean events

    def write(hour: int) -> None:
        table = hour_table(plan, hour)
        ids = table.column("event_id")
        table = table.set_column(table.schema.get_field_index("event_id"), "event_id",
                                 pc.add(ids, pa.scalar(shift, ids.type)))
        pq.write_table(table, folder / f"hour={hour:02d}.parquet", row_group_size=ROW_GROUP_ROWS,
                       compression="zstd", compression_level=1)

    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(write, range(24)))
    (folder / "_done").touch()
    return folder
