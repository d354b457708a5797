"""Verifier agreement with MLIR (issue 16, item 5): each program below once got a different
verdict from shlo than from MLIR's verifier (found by tests/fuzz's campaign, or named in the
issue). shlo must give MLIR's verdict, with MLIR's wording; when jaxlib is installed the
verdicts themselves are checked against MLIR too, so the table cannot drift from upstream."""

from __future__ import annotations

import pytest

import shlo
from shlo.verifier import collect
from verifier_agreement_cases import CASES


def _shlo_message(text: str) -> str | None:
    try:
        diags = collect(shlo.parse(text))
    except shlo.ParseError as e:
        return str(e)
    return "\n".join(d.format() for d in diags) or None


@pytest.mark.parametrize("name,text,expected", CASES, ids=[c[0] for c in CASES])
def test_shlo_gives_mlirs_verdict(name, text, expected):
    got = _shlo_message(text)
    if expected is None:
        assert got is None, got
    else:
        assert got is not None and expected in got, got


@pytest.mark.parametrize("name,text,expected", CASES, ids=[c[0] for c in CASES])
def test_the_table_is_mlirs_verdict(name, text, expected):
    pytest.importorskip("jax")
    from shlo.testing.oracles import available, mlir_context

    if not available():
        pytest.skip("jaxlib's stablehlo bindings are not available")
    from jaxlib.mlir import ir

    with mlir_context(allow_unregistered=True):
        if expected is None:
            ir.Module.parse(text)
        else:
            with pytest.raises(ir.MLIRError) as e:
                ir.Module.parse(text)
            assert expected in str(e.value)
