"""`shlo opt` with stablehlo-opt's command line (shlo/opt.py), and the `cse` and `inline`
passes (MLIR's CSE and inliner), on hand-checked cases."""

from __future__ import annotations

import io

import numpy as np
import pytest

import shlo
from shlo.cli import main as cli_main
from shlo.opt import opt_main, parse_opt
from shlo.passes import PASSES, register_pass, run_passes


def opt(argv, text: str | bytes = b"") -> tuple[int, str, str]:
    out, err = io.BytesIO(), io.StringIO()
    data = text.encode() if isinstance(text, str) else text
    rc = opt_main(list(argv), io.BytesIO(data), out, err)
    return rc, out.getvalue().decode("utf-8", "replace"), err.getvalue()


def body(module: shlo.Module, func: str = "main") -> list[str]:
    return [op.name for op in module.function(func).regions[0].blocks[0].operations]


# --- cse -----------------------------------------------------------------------------------------

CSE_INPUT = """func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>, %p: tensor<i32>) -> (tensor<2xf32>, tensor<2xi1>, tensor<2xi1>) {
  %c0 = stablehlo.constant dense<1.0> : tensor<2xf32>
  %c1 = stablehlo.constant dense<1.0> : tensor<2xf32>
  %0 = stablehlo.add %a, %b : tensor<2xf32>
  %1 = stablehlo.add %a, %b : tensor<2xf32>
  %2 = stablehlo.add %b, %a : tensor<2xf32>
  %dead = stablehlo.multiply %a, %a : tensor<2xf32>
  %3 = stablehlo.compare EQ, %0, %1 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %4 = stablehlo.compare NE, %0, %1 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  %5 = "stablehlo.case"(%p) ({
    %6 = stablehlo.add %a, %b : tensor<2xf32>
    %7 = stablehlo.subtract %a, %b : tensor<2xf32>
    stablehlo.return %7 : tensor<2xf32>
  }, {
    %8 = stablehlo.subtract %a, %b : tensor<2xf32>
    stablehlo.return %8 : tensor<2xf32>
  }) : (tensor<i32>) -> tensor<2xf32>
  %9 = stablehlo.subtract %a, %b : tensor<2xf32>
  %s0 = stablehlo.custom_call @effect(%a) {has_side_effect = true} : (tensor<2xf32>) -> tensor<2xf32>
  %s1 = stablehlo.custom_call @effect(%a) {has_side_effect = true} : (tensor<2xf32>) -> tensor<2xf32>
  %10 = stablehlo.add %c0, %c1 : tensor<2xf32>
  %11 = stablehlo.add %10, %1 : tensor<2xf32>
  %12 = stablehlo.add %11, %2 : tensor<2xf32>
  %13 = stablehlo.add %12, %5 : tensor<2xf32>
  %14 = stablehlo.add %13, %9 : tensor<2xf32>
  %15 = stablehlo.add %14, %s0 : tensor<2xf32>
  %16 = stablehlo.add %15, %s1 : tensor<2xf32>
  return %16, %3, %4 : tensor<2xf32>, tensor<2xi1>, tensor<2xi1>
}
"""


def test_cse_merges_equivalent_ops_and_respects_regions_and_effects():
    m = shlo.parse(CSE_INPUT)
    out = run_passes(m, "cse")
    names = body(out)
    # constants merged (2 -> 1), add %a,%b merged (2 -> 1; %b,%a differs), the dead multiply
    # erased, EQ and NE compares kept, side-effecting custom_calls both kept
    assert names.count("stablehlo.constant") == 1
    assert names.count("stablehlo.multiply") == 0
    assert names.count("stablehlo.compare") == 2
    assert names.count("stablehlo.custom_call") == 2
    adds = [op for op in out.function("main").regions[0].blocks[0].operations
            if op.name == "stablehlo.add"]
    assert len(adds) == 2 + 7  # add(a,b), add(b,a) and the 7 of the sum chain
    case = next(op for op in out.walk() if op.name == "stablehlo.case")
    # the branch's add(a, b) is the outer one (dominating), so it is gone from the branch;
    # the subtracts of the two sibling branches stay (neither dominates the other), and the
    # subtract after the case is not merged with the ones inside
    assert [o.name for o in case.regions[0].blocks[0].operations] == \
        ["stablehlo.subtract", "stablehlo.return"]
    assert [o.name for o in case.regions[1].blocks[0].operations] == \
        ["stablehlo.subtract", "stablehlo.return"]
    assert names.count("stablehlo.subtract") == 1
    assert body(m).count("stablehlo.add") == 10  # the input is untouched


