"""stablehlo-legalize-to-tosa and stablehlo-prepare-for-tosa: the ops and attributes upstream's
tests (stablehlo/conversions/tosa/tests/{unary,binary,nullary,ternary}.mlir) expect, on the
same test vectors, and each legalized program run against the StableHLO program it came from
(the TOSA ops' kernels follow the TOSA 1.0 pseudocode)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import shlo
from shlo.passes import run_passes

TOSA = "stablehlo-legalize-to-tosa"
PREPARE = "stablehlo-prepare-for-tosa"


def func(args: str, result: str, body: str) -> str:
    return f"func.func @main({args}) -> {result} {{\n{body}\n}}"


def legalize(text: str) -> shlo.Module:
    out = run_passes(shlo.parse(text), [TOSA])
    shlo.verify(out)
    assert shlo.format(shlo.parse(shlo.format(out))) == shlo.format(out)  # round trip
    return out


def op_names(m: shlo.Module) -> list[str]:
    return [o.name for o in m.walk() if o.name not in ("builtin.module", "func.func",
                                                        "func.return")]


def sample(t, rng: np.random.Generator) -> np.ndarray:
    et = t.element_type
    if et.is_bool:
        return rng.integers(0, 2, t.shape).astype(bool)
    if et.is_float:
        return rng.uniform(0.5, 3.0, t.shape).astype(t.dtype)
    return rng.integers(1, 5, t.shape).astype(t.dtype)


def same_values(before: shlo.Module, after: shlo.Module, args=None, seed: int = 0) -> None:
    """Run both programs on the same inputs: equal dtypes and values."""
    rng = np.random.default_rng(seed)
    main = next(o for o in before.walk() if o.name == "func.func")
    if args is None:
        args = [sample(a.type, rng) for a in main.regions[0].blocks[0].arguments]
    want, got = shlo.run(before, *args), shlo.run(after, *args)
    assert len(want) == len(got)
    for w, g in zip(want, got):
        w, g = np.asarray(w), np.asarray(g)
        assert w.dtype == g.dtype and w.shape == g.shape
        rtol = 1e-5 if w.dtype.itemsize >= 4 else 4e-3  # f16: log(x + 1) vs log1p
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=rtol)


T10 = "tensor<10xf32>"
I10 = "tensor<10xi32>"

# (stablehlo op, operand type, result type, the TOSA ops it becomes, in order)
ELEMENTWISE = [
    ("abs", T10, T10, ["tosa.abs"]),
    ("ceil", T10, T10, ["tosa.ceil"]),
    ("convert", I10, T10, ["tosa.cast"]),
    ("exponential", T10, T10, ["tosa.exp"]),
    ("exponential_minus_one", T10, T10, ["tosa.const", "tosa.exp", "tosa.sub"]),
    ("floor", T10, T10, ["tosa.floor"]),
    ("is_finite", T10, "tensor<10xi1>",
     ["tosa.const", "tosa.abs", "tosa.equal", "tosa.logical_not"]),
    ("log", T10, T10, ["tosa.log"]),
    ("log_plus_one", "tensor<10xf16>", "tensor<10xf16>", ["tosa.const", "tosa.add", "tosa.log"]),
    ("negate", T10, T10, ["tosa.const", "tosa.negate"]),
    ("tanh", T10, T10, ["tosa.tanh"]),
]

BINARY = [
    ("add", T10, ["tosa.add"]),
    ("and", I10, ["tosa.bitwise_and"]),
    ("divide", I10, ["tosa.intdiv"]),
    ("divide", T10, ["tosa.const", "tosa.reciprocal", "tosa.mul"]),
    ("maximum", T10, ["tosa.maximum"]),
    ("maximum", "tensor<10xf64>", ["tosa.maximum"]),
    ("minimum", T10, ["tosa.minimum"]),
    ("multiply", T10, ["tosa.const", "tosa.mul"]),
    ("or", I10, ["tosa.bitwise_or"]),
    ("power", T10, ["tosa.pow"]),
    ("shift_left", I10, ["tosa.logical_left_shift"]),
    ("shift_right_logical", I10, ["tosa.logical_right_shift"]),
    ("subtract", T10, ["tosa.sub"]),
    ("xor", I10, ["tosa.bitwise_xor"]),
]


@pytest.mark.parametrize("op,t,r,want", ELEMENTWISE, ids=[c[0] for c in ELEMENTWISE])
def test_unary(op, t, r, want):
    src = shlo.parse(func(f"%arg0: {t}", r, f'  %0 = "stablehlo.{op}"(%arg0) : ({t}) -> {r}\n'
                                              f"  return %0 : {r}"))
    out = legalize(shlo.format(src))
    assert op_names(out) == want
    same_values(src, out)


@pytest.mark.parametrize("op,t,want", BINARY, ids=[f"{c[0]}-{c[1]}" for c in BINARY])
def test_binary(op, t, want):
    src = shlo.parse(func(f"%arg0: {t}, %arg1: {t}", t,
                          f'  %0 = "stablehlo.{op}"(%arg0, %arg1) : ({t}, {t}) -> {t}\n'
                          f"  return %0 : {t}"))
    out = legalize(shlo.format(src))
    assert op_names(out) == want
    same_values(src, out)


def test_constants_and_zero_points_as_upstream():
    src = func("%arg0: tensor<10xf32>, %arg1: tensor<10xf32>", "tensor<10xf32>",
               "  %0 = stablehlo.divide %arg0, %arg1 : tensor<10xf32>\n"
               "  %1 = stablehlo.negate %0 : tensor<10xf32>\n"
               "  %2 = stablehlo.is_finite %1 : (tensor<10xf32>) -> tensor<10xi1>\n"
               "  %3 = stablehlo.select %2, %1, %arg0 : tensor<10xi1>, tensor<10xf32>\n"
               "  return %3 : tensor<10xf32>")
    text = shlo.format(legalize(src))
    assert '"tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>' in text
    assert "dense<0.000000e+00> : tensor<1xf32>" in text  # negate's zero point
    assert "dense<0x7F800000> : tensor<10xf32>" in text  # is_finite's +inf
    assert re.search(r"tosa.negate %\d+, (%\d+), \1 :", text)
    # foldCommutative moved the constant to the right: equal(abs(x), +inf)
    assert re.search(r"%(\d+) = tosa.abs .*\n.*tosa.equal %\1, %\d+", text)
    assert "tosa.select" in text
    same_values(shlo.parse(src), shlo.parse(text))


@pytest.mark.parametrize("direction,want", [
    ("EQ", ["tosa.equal"]), ("NE", ["tosa.equal", "tosa.logical_not"]),
    ("LT", ["stablehlo.compare"])])
def test_compare(direction, want):
    src = func("%arg0: tensor<10xi32>, %arg1: tensor<10xi32>", "tensor<10xi1>",
               f"  %0 = stablehlo.compare {direction}, %arg0, %arg1 : (tensor<10xi32>, "
               "tensor<10xi32>) -> tensor<10xi1>\n  return %0 : tensor<10xi1>")
    out = legalize(src)
    assert op_names(out) == want
    same_values(shlo.parse(src), out, [np.array([1, 2, 3, 4, 5] * 2, np.int32),
                                       np.array([1, 0, 3, 0, 5] * 2, np.int32)])


@pytest.mark.parametrize("types,dim,result", [
    (["tensor<3x3xf32>", "tensor<3x3xf32>"], 0, "tensor<6x3xf32>"),
    (["tensor<5x2xf32>", "tensor<5x5xf32>", "tensor<5x7xf32>"], 1, "tensor<5x14xf32>")])
def test_concatenate(types, dim, result):
    args = ", ".join(f"%arg{i}: {t}" for i, t in enumerate(types))
    vals = ", ".join(f"%arg{i}" for i in range(len(types)))
    src = func(args, result, f'  %0 = "stablehlo.concatenate"({vals}) {{dimension = {dim} : i64}}'
               f" : ({', '.join(types)}) -> {result}\n  return %0 : {result}")
    text = shlo.format(legalize(src))
    assert f"tosa.concat {vals} {{axis = {dim} : i32}} : ({', '.join(types)}) -> {result}" in text
    same_values(shlo.parse(src), shlo.parse(text))


DOTS = [  # lhs, rhs, result, dot_general contracting dims, reshapes (lhs, rhs, result)
    ("tensor<3xf32>", "tensor<3xf32>", "tensor<f32>", "[0] x [0]", ("[1, 1, 3]", "[1, 3, 1]", "")),
    ("tensor<2xf32>", "tensor<2x3xf32>", "tensor<3xf32>", "[0] x [0]",
     ("[1, 1, 2]", "[1, 2, 3]", "3")),
    ("tensor<2x3xf32>", "tensor<3xf32>", "tensor<2xf32>", "[1] x [0]",
     ("[1, 2, 3]", "[1, 3, 1]", "2")),
    ("tensor<2x3xf32>", "tensor<3x4xf32>", "tensor<2x4xf32>", "[1] x [0]",
     ("[1, 2, 3]", "[1, 3, 4]", "[2, 4]")),
]


@pytest.mark.parametrize("general", [False, True], ids=["dot", "dot_general"])
@pytest.mark.parametrize("lhs,rhs,res,dims,shapes", DOTS, ids=["vv", "vm", "mv", "mm"])
def test_dot(general, lhs, rhs, res, dims, shapes):
    op = (f"stablehlo.dot_general %arg0, %arg1, contracting_dims = {dims}" if general
          else '"stablehlo.dot"(%arg0, %arg1)')
    src = func(f"%arg0: {lhs}, %arg1: {rhs}", res,
               f"  %0 = {op} : ({lhs}, {rhs}) -> {res}\n  return %0 : {res}")
    out = legalize(src)
    text = shlo.format(out)
    for s in shapes:
        n = s.count(",") + 1 if s else 0
        assert f"tosa.const_shape  {{values = dense<{s}> : tensor<{n}xindex>}} : () -> " \
               f"!tosa.shape<{n}>" in text
    assert [n for n in op_names(out) if n != "tosa.const_shape"] == \
        ["tosa.const", "tosa.reshape", "tosa.reshape", "tosa.matmul", "tosa.reshape"]
    same_values(shlo.parse(src), out)


def test_dot_general_with_batching_stays():
    src = func("%arg0: tensor<2x3x4xf32>, %arg1: tensor<2x4x5xf32>", "tensor<2x3x5xf32>",
               "  %0 = stablehlo.dot_general %arg0, %arg1, batching_dims = [0] x [0], "
               "contracting_dims = [2] x [1] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> "
               "tensor<2x3x5xf32>\n  return %0 : tensor<2x3x5xf32>")
    assert op_names(legalize(src)) == ["stablehlo.dot_general"]


GATHER = func("%arg0: tensor<3x4x5xi32>, %arg1: tensor<3x2xi32>", "tensor<3x2x5xi32>", """\
  %0 = "stablehlo.gather"(%arg0, %arg1) {
    dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], index_vector_dim = 1,
                                          offset_dims = [1, 2], start_index_map = [0, 1]>,
    indices_are_sorted = false, slice_sizes = array<i64: 1, 2, 5>
  } : (tensor<3x4x5xi32>, tensor<3x2xi32>) -> tensor<3x2x5xi32>
  return %0 : tensor<3x2x5xi32>""")


def test_gather_is_tosa_gather_not_stablehlo_gather():
    """Upstream's pattern only checks shapes: the tosa.gather it emits computes
    out[n, w, c] = values[n, indices[n, w], c], not the StableHLO gather's value."""
    out = legalize(GATHER)
    assert op_names(out) == ["tosa.gather"]
    values = np.arange(60, dtype=np.int32).reshape(3, 4, 5)
    idx = np.array([[0, 3], [1, 1], [2, 0]], np.int32)
    got = np.asarray(shlo.run(out, values, idx)[0])
    want = np.stack([values[n, idx[n]] for n in range(3)])
    np.testing.assert_array_equal(got, want)
    ref = np.asarray(shlo.run(shlo.parse(GATHER), values, idx)[0])
    assert not np.array_equal(ref, got)


