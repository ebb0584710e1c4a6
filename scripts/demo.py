"""`make demo`: the FeCo pipeline end to end on generated search logs.

1. generate 21 days of logs with injected incidents (skipped when already there),
2. backfill the first 10 days with the CLI, then train the reference ranker on them,
3. backfill the next 10 days (now also scored by the ranker: NDCG@4/8 per day); from
   TEAM_FROM on, a "team" model trained with LightGBM's own API on the first days' sample
   serves instead (`[ranker.model]` in a copy of the config, var/demo/feco-team.toml),
4. run the last day through the Airflow DAG (`dag.test()` under a local AIRFLOW_HOME),
5. print the incidents, served and model NDCG per day, the NDCG at risk, the largest coverage
   drops and the SQL to look further, write the HTML report, and say how many injected
   incidents were paged.

Everything lands under var/demo/ (see configs/feco.toml); rerunning is safe and idempotent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "configs" / "feco.toml"
START = date(2026, 11, 1)
DAYS = 21
EVENTS_PER_DAY = 60_000
SEED = 7
TEAM_FROM = START + timedelta(days=17)  # the team's own model serves the last four days
INCIDENTS = [
    # an engagement feature zeroed in one region for three days
    f"feature=eng_ctr_7d,start={START + timedelta(days=15)},days=3,share=0.9,kind=zero,shape=step,segment=region:DE",
    # a slow decay: add-to-cart rates fade over ten days
    f"feature=eng_atc_rate_30d,start={START + timedelta(days=10)},days=11,share=0.6,kind=zero,shape=decay",
    # a logging bug: a metadata feature turns NULL for two days
    f"feature=meta_rating,start={START + timedelta(days=18)},days=2,share=0.5,kind=null,shape=step",
]


def main() -> int:
    from feco.cli import main as feco
    from feco.config import load_config

    config = load_config(CONFIG)
    last = START + timedelta(days=DAYS - 1)
    step("1/5", f"search logs for {START} to {last} in {config.paths.logs}")
    generate(config.paths.logs, feco)

    trained = START + timedelta(days=10)
    step("2/5", f"backfill {START} to {trained - timedelta(days=1)}, then train the reference ranker")
    check(feco(["backfill", "--start", str(START), "--end", str(trained - timedelta(days=1)),
                "--config", str(CONFIG)]))
    check(feco(["train-ranker", "--ds", str(trained), "--config", str(CONFIG)]))

    team = team_config(config, trained)
    step("3/5", f"backfill {trained} to {last - timedelta(days=1)}, scored by the reference ranker, then "
                f"from {TEAM_FROM} by the team's own model ({team})")
    check(feco(["backfill", "--start", str(trained), "--end", str(TEAM_FROM - timedelta(days=1)),
                "--config", str(CONFIG)]))
    check(feco(["backfill", "--start", str(TEAM_FROM), "--end", str(last - timedelta(days=1)),
                "--config", str(team)]))

    step("4/5", f"the last day, {last}, through the Airflow DAG feco_daily")
    run_dag(last, config.paths.warehouse.parent / "airflow", team)

    step("5/5", "summary")
    check(feco(["status", "--config", str(team)]))
    print("\nIncidents (feco alerts --since ...; --all lists the alerts of each):")
    check(feco(["alerts", "--since", str(START), "--config", str(CONFIG)]))
    print("\nNDCG@8 per day in all traffic: the order that was served (from the logged positions, no model "
          "needed) beside the serving model on the same events, and the NDCG at risk (what the day's coverage "
          "deficits cost that model, replayed; 95% interval):")
    check(feco(["query", "SELECT s.ds, round(s.ndcg8, 4) AS served, round(s.model_ndcg8, 4) AS model, "
                "m.kind AS model_kind, round(r.d_ndcg8, 4) AS at_risk, round(r.d_ndcg8_low, 4) AS low, "
                "round(r.d_ndcg8_high, 4) AS high FROM served_daily_ndcg s LEFT JOIN model_runs m "
                "ON m.run_id = s.model_run_id LEFT JOIN ndcg_at_risk_daily r USING (ds, segment_dim, segment_value) "
                "WHERE s.segment_dim = 'all' ORDER BY s.ds", "--config", str(CONFIG)]))
    print("\nNDCG@8 of the serving model per day in region DE, where eng_ctr_7d broke:")
    check(feco(["query", "SELECT ds, round(ndcg8, 4) AS ndcg8, round(ndcg8_change, 4) AS "
                "change_vs_previous_days FROM ranker_daily_ndcg WHERE segment_value = 'DE' "
                "ORDER BY ds", "--config", str(CONFIG)]))
    print("\nWhat each paged incident costs the ranker (incident_costs: its coverage loss replayed on clean "
          "days of its segment before it began, scored by the serving model; 95% interval over events). "
          "severity: the incident's, as paged and as `feco alerts` lists it; cost_tier: the tier the replayed "
          "cost supports on its own (the estimate's when its interval excludes no loss, else low). The "
          "incident's severity also weighs its coverage drop, and rules that say the data broke hold a fixed "
          "tier (values turning NULL: high; docs/alerts.md):")
    check(feco(["query", "SELECT s.feature, s.segment_dim, s.segment_value, s.severity, c.ds AS replayed, "
                "list_transform(c.loss_shares, lambda x: round(x, 3)) AS loss, c.events, "
                "round(c.d_ndcg8, 4) AS d_ndcg8, round(c.d_ndcg8_low, 4) AS low, round(c.d_ndcg8_high, 4) AS high, "
                "c.severity AS cost_tier FROM incident_summary s JOIN incident_costs c USING (incident_id) "
                "WHERE s.paged QUALIFY c.ds = max(c.ds) OVER (PARTITION BY c.incident_id) ORDER BY s.severity_rank DESC, s.feature",
                "--config", str(CONFIG)]))
    print()
    check(feco(["drops", "--since", str(START + timedelta(days=7)), "--limit", "8",
                "--config", str(CONFIG)]))
    print(f"""