def test_cse_keeps_the_values():
    text = CSE_INPUT.replace('%s0 = stablehlo.custom_call @effect(%a) {has_side_effect = true}'
                             ' : (tensor<2xf32>) -> tensor<2xf32>', '%s0 = stablehlo.abs %a : '
                             'tensor<2xf32>').replace(
        '%s1 = stablehlo.custom_call @effect(%a) {has_side_effect = true} : (tensor<2xf32>) '
        '-> tensor<2xf32>', '%s1 = stablehlo.abs %a : tensor<2xf32>')
    m = shlo.parse(text)
    out = run_passes(m, "cse")
    assert body(out).count("stablehlo.abs") == 1
    a, b = np.array([1.5, -2.0], np.float32), np.array([0.25, 3.0], np.float32)
    for p in (np.array(0, np.int32), np.array(1, np.int32)):
        for x, y in zip(shlo.run(m, a, b, p), shlo.run(out, a, b, p)):
            np.testing.assert_array_equal(x, y)


def _upstream(pipeline: str, text: str) -> str:
    from jaxlib.mlir import ir
    from jaxlib.mlir.passmanager import PassManager

    from shlo.testing.oracles import mlir_context

    with mlir_context():
        m = ir.Module.parse(text)
        PassManager.parse(pipeline).run(m.operation)
        return m.operation.get_asm()


CSE_REGIONS = """func.func @main(%a: tensor<4xf32>, %i: tensor<i32>) -> (tensor<f32>, tensor<f32>, tensor<i32>, tensor<i32>) {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %z2 = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%a init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  %1 = stablehlo.reduce(%a init: %z2) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  %2 = stablehlo.while(%it = %i) : tensor<i32>
    cond {
      %c10 = stablehlo.constant dense<10> : tensor<i32>
      %p = stablehlo.compare LT, %it, %c10 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %n = stablehlo.add %it, %one : tensor<i32>
      stablehlo.return %n : tensor<i32>
    }
  %3 = stablehlo.while(%it = %i) : tensor<i32>
    cond {
      %c10 = stablehlo.constant dense<10> : tensor<i32>
      %p = stablehlo.compare LT, %it, %c10 : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %n = stablehlo.add %it, %one : tensor<i32>
      stablehlo.return %n : tensor<i32>
    }
  return %0, %1, %2, %3 : tensor<f32>, tensor<f32>, tensor<i32>, tensor<i32>
}
"""


@pytest.mark.parametrize("text", [CSE_INPUT, CSE_REGIONS], ids=["flat", "regions"])
def test_cse_against_upstream(text):
    pytest.importorskip("jax")
    ours = shlo.format(run_passes(shlo.parse(text), "cse"))
    theirs = _upstream("builtin.module(cse)", text)
    assert ours.strip() == theirs.strip()


def test_cse_merges_ops_with_equivalent_regions():
    out = run_passes(shlo.parse(CSE_REGIONS), "cse")
    # the two reduces (their inits merged first) and the two whiles are one each
    assert body(out) == ["stablehlo.constant", "stablehlo.reduce", "stablehlo.while",
                         "func.return"]
    ret = out.function("main").regions[0].blocks[0].operations[-1]
    assert ret.operands[0] is ret.operands[1] and ret.operands[2] is ret.operands[3]


