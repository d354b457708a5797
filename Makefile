# Quick start: `make demo` (set up, run the bundled model) and `make test` (set up, run tests).
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python

.PHONY: demo test setup setup-test bench clean

# An editable install compiles nothing, and with PYTHONDONTWRITEBYTECODE set Python never writes
# the .pyc files: every start would compile every module shlo imports (seconds; docs/performance.md,
# "Start-up"). compileall writes them once; Python recompiles (in memory) only the files changed
# since, and `make test` refreshes them.
$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -e .
	$(PY) -m compileall -q shlo
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(PY) -m pip install -q -e '.[test]'
	touch $@

setup: $(VENV)/.installed
setup-test: $(VENV)/.installed-test

demo: setup
	$(VENV)/bin/shlo run examples/mlp.mlir examples/mlp_input.npy

test: setup-test
	$(PY) -m compileall -q shlo
	OPENBLAS_NUM_THREADS=1 $(PY) -m pytest -n 2 tests

bench: setup
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache
