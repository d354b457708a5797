"""arith / tensor / math / shape ops (shlo/ops/foreign/), with hand-computed values, in the
spellings torch-mlir emits."""

from __future__ import annotations

import numpy as np
import pytest

import shlo


def run1(body: str, args: str, results: str, *values: object) -> list:
    """Run ``body`` as @main(args) -> (results). Scalar arguments (`%a: i32`) are passed as 0-d
    tensors and read with `tensor.extract` (function arguments are tensors)."""
    params, pre = [], ""
    for a in filter(None, (x.strip() for x in args.split(","))):
        name, t = (x.strip() for x in a.split(":"))
        if t.startswith("tensor<"):
            params.append(a)
        else:
            params.append(f"{name}_t: tensor<{t}>")
            pre += f"  {name} = tensor.extract {name}_t[] : tensor<{t}>\n"
    text = f"func.func @main({', '.join(params)}) -> ({results}) {{\n{pre}{body}\n}}\n"
    m = shlo.parse(text)
    assert shlo.format(shlo.parse(shlo.format(m))) == shlo.format(m)  # pretty form round trips
    return shlo.run(m, *values)


@pytest.mark.parametrize("op,a,b,want", [
    ("addi", 2**31 - 1, 1, -2**31),     # wraps
    ("muli", 65536, 65536, 0),
    ("divsi", -7, 2, -3),               # toward zero
    ("remsi", -7, 2, -1),               # sign of the dividend
    ("floordivsi", -7, 2, -4),
    ("ceildivsi", 7, 2, 4),
    ("divui", -1, 2, 2**31 - 1),        # 0xFFFFFFFF / 2
    ("remui", -1, 10, 5),               # 4294967295 % 10
    ("maxui", -1, 3, -1),
    ("maxsi", -1, 3, 3),
    ("shrsi", -8, 1, -4),
    ("shrui", -8, 28, 15),
    ("shli", 3, 4, 48),
    ("xori", 6, 3, 5),
])
def test_arith_integer_binary(op: str, a: int, b: int, want: int) -> None:
    (r,) = run1(f"  %0 = arith.{op} %arg0, %arg1 : i32\n  return %0 : i32",
                "%arg0: i32, %arg1: i32", "i32", np.int32(a), np.int32(b))
    assert int(r) == want


def test_arith_on_tensors_floats_and_overflow_flags() -> None:
    body = ("  %0 = arith.addi %arg0, %arg0 overflow<nsw> : tensor<3xi64>\n"
            "  %1 = arith.maximumf %arg1, %arg2 : tensor<3xf32>\n"
            "  %2 = arith.maxnumf %arg1, %arg2 fastmath<fast> : tensor<3xf32>\n"
            "  %3 = arith.remf %arg1, %arg2 : tensor<3xf32>\n"
            "  return %0, %1, %2, %3 : tensor<3xi64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>")
    nan = np.float32("nan")
    r = run1(body, "%arg0: tensor<3xi64>, %arg1: tensor<3xf32>, %arg2: tensor<3xf32>",
             "tensor<3xi64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>",
             np.array([1, -2, 3]), np.array([1, nan, -7.5], np.float32),
             np.array([2, 5, 2], np.float32))
    assert r[0].tolist() == [2, -4, 6]
    np.testing.assert_array_equal(r[1], [2, nan, 2])      # NaN propagates
    np.testing.assert_array_equal(r[2], [2, 5, 2])        # the number wins
    np.testing.assert_array_equal(r[3], [1, nan, -1.5])   # fmod: sign of the dividend


