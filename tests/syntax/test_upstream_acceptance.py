"""The generic form shlo prints is accepted by the upstream MLIR parser (jaxlib).

For each corpus program that upstream itself accepts (in its pretty form if its dialects are
registered, else in shlo's generic form with unregistered dialects allowed, which the `check.*`
ops need), shlo's generic print must parse and verify upstream. testdata is sampled (every
tenth file) to keep the test fast. Skipped without jax or ../shared/conformance.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import shlo

CONFORMANCE = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance"
ir = pytest.importorskip("jaxlib.mlir.ir")
pytestmark = pytest.mark.skipif(not CONFORMANCE.is_dir(), reason="no ../shared/conformance")

_SPLIT = re.compile(r"^// -----.*$", re.M)
_CODE = re.compile(r"^\s*[^/\s]", re.M)


def upstream_context():
    from jaxlib.mlir._mlir_libs import _jax_mlir_ext
    from jaxlib.mlir.dialects import chlo, stablehlo

    ctx = ir.Context()
    reg = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(reg)
    ctx.append_dialect_registry(reg)
    ctx.load_all_available_dialects()
    stablehlo.register_dialect(ctx)
    chlo.register_dialect(ctx)
    ctx.allow_unregistered_dialects = True
    # loading a portable artifact loads the quant dialect (no other registration hook exists)
    art = stablehlo.serialize_portable_artifact_str("func.func @f() { return }",
                                                    stablehlo.get_current_version())
    with ctx:
        stablehlo.deserialize_portable_artifact(ctx, art)
    return ctx


@pytest.fixture(scope="module")
def ctx():
    return upstream_context()


def programs(folder: str, every: int = 1) -> list[tuple[str, str]]:
    out = []
    for f in sorted((CONFORMANCE / folder).glob("*.mlir"))[::every]:
        text = f.read_text()
        if folder.startswith("testdata"):
            out.append((f.name, text))
            continue
        for i, chunk in enumerate(_SPLIT.split(text)):
            if folder.startswith("verify") and "expected-error" in chunk:
                continue
            if _CODE.search(chunk):
                out.append((f"{f.name}#{i}", chunk))
    return out


def accepts(ctx, text: str) -> bool:
    try:
        with ctx:
            ir.Module.parse(text)
        return True
    except Exception:  # noqa: BLE001 - MLIRError and friends
        return False


@pytest.mark.parametrize("folder, every", [("interpret", 1), ("interpret/chlo", 1),
                                           ("verify", 1), ("testdata", 10),
                                           ("testdata/quantized", 2), ("testdata/dynamic", 4)])
def test_generic_form_is_accepted_upstream(ctx, folder, every):
    total = accepted = 0
    rejected = []
    for name, text in programs(folder, every):
        generic = shlo.format(shlo.parse(text, name), generic=True)
        ok = accepts(ctx, generic)
        if not ok and not accepts(ctx, text):
            continue  # upstream rejects the program itself (an op newer than jaxlib's StableHLO)
        total += 1
        if ok:
            accepted += 1
        else:
            rejected.append(name)
    print(f"{folder}: {accepted}/{total} generic prints accepted upstream")
    assert total > 0
    assert not rejected, f"{len(rejected)} rejected: {rejected[:10]}"
