"""Interoperability with jaxlib's StableHLO (the oracle, /work/shared/ORACLES.md): jaxlib's
deserialize_portable_artifact accepts shlo's artifacts, shlo reads jaxlib's
(serialize_portable_artifact_str), and plain MLIR bytecode goes both ways."""

import io

import pytest

import shlo
from shlo.bytecode import deserialize, serialize, write_bytecode
from shlo.syntax.equivalence import first_difference
from shlo.opt import elide_defaults

from conftest import PROGRAMS, TESTDATA

jaxlib = pytest.importorskip("jaxlib")
from jaxlib.mlir import ir  # noqa: E402
from jaxlib.mlir.dialects import stablehlo as jhlo  # noqa: E402


@pytest.fixture(scope="module")
def ctx():
    from jaxlib.mlir._mlir_libs import _jax_mlir_ext

    c = ir.Context()
    reg = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(reg)
    c.append_dialect_registry(reg)
    c.load_all_available_dialects()
    jhlo.register_dialect(c)
    # jaxlib exposes no quant dialect module; reading an artifact with a quantized type loads
    # the dialect (StableHLO depends on it), so that text with !quant types parses
    art = jhlo.serialize_portable_artifact_str(
        "func.func @f(%a: tensor<2x!quant.uniform<i8:f32, 1.0>>) -> "
        "tensor<2x!quant.uniform<i8:f32, 1.0>> { return %a : tensor<2x!quant.uniform<i8:f32, 1.0>> }",
        "1.0.0")
    with c:
        jhlo.deserialize_portable_artifact(c, art)
    return c


def _texts():
    out = {f"program:{k}": v for k, v in PROGRAMS.items()}
    if TESTDATA.is_dir():
        files = sorted(TESTDATA.glob("*.mlir"))[::60] + sorted(TESTDATA.glob("quantized/*.mlir"))[::20]
        for f in files:
            text = f.read_text()
            if "chlo." not in text:
                out[f"testdata:{f.relative_to(TESTDATA)}"] = text
    return out


TEXTS = _texts()
JAX_CURRENT = jhlo.get_current_version()


def _norm(m):
    return elide_defaults(m)


@pytest.mark.parametrize("target", [JAX_CURRENT, "1.0.0"])
@pytest.mark.parametrize("key", sorted(TEXTS))
def test_jaxlib_reads_shlo_artifacts(ctx, key, target):
    if key == "program:elementwise" and target == "1.0.0":
        pytest.skip("result_accuracy needs 1.9.0")
    m = _norm(shlo.parse(TEXTS[key]))
    data = serialize(m, target)
    with ctx:
        jm = jhlo.deserialize_portable_artifact(ctx, data)
        text = str(jm)
    assert first_difference(m, _norm(shlo.parse(text))) is None


@pytest.mark.parametrize("target", [JAX_CURRENT, "1.0.0"])
@pytest.mark.parametrize("key", sorted(TEXTS))
def test_shlo_reads_jaxlib_artifacts(key, target):
    if key == "program:elementwise" and target == "1.0.0":
        pytest.skip("result_accuracy needs 1.9.0")
    m = _norm(shlo.parse(TEXTS[key]))
    art = jhlo.serialize_portable_artifact_str(TEXTS[key], target)
    assert first_difference(m, _norm(deserialize(art))) is None


@pytest.mark.parametrize("key", sorted(TEXTS))
def test_plain_bytecode_both_ways(ctx, key):
    m = _norm(shlo.parse(TEXTS[key]))
    with ctx:
        jm = ir.Module.parse(TEXTS[key])
        buf = io.BytesIO()
        jm.operation.write_bytecode(buf)
        theirs = buf.getvalue()
        back = ir.Module.parse(write_bytecode(m))
        text = str(back)
    assert first_difference(m, _norm(shlo.parse(theirs))) is None
    assert first_difference(m, _norm(shlo.parse(text))) is None


def test_versions_agree():
    from shlo.bytecode.vhlo.version import MINIMUM, parse_version

    assert parse_version(jhlo.get_minimum_version()) == MINIMUM