@pytest.mark.parametrize("dim,shape,const,multiples,values", [
    (0, "4x8xf32", "tensor<4x1xf32>", "[1, 8]",
     "[[0.000000e+00], [1.000000e+00], [2.000000e+00], [3.000000e+00]]"),
    (1, "4x8xi32", "tensor<1x8xi32>", "[4, 1]", "[[0, 1, 2, 3, 4, 5, 6, 7]]")])
def test_iota(dim, shape, const, multiples, values):
    src = func("", f"tensor<{shape}>", f'  %0 = "stablehlo.iota"() {{iota_dimension = {dim} : '
               f"i64}} : () -> tensor<{shape}>\n  return %0 : tensor<{shape}>")
    out = legalize(src)
    text = shlo.format(out)
    assert f'"tosa.const"() <{{values = dense<{values}> : {const}}}> : () -> {const}' in text
    # upstream spells the multiples `vector<2xindex>` (getIndexVectorAttr); shlo a tensor
    assert f"values = dense<{multiples}> : tensor<2xindex>" in text
    assert op_names(out) == ["tosa.const", "tosa.const_shape", "tosa.tile"]
    same_values(shlo.parse(src), out)


@pytest.mark.parametrize("body,shape,dims,result,tosa", [
    ("maximum", "1x10xf32", 1, "1xf32", "tosa.reduce_max"),
    ("add", "5x4xf32", 0, "4xf32", "tosa.reduce_sum")])
