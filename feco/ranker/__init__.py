"""The ranker the pipeline serves and scores: a LightGBM lambdarank model, its importances, and
what coverage does to it.

Submodules (import the one you need; none is imported here, so the pipeline's alert step can
read stored importances without loading LightGBM): :mod:`~feco.ranker.model` (train, predict,
score at NDCG@4/8 under feco's and LightGBM's conventions), :mod:`~feco.ranker.importance`
(exact TreeSHAP and gain per feature), :mod:`~feco.ranker.perturb` (seeded coverage
reductions), :mod:`~feco.ranker.store` (warehouse tables and what the alerts read back),
:mod:`~feco.ranker.daily` (the reference ranker on the pipeline's own samples, the daily NDCG
of the serving model and of the served order), :mod:`~feco.ranker.serving` (the team's own
model), :mod:`~feco.ranker.rows` (reading sampled days in bounded memory),
:mod:`~feco.ranker.attribution` (daily SHAP per segment), :mod:`~feco.ranker.replay` (what a
coverage loss costs) and :mod:`~feco.ranker.at_risk` (the NDCG the day's coverage puts at risk).
The FeCo paper's experiments on public data are in :mod:`feco.paper`.
"""
