"""The small upstream passes: stablehlo-canonicalize-dynamism, shape-legalize-to-stablehlo,
stablehlo-check-shape-assertions, stablehlo-convert-to-signless,
stablehlo-legalize-deprecated-ops, stablehlo-wrap-in-composite,
stablehlo-legalize-composite-to-call, interpreter-instrument-with-probe. Each rewrite of a
runnable program is checked to give the same results before and after."""

from __future__ import annotations

import numpy as np
import pytest

import shlo
from shlo.passes import PassError, run_passes


def ops(module: shlo.Module) -> list[str]:
    return [op.name for op in module.walk()
            if op.name not in ("builtin.module", "func.func", "func.return")]


def same_results(before: shlo.Module, after: shlo.Module, *args: np.ndarray) -> None:
    after = shlo.parse(shlo.format(after))  # what the pass printed must read back
    for x, y in zip(shlo.run(before, *args), shlo.run(after, *args), strict=True):
        np.testing.assert_array_equal(x, y)


# --- stablehlo-canonicalize-dynamism --------------------------------------------------------------


def test_real_dynamic_slice_to_dynamic_slice():
    m = shlo.parse("""func.func @main(%x: tensor<6xf32>, %s: tensor<1xi64>) -> tensor<?xf32> {
      %c = stablehlo.constant dense<2> : tensor<1xi64>
      %one = stablehlo.constant dense<1> : tensor<1xi64>
      %l = stablehlo.add %s, %c : tensor<1xi64>
      %0 = stablehlo.real_dynamic_slice %x, %s, %l, %one : (tensor<6xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
      return %0 : tensor<?xf32>
    }""")
    out = run_passes(m, "stablehlo-canonicalize-dynamism")
    assert "stablehlo.dynamic_slice" in ops(out) and "stablehlo.real_dynamic_slice" not in ops(out)
    text = shlo.format(out)
    assert "stablehlo.dynamic_slice %arg0, %1, sizes = [2] : (tensor<6xf32>, tensor<i64>) -> tensor<?xf32>" in text
    x = np.arange(6, dtype=np.float32)
    for start in (0, 3):
        s = np.array([start], np.int64)
        np.testing.assert_array_equal(shlo.run(out, x, s)[0], x[start:start + 2])
        same_results(m, out, x, s)


def test_custom_call_drops_shape_operands_and_their_layouts():
    m = shlo.parse("""func.func @main(%x: tensor<4x3xf32>) -> tensor<1x2xf32> {
      %c = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
      %0 = stablehlo.custom_call @foo(%c, %x) {indices_of_shape_operands = dense<[0]> : tensor<1xi64>,
        operand_layouts = [dense<[0]> : tensor<1xindex>, dense<[1, 0]> : tensor<2xindex>],
        result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<2xi64>, tensor<4x3xf32>) -> tensor<1x2xf32>
      return %0 : tensor<1x2xf32>
    }""")
    (cc,) = [op for op in run_passes(m, "stablehlo-canonicalize-dynamism").walk()
             if op.name == "stablehlo.custom_call"]
    assert len(cc.operands) == 1 and cc.attr("indices_of_shape_operands") is None
    assert [list(x.array) for x in cc.attr("operand_layouts").values] == [[1, 0]]


def test_custom_call_incompatible_refinement_is_an_error():
    m = shlo.parse("""func.func @main(%x: tensor<4xf32>) -> tensor<1x2xf32> {
      %c = stablehlo.constant dense<[1, 1]> : tensor<2xi64>
      %0 = stablehlo.custom_call @foo(%x, %c) {indices_of_shape_operands = dense<[1]> : tensor<1xi64>} : (tensor<4xf32>, tensor<2xi64>) -> tensor<1x2xf32>
      return %0 : tensor<1x2xf32>
    }""")
    with pytest.raises(PassError, match=r"refinement #0 \(\[1, 1\]\) must be compatible"):
        run_passes(m, "stablehlo-canonicalize-dynamism")


