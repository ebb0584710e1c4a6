"""Ranker commands: the paper's coverage-drop experiment and the reference ranker."""

from __future__ import annotations

import argparse

from feco.cli.options import config_option, date_argument, with_warehouse

DATASETS = ("mq2008", "webis", "mq2007agg")
SETTINGS = ("plain", "config", "regularised")


def register(subparsers: argparse._SubParsersAction) -> None:
    experiment = subparsers.add_parser("experiment", help="the FeCo paper's experiments on public LTR data")
    kinds = experiment.add_subparsers(dest="experiment", metavar="EXPERIMENT", required=True)
    drop = kinds.add_parser(
        "coverage-drop", help="reduce top features' coverage and measure NDCG@4/8 and importance",
        description="Train LightGBM lambdarank on a fold, then reduce the coverage of the top-k "
                    "features (by mean |SHAP|) and of low-importance contrasts (the least important "
                    "features the model uses) by each share, in the test set only (model fixed) and "
                    "in train+test (retrained, against a control retrained on unperturbed data with "
                    "the same seed). Each finished cell is stored "
                    "at once; a rerun skips the stored cells. Default grid: top 3 + 1 low, shares "
                    "5/25/100 percent, 2 seeds, fold 1, the config's LightGBM settings.",
    )
    drop.add_argument("--dataset", choices=DATASETS, action="append",
                      help="dataset (repeatable; default: mq2008 and webis)")
    drop.add_argument("--fold", type=int, action="append", help="fold 1-5 (repeatable; default 1)")
    drop.add_argument("--all-folds", action="store_true", help="all five folds")
    drop.add_argument("--setting", choices=SETTINGS, action="append",
                      help="named LightGBM settings (repeatable; default: config, the [ranker.params])")
    drop.add_argument("--full", action="store_true",
                      help="the full grid: top 5 + 3 low, shares 5/10/25/50/100 percent, 3 seeds")
    drop.add_argument("--seeds", type=int, help="number of seeds (overrides the grid's)")
    drop.add_argument("--top", type=int, help="top features by SHAP (overrides the grid's)")
    drop.add_argument("--low", type=int,
                      help="low-importance contrasts, among the features the baseline uses (overrides the grid's)")
    drop.add_argument("--threads", type=int, default=1, help="LightGBM threads (default 1)")
    drop.add_argument("--warehouse", metavar="PATH", help="warehouse file (default: the config's)")
    drop.add_argument("--no-store", action="store_true", help="print only; write nothing")
    config_option(drop)
    drop.set_defaults(handler=_coverage_drop)

    report = kinds.add_parser(
        "coverage-drop-report", help="the paper's claims tested on the stored coverage-drop grid",
        description="From the stored cells: each fold's baseline (trees, tied scores), retraining "
                    "noise (the controls), NDCG@8 change per dataset, setting, mode, feature group "
                    "and share, pooled over folds and per fold, with 95% bootstrap intervals over "
                    "queries, within-feature correlations and importance vs loss (with and without "
                    "the contrasts) with permutation p-values, every p-value raw and adjusted within "
                    "its family (Holm; Benjamini-Hochberg for the per-fold table), and the queries "
                    "needed to see a given loss. The tests are stored in coverage_drop_claim_tests. "
                    "The same warehouse gives the same report. NDCG under feco's convention "
                    "(queries with no relevant document left out).",
    )
    report.add_argument("--warehouse", metavar="PATH", help="warehouse file (default: the config's)")
    report.add_argument("--resamples", type=int, default=20_000,
                        help="bootstrap resamples and permutations a test (default 20000: enough for a "
                             "Holm-adjusted p below 0.05 in a family of 270)")
    report.add_argument("--effect", type=float, default=0.01,
                        help="NDCG@8 loss the power estimate asks for (default 0.01)")
    config_option(report)
    report.set_defaults(handler=_coverage_drop_report)

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
    from feco.paper.datasets import load_split
    from feco.paper.experiment import (
        FULL_REDUCTIONS,
        Grid,
        Training,
        experiment_id,
        named_settings,
        run_coverage_drop,
        table1,
    )
    from feco.tasks import coverage_drop

    config = with_warehouse(load_config(args.config), args.warehouse)
    grid = Grid(top_k=5, low_k=3, reductions=FULL_REDUCTIONS, seeds=(1, 2, 3)) if args.full else \
        Grid(top_k=3, low_k=1, reductions=(0.05, 0.25, 1.0), seeds=(1, 2))
    overrides = {"seeds": tuple(range(1, args.seeds + 1)) if args.seeds else None, "top_k": args.top,
                 "low_k": args.low}
    grid = Grid(**{**grid.__dict__, **{k: v for k, v in overrides.items() if v is not None}})
    settings = named_settings(config.ranker.params, threads=args.threads)
    folds = [1, 2, 3, 4, 5] if args.all_folds else (args.fold or [1])
    with pl.Config(tbl_rows=200, tbl_cols=20, tbl_width_chars=200, fmt_str_lengths=40, tbl_hide_dataframe_shape=True):
        for dataset in args.dataset or ("mq2008", "webis"):
            for fold in folds:
                split = load_split(dataset, fold)
                for name in args.setting or ["config"]:
                    training = Training(settings[name], num_boost_round=config.ranker.num_boost_round,
                                        early_stopping_rounds=config.ranker.early_stopping_rounds, setting=name)
                    if args.no_store:
                        _print_experiment(run_coverage_drop(split, grid=grid, training=training))
                        continue
                    cells = coverage_drop(split, config, grid=grid, training=training,
                                          echo=lambda line: print(line, flush=True))
                    print(table1(cells).drop("dataset", "fold"))
                    print(f"stored as experiment {experiment_id(split, grid, training)} in {config.paths.warehouse}",
                          flush=True)
    return 0


def _coverage_drop_report(args: argparse.Namespace) -> int:
    from feco.config import load_config
    from feco.paper.claims_report import render
    from feco.tasks import coverage_drop_report

    config = with_warehouse(load_config(args.config), args.warehouse)
    report = coverage_drop_report(config, resamples=args.resamples, effect=args.effect)
    print(render(report), end="")
    return 0


def _print_experiment(result) -> None:
    import polars as pl

    from feco.paper.experiment import importance_shift, table1

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
