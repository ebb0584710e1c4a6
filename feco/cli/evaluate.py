"""`feco evaluate` and `feco evaluate-recs`: score rankings under declared conventions.

``feco evaluate`` scores a run (TREC run file or Parquet, or an svmlight file with a
predictions file) against judgments. ``feco evaluate-recs`` runs an offline protocol on an
interaction log and scores the random and most-popular baselines, so a report can say
whether a model beats chance.
"""

from __future__ import annotations

import argparse
import json

from feco.errors import UsageError

RECS_METRICS = "hit_rate,precision,recall,ndcg,mrr,coverage"


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``evaluate`` and ``evaluate-recs`` subcommands."""
    evaluate = subparsers.add_parser(
        "evaluate",
        help="score a run against judgments (NDCG, MAP, MRR, ...) under declared conventions",
        description="Score a run against judgments. Give --qrels and --run (TREC text or "
        "Parquet), or --svmlight and --predictions (labels in the svmlight file).",
    )
    evaluate.add_argument("--qrels", help="judgments: TREC qrels file or Parquet")
    evaluate.add_argument("--run", help="run: TREC run file or Parquet")
    evaluate.add_argument("--svmlight", help="LETOR/svmlight file whose labels are the judgments")
    evaluate.add_argument("--predictions", help="one score per line for the svmlight rows")
    evaluate.add_argument(
        "--metrics",
        help="comma-separated metric ids (default: ndcg@4,ndcg@8,mrr@10,map@100,precision@10,"
        "recall@10; under --preset trec_eval and trec_eval9 trec_eval's own measures, the same with "
        "mrr for its recip_rank, which has no cut-off)",
    )
    _add_convention_options(evaluate)
    evaluate.add_argument("--format", choices=("table", "json"), default="table",
                          help="output: table (the metrics, then the counts and conventions they were taken "
                               "under; the default) or json (all of it as one object)")
    evaluate.set_defaults(handler=_evaluate)

    recs = subparsers.add_parser(
        "evaluate-recs",
        help="run an offline protocol on an interaction log and score the baselines",
        description="Split an interaction log (CSV or Parquet: user, item, timestamp[, "
        "rating]) with a protocol, rank every unseen item for each test user with the random "
        "and most-popular baselines, and print the metrics with their counts.",
    )
    recs.add_argument("--interactions", required=True, help="interaction log, CSV or Parquet")
    recs.add_argument(
        "--protocol",
        required=True,
        choices=("leave-one-out", "temporal", "global-temporal"),
        help="leave-one-out: newest positive per user; temporal: Personalize's split "
        "(10%% test users, newest 10%% of their interactions); global-temporal: --cutoff",
    )
    recs.add_argument("--k", default="5,10,25", help="cut-offs, comma-separated (default 5,10,25)")
    recs.add_argument(
        "--metrics", default=RECS_METRICS,
        help=f"metric names evaluated at every cut-off (default {RECS_METRICS})",
    )
    recs.add_argument("--cutoff", help="global-temporal: ISO date or Unix seconds")
    recs.add_argument("--min-rating", type=float,
                      help="leave-one-out: only ratings >= this are positives")
    recs.add_argument("--ties", default="item_asc", choices=("item_asc", "item_desc", "random"),
                      help="order of interactions with equal timestamps (default item_asc)")
    recs.add_argument("--sampled-negatives", type=int,
                      help="rank the held-out items among N sampled negatives (a different, "
                      "easier problem) instead of the whole catalogue")
    recs.add_argument("--seed", type=int, default=0, help="seed for splits, samples, baselines")
    recs.add_argument("--segments", action="store_true",
                      help="also report users by history length (cold start, sparse, ...)")
    _add_convention_options(recs)
    recs.add_argument("--format", choices=("table", "json"), default="table",
                      help="output: table (each baseline's metrics, counts and conventions; the default) or "
                           "json (all of it as one object)")
    recs.set_defaults(handler=_evaluate_recs)


def _add_convention_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--preset", default="feco",
        help="conventions: feco (default), trec_eval (10.0), trec_eval9, lightgbm, sklearn, ranx, personalize",
    )
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
        help="change one convention, e.g. --set no_relevant=zero (repeatable)",
    )


def _conventions(args: argparse.Namespace):
    from feco.evaluation import Conventions

    conventions = Conventions.preset(args.preset)
    changes = {}
    for item in args.overrides:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set expects KEY=VALUE, got {item!r}")
        changes[key.strip()] = value.strip()
    return conventions.with_options(**changes) if changes else conventions


def _evaluate(args: argparse.Namespace) -> int:
    from feco.evaluation import evaluate
    from feco.evaluation.io import read_qrels, read_run, read_svmlight_run

    text_pair = args.qrels is not None or args.run is not None
    svm_pair = args.svmlight is not None or args.predictions is not None
    if text_pair == svm_pair:
        raise UsageError("give either --qrels and --run, or --svmlight and --predictions")
    if text_pair:
        if args.qrels is None or args.run is None:
            raise UsageError("--qrels and --run go together")
        qrels, run = read_qrels(args.qrels), read_run(args.run)
    else:
        if args.svmlight is None or args.predictions is None:
            raise UsageError("--svmlight and --predictions go together")
        run, qrels = read_svmlight_run(args.svmlight, args.predictions)
    # One evaluation per process: NumPy kernels start at once, numba's take a second to load.
    result = evaluate(run, qrels, metrics=args.metrics, conventions=_conventions(args), kernels="numpy")
    if args.format == "json":
        print(json.dumps(result.to_dict()))
    else:
        print(_metric_table({"value": result.metrics}))
        print(_counts_line(result))
        print(_conventions_line(result.conventions))
    return 0


def _evaluate_recs(args: argparse.Namespace) -> int:
    from feco.evaluation import evaluate, parse_metrics
    from feco.evaluation import protocols as p
    from feco.evaluation.io import read_interactions

    cutoffs = _cutoffs(args.k)
    names = [n.strip() for n in args.metrics.split(",") if n.strip()]
    metrics = [m.id for m in parse_metrics([f"{n}@{k}" for k in cutoffs for n in names])]
    conventions = _conventions(args)
    log = read_interactions(args.interactions)
    if args.min_rating is not None and args.protocol != "leave-one-out":
        raise UsageError("--min-rating applies to --protocol leave-one-out only")
    if args.protocol == "leave-one-out":
        split = p.leave_one_out(log, ties=args.ties, min_rating=args.min_rating, seed=args.seed)
    elif args.protocol == "temporal":
        split = p.personalize_split(log, ties=args.ties, seed=args.seed)
    else:
        if args.cutoff is None:
            raise UsageError("--protocol global-temporal needs --cutoff")
        cutoff = int(args.cutoff) if args.cutoff.isdigit() else args.cutoff
        split = p.split_at(log, cutoff)
    pool = p.candidates(split, sampled_negatives=args.sampled_negatives, seed=args.seed)
    runs = {
        "random": p.random_baseline(pool, seed=args.seed),
        "most-popular": p.popularity_baseline(pool, split.train),
    }
    results = {
        name: evaluate(run, pool.qrels, metrics=metrics, conventions=conventions,
                       catalogue=split.catalogue, kernels="numpy")
        for name, run in runs.items()
    }
    segments = p.history_segments(split) if args.segments else None

    if args.format == "json":
        out = {
            "protocol": split.protocol,
            "candidates": {
                "problem": pool.problem,
                "sampled_negatives": pool.sampled_negatives,
                "truth_seen_before": pool.truth_seen_before,
            },
            "models": {name: r.to_dict() for name, r in results.items()},
        }
        if segments is not None:
            out["segments"] = {
                name: r.by(segments).to_dicts() for name, r in results.items()
            }
        print(json.dumps(out))
        return 0

    protocol = ", ".join(f"{k}={v}" for k, v in split.protocol.items())
    print(f"protocol: {protocol}")
    print(f"candidates: {pool.problem}; ground truth already seen, dropped: "
          f"{pool.truth_seen_before}")
    print(_metric_table({name: r.metrics for name, r in results.items()}))
    first = next(iter(results.values()))
    print(_counts_line(first))
    print(_conventions_line(first.conventions))
    if segments is not None:
        for name, result in results.items():
            print(f"\n{name} by history length:")
            print(result.by(segments))
    return 0


def _cutoffs(text: str) -> list[int]:
    try:
        cutoffs = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(f"--k expects comma-separated positive integers, got {text!r}") from None
    if not cutoffs or min(cutoffs) < 1:
        raise UsageError(f"--k expects comma-separated positive integers, got {text!r}")
    return cutoffs


def _metric_table(columns: dict[str, dict[str, float | None]]) -> str:
    metrics = list(next(iter(columns.values())))
    width = max(len("metric"), *(len(m) for m in metrics))
    cells = {name: max(10, len(name)) + 2 for name in columns}
    lines = [f"{'metric':<{width}}" + "".join(f"{n:>{cells[n]}}" for n in columns)]
    for metric in metrics:
        row = "".join(f"{_number(values[metric]):>{cells[n]}}" for n, values in columns.items())
        lines.append(f"{metric:<{width}}{row}")
    return "\n".join(lines)


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _counts_line(result) -> str:
    q, c = result.queries, result.conventions
    no_relevant = {"exclude": "excluded", "zero": "scored 0", "one": "scored 1",
                   "error": "an error"}[c.no_relevant]
    missing = {"zero": "scored as empty lists", "drop": "dropped"}[c.missing_in_run]
    line = (
        f"queries: {q.evaluated} evaluated of {q.judged} judged; {q.no_relevant} with no "
        f"relevant item ({no_relevant}); {q.missing_in_run} missing from the run ({missing}); "
        f"{q.unjudged_in_run} in the run without judgments (ignored)"
    )
    if result.catalogue is not None:
        line += (f"; coverage over a catalogue of {result.catalogue['size']} items and "
                 f"{result.catalogue['queries']} ranked lists")
    return line


def _conventions_line(conventions) -> str:
    return "conventions: " + " ".join(f"{k}={v}" for k, v in conventions.to_dict().items())