def test_dynamic_gather_and_conv_run_the_same():
    m = shlo.parse("""func.func @main(%x: tensor<2x4x9xi32>, %i: tensor<1x5x2xi32>) -> tensor<1x5x8xi32> {
      %c = stablehlo.constant dense<[1, 1, 8]> : tensor<3xi32>
      %0 = "stablehlo.dynamic_gather"(%x, %i, %c) {dimension_numbers = #stablehlo.gather<
        collapsed_slice_dims = [0, 1], index_vector_dim = 2, offset_dims = [2], start_index_map = [0, 1]>}
        : (tensor<2x4x9xi32>, tensor<1x5x2xi32>, tensor<3xi32>) -> tensor<1x5x8xi32>
      return %0 : tensor<1x5x8xi32>
    }""")
    out = run_passes(m, "stablehlo-canonicalize-dynamism")
    assert ops(out) == ["stablehlo.gather"]
    x = np.arange(72, dtype=np.int32).reshape(2, 4, 9)
    i = np.array([[[0, 0], [1, 2], [0, 3], [1, 1], [1, 0]]], np.int32)
    same_results(m, out, x, i)


# --- shape-legalize-to-stablehlo ------------------------------------------------------------------

SHAPE_PROGRAM = """func.func @main(%x: tensor<?x3xf32>, %b: tensor<3xf32>) -> (tensor<?x3xf32>, tensor<i64>) {
  %s = shape.shape_of %x : tensor<?x3xf32> -> tensor<2xindex>
  %t = shape.const_shape [1, 3] : tensor<2xindex>
  %u = shape.broadcast %s, %t : tensor<2xindex>, tensor<2xindex> -> tensor<2xindex>
  %0 = stablehlo.dynamic_broadcast_in_dim %b, %u, dims = [1] : (tensor<3xf32>, tensor<2xindex>) -> tensor<?x3xf32>
  %n = shape.num_elements %u : tensor<2xindex> -> index
  %c0 = arith.constant 0 : index
  %d = tensor.dim %x, %c0 : tensor<?x3xf32>
  %m = arith.muli %n, %d : index
  %i = arith.index_cast %m : index to i64
  %r = tensor.from_elements %i : tensor<i64>
  return %0, %r : tensor<?x3xf32>, tensor<i64>
}"""


def test_shape_legalize_then_canonicalize_runs_the_same():
    """The casts of the index <-> i32 bridge annihilate under canonicalize (as upstream's, whose
    output through jaxlib is this one); the program computes the same."""
    m = shlo.parse(SHAPE_PROGRAM)
    legal = run_passes(m, "shape-legalize-to-stablehlo")
    assert {o.dialect for o in legal.walk()} == {"builtin", "func", "stablehlo", "arith"}
    out = run_passes(legal, "canonicalize")
    assert {o.dialect for o in out.walk()} == {"builtin", "func", "stablehlo"}
    assert ops(out).count("stablehlo.get_dimension_size") == 3
    b = np.array([1, 2, 3], np.float32)
    for rows in (1, 4):
        x = np.zeros((rows, 3), np.float32)
        r = shlo.run(out, x, b)
        np.testing.assert_array_equal(r[0], np.broadcast_to(b, (rows, 3)))
        assert int(r[1]) == rows * 3 * rows
        same_results(m, out, x, b)


def test_shape_legalize_refuses_what_it_cannot_convert():
    m = shlo.parse("""func.func @main(%a: tensor<2xindex>, %b: tensor<2xindex>) -> !shape.witness {
      %0 = shape.cstr_broadcastable %a, %b : tensor<2xindex>, tensor<2xindex>
      func.return %0 : !shape.witness
    }""")
    with pytest.raises(PassError, match="failed to legalize operation 'shape.cstr_broadcastable' "
                                        "that was explicitly marked illegal"):
        run_passes(m, "shape-legalize-to-stablehlo")
    m = shlo.parse("""func.func @main(%a: tensor<2xindex>) -> tensor<2xi8> {
      %0 = arith.index_cast %a : tensor<2xindex> to tensor<2xi8>
      return %0 : tensor<2xi8>
    }""")
    with pytest.raises(PassError, match="'arith.index_cast'"):
        run_passes(m, "shape-legalize-to-stablehlo")


def test_shape_legalize_leaves_a_program_without_shape_ops_alone():
    text = "func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> { return %a : tensor<3xf32> }"
    m = shlo.parse(text)
    assert shlo.format(run_passes(m, "shape-legalize-to-stablehlo")) == shlo.format(m)


