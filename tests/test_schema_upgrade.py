"""A warehouse written by an older feco is upgraded when opened for writing, keeping its rows."""

import shutil
from datetime import date
from pathlib import Path

import duckdb
import pytest

from feco.errors import DataError
from feco.sql_files import SQL_DIR, migrations, schema_relations
from feco.warehouse import (
    LEDGER_VERSION,
    create_schema,
    held_migrations,
    open_for_write,
    open_read_only,
    upgrade_needed,
)
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
        assert held_migrations(conn) == []
        before = {table: rows(conn, table) for table in ("coverage_states", "runs", "alerts")}
    with open_for_write(path) as conn:
        assert held_migrations(conn) == list(migrations())
        assert {table: rows(conn, table) for table in before} == before == {
            "coverage_states": 8, "runs": 1, "alerts": 1}
        assert conn.sql("SELECT round(coverage, 3) FROM feco_daily").fetchall() == [(0.8,)]
        present = {name for (name,) in conn.sql(
            "SELECT table_name FROM information_schema.tables").fetchall()}
    relations = schema_relations()
    assert set(relations["table"]) | set(relations["view"]) <= present


def test_a_new_warehouse_holds_every_migration_and_reopening_changes_nothing(tmp_path):
    for _ in range(2):
        with open_for_write(tmp_path / "new.duckdb") as conn:
            ledger = conn.sql("SELECT migration, applied_at FROM schema_migrations ORDER BY ALL").fetchall()
            versions = conn.sql("SELECT version FROM schema_version").fetchall()
            assert not upgrade_needed(conn, moving_average_days=7)
            assert upgrade_needed(conn, moving_average_days=14)  # the views of another window
        if _ == 0:
            first = ledger
    assert ledger == first and [name for name, _ in ledger] == sorted(migrations())
    assert versions == [(LEDGER_VERSION,)]


def test_releases_before_the_ledger_refuse_a_warehouse_that_keeps_it(tmp_path):
    """They refuse a warehouse whose version is above every migration they know."""
    with open_for_write(tmp_path / "new.duckdb") as conn:
        stored = conn.sql("SELECT max(version) FROM schema_version").fetchall()[0][0]
    assert stored > max(int(name.split("_")[0]) for name in migrations())


def migration(folder: Path, name: str, sql: str) -> None:
    """A test migration in ``folder``, beside feco's own (the views read what they add)."""
    if not folder.exists():
        shutil.copytree(SQL_DIR / "migrations", folder)
    (folder / name).write_text(f"-- {name}: a test migration\n{sql}\n")


def held_test_migrations(conn) -> list[str]:
    """The test migrations (numbered 9xx) the ledger holds, in the order they were applied."""
    return [name for name in held_migrations(conn) if name.startswith("9")]


def test_every_migration_the_ledger_lacks_runs_in_order_whatever_its_number(tmp_path):
    folder = tmp_path / "migrations"
    migration(folder, "902_runs_note.sql", "ALTER TABLE runs ADD COLUMN IF NOT EXISTS note VARCHAR DEFAULT 'before'")
    migration(folder, "905_runs_note_used.sql", "UPDATE runs SET note = note || ' v5'")
    path = first_release_warehouse(tmp_path / "old.duckdb")
    with duckdb.connect(str(path)) as conn:
        create_schema(conn, moving_average_days=7, migrations_dir=folder)
        assert conn.sql("SELECT ds, note FROM runs").fetchall() == [(DAY, "before v5")]
        # a branch's migration lands after 005 with a lower number: it still runs, once
        migration(folder, "903_runs_note_branch.sql", "UPDATE runs SET note = note || ' v3'")
        assert upgrade_needed(conn, moving_average_days=7, migrations_dir=folder)
        create_schema(conn, moving_average_days=7, migrations_dir=folder)
        create_schema(conn, moving_average_days=7, migrations_dir=folder)  # nothing runs twice
        assert conn.sql("SELECT note FROM runs").fetchall() == [("before v5 v3",)]
        assert held_test_migrations(conn) == ["902_runs_note", "905_runs_note_used", "903_runs_note_branch"]


def test_two_migrations_with_one_number_both_run_in_name_order(tmp_path):
    folder = tmp_path / "migrations"
    migration(folder, "902_b.sql", "ALTER TABLE runs ADD COLUMN IF NOT EXISTS b INTEGER DEFAULT 2")
    migration(folder, "902_a.sql", "ALTER TABLE runs ADD COLUMN IF NOT EXISTS a INTEGER DEFAULT 1")
    assert list(migrations(folder))[-2:] == ["902_a", "902_b"]
    path = first_release_warehouse(tmp_path / "old.duckdb")
    with duckdb.connect(str(path)) as conn:
        create_schema(conn, moving_average_days=7, migrations_dir=folder)
        assert conn.sql("SELECT a, b FROM runs").fetchall() == [(1, 2)]


def test_a_migration_applies_only_when_its_condition_holds(tmp_path):
    folder = tmp_path / "migrations"
    condition = ("-- applies when: EXISTS (SELECT 1 FROM information_schema.columns "
                 "WHERE table_name = 'runs' AND column_name = 'features')")
    migration(folder, "902_rename.sql", f"{condition}\nALTER TABLE runs RENAME COLUMN features TO feature_count")
    for name in ("old.duckdb", "renamed.duckdb"):
        path = first_release_warehouse(tmp_path / name)
        with duckdb.connect(str(path)) as conn:
            if name == "renamed.duckdb":  # a release applied it before the ledger existed
                conn.execute("ALTER TABLE runs RENAME COLUMN features TO feature_count")
            create_schema(conn, moving_average_days=7, migrations_dir=folder)
            assert conn.sql("SELECT feature_count FROM runs").fetchall() == [(3,)]
            assert held_test_migrations(conn) == ["902_rename"]


def test_a_failed_migration_leaves_the_warehouse_as_it_was(tmp_path):
    folder = tmp_path / "migrations"
    migration(folder, "902_runs_note.sql", "ALTER TABLE runs ADD COLUMN note VARCHAR")
    migration(folder, "903_broken.sql", "ALTER TABLE no_such_table ADD COLUMN x INTEGER")
    path = first_release_warehouse(tmp_path / "old.duckdb")
    with duckdb.connect(str(path)) as conn:
        with pytest.raises(DataError, match="migration 903_broken.sql failed"):
            create_schema(conn, moving_average_days=7, migrations_dir=folder)
        assert held_migrations(conn) == []
        assert "note" not in conn.sql("SELECT * FROM runs").columns
        assert rows(conn, "runs") == 1


def test_a_warehouse_holding_a_migration_feco_does_not_know_is_refused(tmp_path):
    path = tmp_path / "new.duckdb"
    with open_for_write(path) as conn:
        conn.execute("INSERT INTO schema_migrations VALUES ('024_from_a_newer_feco', now())")
    with pytest.raises(DataError, match="holds schema migration 024_from_a_newer_feco, which this feco does not "
                                        "know: it was written by a newer feco; upgrade feco"), open_for_write(path):
        pass
    with pytest.raises(DataError, match="024_from_a_newer_feco"), open_read_only(path, moving_average_days=7):
        pass


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
