"""A warehouse written by an older feco is upgraded when opened for writing, keeping its rows."""

from datetime import date
from pathlib import Path

import duckdb
import pytest

from feco.errors import DataError
from feco.sql_files import migrations, schema_relations
from feco.warehouse import FIRST_VERSION, create_schema, open_for_write, schema_version
from logbuilder import write_states

FIRST_RELEASE = Path(__file__).parent / "fixtures" / "schema_v1"
DAY = date(2026, 3, 1)


def first_release_warehouse(path: Path) -> Path:
    """A warehouse as the first release wrote it: its schema, a published day, an alert."""
    with duckdb.connect(str(path)) as conn:
        for sql in sorted(FIRST_RELEASE.glob("*.sql")):
            conn.execute(sql.read_text().replace("{moving_average_days}", "7"))
        write_states(conn, {DAY: 0.8})
        conn.execute("INSERT INTO runs VALUES (?, now(), 40, 120, 3, 'digest')", [DAY])
        conn.execute("INSERT INTO alerts (ds, alert_id, segment_dim, segment_value, rule, severity, "
                      "status) VALUES (?, 'a1', 'all', 'all', 'volume_drop', 'high', 'open')", [DAY])
    return path


def rows(conn, table: str) -> int:
    return conn.sql(f"SELECT count(*) FROM {table}").fetchall()[0][0]


def test_the_first_releases_warehouse_is_upgraded_and_keeps_its_rows(tmp_path):
    path = first_release_warehouse(tmp_path / "old.duckdb")
    with duckdb.connect(str(path)) as conn:
        assert schema_version(conn) == FIRST_VERSION
        before = {table: rows(conn, table) for table in ("coverage_states", "runs", "alerts")}
    with open_for_write(path) as conn:
        assert schema_version(conn) == max(migrations(), default=FIRST_VERSION)
        assert {table: rows(conn, table) for table in before} == before == {
            "coverage_states": 8, "runs": 1, "alerts": 1}
        assert conn.sql("SELECT round(coverage, 3) FROM feco_daily").fetchall() == [(0.8,)]
        present = {name for (name,) in conn.sql(
            "SELECT table_name FROM information_schema.tables").fetchall()}
    relations = schema_relations()
    assert set(relations["table"]) | set(relations["view"]) <= present


def test_a_new_warehouse_starts_at_the_latest_version_and_reopening_changes_nothing(tmp_path):
    for _ in range(2):
        with open_for_write(tmp_path / "new.duckdb") as conn:
            versions = conn.sql("SELECT version FROM schema_version").fetchall()
    assert versions == [(max(migrations(), default=FIRST_VERSION),)]


def migration(folder: Path, name: str, sql: str) -> None:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(f"-- {name}: a test migration\n{sql}\n")


def test_migrations_above_the_version_run_in_order_and_existing_rows_get_the_default(tmp_path):
    folder = tmp_path / "migrations"
    migration(folder, "002_runs_note.sql", "ALTER TABLE runs ADD COLUMN IF NOT EXISTS note VARCHAR DEFAULT 'before'")
    migration(folder, "003_runs_note_used.sql", "UPDATE runs SET note = note || ' v3'")
    path = first_release_warehouse(tmp_path / "old.duckdb")
    with duckdb.connect(str(path)) as conn:
        create_schema(conn, moving_average_days=7, migrations_dir=folder)
        assert conn.sql("SELECT ds, note FROM runs").fetchall() == [(DAY, "before v3")]
        assert schema_version(conn) == 3
        create_schema(conn, moving_average_days=7, migrations_dir=folder)  # nothing runs twice
        assert conn.sql("SELECT note FROM runs").fetchall() == [("before v3",)]


def test_a_failed_migration_leaves_the_warehouse_as_it_was(tmp_path):
    folder = tmp_path / "migrations"
    migration(folder, "002_runs_note.sql", "ALTER TABLE runs ADD COLUMN note VARCHAR")
    migration(folder, "003_broken.sql", "ALTER TABLE no_such_table ADD COLUMN x INTEGER")
    path = first_release_warehouse(tmp_path / "old.duckdb")
    with duckdb.connect(str(path)) as conn:
        with pytest.raises(DataError, match="migration 003_broken.sql failed"):
            create_schema(conn, moving_average_days=7, migrations_dir=folder)
        assert schema_version(conn) == FIRST_VERSION
        assert "note" not in conn.sql("SELECT * FROM runs").columns
        assert rows(conn, "runs") == 1


def test_a_warehouse_newer_than_feco_is_refused(tmp_path):
    path = tmp_path / "new.duckdb"
    with open_for_write(path) as conn:
        conn.execute("INSERT INTO schema_version VALUES (999, now())")
    with pytest.raises(DataError, match="version 999, newer than this feco"), open_for_write(path):
        pass


def test_two_migrations_with_one_number_are_refused(tmp_path):
    migration(tmp_path, "002_a.sql", "SELECT 1")
    migration(tmp_path, "002_b.sql", "SELECT 1")
    with pytest.raises(ValueError, match="two migrations numbered 2"):
        migrations(tmp_path)


def test_sample_windows_window_becomes_window_index_with_its_rows(tmp_path):
    """Migration 010: `window` is an SQL keyword, so `SELECT window FROM sample_windows` failed
    to parse; the column is window_index now, its values kept. 011 adds hours_missing (NULL
    for the days sampled before)."""
    path = first_release_warehouse(tmp_path / "old.duckdb")
    with duckdb.connect(str(path)) as conn:
        conn.execute("INSERT INTO sample_windows VALUES (?, 3, '2026-03-01 10:25Z', '2026-03-01 10:35Z', 90, 40, 2.25)",
                     [DAY])
    with open_for_write(path) as conn:
        assert conn.sql("SELECT ds, window_index, events_sampled, hours_missing FROM sample_windows").fetchall() == [
            (DAY, 3, 40, None)]
        assert "window" not in conn.sql("SELECT * FROM sample_windows").columns