def test_reduce(body, shape, dims, result, tosa):
    src = func(f"%arg0: tensor<{shape}>, %arg1: tensor<f32>", f"tensor<{result}>", f"""\
  %0 = "stablehlo.reduce"(%arg0, %arg1) ({{
  ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
    %1 = stablehlo.{body} %arg2, %arg3 : tensor<f32>
    "stablehlo.return"(%1) : (tensor<f32>) -> ()
  }}) {{dimensions = array<i64: {dims}>}} : (tensor<{shape}>, tensor<f32>) -> tensor<{result}>
  return %0 : tensor<{result}>""")
    out = legalize(src)
    assert [n for n in op_names(out) if n != "tosa.const_shape"] == [tosa, "tosa.reshape"]
    assert f"{tosa} %arg0 {{axis = {dims} : i32}}" in shlo.format(out)
    x = np.random.default_rng(1).uniform(-3, 3, [int(d) for d in shape.split("x")[:-1]])
    x = x.astype(np.float32)
    identity = np.float32(0 if body == "add" else -np.inf)
    same_values(shlo.parse(src), out, [x, identity])
    # upstream drops the init value: with another one the results differ
    ref = np.asarray(shlo.run(shlo.parse(src), x, np.float32(100))[0])
    assert not np.allclose(np.asarray(shlo.run(out, x, np.float32(100))[0]), ref)


