# The two commands: `make demo` (the pipeline end to end on generated logs) and `make test`.
# Both create .venv with python3 -m venv and install the project into it when needed.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed

.PHONY: install demo test test-cluster test-all bench clean report-check browser data

$(INSTALLED): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(INSTALLED)

install: $(INSTALLED)

demo: $(INSTALLED)
	$(BIN)/python scripts/demo.py

# About 11 minutes on 2 cores. Chromium first, for the report's browser test; lint first, as
# it fails in a second. The test files are spread over the cores (20 minutes in one process),
# a file's tests in one worker (--dist loadfile), so a module's fixture is built once.
test: $(INSTALLED) browser
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -m "not slow" -q -n auto --dist loadfile

# The Spark standalone cluster on 127.0.0.1 (slow, about a minute; Java 17+): CI runs it too.
test-cluster: $(INSTALLED)
	$(BIN)/python -m pytest -m slow -q tests/test_spark_cluster.py

test-all: $(INSTALLED) browser
	$(BIN)/python -m pytest -q

# The public datasets some tests and the experiments read (LETOR 4.0, Webis ClueWeb09
# features, TREC News, MovieLens), fetched from their official sources into ../shared/data and
# checked by sha256 (docs/data.md). Standard library only: no venv needed.
data:
	$(PYTHON) scripts/fetch_data.py

report-check: $(INSTALLED) browser
	$(BIN)/python scripts/check_report.py var/demo/report

# Debian's chromium, for the report's browser test (make test) and report-check; installed
# when missing and we are root, else the browser test skips and the test summary says why.
browser:
	@command -v chromium >/dev/null || [ "$$(id -u)" != 0 ] || \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } || \
		echo "chromium could not be installed: the report's browser test will skip"

bench: $(INSTALLED)
	$(BIN)/python bench/generate_speed.py
	$(BIN)/python bench/sampling_speed.py
	$(BIN)/python bench/coverage_speed.py
	$(BIN)/python bench/ranking_speed.py
	$(BIN)/python bench/ranker_speed.py

clean:
	rm -rf var/demo bench/out
