"""The Spark engine asked for where it cannot start: one clear line, before any work."""

import sys

import pytest

from feco import spark_engine
from feco.errors import UsageError
from logbuilder import engine_sections, make_config


def test_without_pyspark_the_engine_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspark.sql", None)  # as if not installed
    with pytest.raises(UsageError, match=r"pip install 'feco\[spark\]'"):
        spark_engine.session(make_config(tmp_path, **engine_sections("spark")))


def test_without_java_the_engine_says_so_before_starting_a_driver(tmp_path, monkeypatch):
    pytest.importorskip("pyspark", reason="pyspark (the spark extra) is not installed")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.delenv("PYSPARK_GATEWAY_PORT", raising=False)
    monkeypatch.setattr(spark_engine.shutil, "which", lambda name: None)
    with pytest.raises(UsageError, match="needs Java 17"):
        spark_engine.session(make_config(tmp_path, **engine_sections("spark")))
