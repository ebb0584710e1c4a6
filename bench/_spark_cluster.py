"""A Spark standalone cluster on 127.0.0.1 for tests and benchmarks: one master and workers,
started with the launcher pyspark ships (``bin/spark-class``, which execs the JVM, so each
daemon is one process of ours to stop). pyspark's wheel has no ``sbin/start-master.sh``;
``spark-class org.apache.spark.deploy.master.Master`` is what that script runs.

    with spark_cluster(folder, workers=2) as cluster:
        cluster.master  # "spark://127.0.0.1:<port>"
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

START_SECONDS = 120  # JVMs start slowly on a busy 2-core machine


@dataclass(frozen=True)
class Cluster:
    master: str  # spark://127.0.0.1:<port>
    web_ui: str  # http://127.0.0.1:<port>, the master's
    home: Path  # SPARK_HOME: bin/spark-submit is there
    daemons: tuple[int, ...] = ()  # process ids of the master and the workers (a worker starts the executors)

    def status(self) -> dict:
        """The master's view (``/json/``): workers, active and completed applications."""
        with urllib.request.urlopen(f"{self.web_ui}/json/", timeout=10) as answer:
            return json.load(answer)


def spark_home() -> Path:
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


def environment(home: Path) -> dict[str, str]:
    """For the daemons and spark-submit: this Python on both sides, loopback only."""
    return os.environ | {"SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable,
                         "PYSPARK_DRIVER_PYTHON": sys.executable}


@contextmanager
def spark_cluster(folder: Path, *, workers: int = 2, cores: int = 1, memory: str = "1g"):
    """A master and ``workers`` workers (``cores`` and ``memory`` each), logs and work
    folders under ``folder``; stopped (the processes started here, by id) on exit."""
    home = spark_home()
    env = environment(home)
    folder.mkdir(parents=True, exist_ok=True)
    processes = []

    def start(name: str, *args: str) -> None:
        with (folder / f"{name}.log").open("w") as log:
            processes.append(subprocess.Popen([str(home / "bin" / "spark-class"), *args], env=env, cwd=folder,
                                              stdout=log, stderr=subprocess.STDOUT))

    try:
        port, ui = _free_port(), _free_port()
        start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
              "--webui-port", str(ui))
        cluster = Cluster(f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{ui}", home)
        _wait_for(lambda: cluster.status(), folder, "the master")
        for index in range(workers):
            start(f"worker-{index}", "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                  "--cores", str(cores), "--memory", memory, "--webui-port", str(_free_port()),
                  "--work-dir", str(folder / f"work-{index}"), cluster.master)
        _wait_for(lambda: sum(w["state"] == "ALIVE" for w in cluster.status()["workers"]) == workers or None,
                  folder, f"{workers} workers")
        yield replace(cluster, daemons=tuple(process.pid for process in processes))
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_for(check, folder: Path, what: str) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError:  # not listening yet
            pass
        time.sleep(1)
    logs = "\n".join(f"--- {log.name}\n{log.read_text()[-2000:]}" for log in sorted(folder.glob("*.log")))
    raise RuntimeError(f"{what} did not come up within {START_SECONDS} s\n{logs}")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
