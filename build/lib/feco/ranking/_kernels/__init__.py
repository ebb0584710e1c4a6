"""Numba kernels behind :mod:`feco.ranking.metrics`; private, the conventions live in the API."""
