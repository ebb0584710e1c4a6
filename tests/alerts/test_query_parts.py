"""Queries composed of parts (sql/queries/<name>/, sql/queries/shared/): each part one SELECT
with its header, put before what names it."""

import re

import pytest

from feco.sql_files import SQL_DIR, composed, sql

PART_FOLDERS = ("queries/alert_inputs", "queries/decay_wander", "queries/shared")
PARTS = sorted(path for folder in PART_FOLDERS for path in (SQL_DIR / folder).glob("*.sql"))


@pytest.mark.parametrize("path", PARTS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_each_part_is_one_select_with_its_header(path):
    text = path.read_text()
    header = [line for line in text.splitlines() if line.startswith("--")]
    code = "\n".join(line for line in text.splitlines() if not line.startswith("--"))
    assert header[0].startswith(f"-- {path.stem}: ")
    said = " ".join(header)
    assert "Inputs:" in said and "Params:" in said and "Output:" in said
    for parameter in set(re.findall(r"\$\w+", code)):
        assert parameter in said, f"{path.name} does not name {parameter} in its header"
    assert not code.lstrip().upper().startswith("WITH") and code.count(";") == 1 and code.rstrip().endswith(";")


def test_parts_come_before_what_names_them_once_each():
    parts = {"a": "SELECT 1 AS x;", "b": "SELECT x FROM a;", "c": "SELECT x FROM b JOIN a USING (x);",
             "unused": "SELECT 2;"}
    text = composed("-- names b only in this comment\nSELECT * FROM c;", parts)
    assert text.startswith("WITH a AS (\nSELECT 1 AS x\n),\nb AS (") and "unused" not in text
    assert text.index("b AS (") < text.index("c AS (") and text.count("a AS (") == 1


def test_parts_naming_each_other_in_a_cycle_are_refused():
    with pytest.raises(ValueError, match="cycle"):
        composed("SELECT * FROM a;", {"a": "SELECT * FROM b;", "b": "SELECT * FROM a;"})


def test_a_query_without_a_folder_of_parts_is_its_file():
    assert sql("queries/history_days") == (SQL_DIR / "queries/history_days.sql").read_text()
