"""Speed of feco.evaluation.evaluate against ranx and pytrec_eval, with value agreement.

Builds one random run (``--queries`` x ``--items`` scored items, continuous scores so no tool
has to break ties) and judgments (20 judged items per query, 15 of them in the run, grades
0-2, 1% of queries with no relevant item), then times NDCG@10, MRR@10 and MAP@100:

- feco from polars frames, with integer ids and with string ids (the same data), under the
  ``trec_eval9`` preset, pytrec_eval's trec_eval 9 (equal to the ``ranx`` preset on this data:
  no ties, no missing query);
- ranx ``evaluate`` on prebuilt ``Qrels``/``Run`` (numba on one thread; building them is timed
  apart);
- pytrec_eval (building the evaluator and evaluating are timed apart; MRR@10 is checked
  against ``recip_rank`` on the run cut at 10, since trec_eval's MRR has no cut-off).

Every tool runs on one thread (``NUMBA_NUM_THREADS=1``, ``POLARS_MAX_THREADS=1`` unless set).
Each tool is warmed up on a small input first so JIT compilation is not timed, and every
timing is the best of ``--repeats`` (building ranx's Qrels/Run is timed once: it takes a
minute). ranx and pytrec_eval each run in a fresh subprocess reading the same data from
Parquet, so their Python dicts (several GB at full size) never coexist. Prints timings,
ratios, the CPU time of each evaluation (other jobs on a shared machine stretch it less than
wall time), and the largest per-query difference between feco and each tool.

Usage::

    .venv/bin/python bench/ranking_speed.py [--queries 200000] [--items 100] [--repeats 3]
"""

from __future__ import annotations

import os

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
os.environ.setdefault("POLARS_MAX_THREADS", "1")

import argparse
import gc
import json
import platform
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import NamedTuple

import numpy as np
import polars as pl

from feco.evaluation import evaluate

METRICS = ["ndcg@10", "mrr@10", "map@100"]
TREC_MEASURES = {"ndcg_cut.10", "map_cut.100", "recip_rank"}
JUDGED = 20
JUDGED_IN_RUN = 15


