"""Element-wise ops (shlo/ops/elementwise.py): spec examples, integer semantics, shapes.

Ops are built by hand and prepared by the op-test harness (tests/harness.py), so these tests
do not depend on the parser. Integer kernels must never emit numpy warnings: the integer tests
turn warnings into errors. Float rounding and `convert` are in test_elementwise_float.py; the
differential tests against XLA are in tests/differential.
"""

from __future__ import annotations

import itertools
import warnings
from typing import Any

import ml_dtypes
import numpy as np
import pytest

from shlo.attributes import EnumAttr, IntegerAttr
from shlo.errors import ExecutionError
from shlo.types import IntegerType, QuantizedType, element_type, tensor

from harness import prepare_op, run1

INT_TYPES = ["i2", "i4", "i8", "i16", "i32", "i64", "ui2", "ui4", "ui8", "ui16", "ui32", "ui64"]
SIGNED_TYPES = [t for t in INT_TYPES if not t.startswith("u")]
FLOAT_TYPES = ["f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ", "f8E4M3B11FNUZ", "f8E4M3",
               "f8E3M4", "f6E2M3FN", "f6E3M2FN", "f4E2M1FN", "bf16", "f16", "f32", "f64"]
COMPLEX_TYPES = ["complex<f32>", "complex<f64>"]


def cmp_props(direction: str, compare_type: str | None = None) -> dict[str, Any]:
    props = {"comparison_direction": EnumAttr("stablehlo", "comparison_direction", direction)}
    if compare_type:
        props["compare_type"] = EnumAttr("stablehlo", "comparison_type", compare_type)
    return props


def bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.fixture
def quiet_floats():
    with np.errstate(all="ignore"):
        yield


@pytest.fixture
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# --- spec examples ---------------------------------------------------------------------------


def test_spec_examples_integer(no_warnings) -> None:
    a = [[1, 2], [3, 4]]
    b = [[5, 6], [7, 8]]
    assert run1("stablehlo.abs", [[-2, 0, 2]], "i32").tolist() == [2, 0, 2]
    assert run1("stablehlo.add", [a, b], "i32").tolist() == [[6, 8], [10, 12]]
    assert run1("stablehlo.and", [a, b], "i32").tolist() == [[1, 2], [3, 0]]
    assert run1("stablehlo.or", [a, b], "i32").tolist() == [[5, 6], [7, 12]]
    assert run1("stablehlo.xor", [a, b], "i32").tolist() == [[4, 4], [4, 12]]
    assert run1("stablehlo.multiply", [a, b], "i32").tolist() == [[5, 12], [21, 32]]
    assert run1("stablehlo.subtract", [[[6, 8], [10, 12]], b], "i32").tolist() == [[1, 2], [3, 4]]
    assert run1("stablehlo.maximum", [[[1, 2], [7, 8]], [[5, 6], [3, 4]]], "i32").tolist() == \
        [[5, 6], [7, 8]]
    assert run1("stablehlo.minimum", [[[1, 2], [7, 8]], [[5, 6], [3, 4]]], "i32").tolist() == \
        [[1, 2], [3, 4]]
    assert run1("stablehlo.clamp", [[5, 10, 15], [3, 13, 23], [10, 15, 20]], "i32").tolist() == \
        [5, 13, 20]
    assert run1("stablehlo.count_leading_zeros", [[[0, 1], [128, -1]]], "i64").tolist() == \
        [[64, 63], [56, 0]]
    assert run1("stablehlo.popcnt", [[0, 1, 2, 127]], "i64").tolist() == [0, 1, 1, 7]
    assert run1("stablehlo.negate", [[0, -2]], "i32").tolist() == [0, 2]
    assert run1("stablehlo.not", [a], "i32").tolist() == [[-2, -3], [-4, -5]]
    assert run1("stablehlo.not", [[True, False]], "i1").tolist() == [False, True]
    assert run1("stablehlo.remainder", [[17, -17, 17, -17], [3, 3, -3, -3]], "i64").tolist() == \
        [2, -2, 2, -2]
    assert run1("stablehlo.shift_left", [[-1, 0, 1], [1, 2, 3]], "i64").tolist() == [-2, 0, 8]
    assert run1("stablehlo.shift_right_arithmetic", [[-1, 0, 8], [1, 2, 3]], "i64").tolist() == \
        [-1, 0, 1]
    assert run1("stablehlo.shift_right_logical", [[-1, 0, 8], [1, 2, 3]], "i64").tolist() == \
        [9223372036854775807, 0, 1]
    pred = [[False, True], [True, False]]
    assert run1("stablehlo.select", [pred, a, b], ["i1", "i32", "i32"]).tolist() == \
        [[5, 2], [3, 8]]