Injected incidents (ground truth in {config.paths.logs / 'incidents.json'}):
""" + "\n".join(f"  - {spec}" for spec in INCIDENTS) + f"""

Look further with SQL (the warehouse is {config.paths.warehouse}):
  .venv/bin/feco query "SELECT ds, segment_value, round(100*coverage, 1) AS pct, round(100*coverage_ma7, 1) AS ma7_pct FROM feco_ma7 WHERE feature = 'eng_ctr_7d' AND segment_dim = 'region' AND ds >= DATE '{START + timedelta(days=13)}' ORDER BY segment_value, ds"
  .venv/bin/feco query "SELECT ds, round(100*coverage, 1) AS pct, round(100*missing_share, 1) AS missing_pct FROM feco_daily WHERE feature = 'meta_rating' AND segment_dim = 'all' ORDER BY ds"
  .venv/bin/feco query "SELECT * FROM sample_windows WHERE ds = DATE '{last}'"
""")
    report = config.paths.warehouse.parent / "report"
    check(feco(["report", "--out", str(report), "--config", str(CONFIG),
                "--cold-start-features", "eng_ctr_7d,eng_ctr_30d,eng_views_7d,eng_atc_rate_30d"]))
    print("\n" + found_incidents(config.paths.warehouse))
    return 0


def found_incidents(warehouse: Path) -> str:
    """How many injected incidents were paged as an incident of their feature (in their
    segment, where one was injected) within a week of their start, and how many other pages."""
    from feco.warehouse import open_read_only

    with open_read_only(warehouse) as conn:
        paged = conn.sql("SELECT feature, segment_value, opened_ds FROM incident_summary WHERE paged").fetchall()
    found, lines = set(), []
    for spec in INCIDENTS:
        fields = dict(part.split("=", 1) for part in spec.split(","))
        start = date.fromisoformat(fields["start"])
        value = fields.get("segment", ":").split(":")[1] or None
        match = next((row for row in paged if row[0] == fields["feature"] and (value in (None, row[1]))
                      and start <= row[2] <= start + timedelta(days=6)), None)
        if match:
            found.add(match)
            lines.append(f"  - {fields['feature']} from {start}: paged {match[2]} ({(match[2] - start).days} days in)")
        else:
            lines.append(f"  - {fields['feature']} from {start}: not paged")
    return (f"Found {len(found)} of {len(INCIDENTS)} injected incidents; {len(paged) - len(found)} other "
            "incidents paged:\n" + "\n".join(lines))


def step(number: str, text: str) -> None:
    print(f"\n== {number} {text}", flush=True)


def check(code: int) -> None:
    if code:
        sys.exit(code)


def generate(logs: Path, feco) -> None:
    manifest = logs / "incidents.json"
    wanted = {"start": str(START), "days": DAYS, "events_per_day": EVENTS_PER_DAY, "seed": SEED}
    if manifest.exists():
        recorded = json.loads(manifest.read_text())
        if all(str(recorded.get(k)) == str(v) for k, v in wanted.items()):
            print("already generated; reusing them")
            return
    started = time.monotonic()
    args = ["generate-logs", "--out", str(logs), "--start", str(START), "--days", str(DAYS),
            "--events-per-day", str(EVENTS_PER_DAY), "--seed", str(SEED)]
    for spec in INCIDENTS:
        args += ["--incident", spec]
    check(feco(args))
    print(f"generated in {time.monotonic() - started:.0f}s")


def team_config(config, trained: date) -> Path:
    """A model the search team serves, trained outside feco (LightGBM's own API, its own feature
    names) on the sampled days before ``trained``, and a copy of the demo config that serves it
    from TEAM_FROM on through `[ranker.model]`."""
    import lightgbm as lgb
    import polars as pl

    rows = pl.concat([pl.read_parquet(config.paths.samples / f"ds={START + timedelta(days=d)}" / "window=*" / "*.parquet")
                      for d in range((trained - START).days)]).sort("event_id", "position")
    names = [f"team_{i}" for i in range(len(config.logs.features))]
    data = lgb.Dataset(rows.select(config.logs.features).to_numpy(), label=rows["label"].to_numpy(),
                       group=rows.group_by("event_id", maintain_order=True).len()["len"].to_numpy(), feature_name=names)
    booster = lgb.train({"objective": "lambdarank", "learning_rate": 0.1, "num_leaves": 15, "min_data_in_leaf": 50,
                         "seed": 3, "deterministic": True, "num_threads": 2, "verbose": -1}, data, num_boost_round=60)
    model = config.paths.warehouse.parent / "team" / "model.txt"
    model.parent.mkdir(parents=True, exist_ok=True)
    booster.save_model(str(model))
    mapping = "\n".join(f'{name} = "{feature}"' for name, feature in zip(names, config.logs.features))
    path = config.paths.warehouse.parent / "feco-team.toml"
    path.write_text(CONFIG.read_text().replace("../var/demo/", "") + f"""
