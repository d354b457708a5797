"""Parser unit tests: hand-written programs and the IR they must produce."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import shlo
from shlo.attributes import (
    ArrayAttr, BoolAttr, ConvDimensionNumbers, DenseArrayAttr, DenseElementsAttr, DictAttr,
    EnumAttr, FloatAttr, IntegerAttr, OpaqueAttr, StringAttr, StructAttr, SymbolRefAttr, TypeAttr,
    UnitAttr,
)
from shlo.ir import CallSiteLoc, FileLineColLoc, FusedLoc, NameLoc, UnknownLoc
from shlo.types import (
    ComplexType, FloatType, FunctionType, IntegerType, OpaqueType, QuantizedType, TensorType,
    TokenType, TupleType, element_type,
)


def ops_of(module, func="main"):
    return module.function(func).regions[0].blocks[0].operations


def const_value(text: str) -> DenseElementsAttr:
    m = shlo.parse(f"func.func @main() {{\n  %0 = stablehlo.constant {text}\n  return\n}}")
    return ops_of(m)[0].attr("value")


def parse_type(text: str):
    m = shlo.parse(f"func.func private @main(%a: {text})")
    return m.function("main").attr("function_type").type.inputs[0]


def parse_attr(text: str):
    m = shlo.parse(f'"test.op"() {{a = {text}}} : () -> ()')
    return m.body.operations[0].attributes["a"]


# --- module and function structure ---------------------------------------------------------------


def test_module_with_name_attributes_and_functions():
    m = shlo.parse("""
module @jit_main attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2xf32> {jax.arg_info = "x"}) -> (tensor<2xf32> {jax.result_info = ""}) {
    %0 = call @helper(%arg0) : (tensor<2xf32>) -> tensor<2xf32>
    return %0 : tensor<2xf32>
  }
  func.func private @helper(%x: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.add %x, %x : tensor<2xf32>
    func.return %0 : tensor<2xf32>
  }
}""")
    assert m.name == "jit_main"
    assert m.op.attributes["mhlo.num_partitions"] == IntegerAttr(1, element_type("i32"))
    main = m.function("main")
    assert main.properties["sym_visibility"] == StringAttr("public")
    ft = main.attr("function_type").type
    assert ft == FunctionType((TensorType((2,), element_type("f32")),),
                              (TensorType((2,), element_type("f32")),))
    assert main.attr("arg_attrs") == ArrayAttr((DictAttr((("jax.arg_info", StringAttr("x")),)),))
    assert main.attr("res_attrs") == ArrayAttr((DictAttr((("jax.result_info", StringAttr("")),)),))
    call, ret = ops_of(m)
    assert call.name == "func.call" and call.attr("callee") == SymbolRefAttr("helper")
    assert ret.name == "func.return" and ret.operands == [call.results[0]]
    add = ops_of(m, "helper")[0]
    body = m.function("helper").regions[0].blocks[0]
    assert add.operands == [body.arguments[0], body.arguments[0]]


def test_implicit_module_and_declaration():
    m = shlo.parse("func.func private @decl(tensor<f32>) -> tensor<f32>\n"
                   "func.func @g() { return }")
    assert m.op.name == "builtin.module"
    assert list(m.functions) == ["decl", "g"]
    assert m.function("decl").regions[0].blocks == []


def test_generic_form_keeps_properties_and_attributes_apart():
    m = shlo.parse("""
