"""Does each coverage rule's null model hold on days nothing was injected? The calibration check.

The false-page budget (docs/alerts.md) rests on each rule's statistic following its null model:
a Student t of the series' own spread. If the days are heavier-tailed than the model, a
series' false-alarm rate exceeds its alpha. This re-reads every day of finished bench runs
(bench/alerts_quality.py), computes each judged series' one-sided p-value under the model (the
drop's shortfall against its prediction, the decay's against the reference, the missing share's
rise; series that never moved, whose sd is 0, are left out), keeps the clean ones (a feature's days outside its injected incidents and the 7 days
after them, from the paging warm-up on) and prints, per rule, how often p fell under a few
nominal levels against the level itself, and the sum of the days' alphas (what the budget
expects to cross) against the crossings. Asserts nothing.

    .venv/bin/python bench/alerts_calibration.py --volumes 40k --seeds tuning
"""

from __future__ import annotations

import argparse
import sys
from datetime import timedelta
from pathlib import Path

import numpy as np
import polars as pl
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))

from alert_worlds import FAMILIES, scenario
from alerts_quality import PIPELINE_DONE, VOLUMES, bench_config, run_folder
from alerts_sweep import seeds_of

LEVELS = (1e-2, 1e-3, 1e-4)


def series_pvalues(conn, config, ds) -> pl.DataFrame:
    """Per judged, pageable series of ``ds``: rule, feature, p-value under the model, alpha."""
    from feco.alerts.detect import _pageable, alert_inputs, day_alpha, judged_on_history
    from feco.alerts.rules.decay import _series

    settings = config.alerts
    inputs = alert_inputs(conn, ds, alerts=settings, moving_average_days=config.moving_average_days,
                          reference=settings.decay.reference or config.coverage.reference,
                          segments=config.segments, sources=config.logs.source_features())
    judged = judged_on_history(inputs, settings).filter(_pageable(settings.incidents))
    if judged.is_empty():
        return pl.DataFrame()
    rest = (pl.col("segment_dim") != "all") & pl.col("rest_baseline").is_not_null() & pl.col("rest_baseline_sd").is_not_null()
    drop = judged.select(
        "feature", "segment_dim", "segment_value", pl.lit("drop").alias("rule"),
        pl.when(rest).then((pl.col("rest_baseline") - pl.col("observed")) / pl.col("rest_baseline_sd"))
        .otherwise((pl.col("baseline") - pl.col("observed")) / pl.col("baseline_sd")).alias("z"),
        pl.when(rest).then(pl.col("ratio_df")).otherwise(pl.col("day_df")).cast(pl.Float64).alias("df"))
    decay = _series(judged.filter(pl.col("reference").is_not_null()), against_rest=settings.drop.against_rest).select(
        "feature", "segment_dim", "segment_value", pl.lit("decay").alias("rule"),
        ((pl.col("reference_level") - pl.col("average_level")) / pl.col("decay_sd")).alias("z"),
        pl.col("decay_df").cast(pl.Float64).alias("df"))
    missing = judged.filter(pl.col("missing_sd") > 0).select(
        "feature", "segment_dim", "segment_value", pl.lit("missing").alias("rule"),
        ((pl.col("missing_share") - pl.col("baseline_missing")) / pl.col("missing_sd")).alias("z"),
        pl.col("missing_df").cast(pl.Float64).alias("df"))
    # a series that never moved (sd 0: a feature always present) has no null spread to speak
    # of; the rules' practical margins judge it
    frame = pl.concat([drop, decay, missing]).drop_nulls().filter((pl.col("df") >= 1) & pl.col("z").is_finite())
    p = stats.t.sf(frame["z"].to_numpy(), frame["df"].to_numpy())
    return frame.with_columns(pl.Series("p", p), pl.lit(ds).alias("ds"), pl.lit(day_alpha(inputs, settings)).alias("alpha"))


def clean_days(case) -> set:
    """(feature, day) inside an injected incident or the 7 days after it."""
    dirty = set()
    for incident in case.incidents():
        features = getattr(incident, "features", None) or (incident.feature,)
        for offset in range(incident.days + 7):
            for feature in features:
                dirty.add((feature, incident.start + timedelta(days=offset)))
    return dirty


def calibrate(family: str, volume: int, seed: int) -> pl.DataFrame:
    from feco.warehouse import open_read_only

    case = scenario(family, seed)
    config = bench_config(case, run_folder(family, volume, seed))
    dirty = clean_days(case)
    first = case.start + timedelta(days=config.alerts.incidents.page_after_days)
    frames = []
    with open_read_only(config.paths.warehouse) as conn:
        for offset in range((case.start + timedelta(days=case.days) - first).days):
            frames.append(series_pvalues(conn, config, first + timedelta(days=offset)))
    frame = pl.concat([f for f in frames if f.height])
    keep = [(f, d) not in dirty for f, d in zip(frame["feature"], frame["ds"])]
    return frame.filter(pl.Series(keep)).with_columns(pl.lit(family).alias("family"))


def table(frame: pl.DataFrame) -> str:
    lines = ["| family | rule | clean series-days | " + " | ".join(f"p < {a:g}: seen (expected)" for a in LEVELS)
             + " | crossings of the day's alpha: seen (expected) |", "|---" * (4 + len(LEVELS)) + "|"]
    for (family, rule), group in frame.group_by(["family", "rule"], maintain_order=True):
        n = group.height
        cells = [f"{(group['p'] < a).sum()} ({n * a:.1f})" for a in LEVELS]
        crossings = f"{(group['p'] < group['alpha']).sum()} ({group['alpha'].sum():.2f})"
        lines.append(f"| {family} | {rule} | {n:,} | " + " | ".join(cells) + f" | {crossings} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--volumes", default="40k")
    parser.add_argument("--seeds", default="tuning", help="tuning, held_out or numbers")
    args = parser.parse_args()
    frames = []
    for volume in (VOLUMES[v] for v in args.volumes.split(",")):
        for family in args.families.split(","):
            for seed in seeds_of(family, args.seeds):
                if (run_folder(family, volume, seed) / PIPELINE_DONE).exists():
                    frames.append(calibrate(family, volume, seed).with_columns(pl.lit(volume).alias("volume")))
                    print(f"  {family} {volume} s{seed}", file=sys.stderr)
    frame = pl.concat(frames)
    print(table(frame.sort("family", "rule")))
    print(table(frame.with_columns(pl.lit("all families").alias("family")).sort("rule")).split("\n", 2)[2])


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
