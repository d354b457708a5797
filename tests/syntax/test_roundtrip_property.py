"""Property tests: print -> parse is the identity on generated types, attributes and dense
literals (bit-exact: NaN payloads, -0.0, every ml_dtypes type, hex and decimal spellings)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import shlo
from shlo.attributes import (
    ArrayAttr, BoolAttr, DenseArrayAttr, DenseElementsAttr, DictAttr, EnumAttr, FloatAttr,
    IntegerAttr, StringAttr, StructAttr, SymbolRefAttr, TypeAttr, UnitAttr,
)
from shlo.syntax.dense import format_dense_body
from shlo.syntax.printer import format_attr, format_type
from shlo.types import (
    ComplexType, FloatType, IntegerType, QuantizedType, TensorType, TupleType, element_type,
)

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

INT_NAMES = ["i1", "i2", "i4", "i8", "i16", "i32", "i64", "ui2", "ui4", "ui8", "ui16", "ui32",
             "ui64", "si8", "si32"]
FLOAT_NAMES = ["f4E2M1FN", "f6E2M3FN", "f6E3M2FN", "f8E3M4", "f8E4M3", "f8E4M3FN", "f8E4M3FNUZ",
               "f8E4M3B11FNUZ", "f8E5M2", "f8E5M2FNUZ", "f8E8M0FNU", "bf16", "f16", "f32",
               "f64"]
ELEMENT_NAMES = INT_NAMES + FLOAT_NAMES + ["complex<f32>", "complex<f64>"]


def parse_attr(text: str):
    m = shlo.parse(f'"t.op"() {{a = {text}}} : () -> ()')
    return m.body.operations[0].attributes["a"]


def parse_type(text: str):
    return parse_attr(text).type


# --- strategies ---------------------------------------------------------------------------------


@st.composite
def element_arrays(draw, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """An array of ``shape`` whose elements are arbitrary valid bit patterns of type ``name``."""
    et = element_type(name)
    n = int(np.prod(shape)) if shape else 1
    if isinstance(et, IntegerType):
        if et.width == 1:
            vals = draw(st.lists(st.booleans(), min_size=n, max_size=n))
            return np.array(vals, dtype=np.bool_).reshape(shape)
        vals = draw(st.lists(st.integers(et.min, et.max), min_size=n, max_size=n))
        return np.array(vals, dtype=object).astype(et.dtype).reshape(shape)
    if isinstance(et, ComplexType):
        comp = et.element.dtype
        raw = draw(st.binary(min_size=2 * n * comp.itemsize, max_size=2 * n * comp.itemsize))
        return np.frombuffer(raw, dtype=et.dtype).reshape(shape)
    assert isinstance(et, FloatType)
    dtype = et.dtype
    if et.width < 8:  # 4/6-bit formats live in the low bits of a byte
        vals = draw(st.lists(st.integers(0, (1 << et.width) - 1), min_size=n, max_size=n))
        return np.array(vals, dtype=np.uint8).view(dtype).reshape(shape)
    special = st.sampled_from([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1.0, 0.1])
    if draw(st.booleans()):
        raw = draw(st.binary(min_size=n * dtype.itemsize, max_size=n * dtype.itemsize))
        return np.frombuffer(raw, dtype=dtype).reshape(shape)
    vals = draw(st.lists(special, min_size=n, max_size=n))
    return np.array(vals, dtype=np.float64).astype(dtype).reshape(shape)


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=3).map(tuple)


@st.composite
def dense_attrs(draw) -> DenseElementsAttr:
    name = draw(st.sampled_from(ELEMENT_NAMES))
    shape = draw(shapes)
    arr = draw(element_arrays(name, shape))
    if draw(st.booleans()) and arr.size:  # a splat
        arr = np.broadcast_to(arr.reshape(-1)[:1].reshape(()), shape)
    return DenseElementsAttr(TensorType(shape, element_type(name)), arr)


@st.composite
def quantized_types(draw) -> QuantizedType:
    storage = element_type(draw(st.sampled_from(["i4", "i8", "i16", "ui8", "i32"])))
    expressed = element_type(draw(st.sampled_from(["f16", "bf16", "f32", "f64"])))
    per_axis = draw(st.booleans())
    n = draw(st.integers(1, 3)) if per_axis else 1
    scales = tuple(draw(st.lists(st.floats(1e-30, 1e30, allow_nan=False), min_size=n,
                                 max_size=n)))
    zps = tuple(draw(st.lists(st.integers(storage.min, storage.max), min_size=n, max_size=n)))
    lo = hi = None
    if draw(st.booleans()):
        lo, hi = storage.min + 1, storage.max
    return QuantizedType(storage, expressed, scales, zps, draw(st.integers(0, 3)) if per_axis
                         else None, lo, hi)


dims = st.one_of(st.integers(0, 64), st.none())


@st.composite
def tensor_types(draw) -> TensorType:
    shape = tuple(draw(st.lists(dims, max_size=4)))
    et = draw(st.one_of(st.sampled_from(ELEMENT_NAMES).map(element_type), quantized_types()))
    enc = None
    if any(d is None for d in shape) and draw(st.booleans()):
        bounds = tuple(draw(st.integers(0, 64)) if d is None else None for d in shape)
        enc = StructAttr("stablehlo.bounds", (("bounds", bounds),))
    return TensorType(shape, et, enc)


types = st.recursive(tensor_types(), lambda inner: st.lists(inner, max_size=3).map(
    lambda ts: TupleType(tuple(ts))), max_leaves=5)

texts = st.text(max_size=20)
keys = st.from_regex(r"[A-Za-z_][\w.$]{0,8}", fullmatch=True)


def scalar_attrs():
    i64 = element_type("i64")
    return st.one_of(
        st.integers(-2 ** 63, 2 ** 63 - 1).map(lambda v: IntegerAttr(v, i64)),
        st.integers(-2 ** 31, 2 ** 31 - 1).map(lambda v: IntegerAttr(v, element_type("i32"))),
        st.floats(allow_nan=False).map(lambda v: FloatAttr(v, element_type("f64"))),
        st.floats(width=32, allow_nan=False).map(lambda v: FloatAttr(v, element_type("f32"))),
        st.booleans().map(BoolAttr),
        texts.map(StringAttr),
        st.just(UnitAttr()),
        keys.map(lambda k: SymbolRefAttr(k)),
        st.sampled_from(["EQ", "NE", "GE", "GT", "LE", "LT"]).map(
            lambda v: EnumAttr("stablehlo", "comparison_direction", v)),
        st.lists(st.integers(-2 ** 63, 2 ** 63 - 1), max_size=4).map(
            lambda vs: DenseArrayAttr(i64, tuple(vs))),
        st.lists(st.booleans(), max_size=4).map(
            lambda vs: DenseArrayAttr(element_type("i1"), tuple(vs))),
        tensor_types().map(TypeAttr),
        dense_attrs(),
    )


attrs = st.recursive(scalar_attrs(), lambda inner: st.one_of(
    st.lists(inner, max_size=3).map(lambda xs: ArrayAttr(tuple(xs))),
    st.dictionaries(keys, inner, max_size=3).map(
        lambda d: DictAttr(tuple(sorted(d.items()))))), max_leaves=8)


# --- properties ---------------------------------------------------------------------------------


def same_dense(a: DenseElementsAttr, b: DenseElementsAttr) -> bool:
    return (a.type == b.type and a.array.shape == b.array.shape
            and a.array.dtype == b.array.dtype
            and np.ascontiguousarray(a.array).tobytes() == np.ascontiguousarray(b.array).tobytes())


@SETTINGS
@given(dense_attrs())
def test_dense_literals_round_trip_bit_exactly(attr):
    back = parse_attr(format_attr(attr))
    assert same_dense(attr, back), (format_attr(attr), back.array)


@SETTINGS
@given(dense_attrs())
def test_dense_hex_form_round_trips(attr):
    body = format_dense_body(attr.array, attr.type.element_type, hex_threshold=0)
    back = parse_attr(f"dense<{body}> : {format_type(attr.type)}")
    assert same_dense(attr, back), body


@SETTINGS
@given(types)
def test_types_round_trip(t):
    assert parse_type(format_type(t)) == t


@SETTINGS
@given(attrs)
def test_attributes_round_trip(a):
    back = parse_attr(format_attr(a))
    if isinstance(a, DenseElementsAttr):
        assert same_dense(a, back)
    else:
        assert back == a, format_attr(a)


@SETTINGS
@given(st.sampled_from(FLOAT_NAMES), st.binary(min_size=8, max_size=8))
def test_float_attributes_keep_their_bits(name, raw):
    et = element_type(name)
    dtype = et.dtype
    if et.width < 8:
        bits = raw[0] & ((1 << et.width) - 1)
        v = np.array([bits], dtype=np.uint8).view(dtype)[0]
    else:
        v = np.frombuffer(raw[:dtype.itemsize], dtype=dtype)[0]
    t = TensorType((1,), et)
    a = DenseElementsAttr(t, np.array([v], dtype=dtype))
    back = parse_attr(format_attr(a))
    assert back.array.tobytes() == a.array.tobytes(), format_attr(a)


# --- every op form with extreme attribute values (issue 16, item 3) ------------------------------

_EXTREMES = ["0", "-1", "1", "2147483647", "-2147483648", "9223372036854775807",
             "-9223372036854775808", "4294967295", "255", "-0.0", "1.0e+308", "0x7FF8000000000001",
             "0xFFFFFFFFFFFFFFFF", "0x0"]


def _generic_seeds() -> list[str]:
    from fuzz.seeds import BUILTIN, corpus_programs

    out = []
    for text in list(BUILTIN) + [c for c in corpus_programs() if "stablehlo." in c][:400]:
        try:
            out.append(shlo.format(shlo.parse(text), generic=True))
        except shlo.ShloError:
            continue
    return out


_GENERIC = None


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_every_op_form_with_extreme_attribute_values_prints_back(data):
    """An op's generic form with one attribute number replaced by an extreme value: when it
    parses, the pretty and the generic print parse back to the same text."""
    import re

    from fuzz.parser_mutations import check_parsed

    global _GENERIC
    if _GENERIC is None:
        _GENERIC = _generic_seeds()
    text = data.draw(st.sampled_from(_GENERIC))
    lines = text.split("\n")
    ops = [i for i, ln in enumerate(lines) if re.search(r'"(stablehlo|chlo)\.\w+"', ln)
           and re.search(r"\d", ln)]
    if not ops:
        return
    i = data.draw(st.sampled_from(ops))
    nums = list(re.finditer(r"(?<![\w.%#^@])-?\d+(?:\.\d+(?:e[-+]\d+)?)?(?![\w.])", lines[i]))
    if not nums:
        return
    m = data.draw(st.sampled_from(nums))
    lines[i] = lines[i][:m.start()] + data.draw(st.sampled_from(_EXTREMES)) + lines[i][m.end():]
    try:
        module = shlo.parse("\n".join(lines))
    except shlo.ParseError:
        return  # out of range for its type: the parser says so (test_integer_literals.py)
    check_parsed(module)
