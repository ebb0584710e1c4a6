"""Do `feco query`'s memory limit and deadline hold? The issue's own queries, measured.

Each case runs `feco query` in a fresh process on an empty warehouse (under bench/out/) and
prints its exit status, the wall time from start to exit, the peak resident memory of the
process that ran the query (the largest of the `feco` process and its children: the query's
process since the limits moved there) and the error line. A case's wall time less the
``SELECT 1`` case's is the time the query itself took: under ``--timeout 2``, how far past
its deadline it ran. Run it against other code with
``--code DIR`` (a checkout or a `git archive` of it: its feco is imported first).

Usage::

    .venv/bin/python bench/query_limits.py [--code DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

OUT = Path(__file__).resolve().parent / "out" / "query_limits"
CASES = [  # (what, arguments)
    ("SELECT 1: start-up and exit, for reference", ["SELECT 1"]),
    ("a 1.5 GB string, --memory-limit 200MB", ["SELECT length(repeat('x', 1500000000))", "--memory-limit", "200MB"]),
    ("a list of 100M numbers, default limit (2GB)", ["SELECT count(*) FROM (SELECT list(range(100000000)))"]),
    ("a list of 100M numbers, --memory-limit 200MB",
     ["SELECT count(*) FROM (SELECT list(range(100000000)))", "--memory-limit", "200MB"]),
    ("the 1.5 GB string, --timeout 2 (8GB allowed)",
     ["SELECT length(repeat('x', 1500000000))", "--timeout", "2", "--memory-limit", "8GB"]),
    ("a long count, --timeout 2", ["SELECT count(*) FROM range(100000000000)", "--timeout", "2"]),
    ("--memory-limit 1KB", ["SELECT 1", "--memory-limit", "1KB"]),
    ("--timeout nan", ["SELECT 1", "--timeout", "nan"]),
]
# run from the warehouse's folder, so a checkout's own feco/ never shadows the one asked for
MEASURED = """
import resource, sys
from feco.cli import main
code = main(sys.argv[1:])
peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
print(f"#peak {code} {peak * 1024}", file=sys.stderr)
"""


def warehouse(code: Path | None) -> Path:
    """An empty warehouse of that code's schema, and a config naming it."""
    folder = OUT / (code.resolve().name if code else "this")
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "feco.toml"
    config.write_text('[paths]\nlogs = "logs"\nsamples = "samples"\nwarehouse = "feco.duckdb"\n'
                      '[logs]\nfeatures = ["f"]\n')
    script = "from pathlib import Path; from feco.warehouse import open_for_write\nwith open_for_write(Path(%r)): pass"
    subprocess.run([sys.executable, "-c", script % str(folder / "feco.duckdb")], env=environment(code),
                   cwd=folder, check=True)
    return config


def environment(code: Path | None) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(code)} if code else dict(os.environ)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", type=Path, help="import feco from this folder instead")
    args = parser.parse_args()
    config = warehouse(args.code)
    print(f"load average {os.getloadavg()[0]:.1f}; feco from {args.code or 'this checkout'}")
    print(f"{'case':<46}{'exit':>5}{'wall s':>8}{'peak MB':>9}  error")
    for what, arguments in CASES:
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-c", MEASURED, "query", *arguments, "--config", str(config)],
                              env=environment(args.code), cwd=config.parent, capture_output=True, text=True, check=False)
        wall = time.monotonic() - started
        lines = done.stderr.strip().splitlines()
        peak = next((line for line in lines if line.startswith("#peak")), None)
        code, peak_bytes = (int(x) for x in peak.split()[1:]) if peak else (done.returncode, 0)
        error = next((line for line in lines if line.startswith("feco:")), "")
        print(f"{what:<46}{code:>5}{wall:>8.1f}{peak_bytes / 1e6:>9.0f}  {error[:110]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