# --- stablehlo-check-shape-assertions -------------------------------------------------------------

ASSERTION = """func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {{
  %ok = stablehlo.constant dense<{ok}> : tensor<i1>
  %a = stablehlo.constant dense<7> : tensor<i32>
  %b = stablehlo.constant dense<3> : tensor<i64>
  stablehlo.custom_call @shape_assertion(%ok, %a, %b) {{api_version = 2 : i32,
    error_message = "dim {{0}} must be less than {{1}}, {{{{literal}}", has_side_effect = true}}
    : (tensor<i1>, tensor<i32>, tensor<i64>) -> ()
  return %x : tensor<?xf32>
}}"""


def test_shape_assertion_that_holds_is_removed():
    m = shlo.parse(ASSERTION.format(ok="true"))
    out = run_passes(m, "stablehlo-check-shape-assertions")
    assert "stablehlo.custom_call" not in ops(out)
    same_results(m, out, np.arange(3, dtype=np.float32))


def test_shape_assertion_that_fails_reports_its_formatted_message():
    m = shlo.parse(ASSERTION.format(ok="false"))
    with pytest.raises(PassError, match=r"^.*dim 7 must be less than 3, \{literal\}$"):
        run_passes(m, "stablehlo-check-shape-assertions")
    out = run_passes(m, "stablehlo-check-shape-assertions{enable-shape-assertions=false}")
    assert "stablehlo.custom_call" not in ops(out)


def test_shape_assertion_must_be_well_formed():
    m = shlo.parse("""func.func @main(%p: tensor<i1>) {
      stablehlo.custom_call @shape_assertion(%p) {error_message = "{1}"} : (tensor<i1>) -> ()
      return
    }""")
    with pytest.raises(PassError, match="error_message_input index less than 0. Found "
                                        r"specifier \{1\}"):
        run_passes(m, "stablehlo-check-shape-assertions")


# --- stablehlo-convert-to-signless ----------------------------------------------------------------


def test_convert_to_signless_keeps_the_bits():
    m = shlo.parse("""func.func @main(%a: tensor<3xui8>, %b: tensor<2xsi16>) -> (tensor<3xui8>, tensor<2xsi16>) {
      %c = stablehlo.constant dense<[255, 128, 1]> : tensor<3xui8>
      %0 = stablehlo.add %a, %c : tensor<3xui8>
      %1 = stablehlo.multiply %b, %b : tensor<2xsi16>
      return %0, %1 : tensor<3xui8>, tensor<2xsi16>
    }""")
    out = run_passes(m, "stablehlo-convert-to-signless")
    text = shlo.format(out)
    assert "ui8" not in text and "si16" not in text
    assert "dense<[-1, -128, 1]> : tensor<3xi8>" in text
    assert "func.func @main(%arg0: tensor<3xi8>, %arg1: tensor<2xi16>) -> (tensor<3xi8>, tensor<2xi16>)" in text
    a = np.array([1, 200, 7], np.uint8)
    b = np.array([-300, 5], np.int16)
    before = shlo.run(m, a, b)
    after = shlo.run(shlo.parse(text), a.view(np.int8), b)
    np.testing.assert_array_equal(before[0].view(np.int8), after[0])
    np.testing.assert_array_equal(before[0], (a.astype(int) + [255, 128, 1]) % 256)
    np.testing.assert_array_equal(before[1], after[1])


def test_convert_to_signless_then_canonicalize_drops_identity_casts():
    m = shlo.parse("""func.func @main(%arg0: memref<*xui16>) -> memref<ui16> {
      %1 = builtin.unrealized_conversion_cast %arg0 : memref<*xui16> to memref<*xi16>
      %2 = memref.cast %1 : memref<*xi16> to memref<i16>
      %3 = builtin.unrealized_conversion_cast %2 : memref<i16> to memref<ui16>
      %4 = bufferization.to_tensor %3 : memref<ui16> to tensor<ui16>
      %5 = builtin.unrealized_conversion_cast %4 : tensor<ui16> to tensor<i16>
      %6 = bufferization.to_buffer %5 : tensor<i16> to memref<i16>
      %7 = builtin.unrealized_conversion_cast %6 : memref<i16> to memref<ui16>
      func.return %7 : memref<ui16>
    }""")
    out = run_passes(m, "stablehlo-convert-to-signless,canonicalize")
    assert ops(out) == ["memref.cast"]
    assert "(%arg0: memref<*xi16>) -> memref<i16>" in shlo.format(out)