def test_cse_does_not_cross_functions():
    text = """func.func @f() -> tensor<i32> {
      %0 = stablehlo.constant dense<3> : tensor<i32>
      return %0 : tensor<i32>
    }
    func.func @g() -> tensor<i32> {
      %0 = stablehlo.constant dense<3> : tensor<i32>
      return %0 : tensor<i32>
    }"""
    out = run_passes(shlo.parse(text), "cse")
    assert body(out, "f") == body(out, "g") == ["stablehlo.constant", "func.return"]


# --- inline --------------------------------------------------------------------------------------

INLINE_INPUT = """func.func @main(%arg0: tensor<f32>) -> tensor<f32> {
  %0 = func.call @a(%arg0) : (tensor<f32>) -> tensor<f32>
  %1 = func.call @a(%0) : (tensor<f32>) -> tensor<f32>
  %2 = func.call @pub(%1) : (tensor<f32>) -> tensor<f32>
  %3 = func.call @b(%2) {no_inline} : (tensor<f32>) -> tensor<f32>
  return %3 : tensor<f32>
}
func.func private @a(%arg0: tensor<f32>) -> tensor<f32> {
  %0 = func.call @b(%arg0) : (tensor<f32>) -> tensor<f32>
  %1 = stablehlo.add %0, %arg0 : tensor<f32>
  return %1 : tensor<f32>
}
func.func private @b(%arg0: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.abs %arg0 : tensor<f32>
  return %0 : tensor<f32>
}
func.func @pub(%arg0: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.negate %arg0 : tensor<f32>
  return %0 : tensor<f32>
}
func.func private @rec(%arg0: tensor<f32>) -> tensor<f32> {
  %0 = func.call @rec(%arg0) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @unused(%arg0: tensor<f32>) -> tensor<f32> {
  return %arg0 : tensor<f32>
}
func.func @calls_rec(%arg0: tensor<f32>) -> tensor<f32> {
  %0 = func.call @rec(%arg0) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
"""


def test_inline_calls_transitively_and_erases_dead_private_functions():
    m = shlo.parse(INLINE_INPUT)
    out = run_passes(m, "inline")
    # @a (with @b inside) inlined twice, @pub once; the no_inline call stays, so @b stays;
    # @unused is dead; @rec is self-recursive: its call stays, and so does it
    assert body(out) == ["stablehlo.abs", "stablehlo.add", "stablehlo.abs", "stablehlo.add",
                         "stablehlo.negate", "func.call", "func.return"]
    assert sorted(out.functions) == ["b", "calls_rec", "main", "pub", "rec"]
    assert body(out, "calls_rec") == ["func.call", "func.return"]
    x = np.array(-1.5, np.float32)
    # a(x) = |x| + x; main = |(-(a(a(x))))|
    expect = abs(-((abs(abs(x) + x) + (abs(x) + x))))
    np.testing.assert_array_equal(shlo.run(out, x)[0], expect)
    np.testing.assert_array_equal(shlo.run(m, x)[0], expect)


def test_inlined_ops_get_callsite_locations():
    rc, out, err = opt(["--inline", "--mlir-print-debuginfo", "--mlir-print-local-scope"],
                       INLINE_INPUT)
    assert rc == 0, err
    line = next(s for s in out.splitlines() if "stablehlo.negate" in s)
    assert line.endswith('loc(callsite("<stdin>":18:3 at "<stdin>":4:3))'), line


# --- the command line ------------------------------------------------------------------------------

ADD = """func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %a : tensor<2xf32>
  %1 = stablehlo.add %a, %a : tensor<2xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<2xf32>
  return %2 : tensor<2xf32>
}
"""


