"""The HTML report: coverage trends, alerts, segments, ranker results and the sampling study.

Built from the warehouse alone (``write_report``), as a static ``index.html`` with its PNG
images beside it, so it opens from disk with no server.
"""

from feco.report.build import write_report

__all__ = ["write_report"]
