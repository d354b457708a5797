"""chlo-legalize-to-stablehlo: every decomposition agrees with shlo's native chlo kernels
(measured in ULPs on dense sweeps, see chlo_accuracy.py for the table), leaves no chlo op, and
reports what it cannot lower as upstream does."""

from __future__ import annotations

import numpy as np
import pytest

import shlo
from shlo.passes import PassError, run_passes

import chlo_accuracy as ca


def _lower(text: str) -> tuple[object, object]:
    native = shlo.parse(text)
    lowered = run_passes(native, "chlo-legalize-to-stablehlo")
    printed = shlo.format(lowered)
    assert "chlo." not in printed, printed
    shlo.verify(lowered)
    return native, lowered


def _same(text: str, *args: np.ndarray, ulps: float = 0) -> list[np.ndarray]:
    """Run ``text`` natively and lowered: the results agree (within ``ulps`` scaled ULPs)."""
    native, lowered = _lower(text)
    with np.errstate(all="ignore"):
        a = [np.asarray(x) for x in shlo.run(native, *args)]
        b = [np.asarray(x) for x in shlo.run(lowered, *args)]
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and x.shape == y.shape
        assert (ca.scaled_distance(x, y) <= ulps).all() if x.dtype.kind in "fc" else \
            np.array_equal(x, y), (x, y)
    return b


@pytest.mark.parametrize("op,et,make", ca.cases(), ids=[f"{o}-{e}" for o, e, _ in ca.cases()])
def test_decomposition_within_bounds(op, et, make):
    inputs = make()
    _, scaled, reg = ca.measure(op, et, inputs)
    bound = ca.BOUNDS.get((op, et), 2)
    assert float(scaled[reg].max()) <= bound, (op, et, float(scaled[reg].max()))
    if (op, et) not in ca.EDGE_DIFFERENCES:
        assert (scaled[~reg] == 0).all(), (op, et, [x[~reg][scaled[~reg] > 0][:4] for x in inputs])


def test_distance_helpers():
    f = np.float32
    assert ca.ulp_distance(np.array([1.0], f), np.array([np.nextafter(f(1), f(2))], f))[0] == 1
    assert ca.ulp_distance(np.array([-0.0], f), np.array([0.0], f))[0] == 0
    assert ca.ulp_distance(np.array([np.nan], f), np.array([np.nan], f))[0] == 0
    assert ca.ulp_distance(np.array([np.inf], f), np.array([3e38], f))[0] == np.inf
    tiny = np.array([1e-30], f)
    assert ca.scaled_distance(tiny, np.array([2e-30], f))[0] < 1  # absolute error below ulp(1)


@pytest.mark.parametrize("op", ca.PREDICATES)
@pytest.mark.parametrize("et,dt", list(ca.FLOATS.items()))
def test_predicates_exact(op, et, dt):
    x = ca.float_sweep(dt, 200)
    a, b = ca.native_and_lowered(op, et, x, result_et="i1")
    assert np.array_equal(a, b)