def test_pass_flags_pipelines_and_pass_options():
    a = parse_opt(["--stablehlo-aggressive-simplification=fold-op-element-limit=100",
                   "-cse", "--pass-pipeline='builtin.module(func.func(canonicalize))'",
                   "--pass", "inline{default-pipeline=}", "-verify-each", "f.mlir"])
    assert a.pipeline == ["stablehlo-aggressive-simplification{fold-op-element-limit=100}",
                          "cse", "builtin.module(func.func(canonicalize))",
                          "inline{default-pipeline=}"]
    assert a.verify_each and a.file == "f.mlir"
    for argv in (["-cse"], ["--cse"], ["--pass-pipeline=builtin.module(func.func(cse))"],
                 ["--pass", "cse"], ["-p", "cse"]):
        rc, out, err = opt(argv, ADD)
        assert (rc, err) == (0, ""), argv
        assert out.count("stablehlo.add") == 1 and "stablehlo.multiply %0, %0" in out, argv
    with pytest.raises(ValueError, match="unknown option '--no-such-flag'"):
        parse_opt(["--no-such-flag"])


def test_split_input_file_and_verify_diagnostics():
    text = ADD + "// -----\n" + """func.func @bad(%a: tensor<1x4xf32>, %b: tensor<4xf32>) -> tensor<1x4xf32> {
  // expected-warning @+2 {{unsupported non prefix-padded dynamic rank broadcast_dimensions}}
  // expected-error @+1 {{failed to legalize operation}}
  %0 = chlo.broadcast_add %a, %b {broadcast_dimensions = array<i64: 1, 2>} : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}
"""
    rc, out, err = opt(["--chlo-legalize-to-stablehlo", "--cse", "--split-input-file",
                        "--verify-diagnostics"], text)
    assert (rc, err) == (0, "")
    assert out.count("module {") == 1 and "@main" in out and "@bad" not in out
    rc, out, err = opt(["--chlo-legalize-to-stablehlo", "--split-input-file"], text)
    assert rc == 1 and "failed to legalize operation 'chlo.broadcast_add'" in err
    rc, out, err = opt(["--split-input-file"], ADD + "// -----\n" + ADD)
    assert rc == 0 and out.count("// -----\n") == 1 and out.count("module {") == 2
    rc, out, err = opt(["--split-input-file=// ====", "--output-split-marker=// @@"],
                       ADD + "// ====\n" + ADD.replace("@main", "@second"))
    assert rc == 0 and out.count("// @@\n") == 1 and out.index("@main") < out.index("@second")


def test_verify_each_catches_a_pass_that_breaks_the_module():
    @register_pass("test-opt-break-types")
    def _break(module, options):
        """Give every add an f64 result (invalid)."""
        from shlo.passes._driver import copy_module
        from shlo.types import TensorType, element_type

        out = copy_module(module)
        for op in out.walk():
            if op.name == "stablehlo.add":
                op.results[0].type = TensorType((2,), element_type("f64"))
        return out

    try:
        rc, out, err = opt(["--test-opt-break-types"], ADD)
        assert rc == 0  # not verified: printed as it is
        rc, out, err = opt(["--test-opt-break-types", "-verify-each"], ADD)
        assert rc == 1 and out == "" and "error" in err
    finally:
        del PASSES["test-opt-break-types"]


def test_output_file_bytecode_and_generic(tmp_path):
    path = tmp_path / "out.mlir"
    rc, out, err = opt(["--cse", "-o", str(path)], ADD)
    assert (rc, out, err) == (0, "", "") and path.read_text().count("stablehlo.add") == 1
    rc, out, err = opt(["--mlir-print-op-generic"], ADD)
    assert rc == 0 and '"stablehlo.add"(%arg0, %arg0)' in out
    out_b, err_b = io.BytesIO(), io.StringIO()
    assert opt_main(["-emit-bytecode"], io.BytesIO(ADD.encode()), out_b, err_b) == 0
    back = shlo.parse(out_b.getvalue())
    assert body(back) == ["stablehlo.add", "stablehlo.add", "stablehlo.multiply", "func.return"]