def test_arith_casts_cmp_select() -> None:
    body = ("  %0 = arith.index_cast %arg0 : index to i64\n"
            "  %1 = arith.extsi %arg1 : i1 to i32\n"
            "  %2 = arith.extui %arg1 : i1 to i32\n"
            "  %3 = arith.trunci %arg2 : i32 to i8\n"
            "  %4 = arith.sitofp %arg2 : i32 to f32\n"
            "  %5 = arith.fptosi %arg3 : f32 to i32\n"
            "  %6 = arith.cmpi ult, %arg2, %1 : i32\n"
            "  %7 = arith.cmpf une, %arg3, %arg3 : f32\n"
            "  %8 = arith.select %6, %arg2, %1 : i32\n"
            "  %9 = arith.index_castui %3 : i8 to index\n"
            "  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9 : i64, i32, i32, i8, f32, i32, i1, "
            "i1, i32, index")
    r = run1(body, "%arg0: index, %arg1: i1, %arg2: i32, %arg3: f32",
             "i64, i32, i32, i8, f32, i32, i1, i1, i32, index",
             np.int64(-5), np.bool_(True), np.int32(300), np.float32(-2.7))
    assert [float(x) for x in r] == [-5, -1, 1, 44, 300, -2, 1, 0, 300, 44]
    # (300 = 0x12C -> i8 0x2C = 44; i1 true sign-extends to -1; 300 <u 0xFFFFFFFF)


def test_arith_constant_forms_from_torch_mlir() -> None:
    body = ("  %c = arith.constant 512 : index\n"
            "  %cst = arith.constant dense<1.000000e-05> : tensor<1xf64>\n"
            "  %cst_0 = arith.constant dense<0xFFF0000000000000> : tensor<1xf64>\n"
            "  return %c, %cst, %cst_0 : index, tensor<1xf64>, tensor<1xf64>")
    c, eps, ninf = run1(body, "", "index, tensor<1xf64>, tensor<1xf64>")
    assert int(c) == 512 and eps.tolist() == [1e-05] and ninf.tolist() == [-np.inf]


def test_math_ops() -> None:
    body = ("  %0 = math.erf %arg0 : tensor<3xf32>\n"
            "  %1 = math.round %arg0 : tensor<3xf32>\n"
            "  %2 = math.roundeven %arg0 : tensor<3xf32>\n"
            "  %3 = math.fma %arg0, %arg0, %arg0 : tensor<3xf32>\n"
            "  %4 = math.powf %arg0, %arg0 fastmath<contract> : tensor<3xf32>\n"
            "  return %0, %1, %2, %3, %4 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, "
            "tensor<3xf32>, tensor<3xf32>")
    x = np.array([0.5, 2.5, -1.5], np.float32)
    erf, rnd, even, fma, pw = run1(body, "%arg0: tensor<3xf32>", ", ".join(["tensor<3xf32>"] * 5),
                                   x)
    np.testing.assert_allclose(erf, [0.5204998778, 0.9995930480, -0.9661051465], rtol=1e-6)
    assert rnd.tolist() == [1.0, 3.0, -2.0] and even.tolist() == [0.0, 2.0, -2.0]
    assert fma.tolist() == [0.75, 8.75, 0.75]
    np.testing.assert_allclose(pw, [0.5 ** 0.5, 2.5 ** 2.5, np.nan], rtol=1e-6)


def test_tensor_ops() -> None:
    body = ("  %c0 = arith.constant 0 : index\n"
            "  %c1 = arith.constant 1 : index\n"
            "  %dim = tensor.dim %arg0, %c0 : tensor<?x3xf32>\n"
            "  %e = tensor.extract %arg0[%c1, %c1] : tensor<?x3xf32>\n"
            "  %i = arith.index_cast %dim : index to i64\n"
            "  %from = tensor.from_elements %i, %i : tensor<2xi64>\n"
            "  %s = tensor.splat %e[%dim] : tensor<?xf32>\n"
            "  %ins = tensor.insert %e into %arg1[%c0] : tensor<2xf32>\n"
            "  %cast = tensor.cast %arg0 : tensor<?x3xf32> to tensor<2x3xf32>\n"
            "  return %dim, %from, %s, %ins, %cast : index, tensor<2xi64>, tensor<?xf32>, "
            "tensor<2xf32>, tensor<2x3xf32>")
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    dim, frm, splat, ins, cast = run1(body, "%arg0: tensor<?x3xf32>, %arg1: tensor<2xf32>",
                                      "index, tensor<2xi64>, tensor<?xf32>, tensor<2xf32>, "
                                      "tensor<2x3xf32>", a, np.zeros(2, np.float32))
    assert int(dim) == 2 and frm.tolist() == [2, 2] and splat.tolist() == [4.0, 4.0]
    assert ins.tolist() == [4.0, 0.0] and cast.tolist() == a.tolist()


