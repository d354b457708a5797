# Quick start: `make demo` (set up, run the bundled model) and `make test` (set up, run tests).
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python

.PHONY: demo test setup setup-test bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(PY) -m pip install -q -e '.[test]'
	touch $@

setup: $(VENV)/.installed
setup-test: $(VENV)/.installed-test

demo: setup
	$(VENV)/bin/shlo run examples/mlp.mlir examples/mlp_input.npy

test: setup-test
	OPENBLAS_NUM_THREADS=1 $(PY) -m pytest -n 2 tests

bench: setup
	$(PY) benchmarks/run_all.py

clean:
	rm -rf $(VENV) .pytest_cache