def test_default_valued_attributes_as_mlir_prints_them():
    text = """func.func @main(%a: tensor<3xf32>, %m: tensor<3x3xf32>) -> (tensor<3xf32>, tensor<3x3xf32>) {
      %c = stablehlo.constant dense<0> : tensor<3x1xi32>
      %0 = "stablehlo.gather"(%a, %c) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<3xf32>, tensor<3x1xi32>) -> tensor<3xf32>
      %1 = "stablehlo.cholesky"(%m) {lower = false} : (tensor<3x3xf32>) -> tensor<3x3xf32>
      return %0, %1 : tensor<3xf32>, tensor<3x3xf32>
    }"""
    rc, out, err = opt([], text)
    assert rc == 0, err
    # gather has no pretty form: the generic form keeps `indices_are_sorted = false`
    assert "indices_are_sorted = false" in out
    # cholesky's pretty form leaves `lower = false` out; its generic form keeps it
    assert "stablehlo.cholesky %arg1 : tensor<3x3xf32>" in out
    rc, out, err = opt(["--mlir-print-op-generic"], text)
    assert rc == 0 and "<{lower = false}>" in out and "indices_are_sorted = false" in out


LOCS = """#loc3 = loc("file.mlir":2:21)
module {
  func.func @main(%arg0: tensor<i32>) -> tensor<i32> {
    %c = stablehlo.constant dense<1> : tensor<i32> loc(#loc4)
    %0 = stablehlo.add %arg0, %c : tensor<i32> loc(#loc5)
    return %0 : tensor<i32> loc(#loc6)
  } loc(#loc9)
} loc(#loc)
#loc = loc("file.mlir":0:0)
#loc1 = loc("file.mlir":1:1)
#loc2 = loc("file.mlir":2:19)
#loc4 = loc("file.mlir":2:8)
#loc5 = loc("file.mlir":4:10)
#loc6 = loc("file.mlir":3:3)
#loc7 = loc("WrappedLocation.call"(#loc1))
#loc8 = loc("WrappedLocation.callsite"(#loc2))
#loc9 = loc(callsite(#loc7 at #loc8))
"""


def test_print_debuginfo_with_location_aliases():
    rc, out, err = opt(["--mlir-print-debuginfo"], LOCS)
    assert rc == 0, err
    # MLIR's order: met in pre-order, leaves first (by nesting depth), named loc, loc1...
    assert out == """module {
  func.func @main(%arg0: tensor<i32>) -> tensor<i32> {
    %c = stablehlo.constant dense<1> : tensor<i32> loc(#loc3)
    %0 = stablehlo.add %arg0, %c : tensor<i32> loc(#loc4)
    return %0 : tensor<i32> loc(#loc5)
  } loc(#loc8)
} loc(#loc)
#loc = loc("file.mlir":0:0)
#loc1 = loc("file.mlir":1:1)
#loc2 = loc("file.mlir":2:19)
#loc3 = loc("file.mlir":2:8)
#loc4 = loc("file.mlir":4:10)
#loc5 = loc("file.mlir":3:3)
#loc6 = loc("WrappedLocation.call"(#loc1))
#loc7 = loc("WrappedLocation.callsite"(#loc2))
#loc8 = loc(callsite(#loc6 at #loc7))
"""
    rc, local, err = opt(["--mlir-print-debuginfo", "--mlir-print-local-scope"], LOCS)
    assert rc == 0 and "#loc" not in local
    assert '} loc(callsite("WrappedLocation.call"("file.mlir":1:1) at ' \
           '"WrappedLocation.callsite"("file.mlir":2:19)))' in local
    # the aliases read back as the same locations
    rc, again, err = opt(["--mlir-print-debuginfo", "--mlir-print-local-scope"], out)
    assert (rc, again) == (0, local)


def test_list_shows_every_pass_with_description_and_options(capsys):
    rc, out, err = opt(["--list"])
    assert (rc, err) == (0, "")
    lines = out.splitlines()
    assert "cse: Eliminate common sub-expressions (MLIR's CSE: equivalent side-effect-free " \
           "ops merged)." in lines
    i = next(i for i, s in enumerate(lines) if s.startswith("inline: "))
    assert lines[i + 1].startswith("    default-pipeline=str (default 'canonicalize'): ")
    names = [s.split(":")[0].removesuffix(" (no-op)") for s in lines if not s.startswith(" ")]
    assert names == sorted(PASSES)
    assert cli_main(["opt", "--help"]) == 0
    assert "--split-input-file" in capsys.readouterr().out


