"""Tests of the shape ops (shlo/ops/shape.py): spec examples and hand-computed cases.

Ops are built by hand and run by the op-test harness (tests/harness.py), so these tests do not
depend on the parser.
"""

from __future__ import annotations

from typing import Any

import ml_dtypes
import numpy as np
import pytest

from shlo.attributes import ArrayAttr, DenseArrayAttr, DenseElementsAttr, IntegerAttr
from shlo.types import I64, QuantizedType, TensorType, element_type, tensor

from harness import run1, run_text, type_of

def i64s(*v: int) -> DenseArrayAttr:
    return DenseArrayAttr(I64, tuple(v))


ALL_DTYPES = [np.bool_, ml_dtypes.int2, ml_dtypes.int4, np.int8, np.int16, np.int32, np.int64,
              ml_dtypes.uint2, ml_dtypes.uint4, np.uint8, np.uint64, ml_dtypes.bfloat16,
              np.float16, np.float32, np.float64, ml_dtypes.float8_e4m3fn,
              ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3fnuz, np.complex64, np.complex128]


def sample(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """Distinct-ish values representable in every dtype (0..3 cycle for the 2-bit types)."""
    n = int(np.prod(shape))
    if np.dtype(dtype) == np.bool_:
        return (np.arange(n) % 2 == 1).reshape(shape)
    mod = 2 if np.dtype(dtype).itemsize == 1 and "2" in np.dtype(dtype).name else 8
    return (np.arange(n) % mod).astype(np.int64).astype(dtype).reshape(shape)


# --- constant / iota ---------------------------------------------------------------------------


def test_constant_is_read_only_and_exact() -> None:
    t = tensor((2, 3), "f32")
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = run1("stablehlo.constant", [], results=t, value=DenseElementsAttr(t, arr))
    np.testing.assert_array_equal(out, arr)
    assert not out.flags.writeable
    with pytest.raises(ValueError):
        out[0, 0] = 5
    assert arr[0, 0] == 0


def test_constant_quantized_storage() -> None:
    q = QuantizedType(element_type("i8"), element_type("f32"), (0.5,), (0,))
    t = TensorType((2,), q)
    arr = np.array([3, -4], dtype=np.int8)
    out = run1("stablehlo.constant", [], results=t, value=DenseElementsAttr(t, arr))
    np.testing.assert_array_equal(out, arr)


@pytest.mark.parametrize("name", ["i1", "i2", "i4", "ui4", "i32", "i64", "ui64", "bf16",
                                  "f8E4M3FN", "f16", "f32", "f64", "complex<f32>"])
def test_iota_every_type(name: str) -> None:
    t = tensor((4, 5), name)
    out = run1("stablehlo.iota", [], results=t, iota_dimension=IntegerAttr(0))
    expected = np.broadcast_to(np.arange(4)[:, None], (4, 5))
    if name == "i1":
        expected = expected != 0
    elif name in ("i2",):
        expected = np.array([0, 1, -2, -1])[:, None] * np.ones(5, int)  # wraps
    np.testing.assert_array_equal(out.astype(np.complex128).real
                                  if out.dtype.kind == "c" else out.astype(np.float64),
                                  np.asarray(expected, dtype=np.float64))


def test_iota_spec_examples() -> None:
    out = run1("stablehlo.iota", [], results=tensor((4, 5), "i32"), iota_dimension=IntegerAttr(0))
    np.testing.assert_array_equal(out, [[0] * 5, [1] * 5, [2] * 5, [3] * 5])
    out = run1("stablehlo.iota", [], results=tensor((4, 5), "i32"), iota_dimension=IntegerAttr(1))
    np.testing.assert_array_equal(out, [list(range(5))] * 4)


def test_a_large_iota_is_built_when_it_runs_not_kept() -> None:
    """Above KEEP_IOTA_BYTES the prepared kernel keeps no copy (every process of a grid would
    keep one); the values are the same."""
    from shlo.ops.shape import constant

    n = constant.KEEP_IOTA_BYTES // 4 * 2 + 3  # f32: twice the limit
    text = f"""func.func @main() -> tensor<2x{n}xf32> {{
  %i = stablehlo.iota dim = 1 : tensor<2x{n}xf32>
  return %i : tensor<2x{n}xf32>
}}"""
    out, = run_text(text)
    assert out.shape == (2, n) and out[1, -1] == n - 1
    np.testing.assert_array_equal(out[0], np.arange(n, dtype=np.float32))
    np.testing.assert_array_equal(out[1], out[0])


# --- broadcast_in_dim --------------------------------------------------------------------------


def test_broadcast_in_dim_examples() -> None:
    # spec example: operand [[1, 2, 3]] : 1x3, dims = [2, 1] -> 2x3x2
    operand = np.array([[1, 2, 3]], dtype=np.int32)
    out = run1("stablehlo.broadcast_in_dim", [operand], results=tensor((2, 3, 2), "i32"),
               broadcast_dimensions=i64s(2, 1))
    np.testing.assert_array_equal(out, [[[1, 1], [2, 2], [3, 3]],
                                        [[1, 1], [2, 2], [3, 3]]])
    # scalar to matrix
    out = run1("stablehlo.broadcast_in_dim", [np.array(7, np.int8)], results=tensor((2, 2), "i8"),
               broadcast_dimensions=i64s())
    np.testing.assert_array_equal(out, [[7, 7], [7, 7]])
    # transposing broadcast: dims = [1, 0]
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = run1("stablehlo.broadcast_in_dim", [m], results=tensor((3, 2), "f32"),
               broadcast_dimensions=i64s(1, 0))
    np.testing.assert_array_equal(out, m.T)


def test_broadcast_in_dim_dense_spelling_and_dynamic_result() -> None:
    m = np.arange(3, dtype=np.float32)
    dims = DenseElementsAttr(tensor((1,), "i64"), np.array([0], np.int64))
    op_t = TensorType((None,), element_type("f32"))
    out = run1("stablehlo.broadcast_in_dim", [m], [op_t],
               TensorType((None, 2), element_type("f32")), broadcast_dimensions=dims)
    np.testing.assert_array_equal(out, np.stack([m, m], axis=1))


def bits(a: np.ndarray) -> np.ndarray:
    """The raw bytes of ``a`` (compares any dtype exactly, NaN payloads included)."""
    return np.ascontiguousarray(a).view(np.uint8)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_data_movement_every_dtype(dtype: Any) -> None:
    x = sample((2, 3), dtype)
    et = type_of(x).element_type

    def check(name: str, operands: list[np.ndarray], shape: tuple[int, ...],
              expected: np.ndarray, **props: Any) -> None:
        out = run1(name, operands, results=TensorType(shape, et), **props)
        np.testing.assert_array_equal(bits(out), bits(expected))

    check("stablehlo.transpose", [x], (3, 2), x.T, permutation=i64s(1, 0))
    check("stablehlo.reshape", [x], (6,), x.reshape(6))
    check("stablehlo.reverse", [x], (2, 3), x[:, ::-1], dimensions=i64s(1))
    check("stablehlo.slice", [x], (2, 1), x[:, 1:3:2], start_indices=i64s(0, 1),
          limit_indices=i64s(2, 3), strides=i64s(1, 2))
    check("stablehlo.concatenate", [x, x], (2, 6), np.concatenate([x, x], 1),
          dimension=IntegerAttr(1))
    pv = np.zeros((), dtype)
    check("stablehlo.pad", [x, pv], (4, 5), np.pad(x, 1), edge_padding_low=i64s(1, 1),
          edge_padding_high=i64s(1, 1), interior_padding=i64s(0, 0))
    check("stablehlo.broadcast_in_dim", [x], (4, 2, 3), np.broadcast_to(x, (4, 2, 3)),
          broadcast_dimensions=i64s(1, 2))


# --- concatenate -------------------------------------------------------------------------------


def test_concatenate_spec_example() -> None:
    a = np.array([[1, 2], [3, 4], [5, 6]], np.int64)
    b = np.array([[7, 8]], np.int64)
    out = run1("stablehlo.concatenate", [a, b], results=tensor((4, 2), "i64"),
               dimension=IntegerAttr(0))
    np.testing.assert_array_equal(out, [[1, 2], [3, 4], [5, 6], [7, 8]])


# --- pad ---------------------------------------------------------------------------------------


def test_pad_spec_example() -> None:
    operand = np.array([[1, 2, 3], [4, 5, 6]], np.int64)
    # spec: low [0, 1], high [2, 1], interior [1, 2] -> 5x9
    out = run1("stablehlo.pad", [operand, np.array(0, np.int64)], results=tensor((5, 9), "i64"),
               edge_padding_low=i64s(0, 1), edge_padding_high=i64s(2, 1),
               interior_padding=i64s(1, 2))
    np.testing.assert_array_equal(out, [
        [0, 1, 0, 0, 2, 0, 0, 3, 0],
        [0, 0, 0, 0, 0, 0, 0, 0, 0],
        [0, 4, 0, 0, 5, 0, 0, 6, 0],
        [0, 0, 0, 0, 0, 0, 0, 0, 0],
        [0, 0, 0, 0, 0, 0, 0, 0, 0]])


def _pad_model(x: np.ndarray, v: Any, lo: list[int], hi: list[int], it: list[int]) -> np.ndarray:
    """A slow per-element model of pad straight from the spec's formula."""
    shape = [lo[d] + hi[d] + (x.shape[d] - 1) * (it[d] + 1) + 1 if x.shape[d] else lo[d] + hi[d]
             for d in range(x.ndim)]
    out = np.full(shape, v, x.dtype)
    for idx in np.ndindex(*x.shape):
        r = tuple(lo[d] + idx[d] * (it[d] + 1) for d in range(x.ndim))
        if all(0 <= r[d] < shape[d] for d in range(x.ndim)):
            out[r] = x[idx]
    return out


@pytest.mark.parametrize("lo,hi,it", [
    ([-1, 2], [1, -2], [0, 1]),
    ([-3, -1], [-2, 0], [2, 0]),
    ([0, -4], [3, -3], [1, 3]),
    ([2, 0], [0, 2], [0, 0]),
    ([-5, 0], [0, 0], [2, 0]),  # negative low padding cutting into the interior padding
])
def test_pad_negative_and_interior(lo: list[int], hi: list[int], it: list[int]) -> None:
    x = np.arange(12, dtype=np.int32).reshape(3, 4) + 1
    expected = _pad_model(x, -1, lo, hi, it)
    out = run1("stablehlo.pad", [x, np.array(-1, np.int32)], results=tensor(expected.shape, "i32"),
               edge_padding_low=i64s(*lo), edge_padding_high=i64s(*hi), interior_padding=i64s(*it))
    np.testing.assert_array_equal(out, expected)


def test_pad_empty_operand() -> None:
    x = np.zeros((0, 2), np.float32)
    out = run1("stablehlo.pad", [x, np.array(1.5, np.float32)], results=tensor((3, 2), "f32"),
               edge_padding_low=i64s(1, 0), edge_padding_high=i64s(2, 0),
               interior_padding=i64s(4, 0))
    np.testing.assert_array_equal(out, np.full((3, 2), 1.5, np.float32))


# --- reshape / reverse / slice / transpose -----------------------------------------------------


def test_reshape_spec_example() -> None:
    x = np.array([[[1, 2, 3], [4, 5, 6]]], np.int32)
    out = run1("stablehlo.reshape", [x], results=tensor((2, 3), "i32"))
    np.testing.assert_array_equal(out, [[1, 2, 3], [4, 5, 6]])
    out = run1("stablehlo.reshape", [x], results=tensor((3, 2), "i32"))
    np.testing.assert_array_equal(out, [[1, 2], [3, 4], [5, 6]])


def test_reverse_spec_example() -> None:
    x = np.array([[1, 2], [3, 4], [5, 6]], np.int32)
    out = run1("stablehlo.reverse", [x], results=tensor((3, 2), "i32"), dimensions=i64s(1, 0))
    np.testing.assert_array_equal(out, [[6, 5], [4, 3], [2, 1]])


def test_slice_spec_example() -> None:
    x = np.array([[0, 0, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]], np.int64)
    out = run1("stablehlo.slice", [x], results=tensor((2, 2), "i64"), start_indices=i64s(1, 2),
               limit_indices=i64s(3, 4), strides=i64s(1, 1))
    np.testing.assert_array_equal(out, [[1, 1], [1, 1]])
    y = np.arange(10, dtype=np.int32)
    out = run1("stablehlo.slice", [y], results=tensor((3,), "i32"), start_indices=i64s(1),
               limit_indices=i64s(8), strides=i64s(3))
    np.testing.assert_array_equal(out, [1, 4, 7])


def test_slice_array_attr_spelling() -> None:
    y = np.arange(10, dtype=np.int32)
    out = run1("stablehlo.slice", [y], results=tensor((2,), "i32"),
               start_indices=ArrayAttr((IntegerAttr(2),)), limit_indices=ArrayAttr(
                   (IntegerAttr(6),)), strides=ArrayAttr((IntegerAttr(2),)))
    np.testing.assert_array_equal(out, [2, 4])


def test_transpose_spec_example() -> None:
    x = np.array([[[1, 2], [3, 4], [5, 6]], [[7, 8], [9, 10], [11, 12]]], np.int32)
    out = run1("stablehlo.transpose", [x], results=tensor((3, 2, 2), "i32"),
               permutation=i64s(1, 0, 2))
    np.testing.assert_array_equal(out, [[[1, 2], [7, 8]], [[3, 4], [9, 10]],
                                        [[5, 6], [11, 12]]])


def test_get_dimension_size() -> None:
    x = np.zeros((2, 3), np.int64)
    out = run1("stablehlo.get_dimension_size", [x], results=tensor((), "i32"),
               dimension=IntegerAttr(1))
    assert out == 3 and out.dtype == np.int32


def test_results_never_alias_writable_constants() -> None:
    """Views of read-only inputs stay read-only: no kernel result lets callers write a constant."""
    t = tensor((2, 2), "f32")
    c = run1("stablehlo.constant", [], results=t,
             value=DenseElementsAttr(t, np.eye(2, dtype=np.float32)))
    out = run1("stablehlo.transpose", [c], results=t, permutation=i64s(1, 0))
    assert not out.flags.writeable


def test_pad_random_against_spec_model_and_xla() -> None:
    """Random edge (negative too) and interior padding: the per-element model always, XLA too
    when jax is installed."""
    rng = np.random.default_rng(5)
    cases = []
    for _ in range(30):
        shape = tuple(int(v) for v in rng.integers(0, 4, int(rng.integers(1, 4))))
        it = [int(v) for v in rng.integers(0, 3, len(shape))]
        lo = [int(v) for v in rng.integers(-3, 3, len(shape))]
        hi = [int(v) for v in rng.integers(-3, 3, len(shape))]
        core = [n + (n - 1) * i if n else 0 for n, i in zip(shape, it)]
        if any(c + a + b < 0 for c, a, b in zip(core, lo, hi)):
            continue
        x = rng.integers(1, 100, shape).astype(np.int32)
        expected = _pad_model(x, -1, lo, hi, it)
        out = run1("stablehlo.pad", [x, np.array(-1, np.int32)],
                   results=tensor(expected.shape, "i32"),
                   edge_padding_low=i64s(*lo), edge_padding_high=i64s(*hi),
                   interior_padding=i64s(*it))
        np.testing.assert_array_equal(out, expected)
        cases.append((x, lo, hi, it, expected))
    try:
        import jax
        from jax._src import xla_bridge
        from jax._src.lib import xla_client
    except ImportError:
        return
    backend = xla_bridge.get_backend("cpu")
    dev = backend.devices()[0]

    def ty(s: tuple[int, ...]) -> str:
        return "tensor<" + "".join(f"{d}x" for d in s) + "i32>"

    def arr(v: list[int]) -> str:
        return "array<i64: " + ", ".join(map(str, v)) + ">"

    for x, lo, hi, it, expected in cases[:15]:
        text = f"""func.func @main(%a: {ty(x.shape)}, %v: tensor<i32>) -> {ty(expected.shape)} {{
  %r = "stablehlo.pad"(%a, %v) {{edge_padding_low = {arr(lo)}, edge_padding_high = {arr(hi)},
    interior_padding = {arr(it)}}} : ({ty(x.shape)}, tensor<i32>) -> {ty(expected.shape)}
  func.return %r : {ty(expected.shape)}
}}"""
        exe = backend.compile_and_load(text, xla_client.DeviceList((dev,)),
                                       xla_client.CompileOptions())
        (res,) = exe.execute([jax.device_put(x, dev), jax.device_put(np.array(-1, np.int32), dev)])
        np.testing.assert_array_equal(np.asarray(res), expected, err_msg=text)


# --- spec examples as MLIR programs (parser + verifier + evaluator) ---------------------------


def mlir(body: str, result_types: str) -> list[np.ndarray]:
    """Run ``body`` (ops ending in values named in the return) as `@main` with no arguments."""
    text = f"func.func @main() -> ({result_types}) {{\n{body}\n}}"
    return run_text(text, verify=True)


def test_program_broadcast_in_dim() -> None:
    (out,) = mlir("""
  %operand = stablehlo.constant dense<[[1, 2, 3]]> : tensor<1x3xi32>
  %result = "stablehlo.broadcast_in_dim"(%operand) {
    broadcast_dimensions = array<i64: 2, 1>
  } : (tensor<1x3xi32>) -> tensor<2x3x2xi32>
  func.return %result : tensor<2x3x2xi32>""", "tensor<2x3x2xi32>")
    np.testing.assert_array_equal(out, [[[1, 1], [2, 2], [3, 3]], [[1, 1], [2, 2], [3, 3]]])


def test_program_concatenate_pretty() -> None:
    (out,) = mlir("""
  %a = stablehlo.constant dense<[[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi64>
  %b = stablehlo.constant dense<[[7, 8]]> : tensor<1x2xi64>
  %r = stablehlo.concatenate %a, %b, dim = 0 : (tensor<3x2xi64>, tensor<1x2xi64>) -> tensor<4x2xi64>
  func.return %r : tensor<4x2xi64>""", "tensor<4x2xi64>")
    np.testing.assert_array_equal(out, [[1, 2], [3, 4], [5, 6], [7, 8]])


def test_program_constant_and_iota() -> None:
    c, i, j = mlir("""
  %c = "stablehlo.constant"() {value = dense<[[0.0, 1.0], [2.0, 3.0]]> : tensor<2x2xf32>}
    : () -> tensor<2x2xf32>
  %i = stablehlo.iota dim = 0 : tensor<4x5xi32>
  %j = "stablehlo.iota"() {iota_dimension = 1 : i64} : () -> tensor<4x5xi32>
  func.return %c, %i, %j : tensor<2x2xf32>, tensor<4x5xi32>, tensor<4x5xi32>""",
                   "tensor<2x2xf32>, tensor<4x5xi32>, tensor<4x5xi32>")
    np.testing.assert_array_equal(c, [[0, 1], [2, 3]])
    np.testing.assert_array_equal(i, np.indices((4, 5))[0])
    np.testing.assert_array_equal(j, np.indices((4, 5))[1])


def test_program_pad() -> None:
    (out,) = mlir("""
  %operand = stablehlo.constant dense<[[0, 0, 0, 0], [0, 1, 2, 0], [0, 3, 4, 0],
                                       [0, 5, 6, 0], [0, 0, 0, 0]]> : tensor<5x4xi64>
  %padding_value = stablehlo.constant dense<-1> : tensor<i64>
  %result = stablehlo.pad %operand, %padding_value, low = [1, -1], high = [1, -1],
    interior = [0, 1] : (tensor<5x4xi64>, tensor<i64>) -> tensor<7x5xi64>
  func.return %result : tensor<7x5xi64>""", "tensor<7x5xi64>")
    np.testing.assert_array_equal(out, [
        [-1, -1, -1, -1, -1], [-1, 0, -1, 0, -1], [-1, 1, -1, 2, -1], [-1, 3, -1, 4, -1],
        [-1, 5, -1, 6, -1], [-1, 0, -1, 0, -1], [-1, -1, -1, -1, -1]])


def test_program_reshape_reverse_slice_transpose() -> None:
    r, v, s, t = mlir("""
  %x = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>
  %r = stablehlo.reshape %x : (tensor<2x3xi32>) -> tensor<3x2xi32>
  %v = stablehlo.reverse %x, dims = [1, 0] : tensor<2x3xi32>
  %s = stablehlo.slice %x [0:2, 1:3:2] : (tensor<2x3xi32>) -> tensor<2x1xi32>
  %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xi32>) -> tensor<3x2xi32>
  func.return %r, %v, %s, %t : tensor<3x2xi32>, tensor<2x3xi32>, tensor<2x1xi32>,
    tensor<3x2xi32>""", "tensor<3x2xi32>, tensor<2x3xi32>, tensor<2x1xi32>, tensor<3x2xi32>")
    x = np.array([[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(r, x.reshape(3, 2))
    np.testing.assert_array_equal(v, x[::-1, ::-1])
    np.testing.assert_array_equal(s, x[:, 1:3:2])
    np.testing.assert_array_equal(t, x.T)


def test_program_get_dimension_size() -> None:
    (out,) = mlir("""
  %operand = stablehlo.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %result = stablehlo.get_dimension_size %operand, dim = 1 : (tensor<2x3xi64>) -> tensor<i32>
  func.return %result : tensor<i32>""", "tensor<i32>")
    assert out == 3 and out.dtype == np.int32


def test_quantized_data_movement_moves_storage_values() -> None:
    """Quantized tensors are arrays of storage values; shape ops move them unchanged."""
    q = QuantizedType(element_type("i8"), element_type("f32"), (0.25,), (-3,))
    x = np.array([[-128, 5, 127], [0, -1, 42]], np.int8)
    xt = TensorType((2, 3), q)

    np.testing.assert_array_equal(
        run1("stablehlo.transpose", [x], [xt], TensorType((3, 2), q), permutation=i64s(1, 0)),
        x.T)
    pv = np.array(-3, np.int8)
    np.testing.assert_array_equal(
        run1("stablehlo.pad", [x, pv], [xt, TensorType((), q)], TensorType((2, 5), q),
            edge_padding_low=i64s(0, 1), edge_padding_high=i64s(0, 1),
            interior_padding=i64s(0, 0)),
        np.pad(x, ((0, 0), (1, 1)), constant_values=-3))
    np.testing.assert_array_equal(
        run1("stablehlo.broadcast_in_dim", [x], [xt], TensorType((2, 2, 3), q),
            broadcast_dimensions=i64s(1, 2)), np.broadcast_to(x, (2, 2, 3)))
    np.testing.assert_array_equal(
        run1("stablehlo.slice", [x], [xt], TensorType((1, 3), q), start_indices=i64s(1, 0),
            limit_indices=i64s(2, 3), strides=i64s(1, 1)), x[1:])
