"""Run the fault suite and print one line per case: outcome and what it tries.

Usage:
    .venv/bin/python scripts/fault_report.py              # every case below (about 6 minutes)
    .venv/bin/python scripts/fault_report.py -k webhook   # the cases whose name or text matches
    .venv/bin/python scripts/fault_report.py --long-run   # also bench/long_run.py (180 days, minutes)

The cases are tests of the suite (`make test` runs them too); this script runs them in one
pytest process, reads its JUnit XML and prints a table. "failed before" names what a case
caught when it was first run and the commit that fixed it. Exit status 1 when a case fails.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import textwrap
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Case:
    area: str
    test: str  # pytest node id without parameters; a parametrized test counts as one case
    tries: str
    failed_before: str = ""


FAULTS = "tests/faults/test_faults.py::"
PIPELINE = "tests/test_pipeline.py::"
ALERTS = "tests/alerts/test_pipeline_alerts.py::"
SAMPLING = "tests/test_sampling.py::"
RERUN = "tests/faults/test_failed_rerun.py::"
HOSTILE = "tests/test_hostile_logs.py::"
QUERY = "tests/test_cli_query.py::"
ONE_LINE = "tests/test_one_line_errors.py::"
CHANNELS = "tests/alerts/test_channels.py::"
MODEL = "tests/ranker/test_model_file.py::"

CASES = [
    Case("fault", FAULTS + "test_a_run_killed_at_any_moment_leaves_the_previous_or_the_complete_day",
         "SIGKILL `feco run` at 10, 30, 50, 70, 90% of its run (sampling, staging, publish): the previous "
         "state or the whole day, never part; the re-run equals a clean run in another folder",
         "the re-run's runs.config_digest differed from the clean run's: the digest hashed the folders "
         "(f8bc499 hashes settings only)"),
    Case("fault", FAULTS + "test_a_run_killed_while_a_webhook_post_is_in_flight_delivers_every_message_at_least_once",
         "SIGKILL while the webhook holds a POST open, then re-run: every alert delivered on every channel, "
         "the in-flight one POSTed twice (at least once), none lost, none marked delivered unanswered"),
    Case("fault", FAULTS + "test_a_second_run_waits_or_fails_clearly_and_nothing_is_double_counted",
         "two `feco run` of one day at once: the second waits; one with no patience exits 3 with one line; "
         "one runs row, no duplicate states",
         "nothing kept them apart: the impatient run exited 0 alongside the first, writing the same sample "
         "and staging files (f8bc499 adds the run lock)"),
    Case("data loss", RERUN + "test_a_refused_rerun_leaves_the_day_and_the_next_days_bands_as_they_were",
         "rerun a published day after a copied hour file appears: refused (exit 1), the day's sample and the "
         "warehouse byte for byte as they were, no staging folder left; the next day's states equal a control's",
         "the rerun removed the published _windows.parquet before staging and left samples/ds=….tmp: the next "
         "day's query bands silently left the day out (every query_band state differed; 289c613 stages first)"),
    Case("data loss", RERUN + "test_a_rerun_failing_at_any_file_operation_leaves_the_published_day",
         "a rerun made to fail at each of its file operations in turn (every window, the summary, the swap's "
         "renames, the staged counts): the samples folder byte for byte, the warehouse's rows unchanged",
         "a failure anywhere in the sample step left the day without its _windows.parquet (289c613)"),
    Case("data loss", RERUN + "test_a_rerun_killed_at_any_file_operation_leaves_the_previous_or_the_new_day",
         "a rerun SIGKILLed at each file operation in turn; once the next sample step has cleaned up, the "
         "samples folder byte for byte and the warehouse's rows as before",
         "as above, and a staging folder left behind (289c613 recovers a cut swap)"),
    Case("double count", HOSTILE + "test_a_copied_hour_file_is_refused_not_counted_twice",
         "an hour file copied as part-0 (1).parquet or part-9.parquet, with the DuckDB and the Spark engine "
         "(the Spark case is slow): refused, naming both files",
         "the Spark engine published every event of the copied file twice and exited 0 (5db838d: one set "
         "of input checks for both engines)"),
    Case("double count", HOSTILE + "test_events_split_over_two_files_are_refused",
         "the same events logged twice with other values in a second file, sampled by step and taken whole, "
         "both engines: refused", "the Spark engine counted them twice (5db838d)"),
    Case("data loss", HOSTILE + "test_run_and_backfill_refuse_a_day_missing_a_window_hour_in_one_line",
         "the hour folder a window reads removed: run and backfill refuse the day in one line naming it; with "
         "--allow-incomplete the window is recorded as missing (not short) and the volume rule alerts",
         "both exited 0 and published a window of 0 events, shown as a short window (5db838d)"),
    Case("fault", PIPELINE + "test_a_second_writer_fails_with_a_clear_message",
         "a second process opening the warehouse for writing waits, then fails with a clear message"),
    Case("fault", PIPELINE + "test_failed_publish_leaves_the_previous_state",
         "a publish that fails inside its transaction leaves the previous rows"),
    Case("fault", PIPELINE + "test_running_a_day_twice_leaves_identical_rows",
         "running a day twice leaves identical rows"),
    Case("fault", PIPELINE + "test_every_step_retried_alone_leaves_the_same_rows",
         "each step (sample, coverage, publish, detect) run again alone, as a retry would"),
    Case("fault", "tests/dags/test_dag_faults.py::test_airflow_retries_each_failed_task_and_the_day_equals_a_clean_run",
         "feco_daily under dag.test(): every task fails once after doing its work, Airflow retries it "
         "(try 2); the day, its alerts and deliveries equal a clean run"),
    Case("fault", "tests/dags/test_dag_faults.py::test_the_dag_waits_while_a_cli_backfill_holds_the_warehouse",
         "feco_daily started while `feco backfill` holds the run lock: its first task waits, no failed try; "
         "every day published once, no duplicate states"),
    Case("fault", ALERTS + "test_a_failed_webhook_is_recorded_and_retried_without_leaking_the_url",
         "webhook answers 500: stored as failed without the URL, delivered by the next run"),
    Case("fault", ALERTS + "test_an_unreachable_webhook_does_not_stop_the_run",
         "webhook unreachable: the run finishes, the error is stored without the URL"),
    Case("fault", ALERTS + "test_a_misbehaving_webhook_is_recorded_as_failed_and_retried",
         "webhook that drips bytes, hangs, answers garbage or closes early: stored as failed without the URL, "
         "the run goes on, the next run retries"),
    Case("input", PIPELINE + "test_missing_day_is_a_clear_error_and_the_warehouse_is_unchanged",
         "missing day partition: one error, stored days unchanged"),
    Case("input", SAMPLING + "test_missing_and_empty_partitions_are_clear_errors",
         "missing and empty partitions: one clear error each"),
    Case("input", SAMPLING + "test_a_day_with_no_events_in_any_window_is_an_error",
         "no events in any window: one clear error"),
    Case("input", SAMPLING + "test_short_window_is_taken_whole_and_recorded",
         "fewer events than wanted in a window: taken whole, shortfall recorded"),
    Case("input", SAMPLING + "test_corrupt_file_in_a_window_names_the_file",
         "truncated Parquet file: the error names the file"),
    Case("input", PIPELINE + "test_missing_feature_column_is_recorded_and_the_run_goes_on",
         "feature column missing or renamed: status row missing_column, the run goes on"),
    Case("input", PIPELINE + "test_non_numeric_feature_leaves_the_warehouse_unchanged",
         "feature column of the wrong type: one data error, warehouse unchanged"),
    Case("input", FAULTS + "test_odd_values_duplicates_and_stray_timestamps",
         "NaN, ±inf, NULL, negative, 1e300 values; a duplicated event; another day's rows in the partition"),
    Case("input", SAMPLING + "test_timestamps_in_another_zone_are_windowed_in_utc",
         "timestamps in another time zone: windowed in UTC, same sample"),
    Case("input", SAMPLING + "test_naive_timestamps_are_taken_as_utc",
         "naive timestamps: taken as UTC"),
    Case("input", "tests/test_config.py::test_bad_config_is_one_error_naming_key_and_file",
         "config with unknown keys, wrong types, overlapping / past-midnight / too many windows: "
         "one error naming key and file"),
    Case("input", "tests/test_config.py::test_missing_file_and_bad_toml",
         "missing config file, invalid TOML"),
    Case("input", FAULTS + "test_hostile_names_and_values_are_data_not_sql",
         "feature and segment values with quotes, SQL, unicode: stored as data"),
    Case("input", "tests/evaluation/test_letor.py::test_malformed_lines_name_file_and_line",
         "svmlight/LETOR file with malformed lines: the error names file and line"),
    Case("input", "tests/test_cli.py::test_errors_are_one_line_not_a_traceback",
         "CLI errors are one line with an exit status, no traceback"),
    Case("input", "tests/test_cli.py::test_a_warehouse_folder_that_cannot_be_written_is_one_line",
         "the warehouse in a folder feco cannot write: one line, exit 2",
         "a 19-line PermissionError traceback from feco/locking.py (5ad13d4)"),
    Case("input", "tests/test_cli.py::test_a_warehouse_that_is_a_folder_is_one_line_and_leaves_nothing",
         "[paths] warehouse naming a folder: run, query and status say so in one line and create nothing",
         "a misleading samples-ownership error and an empty .lock left behind (5ad13d4)"),
    Case("query", "tests/test_cli.py::test_query_refuses_writes_and_file_access",
         "`feco query`: INSERT, DELETE, DROP, ATTACH, COPY TO, INSTALL/LOAD, read_csv of a local file, "
         "SET: refused"),
    Case("query", QUERY + "test_the_memory_limit_holds_for_memory_duckdb_does_not_manage",
         "`feco query` building a 1.5 GB string under --memory-limit 200MB, a list of 100M numbers under "
         "300MB: one line, exit 2, the query's process never past the limit plus what it holds when loaded",
         "DuckDB's limit covers its buffers only: 3.2 GB and 7.4 GB (5ad13d4 runs the query in a child process "
         "with RLIMIT_AS)"),
    Case("query", QUERY + "test_the_deadline_holds_whatever_the_query_waits_on",
         "--timeout 1 while a writer holds the warehouse: the query is killed at its deadline",
         "the wait for the warehouse was outside the deadline (and an uninterruptible query ran 24-85 s past "
         "--timeout 2; 5ad13d4 kills the child)"),
    Case("query", QUERY + "test_a_bad_limit_is_one_line_and_a_usage_error",
         "--memory-limit lots / 1KB / -5MB, --timeout nan / inf / -1: one line each, exit 2",
         "1KB was a traceback, nan and inf meant no limit (5ad13d4)"),
    Case("query", FAULTS + "test_ctrl_c_cancels_a_long_query_without_harm",
         "Ctrl-C during a long `feco query`: cancelled at once, exit 130, warehouse usable",
         "SIGINT left the query running: no exit within 30 s (f8bc499 interrupts the DuckDB cursor)"),
    Case("fault", "tests/faults/test_day_consistency.py::"
         "test_a_rerun_killed_anywhere_leaves_one_run_s_whole_day_and_the_next_run_repairs",
         "a rerun taking another sample SIGKILLed at 16 random points: after each kill every day table holds one "
         "run's whole day and every stored alert counts the published coverage's rows; the next run repairs",
         "kills left the new coverage beside the previous run's alerts and incidents: publish, score and detect "
         "committed apart (c918a11 publishes the whole day in one transaction)"),
    Case("upgrade", "tests/test_release_upgrades.py::test_a_release_s_warehouse_upgrades_keeps_its_rows_and_runs_on",
         "warehouses written by 0a6e03b, 5ad13d4, 0d40f79 and 4a55bd3 opened by today's feco: status, run, "
         "alerts and report work and no earlier row is lost",
         "status and run crashed (hours_missing, window_index), or detection failed on every run "
         "(incidents.source): migrations applied by number skipped those landed out of order (00b27ac: a "
         "ledger of migrations by name)"),
    Case("upgrade", "tests/test_schema_upgrade.py::test_a_warehouse_holding_a_migration_feco_does_not_know_is_refused",
         "a warehouse holding a migration this feco does not know: refused in one line, for writing and reading",
         "an older feco opened a newer warehouse carrying the same number and crashed on it (00b27ac)"),
    Case("upgrade", "tests/test_schema_upgrade.py::test_every_migration_the_ledger_lacks_runs_in_order_whatever_its_number",
         "a migration landing after a higher-numbered one runs once, in order"),
    Case("injection", CHANNELS + "test_slack_shows_values_from_the_logs_as_text_and_keeps_its_own_link",
         "segment values <!channel>, <https://evil.example|Open the report>, tv & <audio> in Slack: shown as "
         "text; feco's own report link stays a link", "they reached Slack's mrkdwn raw (4785644)"),
    Case("injection", CHANNELS + "test_the_suggested_command_is_quoted_for_a_shell",
         "Slack's and PagerDuty's `feco query` command with $(…) and backticks in a value, run by /bin/sh: "
         "one SQL argument, nothing executed", "the command was double-quoted: $(…) ran when pasted (4785644)"),
    Case("injection", "tests/report/test_report.py::test_values_from_the_logs_cannot_end_or_comment_out_the_pages_script",
         "a segment value with <!--<script> and </script> in the report's embedded data",
         "the data element swallowed the page script (4785644 writes < as \\u003c)"),
    Case("injection", "tests/test_cli.py::test_printed_values_cannot_drive_the_terminal",
         "terminal escape sequences in values through `feco query`'s table, CSV and JSON",
         "they reached the terminal raw (4785644)"),
    Case("injection", "tests/test_cli.py::test_alerts_text_lines_cannot_drive_the_terminal",
         "terminal escape sequences in a segment value through `feco alerts`", "raw (4785644)"),
    Case("injection", "tests/test_coverage.py::test_composed_and_decomposed_segment_values_are_one_segment",
         "'Österreich' composed and decomposed, both counting paths: one segment",
         "two segments that look identical (4785644 normalises to NFC)"),
    Case("leak", CHANNELS + "test_a_slack_refusal_never_quotes_any_part_of_the_webhook_url",
         "a Slack 400 quoting the webhook's token, or its path: never stored in page_deliveries nor printed",
         "the token alone was stored and printed (4785644)"),
    Case("leak", CHANNELS + "test_a_pagerduty_refusal_never_quotes_any_part_of_the_routing_key",
         "a PagerDuty 400 quoting the routing key or part of it: scrubbed"),
    Case("input", ONE_LINE + "test_a_full_disk_is_one_line_and_the_published_day_is_kept",
         "the disk full while the sample and the coverage steps write: one line, the published day byte for byte",
         "33-60 lines of traceback (c5021c4)"),
    Case("input", ONE_LINE + "test_duckdb_unable_to_write_is_one_line_naming_the_file",
         "DuckDB failing to commit (disk full), and the ROLLBACK that follows failing: one line, the write's error",
         "the real error followed by 'cannot rollback - no transaction is active' (c5021c4)"),
    Case("input", ONE_LINE + "test_a_read_only_samples_folder_is_one_line",
         "a samples folder that cannot be written", "a 56-line traceback (c5021c4)"),
    Case("input", ONE_LINE + "test_an_object_store_refusing_connections_is_one_line_naming_the_endpoint",
         "an S3 endpoint that refuses connections: one line naming it, no credential",
         "a 40-line traceback (c5021c4)"),
    Case("input", ONE_LINE + "test_a_bad_lock_wait_is_a_usage_error_naming_the_variable",
         "FECO_LOCK_WAIT_SECONDS=abc, nan, -1", "a traceback at import (c5021c4)"),
    Case("input", ONE_LINE + "test_report_out_naming_a_file_is_one_line",
         "`feco report --out` naming an existing file", "a traceback (c5021c4)"),
    Case("input", ONE_LINE + "test_an_infinite_coverage_threshold_is_a_config_error_naming_key_and_file",
         "a coverage rule '> 1e999'", "accepted as infinite (c5021c4)"),
    Case("input", HOSTILE + "test_rows_stamped_on_another_day_are_counted_not_dropped_silently",
         "rows stamped on the next and the previous day in the day's hour files: counted per window, both engines",
         "dropped and counted nowhere (d8cf524)"),
    Case("input", HOSTILE + "test_a_window_whose_files_hold_no_rows_in_it_is_refused_unless_allowed_then_recorded_as_missing",
         "an hour folder whose files hold no row in the window: refused, or recorded missing with "
         "--allow-incomplete, both engines", "an empty window published, exit 0, no record (d8cf524)"),
    Case("input", HOSTILE + "test_logs_in_local_time_are_refused_naming_how_timestamps_and_hour_folders_disagree",
         "timestamps and hour folders in local time: the error says by how many hours they disagree",
         "'no search events in any sampling window', no hint (d8cf524)"),
    Case("input", "tests/alerts/test_rule_change.py::test_a_changed_coverage_rule_restarts_the_series_without_a_page",
         "a feature's coverage rule changed in the config: recorded with the day, the series restarts, no page, "
         "feco status says so", "the change paged HIGH and the 7-day average mixed both rules (5f6cc6c)"),
    Case("model file", MODEL + "test_a_bad_model_file_replaced_in_place_is_one_line_and_nothing_is_lost",
         "[ranker.model] replaced by a file cut inside a tree, one LightGBM crashes on loading (SIGFPE), an empty "
         "file, a text file that is no model, random bytes; `feco run` as a child process: one line naming the "
         "file and what it is, exit 2, the samples byte for byte and the warehouse's rows as before",
         "85 [Fatal] lines and a segfault or abort (exit 139, 134) with no feco line; two lines for an empty or "
         "garbage file; random bytes called 'a pickled or joblib model'"),
    Case("model file", MODEL + "test_a_model_file_cut_anywhere_is_refused_before_lightgbm_reads_it",
         "a real model file cut at every 7th byte up to `end of trees`: every cut refused by the text check"),
    Case("model file", MODEL + "test_a_model_replaced_in_place_is_a_new_version_and_the_days_before_keep_theirs",
         "model A scores day 1, model B copied over the file, day 2 run, day 1 rerun: both versions kept, every "
         "scored day names one that exists, day 1 rescored by A, `feco status` says when the file changed; "
         "`--rescore` scores it with B",
         "A's model_runs row was deleted while ranker_daily still named it, and the rerun rescored day 1 with B"),
    Case("query", QUERY + "test_every_type_of_duckdb_prints_in_every_format",
         "SELECT * FROM test_all_types() as a table, CSV and JSON; extremes exact",
         "a Rust panic with a traceback (an out-of-range date)"),
    Case("query", QUERY + "test_dates_and_times_python_cannot_hold_print_as_duckdb_writes_them",
         "±infinity DATE, TIMESTAMP, TIMESTAMPTZ, _S, _MS, year 10000, 24:00:00, also in a list, every format",
         "a Rust panic; TIMESTAMP_S infinity printed as 1969-12-31 23:59:59"),
    Case("query", QUERY + "test_json_and_csv_keep_every_digit_of_wide_numbers_and_nanoseconds",
         "HUGEINT and UHUGEINT extremes, DECIMAL(38,18), TIMESTAMP_NS in JSON and CSV: every digit, as strings",
         "HUGEINT max off by 3, UHUGEINT max -1, DECIMAL(38,18) a float, nanoseconds cut"),
    Case("query", QUERY + "test_columns_of_one_name_print_apart",
         "SELECT * of a join with repeated column names, in JSON and CSV", "a Rust panic reading the result"),
    Case("query", QUERY + "test_a_query_spills_to_a_bounded_folder_of_its_own_removed_when_it_ends",
         "a sort spilling under --memory-limit 400MB killed at --timeout 4: spilled to a folder of its own bounded "
         "by the limit, nothing left anywhere after the kill",
         "temp files beside the warehouse with no bound, 100-600 MB left after the kill"),
    Case("query", QUERY + "test_a_query_its_own_alarm_ends_is_said_to_have_timed_out",
         "the parent's deadline kill arriving late, as under load: the child's own alarm ends the query, reported "
         "as the timeout", "'signal 14 (SIGALRM) … most likely for want of memory'"),
    Case("double count", HOSTILE + "test_event_ids_of_one_hour_reused_in_another_are_counted_and_refused",
         "hour 4's file copied into hour 7 (the same event ids in another window), both engines: refused in one "
         "line with the count, naming both files", "sampled and published, exit 0, on both engines"),
    Case("input", "tests/test_config.py::test_numbers_must_be_finite_and_within_sane_bounds",
         "events_per_window = 3·10²⁰, seed = 2⁶⁴, band_days = 10¹², timeout_seconds = inf, deadline_seconds = "
         "1e300, drop.k = inf, wait_hours = inf, a nan LightGBM parameter: one error naming key and file",
         "all accepted"),
    Case("input", "tests/report/test_report.py::test_a_long_segment_value_is_stored_once_and_the_page_stays_small",
         "a 6,000-character segment value on every cell of 12 days, with an alert and NDCG on each: stored once "
         "in the page's data, shown cut at 80 characters, the page small", "the value was in the page 61 times"),
    Case("data loss", ONE_LINE + "test_a_full_disk_at_publish_keeps_the_sample_the_warehouse_holds",
         "rerun a published day after its logs are rewritten, DuckDB failing with ENOSPC at publish: one line, "
         "exit 1, the day's sample and the warehouse as they were",
         "the rerun's new sample stayed swapped in beside the warehouse's old day"),
    Case("data loss", RERUN + "test_a_rerun_of_rewritten_logs_killed_at_publish_leaves_the_sample_the_warehouse_holds",
         "rerun a published day after its logs are rewritten (other events; the same events with other values), "
         "SIGKILLed at publish, then the next sample step's clean-up: the sample and the warehouse as they were",
         "the new sample stayed in place of the one the warehouse kept"),
    Case("input", ONE_LINE + "test_a_full_disk_writing_the_report_names_the_file_and_leaves_no_temporary",
         "`feco report` on a full disk: one line naming the file, nothing left in the folder",
         "'[Errno 28] No space left on device' with no path; index.html.tmp left behind"),
    Case("restatement", "tests/test_query_bands.py::test_a_restated_day_states_no_count_its_coverage_no_longer_has",
         "a warehouse's first days restated by the next days' query bands: every count an unjudged row of a "
         "restated day states agrees with feco_daily, or says it is as judged",
         "unjudged rows kept the counts judged before the restatement (441 vs 447), marked nowhere"),
]

LONG_RUN = Case("long run", "bench/long_run.py",
                "180 generated days: time per day at the start and the end, warehouse size, and the "
                "7-day averages, alerts and states equal to 180 separate `feco run` processes",
                "detection read the whole history, so later days were slower: 0.50 → 0.80 s/day when first "
                "measured, 0.60 → 1.10 re-measured at ba90e0f (bd5b401 reads the recent days only)")


def run_cases(cases: list[Case]) -> dict[str, str]:
    """Outcome per case ("pass", "fail", "skip", "not run"), from one pytest run's JUnit XML."""
    with tempfile.TemporaryDirectory() as folder:
        xml = Path(folder) / "faults.xml"
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={xml}",
                        *[case.test for case in cases]], cwd=REPO, check=False)
        results: dict[str, list[str]] = {}
        for testcase in ET.parse(xml).iter("testcase"):
            node = testcase.get("classname").replace(".", "/") + ".py::" + re.sub(r"\[.*\]$", "", testcase.get("name"))
            outcome = ("fail" if testcase.find("failure") is not None or testcase.find("error") is not None
                       else "skip" if testcase.find("skipped") is not None else "pass")
            results.setdefault(node, []).append(outcome)
    return {case.test: _combine(results.get(case.test, [])) for case in cases}


