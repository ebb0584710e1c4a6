"""Packaging beyond what pyproject.toml can say: the SQL at the top of the repository (sql/)
ships inside the package as feco/sql, so an install outside this checkout (into an Airflow
environment, say) has it too, as do the report page's script and style. Everything else is in
pyproject.toml."""

from pathlib import Path

from setuptools import find_packages, setup

# every folder under sql/, nested ones too (a query's parts: sql/queries/alert_inputs/)
SQL = ["feco.sql"] + [f"feco.sql.{'.'.join(folder.relative_to('sql').parts)}"
                      for folder in sorted(Path("sql").rglob("*")) if folder.is_dir()]

setup(
    packages=find_packages(include=["feco", "feco.*"]) + SQL,
    package_dir={"feco.sql": "sql"},
    package_data={"feco.report": ["*.js", "*.css"]} | {package: ["*.sql"] for package in SQL},
)