# --- stablehlo-legalize-deprecated-ops ------------------------------------------------------------


def test_legalize_deprecated_ops_runs_the_same():
    m = shlo.parse("""func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<3xf32>)
        -> (tensor<2x4xf32>, tensor<4x3xf32>, !stablehlo.token) {
      %0 = "stablehlo.dot"(%a, %b) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
      %1 = "stablehlo.broadcast"(%c) {broadcast_sizes = array<i64: 4>} : (tensor<3xf32>) -> tensor<4x3xf32>
      %t = "stablehlo.create_token"() : () -> !stablehlo.token
      return %0, %1, %t : tensor<2x4xf32>, tensor<4x3xf32>, !stablehlo.token
    }""")
    out = run_passes(m, "stablehlo-legalize-deprecated-ops")
    assert ops(out) == ["stablehlo.dot_general", "stablehlo.broadcast_in_dim", "stablehlo.after_all"]
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    c = np.array([1, 2, 3], np.float32)
    r = shlo.run(out, a, b, c)
    np.testing.assert_array_equal(r[0], a @ b)
    np.testing.assert_array_equal(r[1], np.broadcast_to(c, (4, 3)))
    same_results(m, out, a, b, c)


def test_cross_replica_sum_becomes_an_all_reduce_sum():
    """shlo runs no cross-replica-sum: the all_reduce it becomes is checked on 2 replicas."""
    m = shlo.parse("""func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
      %0 = "stablehlo.cross-replica-sum"(%a) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<3xf32>) -> tensor<3xf32>
      return %0 : tensor<3xf32>
    }""")
    out = run_passes(m, "stablehlo-legalize-deprecated-ops")
    assert ops(out) == ["stablehlo.all_reduce", "stablehlo.add", "stablehlo.return"]
    xs = [np.array([1, 2, 3], np.float32), np.array([10, 20, 30], np.float32)]
    per_process = shlo.run(out, replicas=2, process_args=[[x] for x in xs])
    assert len(per_process) == 2
    for r in per_process:
        np.testing.assert_array_equal(r[0], xs[0] + xs[1])


def test_unary_einsum_becomes_einsum_of_one():
    m = shlo.parse("""func.func @main(%a: tensor<2x3xi32>) -> tensor<2xi32> {
      %0 = "stablehlo.unary_einsum"(%a) {einsum_config = "ab->a"} : (tensor<2x3xi32>) -> tensor<2xi32>
      return %0 : tensor<2xi32>
    }""")
    text = shlo.format(run_passes(m, "stablehlo-legalize-deprecated-ops"))
    assert "%c = stablehlo.constant dense<1> : tensor<i32>" in text
    assert 'stablehlo.einsum %c, %arg0, config = ",ab->a" : (tensor<i32>, tensor<2x3xi32>) -> tensor<2xi32>' in text


def test_legalize_deprecated_ops_refuses_rng_unless_told_not_to():
    m = shlo.parse("""func.func @main(%lo: tensor<f32>, %hi: tensor<f32>) -> tensor<3xf32> {
      %s = stablehlo.constant dense<[3]> : tensor<1xi64>
      %0 = stablehlo.rng %lo, %hi, %s, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<1xi64>) -> tensor<3xf32>
      return %0 : tensor<3xf32>
    }""")
    with pytest.raises(PassError, match="failed to legalize operation 'stablehlo.rng'"):
        run_passes(m, "stablehlo-legalize-deprecated-ops")
    out = run_passes(m, "stablehlo-legalize-deprecated-ops{fail-on-unused=false}")
    assert ops(out) == ["stablehlo.constant", "stablehlo.rng"]


# --- stablehlo-wrap-in-composite, stablehlo-legalize-composite-to-call ----------------------------

COMPOSITE_PROGRAM = """func.func @main(%a: tensor<2xf32>, %i: tensor<f32>) -> (tensor<2xf32>, tensor<f32>) {
  %c = stablehlo.constant dense<1.0> : tensor<2xf32>
  %dead = stablehlo.add %a, %a : tensor<2xf32>
  %0 = stablehlo.add %a, %c : tensor<2xf32>
  %1 = stablehlo.add %0, %0 : tensor<2xf32>
  %2 = stablehlo.reduce(%1 init: %i) applies stablehlo.add across dimensions = [0] : (tensor<2xf32>, tensor<f32>) -> tensor<f32>
  return %1, %2 : tensor<2xf32>, tensor<f32>
}"""


def test_wrap_in_composite_as_upstream():
    """Last op first (its function is `.impl`, earlier ones `.impl_0`, ...), the dead add
    erased, the reduce's body left alone; jaxlib's pass gives this same module."""
    m = shlo.parse(COMPOSITE_PROGRAM)
    out = run_passes(m, "stablehlo-wrap-in-composite{op-names=stablehlo.add,stablehlo.reduce version=1}")
    text = shlo.format(out)
    assert ('%0 = stablehlo.composite "stablehlo.add" %arg0, %cst {decomposition = '
            '@stablehlo.add.impl_0, version = 1 : i32}') in text
    assert ('%1 = stablehlo.composite "stablehlo.add" %0, %0 {decomposition = '
            '@stablehlo.add.impl, version = 1 : i32}') in text
    assert ('stablehlo.composite "stablehlo.reduce" %1, %arg1 {composite_attributes = '
            '{dimensions = array<i64: 0>}, decomposition = @stablehlo.reduce.impl, version = '
            '1 : i32}') in text
    assert [f for f in out.functions] == ["main", "stablehlo.reduce.impl", "stablehlo.add.impl",
                                          "stablehlo.add.impl_0"]
    assert "%arg1, %arg1" not in text  # the impl of add(%0, %0) takes its operands by position
    a, i = np.array([1, 2], np.float32), np.float32(0.5)
    same_results(m, out, a, i)
    calls = run_passes(out, "stablehlo-legalize-composite-to-call")
    assert "stablehlo.composite" not in shlo.format(calls)
    assert ops(calls).count("func.call") == 3
    same_results(m, calls, a, i)


def test_legalize_composite_to_call_except(tmp_path):
    """Upstream's stablehlo_legalize_composite_to_call.mlir, through the RUN-line harness."""
    from shlo.testing.runlines import run_file
    from shlo.opt import lit_tools

    path = tmp_path / "stablehlo_legalize_composite_to_call.mlir"
    path.write_text("""// RUN: stablehlo-opt --stablehlo-legalize-composite-to-call --split-input-file %s | FileCheck %s
// RUN: stablehlo-opt --stablehlo-legalize-composite-to-call=except='foo.baz,foo.qux' --split-input-file %s | FileCheck %s --check-prefix=EXCEPT

// CHECK-LABEL: func @composite
// EXCEPT-LABEL: func @composite
func.func @composite(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) {
  // CHECK-NEXT: call @bar(%arg0, %arg1)
  // CHECK-NOT: stablehlo.composite
  // EXCEPT-NEXT: call @bar(%arg0, %arg1)
  // EXCEPT-NOT: stablehlo.composite
  %0 = stablehlo.composite "foo.bar" %arg0, %arg1 {
    decomposition = @bar
  } : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // CHECK: call @baz(%arg0)
  // CHECK-NOT: stablehlo.composite
  // EXCEPT-NEXT: stablehlo.composite "foo.baz"
  // EXCEPT-NOT: call
  %1 = stablehlo.composite "foo.baz" %arg0 {
    decomposition = @baz
  } : (tensor<4xf32>) -> tensor<4xf32>
  return
}

func.func @bar(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
  return %arg0 : tensor<4xf32>
}

func.func @baz(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  return %arg0 : tensor<4xf32>
}
""")
    result = run_file(str(path), lit_tools(), features={"asserts"}, chunks=True)
    # the second line passes with LLVM's FileCheck; the `filecheck` package reads its
    # EXCEPT-NOT before an EXCEPT-NEXT as covering the next match's line too
    assert [r.status for r in result.lines][0] == "passed", result.lines
    out = run_passes(shlo.load(str(path)),
                     "stablehlo-legalize-composite-to-call{except='foo.baz,foo.qux'}")
    text = shlo.format(out)
    assert "%0 = call @bar(%arg0, %arg1)" in text and "call @baz" not in text
    assert '%1 = stablehlo.composite "foo.baz" %arg0 {decomposition = @baz}' in text


