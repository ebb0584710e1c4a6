"""`make data` (scripts/fetch_data.py): every dataset file's published sha256 is the copy's the
tests read, a missing or altered file is one line naming it, and an archive saved by hand is
unpacked and checked without the network."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"

sys.path.insert(0, str(REPO / "scripts"))
import fetch_data

needs_data = pytest.mark.skipif(not SHARED_DATA.is_dir(), reason=f"no datasets in {SHARED_DATA}: ../shared/data")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "scripts" / "fetch_data.py"), *args],
                          capture_output=True, text=True, timeout=120, check=False)


@needs_data
def test_the_table_holds_every_dataset_file_with_its_copys_sha256():
    present = {str(path.relative_to(SHARED_DATA)) for path in SHARED_DATA.rglob("*")
               if path.is_file() and path != SHARED_DATA / "README.md"}
    assert present == set(fetch_data.FILES)
    assert [line for name in fetch_data.FILES if (line := fetch_data.check(SHARED_DATA, name))] == []
    assert fetch_data.main(["--check"]) == 0


def test_each_missing_file_is_one_line_naming_it(tmp_path):
    done = run("--check", "--root", str(tmp_path), "--only", "ltr/webis_clueweb09")
    lines = done.stderr.splitlines()
    wanted = [name for name in fetch_data.FILES if name.startswith("ltr/webis_clueweb09/")]
    assert done.returncode == 1 and done.stdout == ""
    assert lines == [f"{name}: missing from {tmp_path} (`make data` fetches it)" for name in wanted] + [
        f"{len(wanted)} of {len(wanted)} dataset files not in place under {tmp_path}"]


@needs_data
def test_an_altered_copy_is_named_and_left_as_it_is(tmp_path):
    name = "ltr/trec_news_2018/trec_news_2018.test"
    (tmp_path / name).parent.mkdir(parents=True)
    altered = (SHARED_DATA / name).read_bytes()[:-10]  # cut short, as an interrupted download
    (tmp_path / name).write_bytes(altered)
    done = run("--root", str(tmp_path), "--only", "ltr/trec_news_2018", "--check")
    (line,) = [line for line in done.stderr.splitlines() if line.startswith(name)]
    assert "is not the published file's" in line and "delete it and run `make data`" in line
    assert (tmp_path / name).read_bytes() == altered


@needs_data
def test_an_archive_saved_by_hand_is_unpacked_and_checked(tmp_path):
    saved = tmp_path / "saved"
    folder = SHARED_DATA / "interactions" / "movielens_latest_small"
    saved.mkdir()
    with zipfile.ZipFile(saved / "ml-latest-small.zip", "w") as archive:  # GroupLens's layout
        for path in folder.iterdir():
            archive.write(path, f"ml-latest-small/{path.name}")
    done = run("--root", str(tmp_path / "data"), "--downloads", str(saved), "--only", "interactions")
    assert done.returncode == 0, done.stderr
    assert [path.name for path in sorted((tmp_path / "data" / "interactions" / "movielens_latest_small").iterdir())] \
        == sorted(path.name for path in folder.iterdir())
    assert not list((tmp_path / "data").rglob("*.part"))
