"""Differential tier: small PyTorch models exported by torch-mlir run on shlo and match PyTorch
eager (skipped without torch and torch_mlir; see make_torch_programs.py)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")
pytest.importorskip("torch_mlir")

from make_torch_programs import _models, compare, export

_MODELS = {m[0]: m for m in _models()}


@pytest.mark.parametrize("name", sorted(_MODELS))
def test_torch_mlir_export_matches_pytorch(name: str) -> None:
    case = export(*_MODELS[name])
    if "dynbatch" in name:
        assert "shape.shape_of" in case.text or "tensor.dim" in case.text
    else:
        assert "dense_resource<" in case.text and "dialect_resources" in case.text
    r = compare(case)
    assert r["max_abs_err"] <= r["allowed"], r