# --- interpreter-instrument-with-probe ------------------------------------------------------------


def test_instrument_with_probe_records_every_intermediate_value():
    from shlo.debug.trace import trace

    m = shlo.parse("""func.func @main(%a: tensor<2xi64>, %b: tensor<2xi64>) -> (tensor<2xi64>, !stablehlo.token) {
      %c = stablehlo.constant dense<3> : tensor<2xi64>
      %0 = stablehlo.add %a, %b : tensor<2xi64> loc("sum@here")
      %1:2 = stablehlo.while(%i = %0, %n = %c) : tensor<2xi64>, tensor<2xi64>
        cond {
          %z = stablehlo.constant dense<0> : tensor<2xi64>
          %p = stablehlo.compare GT, %n, %z : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi1>
          %q = stablehlo.reshape %p : (tensor<2xi1>) -> tensor<2xi1>
          %s = stablehlo.slice %q [0:1] : (tensor<2xi1>) -> tensor<1xi1>
          %r = stablehlo.reshape %s : (tensor<1xi1>) -> tensor<i1>
          stablehlo.return %r : tensor<i1>
        } do {
          %one = stablehlo.constant dense<1> : tensor<2xi64>
          %x = stablehlo.multiply %i, %c : tensor<2xi64>
          %m = stablehlo.subtract %n, %one : tensor<2xi64>
          stablehlo.return %x, %m : tensor<2xi64>, tensor<2xi64>
        }
      %t = stablehlo.after_all : !stablehlo.token
      return %1#0, %t : tensor<2xi64>, !stablehlo.token
    }""")
    out = run_passes(m, "interpreter-instrument-with-probe{useDebugInfo=true}")
    ids = [op.attr("probe_id").value for op in out.walk() if op.name == "interpreter.probe"]
    # post-order: the add, the while's cond (i1 tensors too) and body, the while's 2 results
    # (each probe right after the op: the second result's comes first, as upstream's)
    assert ids == ["sum.1", "probe2", "probe3", "probe4", "probe5", "probe6", "probe7",
                   "probe9", "probe8"]
    (w,) = [op for op in out.walk() if op.name == "stablehlo.while"]
    assert w.operands[0].owner.name == "interpreter.probe"  # the add's users read its probe
    a, b = np.array([1, 2], np.int64), np.array([10, 20], np.int64)
    same_results(m, out, a, b)
    t = trace(out, a, b)
    np.testing.assert_array_equal(t.probes["sum.1"][0], a + b)
    assert len(t.probes["probe6"]) == 3  # the body's multiply, once per iteration
    np.testing.assert_array_equal(t.probes["probe8"][0], (a + b) * 27)
    plain = run_passes(m, "interpreter-instrument-with-probe")
    assert [op.attr("probe_id").value for op in plain.walk()
            if op.name == "interpreter.probe"][0] == "probe1"


def test_probe_skips_tensors_of_other_dialects_types():
    """`dense<"hello"> : tensor<!tf_type.string>` (MLIR's string elements) reads and prints
    back verbatim; a string tensor gets no probe."""
    text = """func.func @main() -> tensor<!tf_type.string> {
      %0 = "tf.Const"() {value = dense<["a", "b\\"c"]> : tensor<2x!tf_type.string>} : () -> tensor<!tf_type.string>
      return %0 : tensor<!tf_type.string>
    }"""
    out = run_passes(shlo.parse(text), "interpreter-instrument-with-probe")
    assert "interpreter.probe" not in shlo.format(out)
    assert 'dense<["a", "b\\"c"]> : tensor<2x!tf_type.string>' in shlo.format(out)


