"""The Spark engine on a standalone cluster, stage by stage, against the DuckDB engine.

A master and two workers (one core each) on this machine, started as
tests/test_spark_cluster.py starts them (bench/_spark_cluster.py); `feco run` of one generated
day (bench/_lake.py, ``--parts`` × ~24M rows) with engine = "spark" against that master and
Spark's event log on; then, from the event log, per phase of feco's engine (the jobs'
descriptions, set in feco.spark_engine): jobs, stages, tasks, the stages' wall time, the
executors' run and CPU time, rows read and shuffle bytes. The same day through the DuckDB
engine's `feco run` gives the comparison.

CPU time of the Spark engine: the `feco run` process (wait4), its driver JVM, the executors'
tasks (the event log: their JVM threads) and the executors' Python workers, where the
engine's tasks do their work (sampled every 0.1 s, as the driver JVM is); the executor JVMs'
own start-up, JIT and GC are shown apart, and the whole machine's busy CPU over the run as a
check on the sums.

    nice -n 10 .venv/bin/python bench/spark_stages.py --parts 1
    rm -r var/lake   # the generated day (shared with bench/lake_scale.py, bench/paper_scale.py)
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import threading
import time
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))

from _spark_cluster import spark_cluster
from lake_scale import DAY, LAKE, _config, _day_size, _field, _measure

METRICS = {"internal.metrics.executorRunTime": "run_ms", "internal.metrics.executorCpuTime": "cpu_ns",
           "internal.metrics.input.recordsRead": "rows_read",
           "internal.metrics.shuffle.write.bytesWritten": "shuffle_bytes"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", type=int, default=1)
    parser.add_argument("--events-per-window", type=int, default=20_000)
    parser.add_argument("--executor-memory", default="1g")
    parser.add_argument("--driver-java-options", default="", help="extra JVM options of the driver, e.g. "
                        "'-XX:+UseSerialGC -XX:TieredStopAtLevel=1' (spark.driver.extraJavaOptions)")
    parser.add_argument("--executor-java-options", default="",
                        help="extra JVM options of the executors (spark.executor.extraJavaOptions)")
    args = parser.parse_args()
    code = f"import pathlib; from _lake import lake_day; lake_day(pathlib.Path({str(LAKE)!r}), {DAY!r}, parts={args.parts})"
    subprocess.run([sys.executable, "-c", "import datetime; " + code], cwd=REPO / "bench", check=True)
    logs = LAKE / f"logs_{args.parts}x"
    rows, size = _day_size(logs)
    print(f"day {DAY}: {rows:,} rows, {size / 1e9:.1f} GB; {args.events_per_window:,} events a window")

    duck = _fresh("stages-duckdb")
    seconds, cpu, peak, output, _ = _measure(REPO, _config(duck, logs, engine="duckdb", events=args.events_per_window))
    duck_cpu = cpu
    print(f"DuckDB engine: {seconds:.1f} s, CPU {cpu:.1f} s, peak RSS {peak:,.0f} MB; "
          f"{_field(output, 'events')} events, {_field(output, 'rows')} rows sampled")

    run = _fresh("stages-spark")
    events = run / "events"
    events.mkdir()
    with spark_cluster(run / "cluster", workers=2, cores=1, memory=args.executor_memory) as cluster:
        config = _config(run, logs, engine="spark", events=args.events_per_window)
        settings = {"spark.ui.enabled": "false", "spark.eventLog.enabled": "true",
                    "spark.eventLog.dir": events.as_uri(), "spark.eventLog.compress": "false",
                    "spark.executor.memory": args.executor_memory, "spark.pyspark.python": sys.executable}
        for side in ("driver", "executor"):
            if options := getattr(args, f"{side}_java_options"):
                settings[f"spark.{side}.extraJavaOptions"] = options
        conf = ", ".join(f'"{key}" = "{value}"' for key, value in settings.items())
        config.write_text(config.read_text() + f'\n[spark]\nmaster = "{cluster.master}"\nconf = {{ {conf} }}\n')
        started = time.time()
        busy = _machine_busy()
        with _executor_processes(cluster.daemons) as executors:
            seconds, cpu, peak, output, driver_jvm = _measure(REPO, config)
        busy = _machine_busy() - busy
    print(f"Spark engine (cluster): {seconds:.1f} s, CPU of the feco process {cpu:.1f} s and of the driver JVM "
          f"{driver_jvm:.1f} s (its start-up included), peak RSS of the feco process tree {peak:,.0f} MB; "
          f"{_field(output, 'events')} events, {_field(output, 'rows')} rows sampled", flush=True)
    phases, app_start, app_end = _phases(next(events.iterdir()))
    task_cpu = sum(p["cpu_ns"] for p in phases.values()) / 1e9
    python = sum(cpu for (name, _), (cpu, _) in executors.items() if name != "java")
    jvms = sum(cpu for (name, _), (cpu, _) in executors.items() if name == "java")
    python_rss = max((rss for (name, _), (_, rss) in executors.items() if name != "java"), default=0)
    spark_cpu = cpu + driver_jvm + task_cpu + python
    print(f"executors: their tasks' JVM CPU {task_cpu:.1f} s (event log), their Python workers' CPU {python:.1f} s; "
          f"the executor JVMs' whole CPU {jvms:.1f} s (start-up, JIT and GC included); "
          f"a Python worker's peak RSS {python_rss / 2**20:,.0f} MB")
    print(f"Spark engine CPU {spark_cpu:.1f} s (feco process + driver JVM + executors' tasks + Python workers; "
          f"the executor JVMs' start-up excluded) = {spark_cpu / duck_cpu:.1f}x the DuckDB engine's {duck_cpu:.1f} s; "
          f"with the executor JVMs whole {cpu + driver_jvm + jvms + python:.1f} s = "
          f"{(cpu + driver_jvm + jvms + python) / duck_cpu:.1f}x")
    print(f"the whole machine's busy CPU over the Spark run: {busy:.1f} s (everything: the cluster's daemons, "
          "the bench's sampling, any other process)")
    print(f"from starting `feco run` to the application's start "
          f"{app_start / 1000 - started:.1f} s (Python, feco, the driver JVM), application {(app_end - app_start) / 1000:.1f} s")
    print(f"{'phase':<38} {'jobs':>4} {'stages':>6} {'tasks':>6} {'stage s':>8} {'run s':>7} {'CPU s':>6} "
          f"{'rows read':>12} {'shuffle MB':>10}")
    for name, p in sorted(phases.items(), key=lambda item: item[1]["first"]):
        print(f"{name:<38} {len(p['jobs']):>4} {p['stages']:>6} {p['tasks']:>6} {p['stage_ms'] / 1000:>8.1f} "
              f"{p['run_ms'] / 1000:>7.1f} {p['cpu_ns'] / 1e9:>6.1f} {p['rows_read']:>12,} "
              f"{p['shuffle_bytes'] / 2**20:>10.1f}")


@contextmanager
def _executor_processes(daemons: tuple[int, ...]):
    """CPU seconds and peak RSS of each process the cluster's daemons start (the executor
    JVMs, their Python workers), by (name, pid), as seen in samples every 0.1 s while the block
    runs. A process's own CPU only: a Python daemon's reaped workers are counted as themselves."""
    import psutil

    seen, stop = {}, threading.Event()

    def sample() -> None:
        while not stop.is_set():
            for daemon in daemons:
                try:
                    children = psutil.Process(daemon).children(recursive=True)
                except psutil.Error:
                    continue
                for child in children:
                    try:
                        times, key = child.cpu_times(), (child.name(), child.pid)
                        rss = max(child.memory_info().rss, seen.get(key, (0, 0))[1])
                        seen[key] = (times.user + times.system, rss)
                    except psutil.Error:  # ended while we looked: its last sample stands
                        pass
            time.sleep(0.1)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        yield seen
    finally:
        stop.set()
        sampler.join()


def _machine_busy() -> float:
    """CPU seconds the machine has spent busy since boot, all cores (a check on the sums)."""
    import psutil

    times = psutil.cpu_times()
    return times.user + times.nice + times.system + times.irq + times.softirq + times.steal  # guest is in user


def _fresh(name: str) -> Path:
    run = LAKE / name
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir(parents=True)
    return run


def _phases(log: Path) -> tuple[dict[str, dict], int, int]:
    """Per job description (a window's choice or write, the counts): jobs, completed stages,
    tasks, the stages' wall time and their metrics; and the application's start and end (ms)."""
    description_of_stage, phases = {}, defaultdict(lambda: defaultdict(int) | {"jobs": set()})
    app_start = app_end = 0
    # Spark 4 rolls its event log: a folder of events_<n>_<app> files
    files = sorted(log.glob("events_*"), key=lambda f: int(f.name.split("_")[1])) if log.is_dir() else [log]
    for line in (line for file in files for line in file.read_text().splitlines()):
        event = json.loads(line)
        kind = event["Event"]
        if kind == "SparkListenerApplicationStart":
            app_start = event["Timestamp"]
        elif kind == "SparkListenerApplicationEnd":
            app_end = event["Timestamp"]
        elif kind == "SparkListenerJobStart":
            name = _phase_name(event.get("Properties", {}).get("spark.job.description"))
            for stage in event["Stage IDs"]:
                description_of_stage[stage] = (name, event["Job ID"])
        elif kind == "SparkListenerStageCompleted":
            info = event["Stage Info"]
            name, job = description_of_stage.get(info["Stage ID"], ("(no job)", None))
            phase = phases[name]
            phase["jobs"].add(job)
            phase["stages"] += 1
            phase["tasks"] += info["Number of Tasks"]
            phase["stage_ms"] += info["Completion Time"] - info["Submission Time"]
            phase["first"] = min(phase.get("first") or info["Submission Time"], info["Submission Time"])
            for metric in info.get("Accumulables", []):
                if metric["Name"] in METRICS:
                    phase[METRICS[metric["Name"]]] += int(metric["Value"])
    return phases, app_start, app_end


def _phase_name(description: str | None) -> str:
    """"feco sample 2026-06-03 window 3: write rows" → "sample: write rows" (the windows
    summed); jobs without a description (the session's own) apart."""
    if not description:
        return "(no description)"
    step, _, what = description.partition(": ")
    return f"{step.split()[1]}: {what}"


if __name__ == "__main__":
    main()