def test_spec_examples_float(quiet_floats) -> None:
    np.testing.assert_allclose(
        run1("stablehlo.atan2", [[0.0, 1.0, -1.0], [0.0, 0.0, 0.0]], "f64"),
        [0.0, np.pi / 2, -np.pi / 2])
    np.testing.assert_allclose(run1("stablehlo.cbrt", [[0.0, 1.0, 8.0, 27.0]], "f64"),
                               [0.0, 1.0, 2.0, 3.0])
    r = run1("stablehlo.ceil", [[-0.8166, -0.2530, 0.2530, 0.8166, 2.0]], "f32")
    assert bits_equal(r, np.array([-0.0, -0.0, 1.0, 1.0, 2.0], np.float32))
    r = run1("stablehlo.floor", [[-0.8166, -0.2530, 0.2530, 0.8166, 2.0]], "f32")
    assert bits_equal(r, np.array([-1.0, -1.0, 0.0, 0.0, 2.0], np.float32))
    r = run1("stablehlo.cosine", [[[0.0, 1.57079632], [3.14159265, 4.71238898]]], "f32")
    np.testing.assert_allclose(r, [[1.0, 0.0], [-1.0, 0.0]], atol=1e-6)
    r = run1("stablehlo.sine", [[[0.0, 1.57079632], [3.14159265, 4.71238898]]], "f32")
    np.testing.assert_allclose(r, [[0.0, 1.0], [0.0, -1.0]], atol=1e-6)
    r = run1("stablehlo.divide", [[17.1, -17.1, 17.1, -17.1], [3.0, 3.0, -3.0, -3.0]], "f32")
    q = np.float32(17.1) / np.float32(3.0)  # the spec example prints 17/3 by mistake
    np.testing.assert_array_equal(r, np.float32([q, -q, -q, q]))
    np.testing.assert_allclose(run1("stablehlo.exponential", [[[0.0, 1.0], [2.0, 3.0]]], "f64"),
                               [[1.0, 2.7182818284590451], [7.3890560989306504,
                                                            20.085536923187668]])
    np.testing.assert_allclose(run1("stablehlo.exponential_minus_one", [[0.0, 1.0]], "f64"),
                               [0.0, 1.71828187])
    np.testing.assert_allclose(run1("stablehlo.log", [[[1.0, 2.0], [3.0, 4.0]]], "f64"),
                               [[0.0, 0.69314718055994529],
                                [1.0986122886681098, 1.3862943611198906]])
    np.testing.assert_allclose(
        run1("stablehlo.log_plus_one", [[0.0, -0.999, 7.0, 6.38905621, 15.0]], "f64"),
        [0.0, -6.90776825, 2.07944155, 2.0, 2.77258873], rtol=1e-5)
    np.testing.assert_allclose(run1("stablehlo.logistic", [[[0.0, 1.0], [2.0, 3.0]]], "f64"),
                               [[0.5, 0.73105858], [0.88079708, 0.95257413]], rtol=1e-7)
    r = run1("stablehlo.power", [[-2.0, -0.0, -36.0, 5.0, 3.0, 10000.0],
                                [2.0, 2.0, 1.1, 2.0, -1.0, 10.0]], "f64")
    np.testing.assert_allclose(r, [4.0, 0.0, np.nan, 25.0, 1 / 3, 1e40])  # spec shows f32's inf
    r = run1("stablehlo.round_nearest_afz", [[-2.5, 0.4, 0.5, 0.6, 2.5]], "f64")
    assert r.tolist() == [-3.0, 0.0, 1.0, 1.0, 3.0]
    r = run1("stablehlo.round_nearest_even", [[-2.5, 0.4, 0.5, 0.6, 2.5]], "f64")
    assert r.tolist() == [-2.0, 0.0, 0.0, 1.0, 2.0]
    np.testing.assert_allclose(run1("stablehlo.rsqrt", [[[1.0, 4.0], [9.0, 25.0]]], "f32"),
                               [[1.0, 0.5], [0.33333343, 0.2]], rtol=1e-6)
    np.testing.assert_allclose(run1("stablehlo.sqrt", [[[0.0, 1.0], [4.0, 9.0]]], "f32"),
                               [[0.0, 1.0], [2.0, 3.0]])
    np.testing.assert_allclose(run1("stablehlo.tanh", [[-1.0, 0.0, 1.0]], "f32"),
                               [-0.76159416, 0.0, 0.76159416])
    np.testing.assert_allclose(run1("stablehlo.tan", [[0.0, np.pi / 4]], "f64"), [0.0, 1.0])
    x = np.frombuffer(bytes.fromhex("000000000000F0FF000000000000F07F000000000000F87F"),
                      np.float64).tolist() + [-10.0, -0.0, 0.0, 10.0]
    assert run1("stablehlo.is_finite", [x], ["f64"], "i1").tolist() == \
        [False, False, False, True, True, True, True]
    r = run1("stablehlo.compare", [[1.0, 3.0], [1.1, 2.9]], "f32", "i1",
            **cmp_props("LT", "FLOAT"))
    assert r.tolist() == [True, False]


def test_spec_examples_complex_and_bits() -> None:
    r = run1("stablehlo.complex", [[1.0, 3.0], [2.0, 4.0]], "f64", "complex<f64>")
    assert r.tolist() == [1 + 2j, 3 + 4j]
    z = np.array([1 + 2j, 3 + 4j], np.complex64)
    assert run1("stablehlo.real", [z], ["complex<f32>"], "f32").tolist() == [1.0, 3.0]
    assert run1("stablehlo.imag", [z], ["complex<f32>"], "f32").tolist() == [2.0, 4.0]
    r = run1("stablehlo.negate", [[2.5 + 0j]], "complex<f32>")
    assert bits_equal(r, np.array([complex(-2.5, -0.0)], np.complex64))
    r = run1("stablehlo.convert", [[-1, 0, 1]], ["i64"], "complex<f64>")
    assert r.tolist() == [-1 + 0j, 0j, 1 + 0j]
    k = prepare_op("stablehlo.bitcast_convert", ["f32"], "i8", (2,))
    out = np.asarray(k(np.float32([0.0, 1.0]))[0])
    assert out.dtype == np.int8 and out.tolist() == [[0, 0, 0, 0], [0, 0, -128, 63]]
    k = prepare_op("stablehlo.bitcast_convert", ["f64"], "f16")
    out = np.asarray(k(np.array(0x0123456789ABCDEF, np.uint64).view(np.float64))[0])
    assert out.view(np.uint16).tolist() == [0xCDEF, 0x89AB, 0x4567, 0x0123]
    x = np.frombuffer(bytes.fromhex("000000000000F07FFFFFFFFFFFFFFF7F0100000000000000"),
                      np.float64).tolist() + [0.0, 65519.0, 65520.0]
    r = run1("stablehlo.reduce_precision", [x], "f64", exponent_bits=IntegerAttr(5),
            mantissa_bits=IntegerAttr(10))
    expect = np.frombuffer(bytes.fromhex("000000000000F07FFFFFFFFFFFFFFF7F0000000000000000"),
                           np.float64).tolist() + [0.0, 65504.0, np.inf]
    assert bits_equal(r, np.array(expect))
    r = run1("stablehlo.sign", [np.frombuffer(bytes.fromhex("FFFFFFFFFFFFFF7F"), np.float64)
                               .tolist() + [-1.0, -0.0, 0.0, 1.0]], "f64")
    expect = np.frombuffer(bytes.fromhex("FFFFFFFFFFFFFF7F"), np.float64).tolist() + \
        [-1.0, -0.0, 0.0, 1.0]
    assert bits_equal(r, np.array(expect))


