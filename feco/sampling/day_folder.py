"""Replacing a day's sample folder whole: the previous sample survives until the warehouse holds the new one.

A rerun of a day writes its sample into ``samples/_ds=….tmp`` beside the published one,
``_windows.parquet`` last, and only then swaps it in. A failure while writing (a refused input,
a full disk) removes the staging folder and leaves the published day as it was, byte for byte.
The swap itself is short:

- on a local disk, two renames: the published folder aside (to ``_ds=….held``, see below, or
  to ``_ds=….old``, then removed), the staging folder into place;
- in object storage, which has no rename, the published folder is copied to ``_ds=….held``
  (see below), its ``_windows.parquet`` (which marks a day as sampled) is removed, the day's
  other files after it, the staged files are copied in and ``_windows.parquet`` is copied last.

The previous sample of a day the warehouse holds is held until the publish step commits the
new one (``discard_held``): a rerun that fails before (a full disk at publish) puts it back
(``restore_held``), so the samples and the warehouse never disagree about the day.

A run killed during the swap, or before its publish committed, is made good by the next
sample step before it does anything else (``recover_samples``): on a local disk a published
folder renamed away goes back in place, in object storage the complete staging folder is
copied in (the old files are gone by then); a held sample goes back when the warehouse's
window summary of the day is its own and not the new sample's. Readers of other days (query
bands, the ranker) thus never find a day half-swapped for long. The leading underscore keeps
these folders out of what Spark, Hive and feco's listings read.
"""

from __future__ import annotations

import contextlib
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

# _ds=D.tmp: a sample being written; _ds=D.held: the published one, until the warehouse holds
# its successor. _ds=D.old (the published one during a swap, before samples were held), ds=D.tmp
# and ds=D.old are what feco wrote before: left over from a failed run.
_LEFTOVER = re.compile(r"_?ds=(\d{4}-\d{2}-\d{2})\.(tmp|old|held)")


def staging_dir(root: Location, ds: date) -> Location:
    return storage.join(root, f"_ds={ds.isoformat()}.tmp")


def held_dir(root: Location, ds: date) -> Location:
    return storage.join(root, f"_ds={ds.isoformat()}.held")


def replace_day(ds: date, config: Config, write_windows: Callable[[Location], pl.DataFrame]) -> pl.DataFrame:
    """Replace the day's sample with what ``write_windows(folder)`` writes, and the window
    summary it returns; returns that summary.

    Nothing of the published day is touched until the new sample is complete; a day the
    warehouse holds keeps its sample held until the new one is published (see the module).
    """
    root = config.paths.samples
    prepare_samples(config)
    staging = staging_dir(root, ds)
    try:
        summary = _with_digests(write_windows(staging), staging)
        storage.write_parquet(summary, storage.join(staging, WINDOWS_FILE))
    except BaseException:
        storage.remove(staging)
        raise
    _swap_in(root, ds, hold=_published_windows(config, ds) is not None)
    return summary


def _with_digests(summary: pl.DataFrame, day: Location) -> pl.DataFrame:
    """The summary with each window's ``sample_digest``: the sha256 of its sampled files, which
    the warehouse keeps with the window, so a held sample and its successor are told apart
    whatever changed in the logs between them (``recover_samples``)."""
    digests = [storage.digest(storage.join(day, f"window={window}")) for window in summary["window"]]
    return summary.with_columns(sample_digest=pl.Series(digests, dtype=pl.String))


def prepare_samples(config: Config) -> None:
    """Claim the samples folder for this config's warehouse and finish any swap a killed run
    left half done; every sample step starts here."""
    claim_samples(config)
    recover_samples(config)


def discard_held(ds: date, config: Config) -> None:
    """Drop the day's held sample: the warehouse has committed the one in its place. Never
    fails: what is left is removed by the next sample step, which finds the warehouse holding
    the new sample."""
    held = held_dir(config.paths.samples, ds)
    if not storage.is_uri(held):
        shutil.rmtree(held, ignore_errors=True)
        return
    with contextlib.suppress(OSError):
        storage.remove(held)