def test_shape_legalize_folds_to_existing_values_first():
    """As upstream's conversion driver (jaxlib gives the same): `x * 1`, `x * 0` and an
    extract from from_elements fold before any pattern; `1 * 2` does not (it would need a new
    constant)."""
    m = shlo.parse("""func.func @main(%a: index, %b: index, %t: tensor<2xindex>) -> (index, index, tensor<2xindex>, index) {
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %z = arith.constant dense<0> : tensor<2xindex>
      %0 = arith.muli %a, %c1 : index
      %1 = arith.muli %c1, %c2 : index
      %2 = arith.muli %t, %z : tensor<2xindex>
      %e = tensor.from_elements %a, %b : tensor<2xindex>
      %3 = tensor.extract %e[%c1] : tensor<2xindex>
      return %0, %1, %2, %3 : index, index, tensor<2xindex>, index
    }""")
    out = run_passes(m, "shape-legalize-to-stablehlo")
    (ret,) = [op for op in out.walk() if op.name == "func.return"]
    args = out.functions["main"].regions[0].blocks[0].arguments
    assert ret.operands[0] is args[0] and ret.operands[3] is args[1]
    assert ret.operands[2].owner.name == "arith.constant"
    assert ops(out).count("stablehlo.multiply") == 1


def test_buffers_run_as_arrays():
    """memref.cast and bufferization.to_tensor/to_buffer are identities at run time, before and
    after canonicalize folds to_buffer(to_tensor(B)) to B."""
    m = shlo.parse("""func.func @main(%t: tensor<2xui16>) -> tensor<2xui16> {
      %b = bufferization.to_buffer %t : tensor<2xui16> to memref<2xui16>
      %c = memref.cast %b : memref<2xui16> to memref<?xui16>
      %u = bufferization.to_tensor %c : memref<?xui16> to tensor<?xui16>
      %b2 = bufferization.to_buffer %u : tensor<?xui16> to memref<?xui16>
      %u2 = bufferization.to_tensor %b2 : memref<?xui16> to tensor<?xui16>
      %r = tensor.cast %u2 : tensor<?xui16> to tensor<2xui16>
      func.return %r : tensor<2xui16>
    }""")
    out = run_passes(m, "canonicalize")
    assert ops(out).count("bufferization.to_buffer") == 1
    x = np.array([7, 65535], np.uint16)
    np.testing.assert_array_equal(shlo.run(out, x)[0], x)
    same_results(m, out, x)


def test_guide_pipeline_on_a_dynamic_broadcast():
    """chlo-legalize-to-stablehlo, canonicalize, shape-legalize-to-stablehlo,
    stablehlo-canonicalize-dynamism: canonicalize proves the constraint (`[?, 3]` and `[3]`
    broadcast) and inlines the `shape.assuming`, the shape computation becomes StableHLO on
    i32, the cast pairs fold; jaxlib's passes give this same module."""
    m = shlo.parse("""func.func @main(%a: tensor<?x3xf32>, %b: tensor<3xf32>) -> tensor<?x3xf32> {
      %0 = chlo.broadcast_add %a, %b {broadcast_dimensions = array<i64: 1>} : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
      return %0 : tensor<?x3xf32>
    }""")
    canon = run_passes(m, "chlo-legalize-to-stablehlo,canonicalize")
    assert ops(canon) == ["shape.const_shape", "shape.shape_of", "shape.broadcast",
                          "stablehlo.dynamic_broadcast_in_dim",
                          "stablehlo.dynamic_broadcast_in_dim", "stablehlo.add"]
    out = run_passes(canon, "shape-legalize-to-stablehlo,stablehlo-canonicalize-dynamism")
    assert {o.dialect for o in out.walk()} == {"builtin", "func", "stablehlo"}
    assert ops(out).count("stablehlo.maximum") == 1
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([10, 20, 30], np.float32)
    np.testing.assert_array_equal(shlo.run(out, a, b)[0], a + b)
    same_results(m, out, a, b)


def test_canonicalize_keeps_constraints_it_cannot_prove():
    m = shlo.parse("""func.func @main(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
      %0 = chlo.broadcast_add %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      return %0 : tensor<?xf32>
    }""")
    out = run_passes(m, "chlo-legalize-to-stablehlo,canonicalize")
    assert "shape.cstr_broadcastable" in ops(out) and "shape.assuming" in ops(out)
    x = np.array([1, 2], np.float32)
    same_results(m, out, x, x)