# --- integers: every type, against Python integers ---------------------------------------------


def _wrap(v: int, et: IntegerType) -> int:
    v &= (1 << et.width) - 1
    if et.is_signed and v >> (et.width - 1):
        v -= 1 << et.width
    return v


def _samples(et: IntegerType) -> list[int]:
    lo, hi = et.min, et.max
    vals = {lo, lo + 1, -1, 0, 1, 2, 3, hi - 1, hi, hi // 2, lo // 2, 5, -7, 100, -100}
    return sorted(v for v in vals if lo <= v <= hi)


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _ref_shift(kind: str, a: int, b: int, et: IntegerType) -> int:
    w = et.width
    s = b & ((1 << w) - 1)  # the amount, read as unsigned
    bits = a & ((1 << w) - 1)
    negative = bits >> (w - 1)
    if s >= w:
        return _wrap(-1 if (kind == "arithmetic" and negative) else 0, et)
    if kind == "left":
        return _wrap(bits << s, et)
    if kind == "logical":
        return _wrap(bits >> s, et)
    signed = bits - (1 << w) if negative else bits
    return _wrap(signed >> s, et)


def _ref_power(a: int, b: int, et: IntegerType) -> int:
    if b < 0:
        if abs(a) != 1:
            return 0
        b = -b
    return _wrap(pow(a, b, 1 << et.width), et)


_INT_BINARY = {
    "stablehlo.add": lambda a, b, et: _wrap(a + b, et),
    "stablehlo.subtract": lambda a, b, et: _wrap(a - b, et),
    "stablehlo.multiply": lambda a, b, et: _wrap(a * b, et),
    "stablehlo.divide": lambda a, b, et: _wrap(-1 if b == 0 else _trunc_div(a, b), et),
    "stablehlo.remainder": lambda a, b, et: a if b == 0 else _wrap(a - b * _trunc_div(a, b), et),
    "stablehlo.and": lambda a, b, et: _wrap(a & b, et),
    "stablehlo.or": lambda a, b, et: _wrap(a | b, et),
    "stablehlo.xor": lambda a, b, et: _wrap(a ^ b, et),
    "stablehlo.maximum": lambda a, b, et: max(a, b),
    "stablehlo.minimum": lambda a, b, et: min(a, b),
    "stablehlo.power": _ref_power,
    "stablehlo.shift_left": lambda a, b, et: _ref_shift("left", a, b, et),
    "stablehlo.shift_right_logical": lambda a, b, et: _ref_shift("logical", a, b, et),
    "stablehlo.shift_right_arithmetic": lambda a, b, et: _ref_shift("arithmetic", a, b, et),
}


@pytest.mark.parametrize("name", sorted(_INT_BINARY))
@pytest.mark.parametrize("type_name", INT_TYPES)
def test_integer_binary(name: str, type_name: str, no_warnings) -> None:
    et = element_type(type_name)
    pairs = list(itertools.product(_samples(et), repeat=2))
    a = [p[0] for p in pairs]
    b = [p[1] for p in pairs]
    expect = [_INT_BINARY[name](x, y, et) for x, y in pairs]
    got = run1(name, [a, b], type_name)
    assert [int(v) for v in got.astype(np.int64 if et.is_signed else np.uint64)] == expect
    if name in ("stablehlo.divide", "stablehlo.remainder"):  # Python-int path for 0-d values
        k = prepare_op(name, [type_name] * 2, type_name)
        dt = et.dtype
        wide = np.int64 if et.is_signed else np.uint64
        got0 = [k(np.asarray(x, wide).astype(dt)[()], np.asarray(y, wide).astype(dt)[()])[0]
                for x, y in pairs]
        assert all(np.asarray(g).dtype == dt and np.shape(g) == () for g in got0)
        assert [int(np.asarray(g).astype(wide)) for g in got0] == expect


def _ref_clz(a: int, et: IntegerType) -> int:
    return et.width - (a & ((1 << et.width) - 1)).bit_length()


_INT_UNARY = {
    "stablehlo.negate": lambda a, et: _wrap(-a, et),
    "stablehlo.not": lambda a, et: _wrap(~a, et),
    # counts wrap too: popcnt(-1 : i2) = 2 = -2 in i2
    "stablehlo.popcnt": lambda a, et: _wrap(bin(a & ((1 << et.width) - 1)).count("1"), et),
    "stablehlo.count_leading_zeros": lambda a, et: _wrap(_ref_clz(a, et), et),
    "stablehlo.abs": lambda a, et: _wrap(abs(a), et),
    "stablehlo.sign": lambda a, et: (a > 0) - (a < 0),
}


@pytest.mark.parametrize("name", sorted(_INT_UNARY))
@pytest.mark.parametrize("type_name", INT_TYPES)
def test_integer_unary(name: str, type_name: str, no_warnings) -> None:
    et = element_type(type_name)
    a = _samples(et)
    got = run1(name, [a], type_name)
    expect = [_INT_UNARY[name](x, et) for x in a]
    assert [int(v) for v in got.astype(np.int64 if et.is_signed else np.uint64)] == expect


@pytest.mark.parametrize("direction", ["EQ", "NE", "GE", "GT", "LE", "LT"])
@pytest.mark.parametrize("type_name", INT_TYPES + ["i1"])
def test_compare_integers(direction: str, type_name: str, no_warnings) -> None:
    et = element_type(type_name)
    vals = [0, 1] if et.is_bool else _samples(et)
    pairs = list(itertools.product(vals, repeat=2))
    ct = "UNSIGNED" if (et.is_bool or et.is_unsigned) else "SIGNED"
    got = run1("stablehlo.compare", [[p[0] for p in pairs], [p[1] for p in pairs]], type_name,
              "i1", **cmp_props(direction, ct))
    ops = {"EQ": int.__eq__, "NE": int.__ne__, "GE": int.__ge__, "GT": int.__gt__,
           "LE": int.__le__, "LT": int.__lt__}
    assert got.tolist() == [ops[direction](x, y) for x, y in pairs]


def test_boolean_ops(no_warnings) -> None:
    a = [False, False, True, True]
    b = [False, True, False, True]
    assert run1("stablehlo.add", [a, b], "i1").tolist() == [False, True, True, True]
    assert run1("stablehlo.multiply", [a, b], "i1").tolist() == [False, False, False, True]
    assert run1("stablehlo.and", [a, b], "i1").tolist() == [False, False, False, True]
    assert run1("stablehlo.or", [a, b], "i1").tolist() == [False, True, True, True]
    assert run1("stablehlo.xor", [a, b], "i1").tolist() == [False, True, True, False]
    assert run1("stablehlo.maximum", [a, b], "i1").tolist() == [False, True, True, True]
    assert run1("stablehlo.minimum", [a, b], "i1").tolist() == [False, False, False, True]
    assert run1("stablehlo.select", [a, [1, 2, 3, 4], [5, 6, 7, 8]], ["i1", "i8", "i8"]
               ).tolist() == [5, 6, 3, 4]


def test_integer_edge_cases(no_warnings) -> None:
    imin = np.iinfo(np.int32).min
    # XLA's choices for division by zero and INT_MIN / -1 (spec: undefined)
    assert run1("stablehlo.divide", [[7, -7, imin, 0], [0, 0, -1, 0]], "i32").tolist() == \
        [-1, -1, imin, -1]
    assert run1("stablehlo.divide", [[7, 0], [0, 0]], "ui32").tolist() == [2**32 - 1] * 2
    assert run1("stablehlo.remainder", [[7, -7, imin], [0, 0, -1]], "i32").tolist() == [7, -7, 0]
    assert run1("stablehlo.abs", [[imin]], "i32").tolist() == [imin]
    assert run1("stablehlo.negate", [[imin, 1]], "i32").tolist() == [imin, -1]
    assert run1("stablehlo.negate", [[1, 0]], "ui8").tolist() == [255, 0]
    # shifts by negative or too large amounts
    assert run1("stablehlo.shift_left", [[1, 1, 1], [-1, 32, 31]], "i32").tolist() == \
        [0, 0, imin]
    assert run1("stablehlo.shift_right_arithmetic", [[-8, 8, -8], [-1, 40, 2]], "i32").tolist() \
        == [-1, 0, -2]
    assert run1("stablehlo.shift_right_arithmetic", [[0x80, 0x40], [1, 1]], "ui8").tolist() == \
        [0xC0, 0x20]
    # int4 wraps
    assert run1("stablehlo.add", [[7, -8], [1, -1]], "i4").tolist() == [-8, 7]
    assert run1("stablehlo.multiply", [[7], [7]], "i4").tolist() == [1]
    assert run1("stablehlo.power", [[2, 3], [3, 3]], "i4").tolist() == [-8, -5]
    assert run1("stablehlo.popcnt", [[-1, -8]], "i4").tolist() == [4, 1]
    assert run1("stablehlo.count_leading_zeros", [[0, 1, -1]], "ui4").tolist() == [4, 3, 0]


def test_integer_power_negative_exponents(no_warnings) -> None:
    r = run1("stablehlo.power", [[2, 1, -1, -1, 0, -1], [-1, -7, -3, -4, -2, -2**31]], "i32")
    assert r.tolist() == [0, 1, -1, 1, 0, 1]
    r = run1("stablehlo.power", [[3, 2, 0], [2**32 - 1, 63, 0]], "ui32")
    assert r.tolist() == [pow(3, 2**32 - 1, 2**32), 0, 1]


# --- floats: semantics the spec fixes -------------------------------------------------------------


@pytest.mark.parametrize("type_name", ["bf16", "f16", "f32", "f64", "f8E4M3FN", "f8E5M2"])
def test_float_maximum_minimum_ieee(type_name: str, quiet_floats) -> None:
    x = [-0.0, 0.0, -0.0, 0.0, np.nan, 1.0, 2.0, -3.0]
    y = [0.0, -0.0, -0.0, 0.0, 1.0, np.nan, 1.0, -1.0]
    mx = run1("stablehlo.maximum", [x, y], type_name).astype(np.float64)
    mn = run1("stablehlo.minimum", [x, y], type_name).astype(np.float64)
    np.testing.assert_array_equal(mx, [0.0, 0.0, -0.0, 0.0, np.nan, np.nan, 2.0, -1.0])
    np.testing.assert_array_equal(mn, [-0.0, -0.0, -0.0, 0.0, np.nan, np.nan, 1.0, -3.0])
    assert np.signbit(mx[:4]).tolist() == [False, False, True, False]
    assert np.signbit(mn[:4]).tolist() == [True, True, True, False]


@pytest.mark.parametrize("type_name", ["f16", "f32", "f64"])
@pytest.mark.parametrize("size", [1, 3, 16, 64, 65, 1000])
def test_float_maximum_minimum_zero_signs_at_any_size(type_name: str, size: int,
                                                      quiet_floats) -> None:
    # Small results are searched for the wrong zero's bytes, larger ones compared: both give
    # IEEE's zero signs, also when a value's bytes run into the next one's (an unaligned match
    # of -0's or +0's bytes, e.g. a +0 followed by a float whose low bytes are 0x80 0x00...).
    dt = np.dtype({"f16": np.float16, "f32": np.float32, "f64": np.float64}[type_name])
    u = np.dtype(f"u{dt.itemsize}")
    r = np.random.default_rng(size)
    pool = np.array([-0.0, 0.0, 1.0, -2.0, np.nan, np.inf], dt)
    tricky = np.array([1 << (8 * dt.itemsize - 8), 0x80, 1], u).view(dt)  # unaligned matches
    x = np.concatenate([pool, tricky])[r.integers(0, 9, size)]
    y = np.concatenate([pool, tricky])[r.integers(0, 9, size)]
    xb, yb = x.view(u).astype(np.uint64), y.view(u).astype(np.uint64)
    nan = np.isnan(x) | np.isnan(y)
    for name, better, same in (("maximum", x > y, xb & yb), ("minimum", x < y, xb | yb)):
        got = run1(f"stablehlo.{name}", [x, y], type_name)
        want = np.where(x == y, same, np.where(better, xb, yb)).astype(u).view(dt)
        assert np.array_equal(np.isnan(got), nan)
        assert got[~nan].view(u).tolist() == want[~nan].view(u).tolist()


def test_clamp_broadcast_and_nan(quiet_floats) -> None:
    r = run1("stablehlo.clamp", [0.0, [-1.0, 0.5, 2.0, np.nan], 1.0], "f32")
    np.testing.assert_array_equal(r, np.float32([0.0, 0.5, 1.0, np.nan]))
    r = run1("stablehlo.clamp", [[5, 0, 9], [1, 1, 1], 4], "i8")
    assert r.tolist() == [4, 1, 4]  # min > max: minimum(maximum(x, min), max)
    r = run1("stablehlo.clamp", [np.float32(np.nan), [1.0], 2.0], "f32")
    assert np.isnan(r).all()


@pytest.mark.parametrize("type_name", ["f32", "f64", "bf16", "f16", "f8E4M3FN", "f4E2M1FN"])
def test_round_ops(type_name: str) -> None:
    x = [-2.5, -1.5, -0.5, -0.25, 0.0, 0.5, 1.5, 2.5, 3.0, -3.0]
    afz = run1("stablehlo.round_nearest_afz", [x], type_name).astype(np.float64)
    even = run1("stablehlo.round_nearest_even", [x], type_name).astype(np.float64)
    xs = np.asarray(x, element_type(type_name).dtype).astype(np.float64)
    expect_afz = np.where(np.abs(xs - np.trunc(xs)) >= 0.5, np.trunc(xs) + np.sign(xs),
                          np.trunc(xs))
    np.testing.assert_array_equal(afz, expect_afz)
    np.testing.assert_array_equal(even, np.rint(xs))
    assert np.signbit(afz).tolist() == np.signbit(expect_afz).tolist()
    assert np.signbit(even).tolist() == np.signbit(np.rint(xs)).tolist()


def test_round_afz_no_double_rounding(quiet_floats) -> None:
    x = [0.49999999999999994, -0.49999999999999994, 4503599627370495.5, 1e300, np.inf, np.nan]
    r = run1("stablehlo.round_nearest_afz", [x], "f64")
    np.testing.assert_array_equal(r, [0.0, -0.0, 4503599627370496.0, 1e300, np.inf, np.nan])
    assert np.signbit(r[1])


@pytest.mark.parametrize("type_name", FLOAT_TYPES)
def test_float_sign(type_name: str, quiet_floats) -> None:
    x = [-2.0, -0.0, 0.0, 0.5, 3.0, np.nan]
    r = run1("stablehlo.sign", [x], type_name).astype(np.float64)
    src = np.asarray(x, element_type(type_name).dtype).astype(np.float64)
    expect = np.where((src == 0) | np.isnan(src), src, np.sign(src))
    np.testing.assert_array_equal(r, expect)
    assert np.signbit(r[:3]).tolist() == np.signbit(src[:3]).tolist()


def test_complex_sign_abs(quiet_floats) -> None:
    z = [3 + 4j, 0j, complex(np.nan, 1), -2j]
    r = run1("stablehlo.sign", [z], "complex<f64>")
    np.testing.assert_allclose(r[[0, 1, 3]], [0.6 + 0.8j, 0j, -1j])
    assert np.isnan(r[2].real) and np.isnan(r[2].imag)
    a = run1("stablehlo.abs", [[3 + 4j, -5j]], ["complex<f32>"], "f32")
    assert a.tolist() == [5.0, 5.0]


@pytest.mark.parametrize("type_name", ["f16", "bf16", "f32", "f64", "f8E5M2", "f8E4M3FN"])
def test_compare_float_and_totalorder(type_name: str) -> None:
    dt = element_type(type_name).dtype
    with np.errstate(all="ignore"):
        vals = np.array([-np.inf, -2.0, -0.0, 0.0, 1.0, np.inf, np.nan], np.float32).astype(dt)
    neg_nan = np.array(np.asarray(vals[-1]).view(np.uint8 if dt.itemsize == 1 else
                                                 f"u{dt.itemsize}") | (1 << (8 * dt.itemsize - 1)))
    vals = np.concatenate([vals, neg_nan.reshape(1).view(dt)])
    pairs = list(itertools.product(range(len(vals)), repeat=2))
    x = vals[[p[0] for p in pairs]]
    y = vals[[p[1] for p in pairs]]
    xf, yf = x.astype(np.float64), y.astype(np.float64)
    # total order ranks of the values (by construction order; -NaN first, +NaN last)
    order = {0: 1, 1: 2, 2: 3, 3: 4, 4: 5, 5: 6, 6: 7, 7: 0}
    if not np.isinf(float(vals[0])):  # formats without inf (f8E4M3FN): -inf became NaN
        order = None
    for d, f in [("EQ", np.equal), ("NE", np.not_equal), ("LT", np.less), ("LE", np.less_equal),
                 ("GT", np.greater), ("GE", np.greater_equal)]:
        got = run1("stablehlo.compare", [x, y], type_name, "i1", **cmp_props(d, "FLOAT"))
        assert got.tolist() == f(xf, yf).tolist()
        if order is not None:
            got = run1("stablehlo.compare", [x, y], type_name, "i1", **cmp_props(d, "TOTALORDER"))
            rank = [(order[i], order[j]) for i, j in pairs]
            assert got.tolist() == [bool(f(a, b)) for a, b in rank], d


def test_totalorder_sub_byte_formats() -> None:
    x = np.array([-6.0, -0.5, -0.0, 0.0, 0.5, 6.0], ml_dtypes.float4_e2m1fn)
    pairs = list(itertools.product(range(6), repeat=2))
    got = run1("stablehlo.compare", [x[[p[0] for p in pairs]], x[[p[1] for p in pairs]]],
              "f4E2M1FN", "i1", **cmp_props("LT", "TOTALORDER"))
    assert got.tolist() == [i < j for i, j in pairs]


def test_complex_compare_and_minmax() -> None:
    x = [1 + 1j, 1 + 2j, 2 + 0j, 1 + 1j]
    y = [1 + 2j, 1 + 1j, 1 + 5j, 1 + 1j]
    assert run1("stablehlo.compare", [x, y], "complex<f32>", "i1", **cmp_props("LT", "FLOAT")
               ).tolist() == [True, False, False, False]
    assert run1("stablehlo.compare", [x, y], "complex<f32>", "i1", **cmp_props("GE", "FLOAT")
               ).tolist() == [False, True, True, True]
    assert run1("stablehlo.compare", [x, y], "complex<f64>", "i1", **cmp_props("EQ")
               ).tolist() == [False, False, False, True]
    assert run1("stablehlo.maximum", [x, y], "complex<f64>").tolist() == \
        [1 + 2j, 1 + 2j, 2 + 0j, 1 + 1j]
    assert run1("stablehlo.minimum", [x, y], "complex<f64>").tolist() == \
        [1 + 1j, 1 + 1j, 1 + 5j, 1 + 1j]


def test_complex_functions_against_numpy() -> None:
    z = np.array([0.5 + 0.25j, -1.5 + 2j, 3 - 1j, 1e-9 + 1e-9j], np.complex128)
    for name, f in [("stablehlo.exponential", np.exp), ("stablehlo.log", np.log),
                    ("stablehlo.sine", np.sin), ("stablehlo.cosine", np.cos),
                    ("stablehlo.tan", np.tan), ("stablehlo.tanh", np.tanh),
                    ("stablehlo.sqrt", np.sqrt), ("stablehlo.exponential_minus_one", np.expm1),
                    ("stablehlo.rsqrt", lambda v: 1 / np.sqrt(v)),
                    ("stablehlo.logistic", lambda v: 1 / (1 + np.exp(-v))),
                    ("stablehlo.cbrt", lambda v: v ** (1 / 3))]:
        np.testing.assert_allclose(run1(name, [z], "complex<f64>"), f(z), rtol=1e-13,
                                   err_msg=name)
        r = run1(name, [z], "complex<f32>")
        np.testing.assert_allclose(r, f(z.astype(np.complex64).astype(np.complex128)),
                                   rtol=1e-6, err_msg=name)
    # log1p is accurate for small arguments
    np.testing.assert_allclose(run1("stablehlo.log_plus_one", [z], "complex<f64>"),
                               [np.log(1 + v) if abs(v) > 1e-3 else v - v * v / 2 for v in z],
                               rtol=1e-12)
    y, x = np.array([1 + 1j, -2 + 0.5j]), np.array([2 - 1j, 1 + 3j])
    expect = -1j * np.log((x + 1j * y) / np.sqrt(x * x + y * y))
    np.testing.assert_allclose(run1("stablehlo.atan2", [y, x], "complex<f64>"), expect)
    np.testing.assert_allclose(run1("stablehlo.power", [y, x], "complex<f64>"), y ** x)
    np.testing.assert_allclose(run1("stablehlo.divide", [y, x], "complex<f32>"),
                               (y / x).astype(np.complex64), rtol=1e-7)


def test_complex_functions_at_infinity(quiet_floats) -> None:
    """Infinite arguments give the limits C++ and XLA give, not numpy's NaNs."""
    r = run1("stablehlo.exponential_minus_one", [[complex(np.inf, 0)]], "complex<f64>")
    assert r[0].real == np.inf and r[0].imag == 0
    r = run1("stablehlo.logistic", [[complex(-1e308, -0.6), complex(-np.inf, -1.4)]],
            "complex<f64>")
    assert r.tolist() == [0j, 0j]
    r = run1("stablehlo.cbrt", [[complex(-np.inf, -1.4)]], "complex<f32>")
    assert r.tolist() == [complex(np.inf, -np.inf)]


def test_complex_construction_keeps_special_values() -> None:
    r = run1("stablehlo.complex", [[np.inf, 0.0], [np.nan, -0.0]], "f32", "complex<f32>")
    assert r.real.tolist()[0] == np.inf and np.isnan(r.imag[0])
    assert np.signbit(r.imag[1]) and not np.signbit(r.real[1])
    r = run1("stablehlo.imag", [[1.0, -2.0]], ["bf16"], "bf16")
    assert r.astype(np.float32).tolist() == [0.0, 0.0]
    r = run1("stablehlo.real", [[1.5]], ["f16"], "f16")
    assert r.tolist() == [1.5]


def test_is_finite_all_float_types(quiet_floats) -> None:
    for type_name in FLOAT_TYPES:
        dt = element_type(type_name).dtype
        x = np.array([1.0, np.inf, np.nan], np.float32).astype(dt)
        got = run1("stablehlo.is_finite", [x], [type_name], "i1")
        assert got.tolist() == np.isfinite(x.astype(np.float64)).tolist(), type_name


def test_is_finite_quantized() -> None:
    q = QuantizedType(element_type("i8"), element_type("f32"), (0.5,), (0,))
    from shlo.types import TensorType

    k = prepare_op("stablehlo.is_finite", [TensorType((3,), q)], tensor((3,), "i1"))
    (out,) = k(np.array([1, -128, 127], np.int8))
    assert out.dtype == np.bool_ and out.tolist() == [True, True, True]


def test_float_remainder_sign_of_dividend() -> None:
    r = run1("stablehlo.remainder", [[5.5, -5.5, 5.5, -5.5, 1.0], [2.0, 2.0, -2.0, -2.0, 0.5]],
            "f32")
    assert r.tolist() == [1.5, -1.5, 1.5, -1.5, 0.0]
    with np.errstate(all="ignore"):
        r = run1("stablehlo.remainder", [[1.0, np.inf], [0.0, 1.0]], "bf16")
    assert np.isnan(r.astype(np.float32)).all()


# --- bitcast_convert -------------------------------------------------------------------------


@pytest.mark.parametrize("src,dst", [("i32", "f32"), ("f64", "ui64"), ("bf16", "i16"),
                                     ("f16", "ui16"), ("i8", "ui8"), ("f8E4M3FN", "i8"),
                                     ("complex<f32>", "complex<f32>")])
def test_bitcast_same_width(src: str, dst: str) -> None:
    rng = np.random.default_rng(0)
    n = element_type(src).dtype.itemsize
    raw = rng.integers(0, 256, size=(3, 2, n), dtype=np.uint8)
    x = raw.view(element_type(src).dtype).reshape(3, 2)
    (out,) = prepare_op("stablehlo.bitcast_convert", [src], dst, (3, 2))(x)
    assert out.dtype == element_type(dst).dtype and out.shape == (3, 2)
    assert out.tobytes() == x.tobytes()


def test_bitcast_width_changes() -> None:
    x = np.array([0x0102030405060708, -1], np.int64)
    k = prepare_op("stablehlo.bitcast_convert", ["i64"], "ui16", (2,))
    (out,) = k(x)
    assert out.shape == (2, 4) and out.tolist()[0] == [0x0708, 0x0506, 0x0304, 0x0102]
    k = prepare_op("stablehlo.bitcast_convert", [tensor((2, 4), "ui16")], tensor((2,), "i64"))
    (back,) = k(out)
    assert back.tolist() == x.tolist()
    # 0-d operand to a vector
    (v,) = prepare_op("stablehlo.bitcast_convert", ["f32"], "ui8")(np.float32(1.0))
    assert v.tolist() == [0, 0, 0x80, 0x3F]


def test_bitcast_sub_byte_and_bool() -> None:
    # i8 -> 2 x i4 (low nibble first), and back
    k = prepare_op("stablehlo.bitcast_convert", [tensor((2,), "i8")], tensor((2, 2), "i4"))
    (out,) = k(np.array([0x7F, -2], np.int8))
    assert out.dtype == ml_dtypes.int4 and out.astype(int).tolist() == [[-1, 7], [-2, -1]]
    k = prepare_op("stablehlo.bitcast_convert", [tensor((2, 2), "i4")], tensor((2,), "ui8"))
    (back,) = k(out)
    assert back.tolist() == [0x7F, 0xFE]
    (b,) = prepare_op("stablehlo.bitcast_convert", ["i1"], "i1", (2,))(np.array([True, False]))
    assert b.tolist() == [True, False]
    k = prepare_op("stablehlo.bitcast_convert", [tensor((2,), "ui4")], tensor((2,), "i4"))
    (s,) = k(np.array([15, 8], ml_dtypes.uint4))
    assert s.dtype == ml_dtypes.int4 and s.astype(int).tolist() == [-1, -8]
    k = prepare_op("stablehlo.bitcast_convert", [tensor((2,), "f4E2M1FN")], tensor((2,), "ui4"))
    (f,) = k(np.array([-1.0, 6.0], ml_dtypes.float4_e2m1fn))
    assert f.astype(int).tolist() == [0b1010, 0b0111]


def test_bitcast_quantized_storage() -> None:
    q = QuantizedType(element_type("i8"), element_type("f32"), (0.5,), (0,))
    from shlo.types import TensorType

    k = prepare_op("stablehlo.bitcast_convert", [TensorType((2,), q)], tensor((2,), "ui8"))
    (out,) = k(np.array([-1, 3], np.int8))
    assert out.dtype == np.uint8 and out.tolist() == [255, 3]


# --- shapes, scalars, batched region values -----------------------------------------------------


@pytest.mark.parametrize("name,types,result", [
    ("stablehlo.add", ["f32", "f32"], "f32"), ("stablehlo.add", ["i4", "i4"], "i4"),
    ("stablehlo.divide", ["i32", "i32"], "i32"), ("stablehlo.power", ["i8", "i8"], "i8"),
    ("stablehlo.maximum", ["bf16", "bf16"], "bf16"), ("stablehlo.exponential", ["f16"], "f16"),
    ("stablehlo.shift_left", ["ui32", "ui32"], "ui32"), ("stablehlo.popcnt", ["i16"], "i16"),
    ("stablehlo.count_leading_zeros", ["i4"], "i4"), ("stablehlo.sign", ["f32"], "f32"),
    ("stablehlo.convert", ["f64"], "bf16"), ("stablehlo.convert", ["i64"], "f16"),
    ("stablehlo.remainder", ["i8", "i8"], "i8"), ("stablehlo.not", ["ui4"], "ui4"),
    ("stablehlo.round_nearest_afz", ["bf16"], "bf16"), ("stablehlo.abs", ["complex<f32>"], "f32"),
    ("stablehlo.reduce_precision", ["f32"], "f32"), ("stablehlo.complex", ["f32", "f32"],
                                                     "complex<f32>"),
])
def test_scalars_and_shapes(name: str, types: list[str], result: str, no_warnings) -> None:
    """A kernel prepared for 0-d tensors works on numpy scalars, 0-d arrays and any shape
    (region bodies run over whole arrays), always returning the result dtype."""
    props = {"exponent_bits": IntegerAttr(5), "mantissa_bits": IntegerAttr(2)} \
        if name == "stablehlo.reduce_precision" else {}
    k = prepare_op(name, types, result, (), **props)
    rng = np.random.default_rng(1)
    arrays = []
    for t in types:
        et = element_type(t)
        v = rng.integers(1, 4, size=(3, 4))
        arrays.append(np.asarray(v if not et.is_complex else v + 1j, et.dtype))
    with np.errstate(all="ignore"):
        big = np.asarray(k(*arrays)[0])
        scal = k(*[a[1, 2][()] for a in arrays])[0]  # numpy scalars
        zero_d = k(*[np.asarray(a[1, 2]) for a in arrays])[0]
        mixed = k(*([arrays[0]] + [a[0, 0][()] for a in arrays[1:]]))[0] if len(arrays) > 1 \
            else big
    rdt = element_type(result).dtype
    assert big.dtype == rdt and big.shape == (3, 4)
    assert np.asarray(scal).dtype == rdt and np.shape(scal) == ()
    assert np.asarray(zero_d).dtype == rdt and np.shape(zero_d) == ()
    assert bits_equal(np.asarray(scal), np.asarray(big[1, 2]))
    assert bits_equal(np.asarray(zero_d), np.asarray(big[1, 2]))
    assert np.asarray(mixed).shape == (3, 4)


def test_select_scalar_pred_and_batched() -> None:
    k = prepare_op("stablehlo.select", ["i1", "f32", "f32"], "f32", (2,))
    t, f = np.float32([1, 2]), np.float32([3, 4])
    assert k(np.bool_(True), t, f)[0] is t
    assert k(np.array(False), t, f)[0] is f
    assert k(np.array([True, False]), t, f)[0].tolist() == [1.0, 4.0]
    # a region body evaluated over arrays: 0-d constants broadcast against batched values
    k0 = prepare_op("stablehlo.select", ["i1", "f32", "f32"], "f32")
    assert k0(np.array([True, False, True]), np.float32(9), np.float32([1, 2, 3]))[0].tolist() \
        == [9.0, 2.0, 9.0]


def test_unsupported_types_fail_at_prepare() -> None:
    with pytest.raises(ExecutionError, match="not defined for element type i1"):
        prepare_op("stablehlo.subtract", ["i1", "i1"], "i1")
    with pytest.raises(ExecutionError, match="complex"):
        prepare_op("stablehlo.remainder", ["complex<f32>"] * 2, "complex<f32>")
    with pytest.raises(ExecutionError):
        prepare_op("stablehlo.sine", ["i32"], "i32")


def test_all_ops_registered() -> None:
    from shlo.registry import lookup

    names = """abs add and atan2 bitcast_convert cbrt ceil clamp compare complex convert cosine
    count_leading_zeros divide exponential exponential_minus_one floor imag is_finite log
    log_plus_one logistic maximum minimum multiply negate not or popcnt power real
    reduce_precision remainder round_nearest_afz round_nearest_even rsqrt select shift_left
    shift_right_arithmetic shift_right_logical sign sine sqrt subtract tan tanh xor""".split()
    for n in names:
        d = lookup("stablehlo." + n)
        assert d is not None and d.prepare is not None, n
