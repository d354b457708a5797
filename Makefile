# Quick start: `make demo` (set up, run the bundled model) and `make test` (set up, run tests).
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python

.PHONY: demo test setup setup-test bench clean

# Start-up (docs/performance.md, "Start-up"): an editable install compiles nothing, and with
# PYTHONDONTWRITEBYTECODE set Python never writes the .pyc files, so every start would compile
# every module shlo imports (seconds): compileall writes them once (Python recompiles, in memory,
# only files changed since; `make test` refreshes them). The `compat` editable mode puts the
# checkout on sys.path with a .pth line instead of setuptools' import finder, whose import at
# every start (pathlib, urllib, ...) cost 50M instructions, a third of `shlo --help`.
EDITABLE = --config-settings editable_mode=compat

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -e . $(EDITABLE)
	$(PY) -m compileall -q shlo
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(PY) -m pip install -q -e '.[test]' $(EDITABLE)
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
