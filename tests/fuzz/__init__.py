"""The hardening campaign of issue 16: a seeded, time-bounded fuzzer of every input path.

Families (each a module here): parser mutations (``parser_mutations``), verifier mutants checked
against the MLIR verifier when jaxlib is installed (``verifier_mutants``), hostile interpreter
inputs (``interpreter_inputs``), CLI command lines run in process (``cli_cases``). The contract
(``contract``): no Python exception other than shlo's own escapes (``shlo.InternalError`` and an
ExecutionError made from a Python exception count as defects), no trial outlives its time
bound, every printed program parses back to the same text.

Run briefly by tests/fuzz/test_fuzz_campaign.py (fixed seed, a few seconds) and at length by::

    PYTHONPATH=$PWD python -m tests.fuzz.campaign --seconds 600 --seed 1
"""