def restore_held(ds: date, config: Config) -> None:
    """Put the day's held sample back in place of the new one, which the warehouse did not
    take (its publish failed); nothing when none is held."""
    root = config.paths.samples
    held = held_dir(root, ds)
    if _is_complete(held):
        _swap_in(root, ds, source=held)
    storage.remove(held)


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


def recover_samples(config: Config) -> None:
    """Make good what killed runs left in the samples folder (see the module), then remove
    every staging, held and retired folder."""
    root = config.paths.samples
    fs, path = storage.filesystem_for(root)
    found = fs.get_file_info(pafs.FileSelector(path, allow_not_found=True))
    leftovers = sorted({match.group(1) for info in found if info.type == pafs.FileType.Directory
                        and (match := _LEFTOVER.fullmatch(info.base_name))})
    for day in map(date.fromisoformat, leftovers):
        _recover_day(config, day)


def _recover_day(config: Config, ds: date) -> None:
    root = config.paths.samples
    final, staging, held = partition_dir(root, ds), staging_dir(root, ds), held_dir(root, ds)
    legacy = [storage.join(root, name) for name in (f"_ds={ds}.old", f"ds={ds}.tmp", f"ds={ds}.old")]
    if storage.is_uri(root):
        if _is_complete(staging) and not _is_complete(final):  # the old sample is gone: roll forward
            _swap_in(root, ds)
    elif not final.exists():  # killed between the two renames: the published sample goes back
        previous = next((old for old in (held, legacy[0], legacy[2]) if _is_complete(old)), None)
        if previous is not None:
            previous.rename(final)
    if _is_complete(held) and _published_windows(config, ds) == _windows(held) != _windows(final):
        restore_held(ds, config)  # killed before the new sample's publish committed
    for leftover in (staging, held, *legacy):
        storage.remove(leftover)


def _windows(day: Location) -> list[tuple] | None:
    """What tells two samples of a day apart in the warehouse: each window's events available
    and sampled, and its files' digest (None for a sample written before digests)."""
    path = storage.join(day, WINDOWS_FILE)
    if not storage.exists(path):
        return None
    summary = storage.read_parquet(path)
    if "sample_digest" not in summary.columns:
        summary = summary.with_columns(sample_digest=pl.lit(None, dtype=pl.String))
    return summary.select("window", "events_available", "events_sampled", "sample_digest").sort("window").rows()


def _published_windows(config: Config, ds: date) -> list[tuple] | None:
    """:func:`_windows` of the sample the warehouse holds for the day, None without one."""
    from feco.warehouse import named_query, read_configured

    if not config.paths.warehouse.exists():
        return None
    with read_configured(config) as conn:
        rows = named_query(conn, "published_windows", {"ds": ds}).rows()
    return rows or None


def _is_complete(day: Location) -> bool:
    return storage.exists(storage.join(day, WINDOWS_FILE))


def _swap_in(root: Location, ds: date, *, source: Location | None = None, hold: bool = False) -> None:
    """Put the complete ``source`` folder (by default the staging one) in the day's place, the
    sample it replaces held when ``hold`` and dropped otherwise (see the module)."""
    final, held, staging = partition_dir(root, ds), held_dir(root, ds), staging_dir(root, ds)
    source = source or staging
    if storage.is_uri(root):
        if hold and _is_complete(final):
            storage.copy_tree(final, held, last=WINDOWS_FILE)
        storage.remove(storage.join(final, WINDOWS_FILE))  # from here the day reads as not sampled
        storage.remove(final)
        storage.copy_tree(source, final, last=WINDOWS_FILE)
        storage.remove(source)
        return
    previous = held if hold else storage.join(root, f"_ds={ds}.old")
    try:
        if final.exists():
            final.rename(previous)
        source.rename(final)
    except BaseException:  # the previous sample goes back; a staged one is dropped, a held one kept
        if previous.exists() and not final.exists():
            previous.rename(final)
        if source == staging:
            storage.remove(staging)
        raise
    if not hold:
        shutil.rmtree(previous, ignore_errors=True)  # the next sample step removes it if this cannot
