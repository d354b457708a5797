"""The compiled float32 functions (shlo/ops/_wide32.py) give the reference path's bits: the
float64 function rounded once to float32, NaN payloads included.

benchmarks/wide32_exhaustive.py checks every float32 operand; here: special values, the
boundaries of the formulas' ranges, operands next to them, a few million random bit patterns
and normal values, and the fix-up itself (a margin so wide that every element is flagged)."""

from __future__ import annotations

import numpy as np
import pytest

import shlo
from shlo.ops import _half, _wide32
from shlo.ops._lazy import special as sc

F32, F64 = np.float32, np.float64

REFERENCES = {"exp": np.exp, "erfc": sc.erfc, "erf": sc.erf}


def _jit():
    if not _half.available():
        pytest.skip("numba is not installed (or SHLO_NO_JIT is set)")
    from shlo.ops import _wide32_jit

    return _wide32_jit


def _reference(name):
    fn = REFERENCES[name]
    return lambda x: fn(np.asarray(x).astype(F64)).astype(F32)


def _operands(seed: int = 0) -> np.ndarray:
    """Specials (±0, ±inf, NaNs of several payloads and signs, subnormals, the largest
    float32), every boundary of the formulas (exp: -110, -104, -87.3, 88.72, 89; erfc: ±1, ±8,
    ±10.06, ±10.5, ±26.6) with its 64 float32 neighbours on each side, random bit patterns and
    normal values of several scales."""
    special = np.array([0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007FFFFF, 0x00800000,
                        0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
                        0x7F800001, 0xFFA5A5A5, 0x7FFFFFFF, 0x3F800000, 0xBF800000],
                       np.uint32).view(F32)
    edges = np.array([-110, -104, -103.97, -87.34, 88.72, 89, 1, 8, 10.06, 10.5, 26.6, 0.5,
                      2.0 ** -12, 2.0 ** -60], F32)
    edges = np.concatenate([edges, -edges]).view(np.int32)
    near = (edges[:, None] + np.arange(-64, 65, dtype=np.int32)[None, :]).reshape(-1).view(F32)
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32).view(F32)
    normal = np.concatenate([(rng.standard_normal(1 << 19) * s).astype(F32)
                             for s in (0.01, 1, 4, 30, 100)])
    return np.concatenate([special, near, bits, normal])


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_compiled_equals_reference(name):
    _jit()
    x = _operands()
    with np.errstate(all="ignore"):
        got = _wide32.compiled(name, _reference(name))(x)
        want = _reference(name)(x)
    bad = np.flatnonzero(got.view(np.uint32) != want.view(np.uint32))
    assert bad.size == 0, [(float(x[i]), hex(int(x.view(np.uint32)[i])), float(got[i]),
                            float(want[i])) for i in bad[:5]]


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_loop_flags_only_what_it_cannot_round(name):
    """The loop alone: every element it does not flag is already the reference's; it flags
    NaN operands, and few others (fewer than 1 result in 10^6 is that near a rounding boundary)."""
    jit = _jit()
    x = _operands(1)
    out = np.empty(x.size, F32)
    idx = np.empty(x.size, np.intp)
    count = jit.LOOPS[name](x, out, idx)
    flagged = np.zeros(x.size, bool)
    flagged[idx[:count]] = True
    with np.errstate(all="ignore"):
        want = _reference(name)(x)
    assert np.array_equal(out[~flagged].view(np.uint32), want[~flagged].view(np.uint32))
    assert np.isnan(out[flagged]).all()
    nan = np.isnan(x)
    assert flagged[nan].all()
    assert (flagged & ~nan).sum() < x.size * 1e-3


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_fix_up_of_flagged_elements(monkeypatch, name):
    """A loop that flags every element (and writes garbage): the fix-up alone gives the
    reference's bits, each element from the reference function on its own operand."""
    _jit()

    def flag_all(x, out, idx):
        out[:] = 12345.0
        idx[: x.size] = np.arange(x.size)[::-1]
        return x.size

    monkeypatch.setattr(_wide32._LOOPS, "value", {name: flag_all})
    x = _operands(2)[: 1 << 15]
    with np.errstate(all="ignore"):
        got = _wide32.compiled(name, _reference(name))(x)
        want = _reference(name)(x)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("op,name", [("stablehlo.exponential", "exp"), ("chlo.erfc", "erfc"),
                                     ("chlo.erf", "erf")])
def test_programs_give_the_same_bits_with_and_without_jit(op, name):
    """Through the interpreter: the kernel with the compiled loop and the numpy-only kernel."""
    _jit()
    x = _operands(3)[: 1 << 16].reshape(256, 256)
    t = "tensor<256x256xf32>"
    text = f"""func.func @main(%x: {t}) -> {t} {{
  %0 = "{op}"(%x) : ({t}) -> {t}
  return %0 : {t}
}}"""
    (got,) = shlo.run(shlo.parse(text), x)
    with _half.numpy_only():
        (want,) = shlo.run(shlo.parse(text), x)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    # spot values: e^1 and erfc(1) rounded to float32
    (one,) = shlo.run(shlo.parse(text), np.ones((256, 256), F32))
    assert one[0, 0] == {"exp": F32(2.7182817), "erfc": F32(0.15729921), "erf": F32(0.8427008)}[name]


def _tanh_jit():
    jit = _jit()
    from shlo.ops import _tanh32_jit

    if not _tanh32_jit.AGREES:
        pytest.skip("numpy's float32 tanh is not the FMA formula on this CPU")
    return jit, _tanh32_jit


def test_compiled_tanh_is_numpys():
    """The compiled copy of numpy's float32 tanh (shlo/ops/_tanh32_jit.py) gives numpy's own
    bits (NaNs included) on the operands above, whole and in a ragged slice (a tail shorter
    than a vector), and through a program, against the numpy-only run."""
    jit, _ = _tanh_jit()
    assert jit.LOOPS["tanh"] is not None
    x = _operands(4)
    for part in (x, x[3:1006]):
        with np.errstate(all="ignore"):
            got = _wide32.compiled("tanh", np.tanh)(part)
            want = np.tanh(part)
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    t = "tensor<256x256xf32>"
    text = f"""func.func @main(%x: {t}) -> {t} {{
  %0 = stablehlo.tanh %x : {t}
  return %0 : {t}
}}"""
    x = _operands(5)[: 1 << 16].reshape(256, 256)
    with np.errstate(all="ignore"):
        (got,) = shlo.run(shlo.parse(text), x)
        with _half.numpy_only():
            (want,) = shlo.run(shlo.parse(text), x)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    assert got[0, 0] == np.tanh(x[0, 0])


def test_tanh_copy_is_checked_against_numpy(monkeypatch):
    """The import-time check (AGREES) fails where numpy's tanh is another function."""
    _, tj = _tanh_jit()
    assert tj._agrees()
    monkeypatch.setattr(np, "tanh", lambda x: np.sin(x))
    assert not tj._agrees()
