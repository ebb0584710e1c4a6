"""The paper's experiments stand apart from serving: the pipeline never loads them."""

import subprocess
import sys


def test_the_pipeline_and_every_ranker_module_load_without_the_paper():
    # Serving may be imported by the paper (it trains and perturbs with ranker code), never the
    # reverse: a change to the experiments cannot change what the pipeline computes.
    script = ("import importlib, pkgutil, sys; import feco.ranker, feco.tasks, feco.alerts.cost_severity, feco.report; "
              "[importlib.import_module(m.name) for m in pkgutil.walk_packages(feco.ranker.__path__, 'feco.ranker.')]; "
              "print(sorted(m for m in sys.modules if m.startswith('feco.paper')))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stdout.splitlines()[-1] == "[]", done.stdout + done.stderr