"func.func"() <{function_type = (tensor<3xi32>) -> tensor<3xi1>, sym_name = "main"}> ({
^bb0(%arg0: tensor<3xi32>):
  %0 = "stablehlo.compare"(%arg0, %arg0) <{comparison_direction = #stablehlo<comparison_direction LT>}> {compare_type = #stablehlo<comparison_type SIGNED>, mhlo.x = 1 : i64} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
  "func.return"(%0) : (tensor<3xi1>) -> ()
}) : () -> ()""")
    cmp = ops_of(m)[0]
    assert cmp.properties == {"comparison_direction": EnumAttr("stablehlo", "comparison_direction",
                                                               "LT")}
    assert cmp.attributes["compare_type"] == EnumAttr("stablehlo", "comparison_type", "SIGNED")
    assert cmp.attr("compare_type").value == "SIGNED"


def test_pretty_form_routes_inherent_and_dotted_attributes():
    m = shlo.parse("""func.func @main(%a: tensor<3xi32>) -> tensor<3xi1> {
  %0 = stablehlo.compare  LT, %a, %a,  SIGNED {mhlo.sharding = "{replicated}"} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}""")
    cmp = ops_of(m)[0]
    assert cmp.properties["comparison_direction"].value == "LT"
    assert cmp.properties["compare_type"] == EnumAttr("stablehlo", "comparison_type", "SIGNED")
    assert cmp.attributes == {"mhlo.sharding": StringAttr("{replicated}")}


def test_unknown_op_in_generic_form():
    m = shlo.parse('%0:2 = "foo.bar"() {x = #foo.thing<1, [2]>} : () -> (i32, !foo.t<"a">)')
    op = m.body.operations[0]
    assert op.name == "foo.bar"
    assert op.attributes["x"] == OpaqueAttr("#foo.thing<1, [2]>")
    assert op.results[1].type == OpaqueType('!foo.t<"a">')


def test_multi_result_values_and_uses():
    m = shlo.parse("""func.func @main(%a: tensor<f32>) -> tensor<f32> {
  %0:2 = "stablehlo.optimization_barrier"(%a, %a) : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  %r0, %r1 = stablehlo.optimization_barrier %0#1, %0#0 : tensor<f32>, tensor<f32>
  %1 = stablehlo.add %r0, %r1 : tensor<f32>
  return %1 : tensor<f32>
}""")
    b1, b2, add, _ = ops_of(m)
    assert b2.operands == [b1.results[1], b1.results[0]]
    assert add.operands == b2.results


def test_regions_blocks_and_block_arguments():
    m = shlo.parse("""func.func @main(%x: tensor<4xf32>, %init: tensor<f32>) -> tensor<f32> {
  %0 = "stablehlo.reduce"(%x, %init) ({
  ^bb0(%acc: tensor<f32> loc("a"), %e: tensor<f32>):
    %s = stablehlo.add %acc, %e : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}""")
    red = ops_of(m)[0]
    block = red.regions[0].blocks[0]
    assert [a.type for a in block.arguments] == [TensorType((), element_type("f32"))] * 2
    add, ret = block.operations
    assert add.operands == block.arguments and ret.operands == [add.results[0]]
    assert red.attributes["dimensions"] == DenseArrayAttr(element_type("i64"), (0,))


def test_reduce_compact_form_builds_the_body():
    m = shlo.parse("""func.func @main(%x: tensor<2x3xf32>, %c: tensor<f32>) -> tensor<2xf32> {
  %1 = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}""")
    red = ops_of(m)[0]
    assert red.properties["dimensions"] == DenseArrayAttr(element_type("i64"), (1,))
    body = red.regions[0].blocks[0]
    assert [o.name for o in body.operations] == ["stablehlo.add", "stablehlo.return"]
    assert body.operations[0].operands == body.arguments


def test_while_pretty_form():
    m = shlo.parse("""func.func @main(%a: tensor<i64>) -> tensor<i64> {
  %0 = stablehlo.while(%iterArg = %a) : tensor<i64>
   cond {
    %c = stablehlo.compare  LT, %iterArg, %iterArg : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    stablehlo.return %iterArg : tensor<i64>
  }
  return %0 : tensor<i64>
}""")
    w = ops_of(m)[0]
    assert w.operands == [m.function("main").regions[0].blocks[0].arguments[0]]
    cond, body = w.regions
    assert cond.blocks[0].operations[0].operands == [cond.blocks[0].arguments[0]] * 2
    assert body.blocks[0].operations[0].operands == [body.blocks[0].arguments[0]]


def test_long_op_chain_does_not_recurse():
    n = 20000
    lines = ["func.func @main(%a: tensor<f32>) -> tensor<f32> {", "  %0 = stablehlo.abs %a : tensor<f32>"]
    lines += [f"  %{i} = stablehlo.negate %{i - 1} : tensor<f32>" for i in range(1, n)]
    lines += [f"  return %{n - 1} : tensor<f32>", "}"]
    m = shlo.parse("\n".join(lines))
    assert len(ops_of(m)) == n + 1


# --- types ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["i1", "i2", "i4", "i8", "i16", "i32", "i64", "si8", "ui2", "ui4",
                                  "ui64", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ",
                                  "f8E4M3B11FNUZ", "f8E4M3", "f8E3M4", "f8E8M0FNU", "f6E2M3FN",
                                  "f6E3M2FN", "f4E2M1FN", "bf16", "f16", "f32", "f64", "tf32",
                                  "complex<f32>", "complex<f64>"])
def test_every_element_type(name):
    t = parse_type(f"tensor<2x{name}>")
    assert t == TensorType((2,), element_type(name))
    assert str(t) == f"tensor<2x{name}>"


def test_tensor_shapes_and_bounds():
    assert parse_type("tensor<?x5xf32>").shape == (None, 5)
    assert parse_type("tensor<f32>").shape == ()
    assert parse_type("tensor<0x5xf32>").shape == (0, 5)
    assert parse_type("tensor<*xf32>").shape is None
    t = parse_type("tensor<?x5xf32, #stablehlo.bounds<8, ?>>")
    assert t.encoding == StructAttr("stablehlo.bounds", (("bounds", (8, None)),))
    t2 = parse_type("tensor<?x5xf32, #stablehlo.type_extensions<bounds = [8, ?]>>")
    assert t2 == t
    assert str(t) == "tensor<?x5xf32, #stablehlo.bounds<8, ?>>"


def test_quantized_types():
    q = parse_type("tensor<2x!quant.uniform<i8:f32, 0.1:-30>>").element_type
    assert q == QuantizedType(element_type("i8"), element_type("f32"), (0.1,), (-30,))
    q = parse_type("tensor<2x!quant.uniform<i8<-127:127>:f32:1, {0.1:-30, 5.0E-1:-20}>>")
    q = q.element_type
    assert q.quantization_dimension == 1 and q.scales == (0.1, 0.5)
    assert q.zero_points == (-30, -20) and (q.storage_min, q.storage_max) == (-127, 127)
    q = parse_type("tensor<!quant.uniform<ui8:f32, 34.0>>").element_type
    assert q.storage_type == element_type("ui8") and q.zero_points == (0,)
    assert str(q) == "!quant.uniform<ui8:f32, 3.400000e+01>"  # (as written, as MLIR prints)
    q = parse_type("tensor<!quant.uniform<u8:f32, 34.0>>").element_type
    assert str(q) == "!quant.uniform<u8:f32, 3.400000e+01>"
    q = parse_type("tensor<!quant.uniform<si8:f32, 34.0>>").element_type
    assert q.storage_type == element_type("si8") and str(q).startswith("!quant.uniform<si8:")
    q = parse_type("tensor<!quant.uniform<i8<-128:127>:f32, 2.0>>").element_type
    assert q.storage_min is None and str(q) == "!quant.uniform<i8:f32, 2.000000e+00>"


def test_token_tuple_function_and_opaque_types():
    assert parse_type("!stablehlo.token") == TokenType()
    t = parse_type("tuple<tensor<f32>, tuple<!stablehlo.token>>")
    assert t == TupleType((TensorType((), element_type("f32")), TupleType((TokenType(),))))
    assert parse_type("(tensor<f32>) -> (tensor<f32>, tensor<i1>)") == FunctionType(
        (TensorType((), element_type("f32")),),
        (TensorType((), element_type("f32")), TensorType((), element_type("i1"))))
    assert parse_type("!foo.bar<x -> y, [1]>") == OpaqueType("!foo.bar<x -> y, [1]>")
    assert parse_type("tensor<2xindex>").element_type == element_type("index")


def test_type_aliases():
    m = shlo.parse("!t = tensor<2xf32>\nfunc.func private @main(%a: !t) -> !t")
    assert m.function("main").attr("function_type").type.inputs[0] == TensorType(
        (2,), element_type("f32"))


# --- attributes -----------------------------------------------------------------------------------


def test_scalar_attributes():
    assert parse_attr("42") == IntegerAttr(42, element_type("i64"))
    assert parse_attr("-3 : i32") == IntegerAttr(-3, element_type("i32"))
    assert parse_attr("1.5 : f32") == FloatAttr(1.5, element_type("f32"))
    assert parse_attr("0x7FC00000 : f32").value != parse_attr("0x7FC00000 : f32").value  # NaN
    assert parse_attr("true") == BoolAttr(True)
    assert parse_attr("unit") == UnitAttr()
    assert parse_attr('"a\\"b\\\\c\\n\\0A"') == StringAttr('a"b\\c\n\n')
    assert parse_attr("@a::@b") == SymbolRefAttr("a", ("b",))
    assert parse_attr("tensor<2xf32>") == TypeAttr(TensorType((2,), element_type("f32")))


def test_collection_attributes():
    i64 = element_type("i64")
    assert parse_attr("[1, [2], {x, y = 3}]") == ArrayAttr((
        IntegerAttr(1, i64), ArrayAttr((IntegerAttr(2, i64),)),
        DictAttr((("x", UnitAttr()), ("y", IntegerAttr(3, i64))))))
    assert parse_attr("array<i64: 1, -2>") == DenseArrayAttr(element_type("i64"), (1, -2))
    assert parse_attr("array<i1: true, false>") == DenseArrayAttr(element_type("i1"),
                                                                  (True, False))
    assert parse_attr("array<f32: 1.5, 2.0>") == DenseArrayAttr(element_type("f32"), (1.5, 2.0))
    assert parse_attr("array<i64>") == DenseArrayAttr(element_type("i64"), ())
    d = parse_attr("dense<[1, 2]> : tensor<2xi64>")
    assert isinstance(d, DenseElementsAttr) and d.array.tolist() == [1, 2]


def test_enums_and_structured_attributes():
    assert parse_attr("#stablehlo<comparison_direction LT>") == EnumAttr(
        "stablehlo", "comparison_direction", "LT")
    assert parse_attr("[#stablehlo<precision DEFAULT>, #stablehlo<precision HIGHEST>]") == \
        ArrayAttr((EnumAttr("stablehlo", "precision", "DEFAULT"),
                   EnumAttr("stablehlo", "precision", "HIGHEST")))
    g = parse_attr("#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
                   "start_index_map = [0], index_vector_dim = 1>")
    assert g.name == "stablehlo.gather" and g.get("offset_dims") == (1,)
    assert g.get("index_vector_dim") == 1 and g.get("operand_batching_dims", ()) == ()
    ch = parse_attr("#stablehlo.channel_handle<handle = 1, type = 0>")
    assert ch == StructAttr("stablehlo.channel_handle", (("handle", 1), ("type", 0)))
    ra = parse_attr("#stablehlo.result_accuracy<atol = 1.0e-5, mode = "
                    "#stablehlo.result_accuracy_mode<TOLERANCE>>")
    assert ra.get("atol") == 1e-5
    assert ra.get("mode") == EnumAttr("stablehlo", "result_accuracy_mode", "TOLERANCE")
    conv = parse_attr("#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 1, 0, f]>")
    assert conv == ConvDimensionNumbers(0, 3, (1, 2), 2, 3, (0, 1), 0, 3, (2, 1))
    raw = parse_attr("#stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3,"
                     " input_spatial_dimensions = [1, 2], kernel_input_feature_dimension = 2, "
                     "kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], "
                     "output_batch_dimension = 0, output_feature_dimension = 3, "
                     "output_spatial_dimensions = [2, 1]>")
    assert raw == conv
    other = parse_attr("#sparse_tensor.encoding<{ map = (d0) -> (d0 : dense) }>")
    assert other == OpaqueAttr("#sparse_tensor.encoding<{ map = (d0) -> (d0 : dense) }>")


def test_attribute_alias():
    m = shlo.parse('#a = "x"\n"t.op"() {k = #a} : () -> ()')
    assert m.body.operations[0].attributes["k"] == StringAttr("x")


# --- dense literals -------------------------------------------------------------------------------


def test_dense_nested_and_splat():
    a = const_value("dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi32>")
    assert a.array.dtype == np.int32 and a.array.tolist() == [[1, 2, 3], [4, 5, 6]]
    s = const_value("dense<7> : tensor<2x2xui8>")
    assert s.array.dtype == np.uint8 and s.array.tolist() == [[7, 7], [7, 7]]
    b = const_value("dense<[true, false]> : tensor<2xi1>")
    assert b.array.dtype == np.bool_ and b.array.tolist() == [True, False]
    e = const_value("dense<> : tensor<0x3xf32>")
    assert e.array.shape == (0, 3)


def test_dense_floats_special_values():
    a = const_value("dense<[nan, inf, -inf, -0.0, 0x7FC00001, 1.5]> : tensor<6xf32>").array
    assert np.isnan(a[0]) and a[1] == np.inf and a[2] == -np.inf
    assert a[3] == 0 and math.copysign(1, a[3]) < 0
    assert a.view(np.uint32)[4] == 0x7FC00001 and a[5] == 1.5
    s = const_value("dense<0xFF800000> : tensor<3xf32>").array
    assert (s == -np.inf).all()


def test_dense_hex_string_is_raw_little_endian_bytes():
    vals = np.array([1.5, -2.0, np.nan], dtype=np.float32)
    a = const_value(f'dense<"0x{vals.tobytes().hex()}"> : tensor<3xf32>')
    assert a.array.tobytes() == vals.tobytes() and a.hex
    bf = np.array([1, 2, 3, 4], dtype=ml_dtypes.bfloat16)
    a = const_value(f'dense<"0x{bf.tobytes().hex().upper()}"> : tensor<2x2xbf16>')
    assert a.array.dtype == ml_dtypes.bfloat16 and a.array.reshape(-1).tolist() == [1, 2, 3, 4]


def test_dense_complex_and_small_types():
    c = const_value("dense<[(1.0, 2.0), (-3.5, 0.0)]> : tensor<2xcomplex<f64>>").array
    assert c.dtype == np.complex128 and c.tolist() == [1 + 2j, -3.5 + 0j]
    i4 = const_value("dense<[-8, 7]> : tensor<2xi4>").array
    assert i4.dtype == ml_dtypes.int4 and i4.astype(int).tolist() == [-8, 7]
    u64 = const_value("dense<[0, 18446744073709551615]> : tensor<2xui64>").array
    assert u64.tolist() == [0, 2 ** 64 - 1]
    f8 = const_value("dense<[1.0, 448.0]> : tensor<2xf8E4M3FN>").array
    assert f8.dtype == ml_dtypes.float8_e4m3fn and f8.astype(float).tolist() == [1.0, 448.0]


# --- locations ------------------------------------------------------------------------------------


def test_locations_aliases_resolved_lazily():
    m = shlo.parse("""module @m {
  func.func @main(%a: tensor<f32> loc("a")) -> tensor<f32> {
    %0 = stablehlo.abs %a : tensor<f32> loc(#loc3)
    %1 = stablehlo.abs %0 : tensor<f32> loc(fused<"meta">["f.py":1:2, unknown])
    %2 = stablehlo.abs %1 : tensor<f32> loc("name"("g.py":3:4 to 5:6))
    %3 = stablehlo.abs %2 : tensor<f32>
    return %3 : tensor<f32> loc("r.py":9:1 to :7)
  }
} loc(#loc)
#loc = loc(unknown)
#loc1 = loc("x.py":10:20)
#loc2 = loc("y.py":1:1)
#loc3 = loc(callsite(#loc1 at #loc2))
""", "in.mlir")
    o0, o1, o2, o3, ret = ops_of(m)
    assert o0.location == CallSiteLoc(FileLineColLoc("x.py", 10, 20), FileLineColLoc("y.py", 1, 1))
    assert o0.location.file_line_col() == ("x.py", 10, 20)
    assert isinstance(o1.location, FusedLoc) and o1.location.metadata == StringAttr("meta")
    assert o1.location.locations == (FileLineColLoc("f.py", 1, 2), UnknownLoc())
    assert o2.location == NameLoc("name", FileLineColLoc("g.py", 3, 4, 5, 6))
    assert o3.location == FileLineColLoc("in.mlir", 6, 5)  # no loc(): the source position
    assert ret.location == FileLineColLoc("r.py", 9, 1, None, 7)
    assert isinstance(m.op.location, UnknownLoc)


# --- errors ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, line, col, message", [
    ("func.func @f() {\n  %0 = stablehlo.constant dense<1> tensor<i32>\n}", 2, 36,
     "expected ':' after the dense literal but found 'tensor<i32>'"),
    ('"t.op"() {a = 1 b = 2} : () -> ()', 1, 17, "expected '}' in attribute dictionary but "
                                                  "found 'b'"),
    ("func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.add %a, %b : tensor<f32>\n}", 2, 26,
     "use of undeclared SSA value name '%b'"),
    ("func.func @f() {\n  %0 = stablehlo.frobnicate : tensor<f32>\n}", 2, 8,
     "custom op 'stablehlo.frobnicate' is unknown"),
    ("func.func @f() {\n  %0 = stablehlo.constant dense<[1, 2]> : tensor<3xi32>\n}", 2, 27,
     "does not match type"),
    ("func.func @f(%a: tensor<2xfoo>)", 1, 18, "unknown element type 'foo'"),
    ("%0 = \"t.op\"() : () -> (i32, i32)", 1, 1, "defines 2 results but was provided 1"),
    ("func.func @f() {\n  %0 = stablehlo.constant dense<300> : tensor<i8>\n}", 2, 27,
     "out of range"),
])
def test_errors_name_position_token_and_expectation(text, line, col, message):
    with pytest.raises(shlo.ParseError) as info:
        shlo.parse(text, "bad.mlir")
    err = info.value
    assert message in str(err)
    assert str(err).startswith(f"bad.mlir:{line}:{col}: error: ")


def test_wrong_token_at_line_start_is_reported_at_previous_line_end():
    text = ("func.func @f(%a: tensor<1xf64>) {\n"
            "  %0 = stablehlo.tuple %a, %a : (tensor<1xf64>, tensor<1xf64>)\n"
            "  func.return\n}")
    with pytest.raises(shlo.ParseError) as info:
        shlo.parse(text, "t.mlir")
    assert info.value.location.file_line_col()[1] == 2
    assert "expected '->' in function type" in str(info.value)


def test_deep_nesting_is_a_parse_error_not_a_crash():
    text = '"t.op"() {a = ' + "[" * 100000 + "]" * 100000 + "} : () -> ()"
    with pytest.raises(shlo.ParseError, match="nesting too deep"):
        shlo.parse(text)


def test_unknown_enum_case_is_rejected():
    with pytest.raises(shlo.ParseError, match="one of: DEFAULT, HIGH, HIGHEST"):
        parse_attr("#stablehlo<precision FASTEST>")