[ranker.model]
file = "team/model.txt"
valid_from = {TEAM_FROM}
trained_until = {trained - timedelta(days=1)}
[ranker.model.features]
{mapping}
""")
    return path


def run_dag(ds: date, home: Path, config: Path) -> None:
    """Run one day with `dag.test()` in a fresh interpreter, logging to a file."""
    home.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "AIRFLOW_HOME": str(home), "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
           "AIRFLOW__CORE__LOAD_EXAMPLES": "False", "FECO_CONFIG": str(config)}
    log = home / "dag_test.log"
    dags = str(REPO / "dags")
    started = time.monotonic()
    with log.open("w") as out:
        subprocess.run([sys.executable, "-m", "airflow", "db", "migrate"], env=env, check=True,
                       stdout=out, stderr=subprocess.STDOUT)
        script = (
            "from airflow.dag_processing.dagbag import BundleDagBag\n"
            f"dag = BundleDagBag(dag_folder={dags!r}, bundle_path={dags!r}).get_dag('feco_daily')\n"
            # The `ds` param names the day, as for a manual rerun; a scheduled run takes the
            # day that ended when it fired.
            f"run = dag.test(run_conf={{'ds': '{ds}'}})\n"
            "print('DAG RUN STATE:', run.state)\n"
        )
        subprocess.run([sys.executable, "-c", script], env=env, stdout=out, stderr=subprocess.STDOUT)
    states = [line for line in log.read_text().splitlines() if line.startswith("DAG RUN STATE:")]
    state = states[-1].split(":", 1)[1].strip() if states else "did not finish"
    print(f"feco_daily for {ds}: {state} ({time.monotonic() - started:.0f}s; log: {log})")
    if state != "success":
        sys.exit(f"the DAG run did not succeed; see {log}")


if __name__ == "__main__":
    sys.exit(main())