def test_reduce_multiply_stays_but_its_return_becomes_yield():
    """ConvertStablehloReturnOp rewrites every stablehlo.return, as upstream."""
    src = func("%arg0: tensor<5x4xf32>, %arg1: tensor<f32>", "tensor<4xf32>", """\
  %0 = stablehlo.reduce(%arg0 init: %arg1) applies stablehlo.multiply across dimensions = [0]
    : (tensor<5x4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>""")
    out = run_passes(shlo.parse(src), [TOSA])
    # (the driver hoists the shift constant out of the body, as MLIR's folder does)
    assert op_names(out) == ["tosa.const", "stablehlo.reduce", "tosa.mul", "tosa.yield"]


@pytest.mark.parametrize("strides,limit,result,legal", [
    ("1, 1", "4, 3", "2x2", True), ("1, 2", "4, 3", "2x1", False)])
def test_slice(strides, limit, result, legal):
    src = func("%arg0: tensor<4x3xf32>", f"tensor<{result}xf32>", f"""\
  %0 = "stablehlo.slice"(%arg0) {{start_indices = array<i64: 2, 1>, limit_indices = array<i64: {limit}>,
    strides = array<i64: {strides}>}} : (tensor<4x3xf32>) -> tensor<{result}xf32>
  return %0 : tensor<{result}xf32>""")
    out = legalize(src)
    text = shlo.format(out)
    if legal:
        assert re.search(r"(%\d+) = tosa.const_shape  \{values = dense<\[2, 1\]> .*\n.*"
                         r"(%\d+) = tosa.const_shape  \{values = dense<2> : tensor<2xindex>\}.*\n"
                         r".*tosa.slice %arg0, \1, \2 :", text)
    else:
        assert op_names(out) == ["stablehlo.slice"]
    same_values(shlo.parse(src), out)