def test_shlo_opt_pass_form_through_the_cli(tmp_path, capsys):
    path = tmp_path / "add.mlir"
    path.write_text(ADD)
    assert cli_main(["opt", str(path), "--pass", "cse"]) == 0
    assert capsys.readouterr().out.count("stablehlo.add") == 1
    assert cli_main(["opt", str(path), "--pass", "no-such-pass"]) == 1
    assert "unknown pass 'no-such-pass'" in capsys.readouterr().err


# --- upstream RUN lines through shlo.opt.lit_tools ------------------------------------------------

RUN_FILE = """// RUN: stablehlo-opt -inline %s | stablehlo-translate --interpret
// RUN: stablehlo-opt --chlo-pre-serialization-pipeline -inline %s | stablehlo-translate --interpret

func.func @main() -> tensor<2xf32> {
  %0 = call @inputs() : () -> tensor<2xf32>
  %1 = chlo.sinh %0 : tensor<2xf32> -> tensor<2xf32>
  %2 = call @expected() : () -> tensor<2xf32>
  stablehlo.custom_call @check.expect_close(%1, %2) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
  return %1 : tensor<2xf32>
}
func.func private @inputs() -> tensor<2xf32> {
  %c = stablehlo.constant dense<[0.0, 1.0]> : tensor<2xf32>
  return %c : tensor<2xf32>
}
func.func private @expected() -> tensor<2xf32> {
  %c = stablehlo.constant dense<[0.0, EXPECTED]> : tensor<2xf32>
  return %c : tensor<2xf32>
}
"""


def test_testdata_style_run_lines(tmp_path):
    from shlo.opt import lit_tools
    from shlo.testing.runlines import run_file

    for expected, status in (("1.17520118", "passed"), ("1.5", "failed")):
        path = tmp_path / f"sinh_{status}.mlir"
        path.write_text(RUN_FILE.replace("EXPECTED", expected))
        r = run_file(str(path), lit_tools())
        assert [x.status for x in r.lines] == [status, status], [x.reason for x in r.lines]
        if status == "failed":  # the failed check makes `--interpret` exit 1
            assert "check.expect_close failed" in r.lines[0].output


def test_chunk_without_checks_and_without_output_passes(tmp_path):
    from shlo.opt import lit_tools
    from shlo.testing.runlines import run_file

    path = tmp_path / "t.mlir"
    path.write_text("""// RUN: stablehlo-opt --chlo-legalize-to-stablehlo --split-input-file --verify-diagnostics %s | FileCheck %s

// CHECK-LABEL: @ok
func.func @ok(%a: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: stablehlo.add
  %0 = chlo.broadcast_add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @bad(%a: tensor<1x4xf32>, %b: tensor<4xf32>) -> tensor<1x4xf32> {
  // expected-warning @+2 {{unsupported non prefix-padded dynamic rank broadcast_dimensions}}
  // expected-error @+1 {{failed to legalize operation}}
  %0 = chlo.broadcast_add %a, %b {broadcast_dimensions = array<i64: 1, 2>} : (tensor<1x4xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}
""")
    r = run_file(str(path), lit_tools(), chunks=True)
    # chunk 2 prints nothing and has no CHECK line: FileCheck's "no check strings" (a pass
    # for one chunk of a split file), not "empty input"
    assert [x.status for x in r.lines] == ["passed", "passed"], [x.output for x in r.lines]
    # but not when the tool before FileCheck failed: an expected error that is not reported
    path.write_text(path.read_text().replace("failed to legalize operation",
                                             "an error nobody reports"))
    r = run_file(str(path), lit_tools(), chunks=True)
    assert [x.status for x in r.lines] == ["passed", "failed"], [x.output for x in r.lines]
    assert "stablehlo-opt" in r.lines[1].reason
    assert 'expected error "an error nobody reports" was not produced' in r.lines[1].output