def _combine(outcomes: list[str]) -> str:
    if not outcomes:
        return "not run"
    for worst in ("fail", "skip"):
        if worst in outcomes:
            return worst if len(outcomes) == 1 else f"{worst} ({outcomes.count(worst)}/{len(outcomes)})"
    return "pass" if len(outcomes) == 1 else f"pass ({len(outcomes)}/{len(outcomes)})"


def run_long() -> tuple[str, str]:
    """bench/long_run.py: passes when the backfill exits 0, the last days are no slower than 1.5×
    the first ones and every table equals the one-process-a-day run."""
    result = subprocess.run([sys.executable, "bench/long_run.py"], cwd=REPO, capture_output=True, text=True, check=False)
    out = result.stdout
    print(out, end="")
    speed = re.search(r"first 10 median ([\d.]+), last 10 median ([\d.]+)", out)
    ok = (result.returncode == 0 and "exit 0" in out and speed is not None
          and float(speed[2]) <= 1.5 * float(speed[1]) and "identical" in out and " NO " not in out)
    figures = f"{speed[1]} → {speed[2]} s/day" if speed else "no timing"
    return ("pass" if ok else "fail"), figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-k", dest="match", help="only the cases whose test name or text contains this")
    parser.add_argument("--long-run", action="store_true", help="also run bench/long_run.py (minutes)")
    args = parser.parse_args()
    cases = [c for c in CASES if not args.match or args.match.lower() in (c.test + c.tries).lower()]
    outcomes = run_cases(cases) if cases else {}
    rows = [(c, outcomes[c.test], c.tries) for c in cases]
    if args.long_run:
        outcome, figures = run_long()
        rows.append((LONG_RUN, outcome, f"{LONG_RUN.tries} ({figures})"))

    names = [case.test.rsplit("::", 1)[-1].removeprefix("test_") for case, _, _ in rows]
    width = max(map(len, names), default=4)
    area = max((len(case.area) for case, _, _ in rows), default=4) + 1
    indent = " " * (area + width + 1 + 13)
    print(f"\n{'area':<{area}}{'case':<{width + 1}}{'outcome':<13}what it tries; what it caught before its fix")
    for (case, outcome, tries), name in zip(rows, names):
        text = tries + (f". Failed before: {case.failed_before}" if case.failed_before else "")
        lines = textwrap.wrap(text, 90) or [""]
        print(f"{case.area:<{area}}{name:<{width + 1}}{outcome:<13}{lines[0]}")
        for line in lines[1:]:
            print(indent + line)
    failed = [case for case, outcome, _ in rows if not outcome.startswith("pass")]
    print(f"\n{len(rows) - len(failed)} of {len(rows)} cases pass"
          + (f"; not passing: {', '.join(c.test for c in failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