def test_slice_rank_seven_stays():
    t, r = "tensor<2x3x4x5x6x7x8xf32>", "tensor<1x2x3x4x5x6x7xf32>"
    src = func(f"%arg0: {t}", r, f"""\
  %0 = stablehlo.slice %arg0 [1:2, 1:3, 1:4, 1:5, 1:6, 1:7, 1:8] : ({t}) -> {r}
  return %0 : {r}""")
    assert op_names(legalize(src)) == ["stablehlo.slice"]


def test_transpose_and_reshape():
    src = func("%arg0: tensor<1x2x3xf32>", "tensor<6xf32>", """\
  %0 = stablehlo.transpose %arg0, dims = [2, 1, 0] : (tensor<1x2x3xf32>) -> tensor<3x2x1xf32>
  %1 = stablehlo.reshape %0 : (tensor<3x2x1xf32>) -> tensor<6xf32>
  return %1 : tensor<6xf32>""")
    out = legalize(src)
    text = shlo.format(out)
    assert "tosa.transpose %arg0 {perms = array<i32: 2, 1, 0>} : (tensor<1x2x3xf32>) -> " \
           "tensor<3x2x1xf32>" in text
    assert "tosa.const_shape  {values = dense<6> : tensor<1xindex>} : () -> !tosa.shape<1>" in text
    same_values(shlo.parse(src), out)


WHILE = func("%arg0: tensor<i32>", "tensor<i32>", """\
  %0 = "stablehlo.while"(%arg0) ({
  ^bb0(%arg1: tensor<i32>):
    %1 = "stablehlo.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
    %2 = "stablehlo.compare"(%arg1, %1) {comparison_direction = #stablehlo<comparison_direction NE>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%2) : (tensor<i1>) -> ()
  }, {
  ^bb0(%arg1: tensor<i32>):
    %1 = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %2 = "stablehlo.add"(%arg1, %1) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "stablehlo.return"(%2) : (tensor<i32>) -> ()
  }) : (tensor<i32>) -> (tensor<i32>)
  return %0 : tensor<i32>""")


def test_while():
    out = legalize(WHILE)
    text = shlo.format(out)
    # both constants hoisted out of the loop, the regions legalized
    head, loop = text.split("tosa.while_loop")
    assert head.count('"tosa.const"') == 2 and "stablehlo" not in text
    assert re.search(r"\(%(\w+) = %arg0\) : \(tensor<i32>\) -> tensor<i32> \{\n.*tosa.equal "
                     r"%\1, .*\n.*tosa.logical_not.*\n.*tosa.yield .*\n.*\} do \{\n.*\^bb0", loop)
    for start in (0, 2, 3):
        same_values(shlo.parse(WHILE), out, [np.int32(start)])


def test_non_tosa_types_stay():
    """Tosa_Tensor excludes complex, si32 and i2 (and divide's intdiv needs i32)."""
    for t, op in (("tensor<4xcomplex<f32>>", "add"), ("tensor<4xi2>", "add"),
                  ("tensor<4xi16>", "divide")):
        src = func(f"%arg0: {t}, %arg1: {t}", t,
                   f"  %0 = stablehlo.{op} %arg0, %arg1 : {t}\n  return %0 : {t}")
        assert op_names(run_passes(shlo.parse(src), [TOSA])) == [f"stablehlo.{op}"]


def test_cast_rounds_and_saturates_as_tosa():
    """tosa.cast rounds half to even and saturates, where stablehlo.convert truncates."""
    src = func("%arg0: tensor<4xf32>", "tensor<4xi8>",
               "  %0 = stablehlo.convert %arg0 : (tensor<4xf32>) -> tensor<4xi8>\n"
               "  return %0 : tensor<4xi8>")
    out = legalize(src)
    got = np.asarray(shlo.run(out, np.array([2.5, -1.7, 300.0, 3.5], np.float32))[0])
    np.testing.assert_array_equal(got, [2, -2, 127, 4])


