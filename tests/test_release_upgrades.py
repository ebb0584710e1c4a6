"""A warehouse written by an earlier release of main is upgraded by today's feco and keeps
every row: `status`, `run`, `alerts` and `report` work on it.

Each folder of tests/fixtures/releases/ is a warehouse a release wrote (12 days of generated
logs with an incident, a reference ranker, scored days), exported by
scripts/release_warehouse.py with its model files. Migrations landed out of number order on
main, so these are the warehouses that upgrading by "every number above the stored one" broke.
"""

from datetime import date
from pathlib import Path

import duckdb
import pytest

from feco.cli import main as feco
from feco.sql_files import migrations
from feco.warehouse import held_migrations, open_for_write

RELEASES = Path(__file__).parent / "fixtures" / "releases"
NEXT_DAY = date(2026, 11, 13)
RENAMED = {("sample_windows", "window"): "window_index",  # migration 010
           ("coverage_states", "window"): "window_index"}  # 031
DROPPED = {("unjudged", "n_rows")}  # 032: a copy of feco_daily's count, which went stale


# What a release from before the ledger (5ad13d4, the last) reads of a warehouse: the columns
# its `status` (status_days) and `alerts` (incident_list) read, all still there.
PRE_LEDGER_READS = {
    "runs": ["ds", "published_at", "events_sampled"],
    "feature_status": ["status"],
    "sample_windows": ["ds", "events_sampled", "hours_missing", "rows_null_event_id", "rows_null_timestamp"],
    "incident_summary": ["incident_id", "opened_ds", "last_ds", "severity_rank", "rows_lost", "alerts", "feature",
                         "segment_dim", "segment_value", "status", "paged", "detail"],
}
PRE_LEDGER_SECTION = "## A release from before the ledger on a newer warehouse"


def restore(release: Path, folder: Path) -> Path:
    """The release's deployment in ``folder``: its warehouse, its models where model_runs says."""
    warehouse = folder / "feco.duckdb"
    built_in = Path((release / "BUILT_IN").read_text().split()[1])
    with duckdb.connect(str(warehouse)) as conn:
        conn.execute(f"IMPORT DATABASE '{release}'")
        conn.execute("UPDATE model_runs SET artifact = replace(artifact, $old, $new)",
                     {"old": str(built_in), "new": str(folder)})
    (folder / "models").symlink_to(release / "models")
    return warehouse


def write_config(folder: Path, features: list[str]) -> Path:
    """Today's demo config over ``folder``, with the release's features."""
    text = (Path(__file__).parents[1] / "configs" / "feco.toml").read_text()
    text = text.replace("../var/demo/", "")
    start = text.index("features = [")
    text = text[:start] + f"features = {features!r}".replace("'", '"') + text[text.index("]", start) + 1:]
    path = folder / "feco.toml"
    path.write_text(text)
    return path


def table_rows(warehouse: Path) -> dict[str, tuple[list[str], list[tuple]]]:
    with duckdb.connect(str(warehouse), read_only=True) as conn:
        tables = [name for (name,) in conn.sql("SELECT table_name FROM duckdb_tables()").fetchall()]
        return {t: (conn.sql(f'SELECT * FROM "{t}"').columns, conn.sql(f'SELECT * FROM "{t}"').fetchall())
                for t in tables if t not in ("schema_version", "schema_migrations", "schema_views")}


def frozen(rows, columns: list[int] | None = None) -> set[str]:
    return {repr(row if columns is None else tuple(row[i] for i in columns)) for row in rows}


@pytest.mark.parametrize("release", sorted(p.name for p in RELEASES.iterdir()))
def test_a_release_s_warehouse_upgrades_keeps_its_rows_and_runs_on(release, tmp_path, capsys):
    warehouse = restore(RELEASES / release, tmp_path)
    before = table_rows(warehouse)
    columns, rows = before["feature_status"]
    features = sorted({row[columns.index("feature")] for row in rows})
    config = str(write_config(tmp_path, features))
    assert feco(["generate-logs", "--out", str(tmp_path / "logs"), "--start", str(NEXT_DAY), "--days", "1",
                 "--events-per-day", "8000", "--seed", "3"]) == 0

    assert feco(["status", "--config", config]) == 0
    assert feco(["run", "--ds", str(NEXT_DAY), "--config", config]) == 0
    assert feco(["alerts", "--since", "2026-11-01", "--config", config]) == 0
    assert feco(["report", "--out", str(tmp_path / "report"), "--config", config]) == 0
    assert "Traceback" not in capsys.readouterr().err

    after = table_rows(warehouse)
    for table, (columns, rows) in before.items():
        now_columns, now_rows = after[table]
        held = [i for i, c in enumerate(columns) if (table, c) not in DROPPED]
        kept = [now_columns.index(RENAMED.get((table, columns[i]), columns[i])) for i in held]
        assert frozen(rows, held) <= frozen(now_rows, kept), f"{table} lost rows"
    with duckdb.connect(str(warehouse), read_only=True) as conn:
        assert sorted(held_migrations(conn)) == sorted(migrations())
        assert conn.sql("SELECT count(*) FROM runs WHERE ds = $ds", params={"ds": NEXT_DAY}).fetchall() == [(1,)]


def test_what_a_release_before_the_ledger_makes_of_an_upgraded_warehouse_is_documented(tmp_path):
    """Its run refuses (a version above its 11), its status and alerts read on (exit 0) and its
    report fails on coverage_states' renamed window: docs/warehouse.md says so, command by command."""
    warehouse = restore(RELEASES / "5ad13d4", tmp_path)
    with open_for_write(warehouse):
        pass
    with duckdb.connect(str(warehouse), read_only=True) as conn:
        columns = {table: set(conn.sql(f'SELECT * FROM "{table}" LIMIT 0').columns)
                   for table in (*PRE_LEDGER_READS, "coverage_states")}
        version = conn.sql("SELECT max(version) FROM schema_version").fetchall()[0][0]
    assert version > max(int(name.split("_")[0]) for name in migrations())
    assert all(set(read) <= columns[table] for table, read in PRE_LEDGER_READS.items())
    assert "window" not in columns["coverage_states"]
    docs = (Path(__file__).parents[1] / "docs" / "warehouse.md").read_text()
    assert PRE_LEDGER_SECTION in docs
    section = docs.split(PRE_LEDGER_SECTION)[1].split("\n## ")[0]
    for said in ("`run`", "| `status` | 0 |", "| `alerts`, `drops` | 0 |", "| `query` | 0 |",
                 "| `report` | 1, a traceback |", "031"):
        assert said in section
