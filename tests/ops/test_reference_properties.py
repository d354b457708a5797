"""shlo's kernels against the numpy reference (tests/reference.py) on drawn shapes and values.

Hypothesis draws shapes and values; floats (ml_dtypes included) are drawn as bit patterns and
viewed as the type (``from_dtype`` cannot draw ml_dtypes), so NaN payloads, both zeros,
subnormals, infinities and the largest values come up. Each op runs through the op-test harness
(tests/harness.py), verified first. Results must equal the reference bit for bit; for
arithmetic the NaN payloads are not compared (the spec does not define them: any NaN matches
any NaN), for data movement they are. Transcendental functions are allowed 1 ulp (shlo's f32
sine/cosine/tanh use numpy's float32 functions; the reference rounds float64 results once).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from shlo.attributes import DenseArrayAttr, EnumAttr, IntegerAttr, StructAttr
from shlo.types import I64, element_type, tensor

import reference as ref
from harness import body, run1

SETTINGS = settings(max_examples=15, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.filter_too_much])

INTS = ["i2", "i4", "i8", "i16", "i32", "i64", "ui2", "ui4", "ui8", "ui16", "ui32", "ui64"]
FLOATS = ["f4E2M1FN", "f6E2M3FN", "f6E3M2FN", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ",
          "f8E4M3B11FNUZ", "f8E4M3", "f8E3M4", "bf16", "f16", "f32", "f64"]
WIDE_FLOATS = ["f8E4M3FN", "f8E5M2", "bf16", "f16", "f32", "f64"]
ALL = ["i1"] + INTS + FLOATS

SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4)


def dtype(et: str) -> np.dtype:
    return np.dtype(element_type(et).dtype)


def values(et: str, shape: tuple[int, ...]) -> st.SearchStrategy[np.ndarray]:
    """Arrays of element type ``et``: every value of the type can come up."""
    dt = dtype(et)
    if dt == np.bool_:
        return hnp.arrays(np.bool_, shape)
    if ref.is_int(dt):
        if dt.kind == "V":  # int2/int4/uint2/uint4: draw in range
            nbits, signed = ref.int_info(dt)
            lo, hi = (-(1 << (nbits - 1)), (1 << (nbits - 1)) - 1) if signed else \
                (0, (1 << nbits) - 1)
            return hnp.arrays(np.int8, shape, elements=st.integers(lo, hi)).map(
                lambda a: a.astype(dt))
        return hnp.arrays(dt, shape)
    nbits = ref.float_info(dt).bits
    udt = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    return hnp.arrays(udt, shape, elements=st.integers(0, (1 << nbits) - 1)).map(
        lambda b: b.view(dt))


def assert_same(name: str, ours: Any, expected: np.ndarray, inputs: list[np.ndarray],
                nan_payloads: bool = False, ulps: int = 0) -> None:
    """``ours`` equals ``expected`` bit for bit (any NaN matches any NaN unless
    ``nan_payloads``; within ``ulps`` units in the last place when given)."""
    ours, expected = np.asarray(ours), np.asarray(expected)
    assert ours.dtype == expected.dtype and ours.shape == expected.shape, \
        (name, ours.dtype, ours.shape, expected.dtype, expected.shape)
    if expected.dtype == np.bool_:
        bad = ours != expected
    else:
        bad = ref.bits_of(ours) != ref.bits_of(expected)
        if bad.any() and not ref.is_int(expected.dtype):
            if ulps:
                bad = ref.ulp_diff(ours, expected) > ulps
            elif not nan_payloads:
                with np.errstate(invalid="ignore"):
                    bad &= ~(np.isnan(ours.astype(np.float64)) &
                             np.isnan(expected.astype(np.float64)))
    if bad.any():
        i = tuple(int(k) for k in np.argwhere(bad)[0])
        ins = [repr(a[i]) if a.shape == ours.shape else f"{a!r}" for a in inputs]
        pytest.fail(f"{name}: {int(bad.sum())} of {bad.size} elements differ; at {i}: "
                    f"inputs {', '.join(ins)} -> shlo {ours[i]!r} (bits {ref.bits_of(ours)[i]:#x}),"
                    f" reference {expected[i]!r} (bits {ref.bits_of(expected)[i]:#x})"
                    if expected.dtype != np.bool_ else
                    f"{name}: at {i}: inputs {', '.join(ins)} -> shlo {ours[i]}, "
                    f"reference {expected[i]}")


def i64s(*v: int) -> DenseArrayAttr:
    return DenseArrayAttr(I64, tuple(int(x) for x in v))


# --- element-wise: integers ------------------------------------------------------------------

INT_BINARY: dict[str, Callable[..., np.ndarray]] = {
    "add": ref.add, "subtract": ref.subtract, "multiply": ref.multiply, "divide": ref.divide,
    "remainder": ref.remainder, "and": ref.and_, "or": ref.or_, "xor": ref.xor,
    "maximum": ref.maximum, "minimum": ref.minimum, "power": ref.power,
    "shift_left": ref.shift_left, "shift_right_arithmetic": ref.shift_right_arithmetic,
    "shift_right_logical": ref.shift_right_logical,
}
INT_UNARY: dict[str, Callable[..., np.ndarray]] = {
    "abs": ref.abs_, "negate": ref.negate, "not": ref.not_, "popcnt": ref.popcnt,
    "count_leading_zeros": ref.count_leading_zeros, "sign": ref.sign,
}
BOOL_OPS: dict[str, Callable[..., np.ndarray]] = {
    "add": ref.add, "multiply": ref.multiply, "and": ref.and_, "or": ref.or_, "xor": ref.xor,
    "maximum": ref.maximum, "minimum": ref.minimum,
}


@pytest.mark.parametrize("et", INTS)
@pytest.mark.parametrize("op", INT_BINARY)
@SETTINGS
@given(data=st.data())
def test_integer_binary(op: str, et: str, data: st.DataObject) -> None:
    shape = data.draw(SHAPES)
    x, y = data.draw(values(et, shape)), data.draw(values(et, shape))
    assert_same(op, run1(f"stablehlo.{op}", [x, y], et, verify=True), INT_BINARY[op](x, y),
                [x, y])


@pytest.mark.parametrize("op,et", [(op, et) for op in INT_UNARY for et in INTS
                                   if not (op in ("abs", "sign") and et.startswith("ui"))])
@SETTINGS
@given(data=st.data())
def test_integer_unary(op: str, et: str, data: st.DataObject) -> None:
    """(abs and sign take signed integers: spec)"""
    x = data.draw(values(et, data.draw(SHAPES)))
    assert_same(op, run1(f"stablehlo.{op}", [x], et, verify=True), INT_UNARY[op](x), [x])


@pytest.mark.parametrize("op", [*BOOL_OPS, "not"])
@SETTINGS
@given(data=st.data())
def test_bool(op: str, data: st.DataObject) -> None:
    shape = data.draw(SHAPES)
    x, y = data.draw(values("i1", shape)), data.draw(values("i1", shape))
    args = [x] if op == "not" else [x, y]
    expected = ref.not_(x) if op == "not" else BOOL_OPS[op](x, y)
    assert_same(op, run1(f"stablehlo.{op}", args, "i1", verify=True), expected, args)


# --- element-wise: floats ----------------------------------------------------------------------

FLOAT_BINARY: dict[str, Callable[..., np.ndarray]] = {
    "add": ref.add, "subtract": ref.subtract, "multiply": ref.multiply, "divide": ref.divide,
    "remainder": ref.remainder, "maximum": ref.maximum, "minimum": ref.minimum,
}
FLOAT_UNARY: dict[str, Callable[..., np.ndarray]] = {
    "abs": ref.abs_, "negate": ref.negate, "sign": ref.sign, "floor": ref.floor,
    "ceil": ref.ceil, "round_nearest_afz": ref.round_nearest_afz,
    "round_nearest_even": ref.round_nearest_even, "sqrt": ref.sqrt,
}
TRANSCENDENTAL_UNARY: dict[str, Callable[..., np.ndarray]] = {
    "exponential": ref.exponential, "exponential_minus_one": ref.exponential_minus_one,
    "log": ref.log, "log_plus_one": ref.log_plus_one, "logistic": ref.logistic,
    "sine": ref.sine, "cosine": ref.cosine, "tan": ref.tan, "tanh": ref.tanh,
    "rsqrt": ref.rsqrt, "cbrt": ref.cbrt,
}
TRANSCENDENTAL_BINARY = {"power": ref.power, "atan2": ref.atan2}


@pytest.mark.parametrize("et", FLOATS)
@pytest.mark.parametrize("op", FLOAT_BINARY)
@SETTINGS
@given(data=st.data())
def test_float_binary(op: str, et: str, data: st.DataObject) -> None:
    shape = data.draw(SHAPES)
    x, y = data.draw(values(et, shape)), data.draw(values(et, shape))
    ours = run1(f"stablehlo.{op}", [x, y], et, verify=True, quiet=True)
    assert_same(op, ours, FLOAT_BINARY[op](x, y), [x, y])


@pytest.mark.parametrize("et", FLOATS)
@pytest.mark.parametrize("op", [*FLOAT_UNARY, "is_finite"])
@SETTINGS
@given(data=st.data())
def test_float_unary(op: str, et: str, data: st.DataObject) -> None:
    x = data.draw(values(et, data.draw(SHAPES)))
    if op == "is_finite":
        ours, expected = run1("stablehlo.is_finite", [x], et, "i1", verify=True), ref.is_finite(x)
    else:
        ours = run1(f"stablehlo.{op}", [x], et, verify=True, quiet=True)
        expected = FLOAT_UNARY[op](x)
    assert_same(op, ours, expected, [x])


@pytest.mark.parametrize("et", WIDE_FLOATS)
@pytest.mark.parametrize("op", [*TRANSCENDENTAL_UNARY, *TRANSCENDENTAL_BINARY])
@SETTINGS
@given(data=st.data())
def test_transcendental_within_one_ulp(op: str, et: str, data: st.DataObject) -> None:
    shape = data.draw(SHAPES)
    args = [data.draw(values(et, shape)) for _ in range(2 if op in TRANSCENDENTAL_BINARY else 1)]
    fn = TRANSCENDENTAL_UNARY.get(op) or TRANSCENDENTAL_BINARY[op]
    ours = run1(f"stablehlo.{op}", args, et, verify=True, quiet=True)
    assert_same(op, ours, fn(*args), args, ulps=1)


# --- compare, select, clamp ----------------------------------------------------------------------

DIRECTIONS = ["EQ", "NE", "GE", "GT", "LE", "LT"]


def _compare_types(et: str) -> list[str]:
    if et == "i1" or et.startswith("ui"):
        return ["UNSIGNED"]
    return ["SIGNED"] if et.startswith("i") else ["FLOAT", "TOTALORDER"]


@pytest.mark.parametrize("et,compare_type", [(et, c) for et in ALL for c in _compare_types(et)])
@SETTINGS
@given(data=st.data())
def test_compare(et: str, compare_type: str, data: st.DataObject) -> None:
    shape = data.draw(SHAPES)
    x, y = data.draw(values(et, shape)), data.draw(values(et, shape))
    if data.draw(st.booleans()):
        y = np.where(data.draw(hnp.arrays(np.bool_, shape)), x, y)  # equal elements too
    direction = data.draw(st.sampled_from(DIRECTIONS))
    props = {"comparison_direction": EnumAttr("stablehlo", "comparison_direction", direction),
             "compare_type": EnumAttr("stablehlo", "comparison_type", compare_type)}
    ours = run1("stablehlo.compare", [x, y], et, "i1", verify=True, quiet=True, **props)
    assert_same(f"compare {direction} {compare_type}", ours,
                ref.compare(x, y, direction, compare_type), [x, y])


@pytest.mark.parametrize("et", ALL)
@SETTINGS
@given(data=st.data())
def test_select_moves_bits(et: str, data: st.DataObject) -> None:
    shape = data.draw(SHAPES)
    pred = data.draw(hnp.arrays(np.bool_, shape))
    x, y = data.draw(values(et, shape)), data.draw(values(et, shape))
    ours = run1("stablehlo.select", [pred, x, y], ["i1", et, et], et, verify=True)
    assert_same("select", ours, ref.select(pred, x, y), [pred, x, y], nan_payloads=True)


@pytest.mark.parametrize("et", INTS + FLOATS)
@SETTINGS
@given(data=st.data())
def test_clamp(et: str, data: st.DataObject) -> None:
    shape = data.draw(SHAPES)
    lo, x, hi = (data.draw(values(et, shape)) for _ in range(3))
    ours = run1("stablehlo.clamp", [lo, x, hi], et, verify=True, quiet=True)
    assert_same("clamp", ours, ref.clamp(lo, x, hi), [lo, x, hi])


# --- convert -----------------------------------------------------------------------------------

CONVERT_TARGETS = {
    "float": ["i1"] + INTS + WIDE_FLOATS + ["f4E2M1FN", "f8E4M3FNUZ"],
    "int": ["i1"] + INTS + ["f16", "bf16", "f32", "f64", "f8E5M2"],
}


@pytest.mark.parametrize("src", ["i1"] + INTS + FLOATS)
@SETTINGS
@given(data=st.data())
def test_convert(src: str, data: st.DataObject) -> None:
    kind = "float" if src in FLOATS else "int"
    dst = data.draw(st.sampled_from([t for t in CONVERT_TARGETS[kind] if t != src]))
    x = data.draw(values(src, data.draw(SHAPES)))
    ours = run1("stablehlo.convert", [x], src, dst, verify=True, quiet=True)
    assert_same(f"convert {src} -> {dst}", ours, ref.convert(x, dtype(dst)), [x])


@pytest.mark.parametrize("dst", ["bf16", "f16", "f8E4M3FN", "f8E5M2", "f4E2M1FN", "f32"])
@SETTINGS
@given(data=st.data())
def test_convert_from_f64_rounds_once_near_midpoints(dst: str, data: st.DataObject) -> None:
    """f64 values at, just above and just below the midpoints between neighbours of the target
    type, where rounding through float32 first (ml_dtypes) would round twice."""
    dt = dtype(dst)
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=1, min_side=1, max_side=8))
    a = data.draw(values(dst, shape))
    b = (ref.bits_of(a) + 1).astype(ref.bits_of(a).dtype).view(dt)  # the neighbour away from 0
    with np.errstate(invalid="ignore"):
        lo, hi = a.astype(np.float64), b.astype(np.float64)
    ok = np.isfinite(lo) & np.isfinite(hi) & (np.signbit(lo) == np.signbit(hi)) & (lo != hi)
    lo, hi = np.where(ok, lo, 1.0), np.where(ok, hi, 1.0)
    mid = (lo + hi) / 2                                 # exact in f64
    nudge = data.draw(hnp.arrays(np.int8, shape, elements=st.sampled_from([-1, 0, 1])))
    x = mid + nudge * np.abs(mid) * 2.0**-45
    ours = run1("stablehlo.convert", [x], "f64", dst, verify=True, quiet=True)
    assert_same(f"convert f64 -> {dst}", ours, ref.convert(x, dt), [x])


# --- structured ops -----------------------------------------------------------------------------

MOVE_TYPES = ["i1", "i4", "i32", "ui64", "f8E4M3FNUZ", "bf16", "f32", "f64"]


@st.composite
def arrays_of(draw: Any, et: str, min_dims: int = 0, max_dims: int = 4) -> np.ndarray:
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=0, max_side=4))
    return draw(values(et, shape))


@pytest.mark.parametrize("et", MOVE_TYPES)
@SETTINGS
@given(data=st.data())
def test_transpose_and_reverse(et: str, data: st.DataObject) -> None:
    x = data.draw(arrays_of(et))
    perm = data.draw(st.permutations(range(x.ndim)))
    out_shape = tuple(x.shape[p] for p in perm)
    ours = run1("stablehlo.transpose", [x], results=tensor(out_shape, et), verify=True,
                permutation=i64s(*perm))
    assert_same("transpose", ours, ref.transpose(x, perm), [x], nan_payloads=True)
    dims = sorted(data.draw(st.sets(st.integers(0, max(x.ndim - 1, 0)), max_size=x.ndim))) \
        if x.ndim else []
    ours = run1("stablehlo.reverse", [x], verify=True, dimensions=i64s(*dims))
    assert_same("reverse", ours, ref.reverse(x, dims), [x], nan_payloads=True)


@pytest.mark.parametrize("et", MOVE_TYPES)
@SETTINGS
@given(data=st.data())
def test_slice(et: str, data: st.DataObject) -> None:
    x = data.draw(arrays_of(et, min_dims=1))
    start, limit, strides = [], [], []
    for n in x.shape:
        s = data.draw(st.integers(0, n))
        start.append(s)
        limit.append(data.draw(st.integers(s, n)))
        strides.append(data.draw(st.integers(1, 3)))
    expected = ref.slice_(x, start, limit, strides)
    ours = run1("stablehlo.slice", [x], results=tensor(expected.shape, et), verify=True,
                start_indices=i64s(*start), limit_indices=i64s(*limit), strides=i64s(*strides))
    assert_same("slice", ours, expected, [x], nan_payloads=True)


@pytest.mark.parametrize("et", MOVE_TYPES)
@SETTINGS
@given(data=st.data())
def test_concatenate(et: str, data: st.DataObject) -> None:
    first = data.draw(arrays_of(et, min_dims=1))
    dim = data.draw(st.integers(0, first.ndim - 1))
    parts = [first]
    for _ in range(data.draw(st.integers(0, 2))):
        shape = list(first.shape)
        shape[dim] = data.draw(st.integers(0, 3))
        parts.append(data.draw(values(et, tuple(shape))))
    expected = ref.concatenate(parts, dim)
    ours = run1("stablehlo.concatenate", parts, results=tensor(expected.shape, et), verify=True,
                dimension=IntegerAttr(dim))
    assert_same("concatenate", ours, expected, parts, nan_payloads=True)


@pytest.mark.parametrize("et", MOVE_TYPES)
@SETTINGS
@given(data=st.data())
def test_pad(et: str, data: st.DataObject) -> None:
    x = data.draw(arrays_of(et, max_dims=3))
    pv = data.draw(values(et, ()))
    low, high, interior = [], [], []
    for n in x.shape:
        i = data.draw(st.integers(0, 2))
        size = n + max(n - 1, 0) * i
        lo = data.draw(st.integers(-size, 3))
        hi = data.draw(st.integers(-(size + lo) if size + lo > 0 else 0, 3))
        low.append(lo)
        high.append(hi)
        interior.append(i)
    expected = ref.pad(x, pv, low, high, interior)
    ours = run1("stablehlo.pad", [x, pv], results=tensor(expected.shape, et), verify=True,
                edge_padding_low=i64s(*low), edge_padding_high=i64s(*high),
                interior_padding=i64s(*interior))
    assert_same("pad", ours, expected, [x, pv], nan_payloads=True)


@pytest.mark.parametrize("et", ["i8", "ui32", "i64", "bf16", "f32", "f8E5M2"])
@SETTINGS
@given(data=st.data())
def test_iota_and_broadcast_in_dim(et: str, data: st.DataObject) -> None:
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5))
    dim = data.draw(st.integers(0, len(shape) - 1))
    ours = run1("stablehlo.iota", [], results=tensor(shape, et), verify=True,
                iota_dimension=IntegerAttr(dim))
    assert_same("iota", ours, ref.iota(shape, dim, dtype(et)), [])
    # broadcast_in_dim of a random operand into `shape`
    dims = sorted(data.draw(st.sets(st.integers(0, len(shape) - 1))))
    x = data.draw(values(et, tuple(data.draw(st.sampled_from([1, shape[d]])) for d in dims)))
    ours = run1("stablehlo.broadcast_in_dim", [x], results=tensor(shape, et), verify=True,
                broadcast_dimensions=i64s(*dims))
    assert_same("broadcast_in_dim", ours, ref.broadcast_in_dim(x, shape, dims), [x],
                nan_payloads=True)


@st.composite
def dot_problem(draw: Any, et: str) -> tuple[np.ndarray, np.ndarray, list[list[int]]]:
    """Operands and dimension numbers of a dot_general: some batch and contracting dimensions
    (sizes shared), the other dimensions free, in a random order on each side."""
    n_batch, n_contract = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    n_lfree, n_rfree = draw(st.integers(0, 2)), draw(st.integers(0, 2))
    side = st.integers(1, 3)
    batch = [draw(side) for _ in range(n_batch)]
    contract = [draw(side) for _ in range(n_contract)]
    lfree = [draw(side) for _ in range(n_lfree)]
    rfree = [draw(side) for _ in range(n_rfree)]
    lorder = draw(st.permutations(range(n_batch + n_contract + n_lfree)))
    rorder = draw(st.permutations(range(n_batch + n_contract + n_rfree)))
    lsizes = batch + contract + lfree
    rsizes = batch + contract + rfree
    lhs = draw(values(et, tuple(lsizes[k] for k in lorder)))
    rhs = draw(values(et, tuple(rsizes[k] for k in rorder)))
    lpos = {k: i for i, k in enumerate(lorder)}
    rpos = {k: i for i, k in enumerate(rorder)}
    dims = [[lpos[k] for k in range(n_batch)], [rpos[k] for k in range(n_batch)],
            [lpos[n_batch + k] for k in range(n_contract)],
            [rpos[n_batch + k] for k in range(n_contract)]]
    return lhs, rhs, dims


@pytest.mark.parametrize("et", ["i8", "i32", "ui16", "i64"])
@SETTINGS
@given(data=st.data())
def test_dot_general_integers_wrap_exactly(et: str, data: st.DataObject) -> None:
    lhs, rhs, (lb, rb, lc, rc) = data.draw(dot_problem(et))
    expected = ref.dot_general(lhs, rhs, lb, rb, lc, rc)
    dn = StructAttr("stablehlo.dot", (
        ("lhs_batching_dimensions", tuple(lb)), ("rhs_batching_dimensions", tuple(rb)),
        ("lhs_contracting_dimensions", tuple(lc)), ("rhs_contracting_dimensions", tuple(rc))))
    ours = run1("stablehlo.dot_general", [lhs, rhs], results=tensor(expected.shape, et),
                verify=True, dot_dimension_numbers=dn)
    assert_same("dot_general", ours, expected, [lhs, rhs])




def _reduce_problem(data: st.DataObject, et: str, empty_results: bool) -> tuple[np.ndarray,
                                                                                list[int]]:
    """An operand and reduced dimensions; unless ``empty_results``, no kept dimension has size
    0 (results with a zero-size dimension once raised in shlo: their own test)."""
    x = data.draw(arrays_of(et, max_dims=3))
    dims = sorted(data.draw(st.sets(st.integers(0, max(x.ndim - 1, 0)), max_size=x.ndim))) \
        if x.ndim else []
    assume(empty_results or all(x.shape[d] for d in range(x.ndim) if d not in dims))
    return x, dims


def _check_reduce(et: str, op: str, fn: Callable[..., np.ndarray], empty_results: bool,
                  data: st.DataObject) -> None:
    x, dims = _reduce_problem(data, et, empty_results)
    init = data.draw(values(et, ()))
    expected = ref.reduce(x, init, dims, fn)
    ours = run1("stablehlo.reduce", [x, init], results=tensor(expected.shape, et), verify=True,
                quiet=True, regions=[body(f"stablehlo.{op}", et)], dimensions=i64s(*dims))
    assert_same(f"reduce {op}", ours, expected, [x, init])


REDUCE_ADD_TYPES = ["i8", "i32", "ui64", "i4"]
REDUCE_MAX_TYPES = ["bf16", "f16", "f32", "f64", "f8E4M3FN", "i16"]


@pytest.mark.parametrize("et", REDUCE_ADD_TYPES)
@SETTINGS
@given(data=st.data())
def test_reduce_add_integers(et: str, data: st.DataObject) -> None:
    _check_reduce(et, "add", ref.add, False, data)


@pytest.mark.parametrize("et", REDUCE_MAX_TYPES)
@SETTINGS
@given(data=st.data())
def test_reduce_max(et: str, data: st.DataObject) -> None:
    _check_reduce(et, "maximum", ref.maximum, False, data)


@pytest.mark.parametrize("et,op", [(et, "add") for et in REDUCE_ADD_TYPES] +
                         [(et, "maximum") for et in REDUCE_MAX_TYPES])
@SETTINGS
@given(data=st.data())
def test_reduce_with_empty_results(et: str, op: str, data: st.DataObject) -> None:
    _check_reduce(et, op, ref.add if op == "add" else ref.maximum, True, data)


# --- the reference itself ------------------------------------------------------------------------


def test_reference_where_numpy_differs() -> None:
    """The reference's own spot checks: the cases its comments name."""
    i8 = np.int8
    assert ref.divide(np.array([7, -7, -128, 5], i8), np.array([2, 2, -1, 0], i8)).tolist() == \
        [3, -3, -128, -1]
    assert ref.remainder(np.array([7, -7, -128, 5], i8), np.array([-2, 2, -1, 0], i8)).tolist() \
        == [1, -1, 0, 5]
    assert ref.shift_left(np.array([1, 1, 1], np.int32), np.array([-1, 32, 31], np.int32)) \
        .tolist() == [0, 0, -2**31]
    assert ref.shift_right_arithmetic(np.array([-8, 8, -8], np.int32),
                                      np.array([-1, 40, 2], np.int32)).tolist() == [-1, 0, -2]
    assert ref.shift_right_arithmetic(np.array([0x80], np.uint8), np.array([1], np.uint8)) \
        .tolist() == [0xC0]
    assert ref.power(np.array([2, -1, 1, 3], i8), np.array([-1, -3, -5, 64], i8)).tolist() == \
        [0, -1, 1, 3**64 % 256 - 256 if 3**64 % 256 > 127 else 3**64 % 256]
    assert ref.round_nearest_afz(np.array([-2.5, 0.5, 0.49999999999999994, -0.3])).tolist() == \
        [-3.0, 1.0, 0.0, -0.0]
    assert np.signbit(ref.round_nearest_afz(np.array([-0.3])))[0]
    assert ref.convert(np.array([np.nan, np.inf, -1e10, -2.7]), np.dtype(np.int32)).tolist() == \
        [0, 2**31 - 1, -2**31, -2]
    assert ref.convert(np.array([-5.0, 300.0]), np.dtype(np.uint8)).tolist() == [0, 255]
    import ml_dtypes

    assert ref.round_to(np.array([1 + 2**-8 + 2**-40]), ml_dtypes.bfloat16).astype(float) \
        .tolist() == [1.0078125]
    assert ref.maximum(np.array([-0.0]), np.array([0.0])).tolist() == [0.0]
    assert not np.signbit(ref.maximum(np.array([-0.0]), np.array([0.0])))[0]
    assert np.signbit(ref.minimum(np.array([0.0]), np.array([-0.0])))[0]
    assert ref.pad(np.array([1, 2, 3]), 0, [-1], [2], [1]).tolist() == [0, 2, 0, 3, 0, 0]