@pytest.mark.parametrize("et", ["i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64"])
def test_mulhi_exact(et):
    dt = np.dtype(("u" if et.startswith("u") else "") + "int" + et.lstrip("ui"))
    info = np.iinfo(dt)
    rng = np.random.default_rng(1)
    edges = np.array([info.min, info.max, 0, 1, info.max // 2, info.min + 1], dtype=dt)
    x = np.concatenate([edges, rng.integers(info.min, info.max, 500, dtype=dt, endpoint=True)])
    y = np.concatenate([edges[::-1], rng.integers(info.min, info.max, 500, dtype=dt,
                                                  endpoint=True)])
    a, b = ca.native_and_lowered("mulhi", et, x, y)
    assert np.array_equal(a, b)
    wide = (x.astype(object) * y.astype(object))
    assert [int(v) for v in a] == [int(v) >> dt.itemsize * 8 for v in wide]


def test_top_k_ragged_dot_constant_like_broadcasts():
    x = np.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3]], np.float32)
    v, i = _same("func.func @main(%a: tensor<2x5xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>) {\n"
                 "  %v, %i = chlo.top_k(%a, k = 3) : tensor<2x5xf32> -> (tensor<2x3xf32>, "
                 "tensor<2x3xi32>)\n  return %v, %i : tensor<2x3xf32>, tensor<2x3xi32>\n}", x)
    assert v.tolist() == [[5, 4, 3], [9, 6, 5]] and i.tolist() == [[4, 2, 0], [0, 2, 3]]
    v, i = _same("func.func @main(%a: tensor<?x?xf32>) -> (tensor<?x2xf32>, tensor<?x2xi32>) {\n"
                 "  %v, %i = chlo.top_k(%a, k = 2) : tensor<?x?xf32> -> (tensor<?x2xf32>, "
                 "tensor<?x2xi32>)\n  return %v, %i : tensor<?x2xf32>, tensor<?x2xi32>\n}", x)
    assert v.tolist() == [[5, 4], [9, 6]]
    rng = np.random.default_rng(2)
    lhs, rhs = rng.normal(size=(2, 11, 5)).astype(np.float32), \
        rng.normal(size=(3, 2, 5, 7)).astype(np.float32)
    gs = np.array([4, 5, 2], np.int64)
    dn = ("#chlo.ragged_dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], "
          "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [2], "
          "lhs_ragged_dimensions = [1], rhs_group_dimensions = [0]>")
    (out,) = _same(
        "func.func @main(%l: tensor<2x11x5xf32>, %r: tensor<3x2x5x7xf32>, %g: tensor<3xi64>) "
        "-> tensor<2x11x7xf32> {\n  %0 = \"chlo.ragged_dot\"(%l, %r, %g) {ragged_dot_dimension_"
        f"numbers = {dn}}} : (tensor<2x11x5xf32>, tensor<3x2x5x7xf32>, tensor<3xi64>) -> "
        "tensor<2x11x7xf32>\n  return %0 : tensor<2x11x7xf32>\n}", lhs, rhs, gs,
        ulps=8)  # (native: one sum in float64; lowered: f32 dot_generals added)
    expected = np.concatenate([lhs[:, 0:4] @ rhs[0], lhs[:, 4:9] @ rhs[1], lhs[:, 9:] @ rhs[2]],
                              axis=1)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    (c,) = _same("func.func @main(%a: tensor<?x3xi64>) -> tensor<?x3xf32> {\n"
                 "  %0 = \"chlo.constant_like\"(%a) {value = 3.2 : f32} : (tensor<?x3xi64>) -> "
                 "tensor<?x3xf32>\n  return %0 : tensor<?x3xf32>\n}", np.zeros((2, 3), np.int64))
    assert c.tolist() == [[np.float32(3.2)] * 3] * 2
    (s,) = _same("func.func @main(%a: tensor<?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {\n"
                 "  %0 = chlo.broadcast_add %a, %b : (tensor<?xf32>, tensor<?x?xf32>) -> "
                 "tensor<?x?xf32>\n  return %0 : tensor<?x?xf32>\n}",
                 np.arange(3, dtype=np.float32), np.ones((2, 3), np.float32))
    assert s.tolist() == [[1, 2, 3], [1, 2, 3]]
    (s,) = _same("func.func @main(%p: tensor<1xi1>, %a: tensor<2x3xi32>, %b: tensor<3xi32>) -> "
                 "tensor<2x3xi32> {\n  %0 = \"chlo.broadcast_select\"(%p, %a, %b) : (tensor<1xi1>,"
                 " tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>\n"
                 "  return %0 : tensor<2x3xi32>\n}", np.array([False]),
                 np.ones((2, 3), np.int32), np.arange(3, dtype=np.int32))
    assert s.tolist() == [[0, 1, 2], [0, 1, 2]]


def test_scan_becomes_a_while_loop():
    text = ("func.func @main(%a: tensor<4xi32>, %c: tensor<i32>) -> "
            "(tensor<4xi32>, tensor<i32>) {\n"
            "  %0:2 = chlo.scan(%a) inits(%c) dimension=0 {\n"
            "  ^bb0(%x: tensor<i32>, %acc: tensor<i32>):\n"
            "    %1 = stablehlo.add %x, %acc : tensor<i32>\n"
            "    stablehlo.return %1, %1 : tensor<i32>, tensor<i32>\n"
            "  } : (tensor<4xi32>, tensor<i32>) -> (tensor<4xi32>, tensor<i32>)\n"
            "  return %0#0, %0#1 : tensor<4xi32>, tensor<i32>\n}")
    out, total = _same(text, np.array([1, 2, 3, 4], np.int32), np.array(10, np.int32))
    assert out.tolist() == [11, 13, 16, 20] and int(total) == 20
    assert "stablehlo.while" in shlo.format(_lower(text)[1])


def test_unsupported_broadcast_dimensions_fail_as_upstream():
    text = ("func.func @main(%a: tensor<1x4xf32>, %b: tensor<4xf32>) -> tensor<1x4xf32> {\n"
            "  %0 = chlo.broadcast_add %a, %b {broadcast_dimensions = array<i64: 1, 2>} : "
            "(tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>\n"
            "  return %0 : tensor<1x4xf32>\n}")
    with pytest.raises(PassError) as e:
        run_passes(shlo.parse(text), "chlo-legalize-to-stablehlo")
    msgs = [(d.severity, d.message) for d in e.value.diagnostics]
    warning = ("unsupported non prefix-padded dynamic rank broadcast_dimensions = "
               "array<i64: 1, 2>")
    error = "failed to legalize operation 'chlo.broadcast_add' that was explicitly marked illegal"
    assert ("warning", warning) in msgs and ("error", error) in msgs
    assert all(d.line == 2 for d in e.value.diagnostics)
