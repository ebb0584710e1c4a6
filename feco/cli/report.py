"""Report commands: the HTML report of the warehouse, and the sampling study of one day."""

from __future__ import annotations

import argparse
from pathlib import Path

from feco.cli.options import config_option, date_argument, print_frame, with_warehouse
from feco.errors import UsageError


def register(subparsers: argparse._SubParsersAction) -> None:
    report = subparsers.add_parser(
        "report", help="write the HTML report of the warehouse",
        description="Write one self-contained, interactive index.html (Plotly and the data "
                    "inlined: it opens from disk with no server and no network): incidents first, "
                    "coverage trends per feature and segment with the drop rule's expected band, a "
                    "heatmap against that expectation, cold start, daily NDCG and SHAP shares when "
                    "a ranker scored days, the coverage-drop experiment and the sampling study "
                    "when stored. Built from the warehouse alone; the config gives the alert settings.",
    )
    report.add_argument("--out", required=True, type=Path, help="folder for index.html")
    report.add_argument("--segment-dim", default="region",
                        help="segment dimension the heatmap opens on (default region; 'all' for the "
                             "global segment; the page switches it)")
    report.add_argument("--cold-start-features", type=_names, metavar="F1,F2,...",
                        help="features the cold-start charts offer first (default: the four with the "
                             "largest established-minus-new coverage gap)")
    report.add_argument("--warehouse", type=Path, help="DuckDB file (default: the config's)")
    config_option(report)
    report.set_defaults(handler=_report)

    study = subparsers.add_parser(
        "sampling-study", help="compare sampling configurations against a full day",
        description="For a grid of window counts and events per window, compare the coverage of "
                    "feco's windowed sample with the full day's for every feature (mean and "
                    "largest absolute error, in points) and its cost (rows read, seconds), against "
                    "simple random and reservoir samples of as many events. Prints the table and "
                    "stores it in the warehouse for the report.",
    )
    study.add_argument("--ds", required=True, type=date_argument, help="the day to study, YYYY-MM-DD")
    study.add_argument("--windows", type=_counts, default=[1, 2, 4, 8, 16, 24],
                       metavar="N,N,...", help="window counts (default 1,2,4,8,16,24)")
    study.add_argument("--events", type=_counts, default=[100, 300, 1000, 3000],
                       metavar="N,N,...", help="events per window (default 100,300,1000,3000)")
    study.add_argument("--repeats", type=int, default=3, help="seeds per configuration (default 3)")
    study.add_argument("--target", type=float, default=0.5,
                       help="largest acceptable error in points, to name the cheapest configuration (default 0.5)")
    study.add_argument("--logs", type=Path, help="log root (default: the config's)")
    study.add_argument("--no-store", action="store_true", help="print only; do not write the warehouse")
    config_option(study)
    study.set_defaults(handler=_sampling_study)


def _names(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("give at least one feature name")
    return names


def _counts(text: str) -> list[int]:
    try:
        counts = sorted({int(n) for n in text.split(",") if n.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a list of whole numbers") from None
    if not counts or counts[0] < 1:
        raise argparse.ArgumentTypeError(f"'{text}': give positive whole numbers")
    return counts


def _report(args: argparse.Namespace) -> int:
    from datetime import UTC, datetime

    from feco.tasks import as_config, finished_day, report

    if args.out.exists() and not args.out.is_dir():
        raise UsageError(f"--out {args.out} is a file: give the folder to write index.html in")
    config = with_warehouse(as_config(args.config), args.warehouse)
    # The report covers the whole warehouse: the day only labels the step's result, as the day
    # a scheduled run would process now.
    written = report(finished_day(datetime.now(UTC)), config, out=args.out, segment_dim=args.segment_dim,
                     cold_start_features=args.cold_start_features)
    print(written["report"])
    return 0


def _sampling_study(args: argparse.Namespace) -> int:
    from feco.sampling.study import as_table, cheapest_line
    from feco.tasks import as_config, sampling_study

    if args.repeats < 1:
        raise UsageError("--repeats must be at least 1")
    config = as_config(args.config)
    if args.logs:
        config = config.model_copy(update={"paths": config.paths.model_copy(update={"logs": args.logs})})
    result = sampling_study(args.ds, config, windows=args.windows, events_per_window=args.events,
                            repeats=args.repeats, store=not args.no_store,
                            progress=lambda line: print(line, flush=True))
    print_frame(as_table(result), "table")
    print(cheapest_line(result, target_points=args.target))
    if not args.no_store:
        print(f"stored in {config.paths.warehouse} (table sampling_study)")
    return 0
