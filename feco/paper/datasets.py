"""The public learning-to-rank sets of ``../shared/data/ltr``, read in place, as folds.

MQ2008 and MQ2007-agg use the five folds of their readme (Fold1 = train S1–S3, validate S4,
test S5, then rotating: fold k tests on S(k−1), S5 for k = 1). The Webis ClueWeb09 set ships
five disjoint files ``fold1.test.txt`` … ``fold5.test.txt`` and no fold map; feco rotates them
the same way, so fold 1 trains on files 1–3, validates on file 4 and tests on
``fold5.test.txt``, fold k tests on file k − 1. MQ2007-agg's ``NULL`` (not ranked) stays null:
missing, never covered.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from feco.errors import DataError, UsageError
from feco.evaluation.letor import read_letor

DATASETS = ("mq2008", "webis", "mq2007agg")
FOLDS = (1, 2, 3, 4, 5)
_FILES = {
    "mq2008": ("mq2008", [f"S{i}.txt" for i in FOLDS]),
    "webis": ("webis_clueweb09", [f"fold{i}.test.txt" for i in FOLDS]),
    "mq2007agg": ("mq2007_agg", [f"S{i}.txt" for i in FOLDS]),
}


@dataclass(frozen=True)
class Split:
    """One fold of a dataset: train, validation and test frames and the feature columns."""

    dataset: str
    fold: int
    train: pl.DataFrame
    valid: pl.DataFrame
    test: pl.DataFrame
    features: list[str]


def default_root() -> Path:
    """``../shared/data/ltr`` beside the repository, where the datasets live."""
    return Path(__file__).resolve().parents[2].parent / "shared" / "data" / "ltr"


def load_split(dataset: str, fold: int = 1, *, root: Path | None = None) -> Split:
    """Read fold ``fold`` of ``dataset`` (``"mq2008"``, ``"webis"`` or ``"mq2007agg"``).

    Examples
    --------
    With the datasets in ``../shared/data/ltr`` (not run as a doctest: a fresh clone may not
    have them)::

        split = load_split("mq2008", 1)
        split.train.height, split.valid.height, split.test.height
        # (9630, 2707, 2874)

    What is refused before any file is read:

    >>> load_split("mq2008", 6)
    Traceback (most recent call last):
    ...
    feco.errors.UsageError: fold must be one of 1..5, got 6
    """
    if dataset not in _FILES:
        raise UsageError(f"unknown dataset {dataset!r}; choose one of {', '.join(DATASETS)}")
    if fold not in FOLDS:
        raise UsageError(f"fold must be one of 1..5, got {fold}")
    folder, names = _FILES[dataset]
    base = (root or default_root()) / folder
    files = [base / name for name in names]
    absent = [str(f) for f in files if not f.exists()]
    if absent:
        raise DataError(f"{dataset} is not at {base}: missing {', '.join(absent)} (a clone has no datasets: "
                        "`make data` fetches them from their official sources, docs/data.md)")
    order = [(fold - 1 + i) % 5 for i in range(5)]  # Fold1: S1..S3 train, S4 valid, S5 test
    parts = [_read(files[i]) for i in order]
    train = pl.concat(parts[:3], how="vertical")
    features = [c for c in train.columns if c not in ("qid", "label", "docid", "comment")]
    return Split(dataset, fold, train, parts[3], parts[4], features)


def _read(path: Path) -> pl.DataFrame:
    return read_letor(path).drop("docid", "comment", strict=False)