def test_prepare_for_tosa_only_uniques_constants():
    src = func("%arg0: tensor<2x3xf32>", "tensor<2x3xf32>", """\
  %0 = stablehlo.add %arg0, %arg0 : tensor<2x3xf32>
  %c = stablehlo.constant dense<2.0> : tensor<2x3xf32>
  %c2 = stablehlo.constant dense<2.0> : tensor<2x3xf32>
  %dead = stablehlo.multiply %0, %c : tensor<2x3xf32>
  %1 = stablehlo.dot_general %0, %c2, contracting_dims = [1] x [1] : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>
  %2 = stablehlo.add %0, %c2 : tensor<2x3xf32>
  return %2 : tensor<2x3xf32>""")
    out = run_passes(shlo.parse(src), [PREPARE])
    assert op_names(out) == ["stablehlo.constant", "stablehlo.add", "stablehlo.add"]
    same_values(shlo.parse(src), out)


def test_tosa_folds():
    """The driver's fold step on the TOSA ops: x + 0, x - 0, identity cast/transpose/slice,
    reshape of reshape, transpose of a splat constant."""
    src = func("%arg0: tensor<2x3xf32>", "(tensor<6xf32>, tensor<2x3xf32>, tensor<3x2xf32>, "
               "tensor<2x3xf32>)", """\
  %z = stablehlo.constant dense<0.0> : tensor<2x3xf32>
  %0 = stablehlo.add %z, %arg0 : tensor<2x3xf32>
  %1 = stablehlo.subtract %0, %z : tensor<2x3xf32>
  %2 = stablehlo.reshape %1 : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %3 = stablehlo.reshape %2 : (tensor<3x2xf32>) -> tensor<6xf32>
  %4 = stablehlo.convert %1 : tensor<2x3xf32>
  %5 = stablehlo.transpose %1, dims = [0, 1] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = stablehlo.transpose %z, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %7 = stablehlo.slice %5 [0:2, 0:3] : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %3, %4, %6, %7 : tensor<6xf32>, tensor<2x3xf32>, tensor<3x2xf32>, tensor<2x3xf32>""")
    out = legalize(src)
    assert op_names(out) == ["tosa.const", "tosa.const_shape", "tosa.reshape"]
    text = shlo.format(out)
    assert "dense<0.000000e+00> : tensor<3x2xf32>" in text
    assert "tosa.reshape %arg0, %1 : (tensor<2x3xf32>, !tosa.shape<1>) -> tensor<6xf32>" in text
    assert "return %2, %arg0, %0, %arg0 :" in text
    same_values(shlo.parse(src), out)


def test_add_of_nonzero_constant_stays():
    src = func("%arg0: tensor<3xi32>", "tensor<3xi32>", """\
  %c = stablehlo.constant dense<[0, 1, 0]> : tensor<3xi32>
  %0 = stablehlo.add %c, %arg0 : tensor<3xi32>
  return %0 : tensor<3xi32>""")
    out = legalize(src)
    assert op_names(out) == ["tosa.const", "tosa.add"]
    assert re.search(r"tosa.add %arg0, %0 :", shlo.format(out))
    same_values(shlo.parse(src), out)


@pytest.mark.parametrize("line,message,good", [
    ("tosa.add %a, %b : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>",
     "does not broadcast", "tosa.add %a, %d : (tensor<2x3xf32>, tensor<1x3xf32>) -> "
     "tensor<2x3xf32>"),
    ("tosa.add %a, %c : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>", "has rank 1",
     None),
    ("tosa.transpose %a {perms = array<i32: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>",
     "not a permutation", None),
    ("tosa.transpose %a {perms = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>",
     "not the input's",
     "tosa.transpose %a {perms = array<i32: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>"),
    ("tosa.concat %a, %b {axis = 0 : i32} : (tensor<2x3xf32>, tensor<3x3xf32>) -> "
     "tensor<6x3xf32>", "do not add up",
     "tosa.concat %a, %b {axis = 0 : i32} : (tensor<2x3xf32>, tensor<3x3xf32>) -> "
     "tensor<5x3xf32>"),
    ("tosa.abs %a : (tensor<2x3xf32>) -> tensor<3x2xf32>", "same shape", None),
])
def test_tosa_verifiers(line, message, good):
    args = "%a: tensor<2x3xf32>, %b: tensor<3x3xf32>, %c: tensor<3xf32>, %d: tensor<1x3xf32>"
    with pytest.raises(Exception, match=message):
        shlo.verify(shlo.parse(func(args, "()", f"  %0 = {line}\n  return")))
    if good is not None:
        shlo.verify(shlo.parse(func(args, "()", f"  %0 = {good}\n  return")))