def make_data(n_queries: int, n_items: int, seed: int) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Integer-id run and judgments; item ids are unique within a query, up to 19 digits."""
    rng = np.random.default_rng(seed)
    query = np.repeat(np.arange(n_queries, dtype=np.int64), n_items)
    slot = np.tile(np.arange(n_items, dtype=np.int64), n_queries)
    run = pl.DataFrame(
        {"query": query, "item": _item_id(query, slot), "score": rng.random(query.size)}
    )
    # Judged slots: 15 drawn among the run's items, 5 beyond them (judged, never retrieved).
    in_run = np.argsort(rng.random((n_queries, n_items)), axis=1)[:, :JUDGED_IN_RUN]
    beyond = n_items + np.arange(JUDGED - JUDGED_IN_RUN)
    slots = np.concatenate([in_run, np.broadcast_to(beyond, (n_queries, beyond.size))], axis=1)
    judged_query = np.repeat(np.arange(n_queries, dtype=np.int64), JUDGED)
    relevance = rng.integers(0, 3, judged_query.size)
    relevance[np.repeat(rng.random(n_queries) < 0.01, JUDGED)] = 0
    qrels = pl.DataFrame(
        {"query": judged_query, "item": _item_id(judged_query, slots.ravel()),
         "relevance": relevance}
    )
    return run, qrels


def _item_id(query: np.ndarray, slot: np.ndarray) -> np.ndarray:
    """Unique within a query and scattered like real ids: an odd multiplier is a bijection
    modulo 2^63, so consecutive ids do not hash into a collision-free pattern."""
    base = (query * 1009 + slot * 7919).astype(np.uint64)
    return ((base * np.uint64(0x9E3779B97F4A7C15)) & np.uint64(2**63 - 1)).astype(np.int64)


def as_strings(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(
        pl.format("q{}", "query").alias("query"), pl.format("d{}", "item").alias("item")
    )


def as_dicts(frame: pl.DataFrame, value: str) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for (query,), group in frame.group_by("query", maintain_order=True):
        out[query] = dict(zip(group.get_column("item").to_list(), group.get_column(value).to_list()))
    return out


def time_feco(run: pl.DataFrame, qrels: pl.DataFrame, repeats: int):
    """Best time of ``repeats`` evaluations under the trec_eval9 preset, and the last result."""
    return best_of(repeats, lambda: evaluate(run, qrels, metrics=METRICS,
                                             conventions="trec_eval9"))


class Timing(NamedTuple):
    wall: float
    cpu: float


def best_of(repeats: int, fn) -> tuple[Timing, object]:
    """Best wall and best CPU (process) time of ``repeats`` calls, and the last result.

    Every tool runs on one thread, so its CPU time is its wall time on a quiet machine; on the
    shared machine other jobs stretch wall times by up to 2x, CPU times much less.
    """
    walls, cpus, result = [], [], None
    for _ in range(repeats):
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - start_cpu)
    return Timing(min(walls), min(cpus)), result


def run_pytrec_eval(folder: Path, repeats: int) -> dict[str, float]:
    """Worker: time pytrec_eval on the saved data and save its per-query values."""
    import pytrec_eval

    qrels_s = pl.read_parquet(folder / "qrels.parquet")
    run_s = pl.read_parquet(folder / "run.parquet")
    small_q = as_dicts(qrels_s.head(200), "relevance")
    pytrec_eval.RelevanceEvaluator(small_q, TREC_MEASURES).evaluate(as_dicts(run_s.head(1000), "score"))
    start = time.perf_counter()
    qrels_d, run_d = as_dicts(qrels_s, "relevance"), as_dicts(run_s, "score")
    t_dicts = time.perf_counter() - start
    top10 = as_dicts(
        run_s.sort(["query", "score"], descending=[False, True])
        .group_by("query", maintain_order=True).head(10),
        "score",
    )
    del run_s, qrels_s
    gc.collect()
    t_build, evaluator = best_of(
        repeats, partial(pytrec_eval.RelevanceEvaluator, qrels_d, TREC_MEASURES))
    t_eval, values = best_of(repeats, partial(evaluator.evaluate, run_d))
    del evaluator, run_d
    gc.collect()
    # trec_eval's recip_rank has no cut-off: MRR@10 is checked on the run cut at 10.
    rr = pytrec_eval.RelevanceEvaluator(qrels_d, {"recip_rank"}).evaluate(top10)
    queries = list(values)
    pl.DataFrame({
        "query": queries,
        "ndcg@10": [values[q]["ndcg_cut_10"] for q in queries],
        "mrr@10": [rr[q]["recip_rank"] for q in queries],
        "map@100": [values[q]["map_cut_100"] for q in queries],
    }).write_parquet(folder / "pytrec_eval.parquet")
    return {"build": t_build.wall, "evaluate": t_eval.wall, "evaluate_cpu": t_eval.cpu,
            "dicts": t_dicts}


def run_ranx(folder: Path, repeats: int) -> dict[str, float]:
    """Worker: time ranx (one numba thread) on the saved data and save its per-query values."""
    import ranx

    qrels_s = pl.read_parquet(folder / "qrels.parquet")
    run_s = pl.read_parquet(folder / "run.parquet")
    ranx.evaluate(ranx.Qrels(as_dicts(qrels_s.head(200), "relevance")),
                  ranx.Run(as_dicts(run_s.head(1000), "score")), METRICS, threads=1)
    qrels_d, run_d = as_dicts(qrels_s, "relevance"), as_dicts(run_s, "score")
    del run_s, qrels_s
    gc.collect()
    start = time.perf_counter()
    qrels, run = ranx.Qrels(qrels_d), ranx.Run(run_d)
    t_build = time.perf_counter() - start
    del qrels_d, run_d
    gc.collect()
    t_eval, _ = best_of(repeats, lambda: ranx.evaluate(qrels, run, METRICS, threads=1))
    queries = list(run.scores[METRICS[0]])
    pl.DataFrame(
        {"query": queries, **{m: [run.scores[m][q] for q in queries] for m in METRICS}}
    ).write_parquet(folder / "ranx.parquet")
    return {"build": t_build, "evaluate": t_eval.wall, "evaluate_cpu": t_eval.cpu}


def in_subprocess(worker: str, folder: Path, repeats: int) -> dict[str, float]:
    """Run a worker in a fresh interpreter so each tool's memory is released after it."""
    done = subprocess.run(
        [sys.executable, __file__, "--worker", worker, "--folder", str(folder),
         "--repeats", str(repeats)],
        check=True, capture_output=True, text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def max_diff_frames(ours: pl.DataFrame, theirs: pl.DataFrame, metric: str) -> float:
    joined = ours.select("query", metric).join(
        theirs.select("query", pl.col(metric).alias("theirs")), on="query", how="full"
    )
    if joined.height != ours.height or joined.get_column("theirs").null_count():
        return float("inf")
    return joined.select((pl.col(metric) - pl.col("theirs")).abs().max()).item()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=200_000)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--worker", choices=("pytrec_eval", "ranx"), help=argparse.SUPPRESS)
    parser.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker = run_pytrec_eval if args.worker == "pytrec_eval" else run_ranx
        print(json.dumps(worker(args.folder, args.repeats)))
        return

    print(f"machine: {platform.machine()}, {os.cpu_count()} cores; "
          f"NUMBA_NUM_THREADS={os.environ['NUMBA_NUM_THREADS']}, "
          f"POLARS_MAX_THREADS={os.environ['POLARS_MAX_THREADS']}")
    print(f"data: {args.queries:,} queries x {args.items} scored items "
          f"= {args.queries * args.items:,} run rows; {JUDGED} judged items per query")

    small_run, small_qrels = make_data(50, 20, args.seed + 1)  # warm-up: JIT, first calls
    for pair in ((small_run, small_qrels), (as_strings(small_run), as_strings(small_qrels))):
        evaluate(*pair, metrics=METRICS, conventions="trec_eval9")

    int_run, int_qrels = make_data(args.queries, args.items, args.seed)
    t_int, _ = time_feco(int_run, int_qrels, args.repeats)
    run, qrels = as_strings(int_run), as_strings(int_qrels)
    del int_run, int_qrels
    t_str, ours = time_feco(run, qrels, args.repeats)
    ours_ranx = evaluate(run, qrels, metrics=METRICS, conventions="ranx")

    with tempfile.TemporaryDirectory(prefix="feco-bench-") as tmp:
        folder = Path(tmp)
        run.write_parquet(folder / "run.parquet")
        qrels.write_parquet(folder / "qrels.parquet")
        del run, qrels
        gc.collect()
        trec = in_subprocess("pytrec_eval", folder, args.repeats)
        rx = in_subprocess("ranx", folder, args.repeats)
        trec_values = pl.read_parquet(folder / "pytrec_eval.parquet")
        ranx_values = pl.read_parquet(folder / "ranx.parquet")

    print()
    print(f"{'tool':<46}{'seconds':>9}{'/ feco int ids':>16}{'/ feco string ids':>19}")
    rows = [
        ("feco  evaluate, int ids (polars frames)", t_int.wall),
        ("feco  evaluate, string ids (polars frames)", t_str.wall),
        ("ranx  evaluate (prebuilt Qrels/Run)", rx["evaluate"]),
        ("ranx  building Qrels/Run from dicts", rx["build"]),
        ("pytrec_eval  evaluate", trec["evaluate"]),
        ("pytrec_eval  building the evaluator", trec["build"]),
        ("pytrec_eval  evaluator + evaluate", trec["build"] + trec["evaluate"]),
        ("(python dicts that ranx/pytrec_eval take)", trec["dicts"]),
    ]
    for name, seconds in rows:
        print(f"{name:<46}{seconds:>9.3f}{seconds / t_int.wall:>15.1f}x"
              f"{seconds / t_str.wall:>18.1f}x")
    print(f"{'CPU seconds of evaluate (best of --repeats)':<46}")
    for name, cpu in (("feco int ids", t_int.cpu), ("feco string ids", t_str.cpu),
                      ("ranx", rx["evaluate_cpu"]), ("pytrec_eval", trec["evaluate_cpu"])):
        print(f"  {name:<44}{cpu:>9.3f}{cpu / t_int.cpu:>15.1f}x{cpu / t_str.cpu:>18.1f}x")
    print()
    print("largest per-query difference from feco (string ids):")
    for metric in METRICS:
        print(f"  {metric:<9} pytrec_eval vs trec_eval preset "
              f"{max_diff_frames(ours.per_query, trec_values, metric):.1e}   "
              f"ranx vs ranx preset {max_diff_frames(ours_ranx.per_query, ranx_values, metric):.1e}")
    means = {m: round(v, 6) for m, v in ours.metrics.items()}
    print(f"means (feco, trec_eval preset): {means} over {ours.queries.evaluated:,} queries "
          f"({ours.queries.no_relevant:,} without a relevant item, scored 0 as trec_eval does)")


if __name__ == "__main__":
    main()
