"""Ranker commands: the paper's coverage-drop experiment and the reference ranker."""

from __future__ import annotations

import argparse

from feco.cli.options import config_option, date_argument

DATASETS = ("mq2008", "webis")


def register(subparsers: argparse._SubParsersAction) -> None:
    experiment = subparsers.add_parser("experiment", help="the FeCo paper's experiments on public LTR data")
    kinds = experiment.add_subparsers(dest="experiment", metavar="EXPERIMENT", required=True)
    drop = kinds.add_parser(
        "coverage-drop", help="reduce top features' coverage and measure NDCG@4/8 and importance",
        description="Train LightGBM lambdarank on a fold, then reduce the coverage of the top-k "
                    "features (by mean |SHAP|) and of low-importance contrasts by each share, in the "
                    "test set only (model fixed) and in train+test (retrained). Prints the baseline "
                    "under feco's and LightGBM's NDCG conventions, a Table-1-shaped grid, the "
                    "correlations and the importance shift; stores all of it in the warehouse. "
                    "Default grid: top 3 + 1 low, shares 5%%/25%%/100%%, 2 seeds, fold 1.",
    )
    drop.add_argument("--dataset", choices=DATASETS, action="append",
                      help="dataset (repeatable; default: both)")
    drop.add_argument("--fold", type=int, action="append", help="fold 1-5 (repeatable; default 1)")
    drop.add_argument("--all-folds", action="store_true", help="all five folds")
    drop.add_argument("--full", action="store_true",
                      help="the full grid: top 5 + 3 low, shares 5/10/25/50/100%%, 3 seeds")
    drop.add_argument("--seeds", type=int, help="number of seeds (overrides the grid's)")
    drop.add_argument("--no-store", action="store_true", help="print only; write nothing")
    config_option(drop)
    drop.set_defaults(handler=_coverage_drop)

    train = subparsers.add_parser(
        "train-ranker", help="train the reference ranker on the sampled days before a date",
        description="Train LightGBM lambdarank on the [ranker] reference_days sampled days before "
                    "--ds (the last validation_days for early stopping), store it as a versioned "
                    "artifact valid from --ds, with its SHAP and gain importances.",
    )
    train.add_argument("--ds", required=True, type=date_argument, help="the training date, YYYY-MM-DD")
    config_option(train)
    train.set_defaults(handler=_train)


def _coverage_drop(args: argparse.Namespace) -> int:
    import polars as pl

    from feco.config import load_config
    from feco.ranker.datasets import load_split
    from feco.ranker.experiment import FULL_REDUCTIONS, Grid, Training, run_coverage_drop
    from feco.ranker.store import store_experiment
    from feco.warehouse import open_for_write

    config = load_config(args.config)
    grid = Grid(top_k=5, low_k=3, reductions=FULL_REDUCTIONS, seeds=(1, 2, 3)) if args.full else \
        Grid(top_k=3, low_k=1, reductions=(0.05, 0.25, 1.0), seeds=(1, 2))
    if args.seeds:
        grid = Grid(**{**grid.__dict__, "seeds": tuple(range(1, args.seeds + 1))})
    training = Training(config.ranker.params, num_boost_round=config.ranker.num_boost_round,
                        early_stopping_rounds=config.ranker.early_stopping_rounds)
    folds = [1, 2, 3, 4, 5] if args.all_folds else (args.fold or [1])
    with pl.Config(tbl_rows=200, tbl_cols=20, tbl_width_chars=200, fmt_str_lengths=40, tbl_hide_dataframe_shape=True):
        for dataset in args.dataset or DATASETS:
            for fold in folds:
                result = run_coverage_drop(load_split(dataset, fold), grid=grid, training=training)
                _print_experiment(result)
                if not args.no_store:
                    with open_for_write(config.paths.warehouse, moving_average_days=config.moving_average_days) as conn:
                        store_experiment(conn, result)
                    print(f"stored as experiment {result.experiment_id} in {config.paths.warehouse}")
    return 0


def _print_experiment(result) -> None:
    import polars as pl

    from feco.ranker.experiment import importance_shift, table1

    base = result.model_runs.filter(pl.col("kind") == "coverage_drop:baseline").row(0, named=True)
    print(f"\n== {result.experiment_id}: baseline on the test fold, {base['queries']} queries, "
          f"{base['queries_no_relevant']} with no relevant document")
    print(f"   feco conventions (those queries excluded): NDCG@4 {base['ndcg4']:.4f}  NDCG@8 {base['ndcg8']:.4f}")
    print(f"   LightGBM's (those queries score 1):        NDCG@4 {base['ndcg4_lightgbm']:.4f}  "
          f"NDCG@8 {base['ndcg8_lightgbm']:.4f}")
    print(f"   train {base['train_seconds']:.2f}s ({base['best_iteration']} rounds), predict "
          f"{base['predict_seconds']:.3f}s, SHAP {base['shap_seconds']:.2f}s on {base['shap_rows']} rows")
    print("\nTable 1 (NDCG under feco's conventions, mean ± sd over seeds; Δ against the baseline):")
    print(table1(result.cells).drop("dataset", "fold"))
    print("\nCorrelations (coverage vs NDCG; baseline SHAP share vs NDCG@8 loss):")
    print(result.correlations.drop("dataset", "fold").with_columns(pl.col(pl.Float64).round(4)))
    top = result.cells.filter(pl.col("role") == "top").sort("baseline_rank")["feature"][0]
    reduction = result.cells["reduction"].min()
    for mode in result.cells["mode"].unique(maintain_order=True):
        print(f"\nImportance shares when {top} loses {reduction:.0%} of its coverage ({mode}; Figure 1/2):")
        print(importance_shift(result, feature=top, reduction=reduction, mode=mode)
              .with_columns(pl.col(pl.Float64).round(4)))


def _train(args: argparse.Namespace) -> int:
    from feco.tasks import train_ranker

    result = train_ranker(args.ds, args.config)
    print(f"trained ranker {result['version']} on {result['days']} sampled days "
          f"({result['best_iteration']} rounds) -> {result['artifact']}")
    print(f"validation NDCG@4 {result['ndcg4']:.4f} NDCG@8 {result['ndcg8']:.4f} (feco: events without a "
          f"positive label excluded); LightGBM's convention {result['ndcg4_lightgbm']:.4f} / "
          f"{result['ndcg8_lightgbm']:.4f}")
    return 0
