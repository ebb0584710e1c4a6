"""Replacing a day's sample folder whole: the previous sample survives until the new one is complete.

A rerun of a day writes its sample into ``samples/_ds=….tmp`` beside the published one,
``_windows.parquet`` last, and only then swaps it in. A failure while writing (a refused input,
a full disk) removes the staging folder and leaves the published day as it was, byte for byte.
The swap itself is short:

- on a local disk, two renames: the published folder to ``_ds=….old``, the staging folder
  into place; then ``_ds=….old`` is removed;
- in object storage, which has no rename, the published ``_windows.parquet`` (which marks a
  day as sampled) is removed, the day's other files after it, the staged files are copied in
  and ``_windows.parquet`` is copied last.

A run killed during the swap is made good by the next sample step before it does anything
else (``recover_samples``): on a local disk the published folder goes back in place, in object
storage the complete staging folder is copied in (the old files are gone by then). Readers of
other days (query bands, the ranker) thus never find a day half-swapped for long. The leading underscore keeps
these folders out of what Spark, Hive and feco's listings read.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from datetime import date

import polars as pl
import pyarrow.fs as pafs

from feco import storage
from feco.config import Config
from feco.errors import UsageError
from feco.sample_folder import OWNER_FILE, WINDOWS_FILE
from feco.storage import Location, partition_dir

# _ds=D.tmp: a sample being written; _ds=D.old: the published one, during a local swap.
# ds=D.tmp and ds=D.old are what feco wrote before this module: left over from a failed run.
_LEFTOVER = re.compile(r"_?ds=(\d{4}-\d{2}-\d{2})\.(tmp|old)")


def staging_dir(root: Location, ds: date) -> Location:
    return storage.join(root, f"_ds={ds.isoformat()}.tmp")


def _retired_dir(root: Location, ds: date) -> Location:
    return storage.join(root, f"_ds={ds.isoformat()}.old")


def replace_day(ds: date, config: Config, write_windows: Callable[[Location], pl.DataFrame]) -> pl.DataFrame:
    """Replace the day's sample with what ``write_windows(folder)`` writes, and the window
    summary it returns; returns that summary.

    Nothing of the published day is touched until the new sample is complete (see the module).
    """
    root = config.paths.samples
    prepare_samples(config)
    staging = staging_dir(root, ds)
    try:
        summary = write_windows(staging)
        storage.write_parquet(summary, storage.join(staging, WINDOWS_FILE))
    except BaseException:
        storage.remove(staging)
        raise
    _swap_in(root, ds)
    return summary


def prepare_samples(config: Config) -> None:
    """Claim the samples folder for this config's warehouse and finish any swap a killed run
    left half done; every sample step starts here."""
    claim_samples(config)
    recover_samples(config.paths.samples)


def claim_samples(config: Config) -> None:
    """Make sure the samples folder holds this warehouse's samples only.

    The first run writes the warehouse's path into ``_feco_warehouse`` there; a config with
    another warehouse is then refused, since its runs would replace the samples (and the
    staged counts) the first one publishes. A lock would not do: the steps run apart. Seen
    from a local samples folder the path is relative, so the two can move or be copied together.
    """
    samples, warehouse = config.paths.samples, config.paths.warehouse
    owner_file = storage.join(samples, OWNER_FILE)
    warehouse = str(warehouse) if storage.is_uri(samples) else os.path.relpath(warehouse, samples)
    owner = storage.read_text(owner_file)
    if owner is None:
        storage.write_text(owner_file, warehouse)
    elif owner != warehouse:
        raise UsageError(f"the samples folder {samples} belongs to the warehouse {owner}, not to "
                         f"this config's {warehouse} ({config.source}): give each config its own samples folder "
                         f"(or delete {owner_file} if that warehouse is gone)")


def recover_samples(root: Location) -> None:
    """Make good what killed runs left in the samples folder (see the module), then remove
    every staging and retired folder."""
    fs, path = storage.filesystem_for(root)
    found = fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
    leftovers = sorted({match.group(1) for info in found if info.type == pafs.FileType.Directory
                        and (match := _LEFTOVER.fullmatch(info.base_name))})
    for day in map(date.fromisoformat, leftovers):
        _recover_day(root, day)


def _recover_day(root: Location, ds: date) -> None:
    final, staging, retired = partition_dir(root, ds), staging_dir(root, ds), _retired_dir(root, ds)
    legacy = [storage.join(root, f"ds={ds.isoformat()}.{kind}") for kind in ("tmp", "old")]
    if storage.is_uri(root):
        if _is_complete(staging) and not _is_complete(final):  # the old sample is gone: roll forward
            _swap_in(root, ds)
    elif not final.exists():  # killed between the two renames: the published sample goes back
        previous = next((old for old in (retired, legacy[1]) if _is_complete(old)), None)
        if previous is not None:
            previous.rename(final)
    for leftover in (staging, retired, *legacy):
        storage.remove(leftover)


def _is_complete(day: Location) -> bool:
    return storage.exists(storage.join(day, WINDOWS_FILE))


def _swap_in(root: Location, ds: date) -> None:
    """Put the complete staging folder in the day's place (see the module)."""
    final, staging = partition_dir(root, ds), staging_dir(root, ds)
    if storage.is_uri(root):
        storage.remove(storage.join(final, WINDOWS_FILE))  # from here the day reads as not sampled
        storage.remove(final)
        storage.copy_tree(staging, final, last=WINDOWS_FILE)
        storage.remove(staging)
        return
    retired = _retired_dir(root, ds)
    try:
        if final.exists():
            final.rename(retired)
        staging.rename(final)
    except BaseException:  # the previous sample goes back; the new one is dropped
        if retired.exists() and not final.exists():
            retired.rename(final)
        storage.remove(staging)
        raise
    shutil.rmtree(retired, ignore_errors=True)  # the next sample step removes it if this cannot
