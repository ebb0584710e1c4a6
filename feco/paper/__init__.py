"""The FeCo paper's experiments on public learning-to-rank data, and its claims tested on them.

Submodules: :mod:`~feco.paper.datasets` (the public LTR sets, read in place as folds),
:mod:`~feco.paper.experiment` (the coverage-drop grid), :mod:`~feco.paper.claims` (the
statistics the claims need), :mod:`~feco.paper.claims_report` (`feco experiment
coverage-drop-report`: the tests by family, printed and stored) and :mod:`~feco.paper.store`
(their warehouse rows). They train and perturb with the serving ranker's own code
(:mod:`feco.ranker.model`, :mod:`~feco.ranker.importance`, :mod:`~feco.ranker.perturb`); the
pipeline imports nothing from here. Their commands write the warehouse through
:mod:`feco.tasks` (``coverage_drop``, ``coverage_drop_report``), under the run lock.
"""