def test_input_is_verified_as_mlir_parses():
    """The input is verified before any pass, as MLIR's parser does (-verify-each adds the
    checks after passes): its errors are diagnostics --verify-diagnostics matches;
    --mlir-very-unsafe-disable-verifier-on-parsing skips it."""
    bad = """func.func @main(%a: tensor<2xf32>) -> tensor<2xf64> {
  %0 = stablehlo.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf64>
  return %0 : tensor<2xf64>
}
"""
    rc, out, err = opt(["--cse"], bad)
    assert rc == 1 and out == "" and "'stablehlo.add' op" in err
    rc, out, err = opt(["--cse", "--mlir-very-unsafe-disable-verifier-on-parsing"], bad)
    assert rc == 0 and err == "" and "tensor<2xf64>" in out
    expected = bad.replace("  %0", "  // expected-error @+1 {{'stablehlo.add' op}}\n  %0")
    rc, out, err = opt(["--cse", "--verify-diagnostics"], expected)
    assert (rc, err) == (0, "")


# --- the shape canonicalizations the chlo lowering relies on ---------------------------------------

SHAPES = """func.func @main(%a: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<3xindex>, tensor<2xindex>) {
  %s = shape.shape_of %a : tensor<?x8xf32> -> tensor<2xindex>
  %c1 = shape.const_shape [1] : tensor<1xindex>
  %c2 = shape.const_shape [4, 1, 8] : tensor<3xindex>
  %w = shape.const_witness true
  %r = shape.assuming %w -> (tensor<?x8xf32>) {
    %n = stablehlo.negate %a : tensor<?x8xf32>
    shape.assuming_yield %n : tensor<?x8xf32>
  }
  %b = shape.broadcast %c1, %s, %c2 : tensor<1xindex>, tensor<2xindex>, tensor<3xindex> -> tensor<?xindex>
  %cast = tensor.cast %b : tensor<?xindex> to tensor<3xindex>
  %k0 = shape.const_shape [2, 3] : tensor<2xindex>
  %k = tensor.cast %k0 : tensor<2xindex> to tensor<?xindex>
  %kc = tensor.cast %k : tensor<?xindex> to tensor<2xindex>
  return %r, %cast, %kc : tensor<?x8xf32>, tensor<3xindex>, tensor<2xindex>
}
"""


def test_canonicalize_shape_ops():
    out = run_passes(shlo.parse(SHAPES), "canonicalize")
    ops = out.function("main").regions[0].blocks[0].operations
    # the assuming on `true` inlined; [1] and [4, 1, 8] folded into [4, 1, 8] (constants last,
    # hoisted and uniqued); the result type concretized, so the casts fold away; the casts of
    # [2, 3] to ? and back are [2, 3] itself
    assert sorted(op.name for op in ops) == sorted([
        "shape.const_shape", "shape.const_shape", "shape.shape_of", "stablehlo.negate",
        "shape.broadcast", "func.return"])
    bcast = next(op for op in ops if op.name == "shape.broadcast")
    shapes = {op.results[0]: [int(x) for x in op.attr("shape").array]
              for op in ops if op.name == "shape.const_shape"}
    assert bcast.operands[0].owner.name == "shape.shape_of"
    assert shapes[bcast.operands[1]] == [4, 1, 8]
    assert str(bcast.results[0].type) == "tensor<3xindex>"
    ret = ops[-1]
    assert ret.operands[1] is bcast.results[0] and shapes[ret.operands[2]] == [2, 3]
    x = np.ones((4, 8), np.float32)
    got = shlo.run(out, x)
    np.testing.assert_array_equal(got[0], -x)
    np.testing.assert_array_equal(got[1], [4, 4, 8])
    np.testing.assert_array_equal(got[2], [2, 3])