def test_tensor_extract_out_of_bounds_is_a_located_error() -> None:
    text = ("func.func @main(%arg0: tensor<2xf32>, %arg1: tensor<index>) -> f32 {\n"
            "  %i = tensor.extract %arg1[] : tensor<index>\n"
            "  %0 = tensor.extract %arg0[%i] : tensor<2xf32>\n  return %0 : f32\n}\n")
    with pytest.raises(shlo.ExecutionError, match=r"t.mlir:3:.*tensor.extract.*out of bounds"):
        shlo.run(shlo.parse(text, "t.mlir"), np.zeros(2, np.float32), np.int64(2))


SHAPE_BODY = """
  %0 = shape.shape_of %arg0 : tensor<?x1xf32> -> tensor<2xindex>
  %1 = shape.shape_of %arg1 : tensor<?xf32> -> tensor<1xindex>
  %2 = shape.cstr_broadcastable %0, %1 : tensor<2xindex>, tensor<1xindex>
  %3 = shape.assuming %2 -> (tensor<?x?xf32>) {
    %4 = shape.broadcast %0, %1 : tensor<2xindex>, tensor<1xindex> -> tensor<2xindex>
    %5 = stablehlo.dynamic_broadcast_in_dim %arg0, %4, dims = [0, 1] : (tensor<?x1xf32>, tensor<2xindex>) -> tensor<?x?xf32>
    %6 = stablehlo.dynamic_broadcast_in_dim %arg1, %4, dims = [1] : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x?xf32>
    %7 = stablehlo.add %5, %6 : tensor<?x?xf32>
    shape.assuming_yield %7 : tensor<?x?xf32>
  }
  %8 = shape.num_elements %0 : tensor<2xindex> -> index
  %c = shape.const_shape [4, 1] : tensor<2xindex>
  return %3, %8, %c : tensor<?x?xf32>, index, tensor<2xindex>"""


def test_shape_ops_as_torch_mlir_emits_them_for_dynamic_broadcasts() -> None:
    x = np.array([[1], [2]], np.float32)
    y = np.array([10, 20, 30], np.float32)
    s, n, c = run1(SHAPE_BODY, "%arg0: tensor<?x1xf32>, %arg1: tensor<?xf32>",
                   "tensor<?x?xf32>, index, tensor<2xindex>", x, y)
    assert s.tolist() == [[11, 21, 31], [12, 22, 32]] and int(n) == 2 and c.tolist() == [4, 1]


def test_failed_shape_constraint_is_a_located_error() -> None:
    bad = shlo.parse("func.func @main(%arg0: tensor<?x2xf32>, %arg1: tensor<?xf32>) -> "
                     "tensor<?x?xf32> {\n"
                     "  %0 = shape.shape_of %arg0 : tensor<?x2xf32> -> tensor<2xindex>\n"
                     "  %1 = shape.shape_of %arg1 : tensor<?xf32> -> tensor<1xindex>\n"
                     "  %2 = shape.cstr_broadcastable %0, %1 : tensor<2xindex>, tensor<1xindex>\n"
                     "  %3 = shape.assuming %2 -> (tensor<?x?xf32>) {\n"
                     "    %4 = stablehlo.dynamic_broadcast_in_dim %arg0, %0, dims = [0, 1] : "
                     "(tensor<?x2xf32>, tensor<2xindex>) -> tensor<?x?xf32>\n"
                     "    shape.assuming_yield %4 : tensor<?x?xf32>\n  }\n"
                     "  return %3 : tensor<?x?xf32>\n}\n", "s.mlir")
    with pytest.raises(shlo.ExecutionError, match=r"s.mlir:4:.*broadcastable.*\[2, 2\], \[3\]"):
        shlo.run(bad, np.zeros((2, 2), np.float32), np.zeros(3, np.float32))


def test_verifier_catches_foreign_type_errors() -> None:
    text = ("func.func @main(%arg0: f32) -> f32 {\n"
            "  %0 = \"arith.addi\"(%arg0, %arg0) : (f32, f32) -> f32\n  return %0 : f32\n}\n")
    with pytest.raises(shlo.VerificationError, match="signless-integer-like"):
        shlo.verify(text)
