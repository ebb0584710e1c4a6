"""The README's examples run as written: every `feco` line of its shell blocks, dated within the
demo's days, exits 0 with output on a warehouse of those days. The warehouse is the demo's
config over logs the README's own `generate-logs` line writes (2,000 events a day, a sample of
40 events a window, no model): what `make demo` builds, small enough for the test suite."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

sys.path.insert(0, str(REPO / "scripts"))
import demo

DAYS = [demo.START + timedelta(days=d) for d in range(demo.DAYS)]


def readme_commands() -> list[str]:
    """The README's `feco` lines in its ```sh blocks, in order, continuation lines joined."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    lines = [line.strip() for block in re.findall(r"```sh\n(.*?)```", text, re.DOTALL)
             for line in block.replace("\\\n", " ").splitlines()]
    return [line for line in lines if line.startswith("feco ")]


def test_the_readme_has_examples_and_dates_them_within_the_demos_days():
    commands = readme_commands()
    subcommands = {shlex.split(command, comments=True)[1] for command in commands}
    assert {"status", "alerts", "query", "logs-ready", "run", "backfill", "report", "generate-logs"} <= subcommands
    dates = {date.fromisoformat(d) for command in commands for d in re.findall(r"\d{4}-\d{2}-\d{2}", command)}
    assert dates and dates <= set(DAYS), sorted(dates - set(DAYS))


@pytest.fixture(scope="module")
def demo_folder(tmp_path_factory):
    """A folder holding the demo's config (its paths moved here, a smaller sample) and the logs
    of the README's generate-logs line, every day of them published, as after `make demo`."""
    folder = tmp_path_factory.mktemp("readme")
    (generate,) = [c for c in readme_commands() if shlex.split(c, comments=True)[1] == "generate-logs"]
    args = shlex.split(generate, comments=True)
    logs = folder / args[args.index("--out") + 1]
    config = (REPO / "configs" / "feco.toml").read_text(encoding="utf-8")
    config = config.replace('"../var/demo/logs"', f'"{logs}"').replace('"../var/demo/', f'"{folder}/var/demo/')
    config = re.sub(r"(?m)^events_per_window = \d+", "events_per_window = 40", config)
    (folder / "feco.toml").write_text(config, encoding="utf-8")
    assert feco(folder, generate).returncode == 0
    published = feco(folder, f"feco backfill --start {DAYS[0]} --end {DAYS[-1]}")
    assert published.returncode == 0, published.stderr[-2000:]
    return folder


def feco(folder, command: str) -> subprocess.CompletedProcess:
    """``command`` as a shell would pass it, run in ``folder`` with its config."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("FECO_")}
    return subprocess.run([sys.executable, "-m", "feco", *shlex.split(command, comments=True)[1:]], cwd=folder,
                          env=env | {"FECO_CONFIG": str(folder / "feco.toml")}, capture_output=True, text=True,
                          timeout=600, check=False)


@pytest.mark.parametrize("command", [c for c in readme_commands() if " generate-logs " not in f"{c} "])
def test_a_readme_command_runs_on_the_demos_days(demo_folder, command):
    done = feco(demo_folder, command)
    assert done.returncode == 0, f"{command}\n{done.stderr[-2000:]}"
    assert done.stdout.strip(), command


def test_the_demos_de_outage_reads_recovered_since_its_data_came_back_under_its_own_headline(demo_folder):
    # issue 62: eng_ctr_7d in DE, back on 2026-11-19, read "ongoing" to the last day under a
    # 7-day average's decay; `--ds` showed it as it stands now, not as it stood
    back = "recovered since 2026-11-19"
    listed = feco(demo_folder, "feco alerts --since 2026-11-16").stdout.splitlines()
    (headline,) = [i for i, line in enumerate(listed) if line.startswith("[CRITICAL] eng_ctr_7d in region=DE: ")]
    detail = listed[headline + 1]
    assert back in listed[headline] and re.search(r"-\d\d%", detail) and "7-day average" not in detail
    on_the_day = feco(demo_folder, "feco alerts --ds 2026-11-19").stdout.splitlines()
    assert f"[CRITICAL] eng_ctr_7d in region=DE: {back}, 2026-11-16 to 2026-11-19" in on_the_day[0]
    assert on_the_day[1] == detail  # the headline stays the outage's
    status = feco(demo_folder, "feco status").stdout
    assert f"incident:          critical eng_ctr_7d in region=DE: resolved ({back})" in status
    assert detail.strip() in status
    assert feco(demo_folder, "feco report --out report").returncode == 0
    page = (demo_folder / "report" / "index.html").read_text(encoding="utf-8")
    assert f"resolved 2026-11-20 ({back})" in page


def test_the_readme_is_short_indexes_every_doc_and_agrees_with_the_makefile():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert len(readme) <= 15_000
    linked = set(re.findall(r"\]\((docs/[\w.-]+\.md)\)", readme))
    assert {f"docs/{path.name}" for path in (REPO / "docs").glob("*.md")} <= linked
    # paths a clone does not have are named only with where they come from
    assert "shared/seeds" not in readme
    assert all("make data" in paragraph for paragraph in readme.split("\n\n") if "../shared/data" in paragraph)
    # the suites' times, as the Makefile's comments give them
    test_time = re.search(r"make test +# the test suite: about ([^\n]+)", readme).group(1)
    assert f"About {test_time}." in makefile
    cluster_time = re.search(r"`make test-cluster` runs the Spark\s+standalone-cluster tests \(Java 17\+, about ([^)]+)\)",
                             readme).group(1)
    assert f"(slow, about {cluster_time}; Java 17+)" in makefile


def test_the_template_says_the_label_is_read_from_the_first_run():
    template = (REPO / "configs" / "template.toml").read_text(encoding="utf-8")
    said = re.search(r"^# label = .*\n(?:#\s+#.*\n)*", template, re.MULTILINE).group()  # its comment's lines
    assert "first run" in said and "ranker" in said
