"""The numba kernels under one name, as :func:`feco.evaluation._kernels.load` hands them out."""

from feco.evaluation._kernels.average_precision import average_precision
from feco.evaluation._kernels.counting import relevant_within
from feco.evaluation._kernels.dcg import ideal_dcg, run_dcg
from feco.evaluation._kernels.ranks import first_duplicate, rank_judged, top_k_rows
from feco.evaluation._kernels.reciprocal_rank import reciprocal_rank

__all__ = ["average_precision", "first_duplicate", "ideal_dcg", "rank_judged", "reciprocal_rank",
           "relevant_within", "run_dcg", "top_k_rows"]
