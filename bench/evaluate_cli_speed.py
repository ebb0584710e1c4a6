"""`feco evaluate` from the shell against trec_eval on the same TREC files, start to finish.

Writes a run of ``--lines`` lines (``--items`` scored items a query) and its qrels (20 judged
items a query, 15 of them in the run) under bench/out/, then times fresh processes, best of
``--repeats``, each after one untimed warm-up:

- ``feco evaluate --preset trec_eval`` with its six default metrics (NumPy kernels, no numba);
- the trec_eval binary if one is on PATH (or in $TREC_EVAL) with the same six measures; else
  pytrec_eval (trec_eval's C code) reading the files with its own parser, and the script says so;
- ``feco evaluate`` on a two-line run: the fixed cost of a call.

Prints the times, the CLI-to-baseline ratio (below 1: feco is faster), the NDCG@8 both report,
and a breakdown of one process: import, reading the files, and evaluating with the NumPy
kernels the CLI uses and with the numba kernels (loaded from numba's cache on the first call).

To build the binary: ``make`` in a checkout of usnistgov/trec_eval's C sources (gcc, no other
dependency), then point $TREC_EVAL at the ``trec_eval`` it writes.

Usage::

    .venv/bin/python bench/evaluate_cli_speed.py [--lines 300000] [--items 100] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent / "out" / "evaluate_cli"
MEASURES = "ndcg_cut.4,8 recip_rank map_cut.100 P.10 recall.10"
PYTREC = """
import json, sys, pytrec_eval
with open(sys.argv[1]) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
measures = {"ndcg_cut.4,8", "recip_rank", "map_cut.100", "P.10", "recall.10"}
values = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
print(json.dumps(sum(v["ndcg_cut_8"] for v in values.values()) / len(values)))
"""
STARTUP = """
import time
started = time.perf_counter()
from feco.evaluation import evaluate
from feco.evaluation.io import read_qrels, read_run
imported = time.perf_counter()
qrels, run = read_qrels(QRELS), read_run(RUN)
read = time.perf_counter()
evaluate(run, qrels, conventions="trec_eval", kernels="numpy")
vectorised = time.perf_counter()
evaluate(run, qrels, conventions="trec_eval", kernels="numba")
first = time.perf_counter()
evaluate(run, qrels, conventions="trec_eval", kernels="numba")
second = time.perf_counter()
print(f"import {imported - started:.2f}s, read files {read - imported:.2f}s, evaluate with NumPy "
      f"kernels {vectorised - read:.2f}s; numba kernels: first call {first - vectorised:.2f}s "
      f"(import and cache load), second {second - first:.2f}s")
"""


def write_files(lines: int, items: int, seed: int = 3) -> tuple[Path, Path]:
    """TREC run and qrels files; ids are strings as in real runs."""
    OUT.mkdir(parents=True, exist_ok=True)
    run_path, qrels_path = OUT / f"run_{lines}.txt", OUT / f"qrels_{lines}.txt"
    if run_path.exists() and qrels_path.exists():
        return run_path, qrels_path
    rng = np.random.default_rng(seed)
    queries = lines // items
    with run_path.open("w") as run, qrels_path.open("w") as qrels:
        for query in range(queries):
            scores = rng.random(items)
            order = np.argsort(-scores)
            run.writelines(f"q{query} Q0 d{query}-{item} {rank} {scores[item]:.6f} bench\n"
                           for rank, item in enumerate(order, start=1))
            judged = np.concatenate([rng.choice(items, 15, replace=False), items + np.arange(5)])
            qrels.writelines(f"q{query} 0 d{query}-{item} {rng.integers(0, 3)}\n" for item in judged)
    return run_path, qrels_path


def timed(command: list[str], repeats: int) -> tuple[float, str]:
    """Best wall time of ``repeats`` runs after one warm-up, and the last run's output."""
    subprocess.run(command, check=True, capture_output=True)
    best, out = float("inf"), ""
    for _ in range(repeats):
        started = time.perf_counter()
        out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        best = min(best, time.perf_counter() - started)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=300_000)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    run_path, qrels_path = write_files(args.lines, args.items)
    feco = [sys.executable, "-m", "feco", "evaluate", "--preset", "trec_eval", "--format", "json",
            "--qrels", str(qrels_path), "--run", str(run_path)]
    feco_seconds, feco_out = timed(feco, args.repeats)
    feco_ndcg = json.loads(feco_out)["metrics"]["ndcg@8"]

    binary = os.environ.get("TREC_EVAL") or shutil.which("trec_eval")
    if binary:
        name = f"trec_eval binary ({binary})"
        command = [binary, "-m", "ndcg_cut.4,8", "-m", "recip_rank", "-m", "map_cut.100", "-m", "P.10",
                   "-m", "recall.10", str(qrels_path), str(run_path)]
        base_seconds, out = timed(command, args.repeats)
        base_ndcg = next(float(line.split()[2]) for line in out.splitlines()
                         if line.startswith("ndcg_cut_8 "))
    else:
        name = "pytrec_eval (no trec_eval binary on PATH or in $TREC_EVAL)"
        base_seconds, out = timed([sys.executable, "-c", PYTREC, str(qrels_path), str(run_path)],
                                  args.repeats)
        base_ndcg = json.loads(out)

    tiny_run, tiny_qrels = OUT / "tiny_run.txt", OUT / "tiny_qrels.txt"
    tiny_run.write_text("q1 Q0 a 1 0.5 t\nq1 Q0 b 2 0.3 t\n")
    tiny_qrels.write_text("q1 0 a 1\n")
    tiny_seconds, _ = timed([*feco[:-4], "--qrels", str(tiny_qrels), "--run", str(tiny_run)],
                            args.repeats)
    startup = STARTUP.replace("QRELS", repr(str(qrels_path))).replace("RUN", repr(str(run_path)))
    breakdown = subprocess.run([sys.executable, "-c", startup], check=True, capture_output=True,
                               text=True).stdout.strip()

    print(f"{args.lines:,}-line run, {args.lines // args.items:,} queries; best of {args.repeats}, "
          f"fresh processes, warm caches")
    print(f"  feco evaluate (CLI)    {feco_seconds:6.2f}s   NDCG@8 {feco_ndcg:.6f}")
    print(f"  {name:<22} {base_seconds:6.2f}s   NDCG@8 {base_ndcg:.6f}")
    print(f"  ratio feco / baseline  {feco_seconds / base_seconds:6.2f}")
    print(f"  feco evaluate on a two-line run: {tiny_seconds:.2f}s")
    print(f"  one feco process: {breakdown}")


if __name__ == "__main__":
    main()
