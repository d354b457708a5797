"""The verifier's machinery: structure checks, diagnostics, --verify-diagnostics, the CLI, and
(when ../shared/conformance exists) the conformance measurements: no false rejection of a
valid program, and the share of annotated invalid programs rejected on the annotated line."""

from __future__ import annotations

from pathlib import Path

import pytest

import shlo
from shlo.attributes import StringAttr, TypeAttr
from shlo.cli import main as cli_main
from shlo.errors import VerificationError
from shlo.ir import Block, FileLineColLoc, Module, Operation, Region
from shlo.syntax.split import split_cases
from shlo.testing.diagnostics import (
    check_expectations, parse_expectations, verify_file_diagnostics,
)
from shlo.types import FunctionType, tensor
from shlo.verifier import Diagnostics, collect, verify_text

CONFORMANCE = Path(__file__).resolve().parents[1] / ".." / "shared" / "conformance"


def messages(text: str) -> list[str]:
    return [d.message for d in verify_text(text, "t.mlir")]


GOOD = """\
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %a : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
"""


def test_valid_program_verifies():
    shlo.verify(shlo.parse(GOOD))
    assert collect(shlo.parse(GOOD)) == []


def test_every_violation_is_reported_with_location_op_and_label():
    text = """\
func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.add"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  %1 = "stablehlo.transpose"(%a) {permutation = array<i64: 1>} : (tensor<2xf32>) -> tensor<2xf32>
  %2 = "stablehlo.sine"(%1) : (tensor<2xf32>) -> tensor<2xi32>
  func.return %0 : tensor<2xf32>
}
"""
    with pytest.raises(VerificationError) as info:
        shlo.verify(shlo.parse(text, "m.mlir"))
    diags = info.value.diagnostics
    assert [d.line for d in diags] == [2, 3, 4]
    lines = str(info.value).splitlines()
    assert lines[0].startswith("m.mlir:2:3: error: 'stablehlo.add' op (C1) requires the same "
                               "shape for all operands and results: [2], [3], [2]")
    assert "'stablehlo.transpose' op (C2) attribute permutation must be a permutation of [0] " \
           "but got 1" in lines[1]
    assert "'stablehlo.sine' op result #0 must be ranked tensor of 4/6/8/16/32/64-bit float or " \
           "complex" in lines[2] and lines[2].endswith("but got 'tensor<2xi32>'")


def test_type_inference_states_both_types():
    msgs = messages("""\
func.func @main(%a: tensor<2x3xf32>) -> tensor<3x3xf32> {
  %0 = "stablehlo.transpose"(%a) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x3xf32>
  func.return %0 : tensor<3x3xf32>
}
""")
    assert msgs == ["'stablehlo.transpose' op (C3) inferred type(s) 'tensor<3x2xf32>' are "
                    "incompatible with return type(s) of operation 'tensor<3x3xf32>'"]


def test_dynamic_dimensions_are_compatible_with_any_size():
    assert messages("""\
func.func @main(%a: tensor<?x3xf32>, %b: tensor<2x?xf32>) -> tensor<?x?xf32> {
  %0 = stablehlo.add %a, %b : (tensor<?x3xf32>, tensor<2x?xf32>) -> tensor<?x?xf32>
  %1 = "stablehlo.transpose"(%a) {permutation = array<i64: 1, 0>} : (tensor<?x3xf32>) -> tensor<3x7xf32>
  func.return %0 : tensor<?x?xf32>
}
""") == []


def test_func_return_and_call_are_checked_against_signatures():
    msgs = messages("""\
func.func private @callee(%a: tensor<2xf32>) -> tensor<2xf32>
func.func @main(%a: tensor<2xf32>, %b: tensor<2xi32>) -> tensor<2xi32> {
  %0 = func.call @callee(%b) : (tensor<2xi32>) -> tensor<2xf32>
  %1 = func.call @nowhere(%a) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
""")
    assert any("operand type mismatch: expected operand type 'tensor<2xf32>', but provided "
               "'tensor<2xi32>' for operand number 0" in m for m in msgs)
    assert any("'nowhere' does not reference a valid function" in m for m in msgs)
    assert any("type of return operand 0 ('tensor<2xf32>') doesn't match function result type "
               "('tensor<2xi32>') in function @main" in m for m in msgs)


def test_duplicate_symbols_and_public_declarations():
    msgs = messages("""\
func.func @f() { func.return }
func.func @f() { func.return }
func.func @g()
""")
    assert any("redefinition of symbol named 'f'" in m for m in msgs)
    assert any("symbol declaration cannot have public visibility" in m for m in msgs)


def test_visibility_is_one_of_three_words():
    """MLIR's symbol verifier (the message as mlir's own tests expect it); the pretty form
    reads only those words, so the printer writes such a function in the generic form, which
    reads back (a fuzzed bytecode file had swapped a function's name and visibility)."""
    text = """"func.func"() <{function_type = () -> (), sym_name = "f", sym_visibility = "priate"}> ({
  "func.return"() : () -> ()
}) : () -> ()
"func.func"() <{function_type = () -> (), sym_name = "g", sym_visibility = 3 : i32}> ({
  "func.return"() : () -> ()
}) : () -> ()
"""
    assert messages(text) == [
        '\'func.func\' op visibility expected to be one of ["public", "private", "nested"], but '
        'got "priate"',
        "'func.func' op requires visibility attribute 'sym_visibility' to be a string "
        "attribute, but got 3 : i32"]
    printed = shlo.format(shlo.parse(text))
    assert '"func.func"() <{function_type = () -> (), sym_name = "f", sym_visibility = ' \
        '"priate"}>' in printed
    assert shlo.format(shlo.parse(printed)) == printed


def _function(ops_of_body, arg_types=(), result_types=()):
    """A module with one function built by hand (for structures the parser would refuse)."""
    ft = FunctionType(tuple(arg_types), tuple(result_types))
    block = Block(list(arg_types))
    func = Operation("func.func", properties={"sym_name": StringAttr("main"),
                                              "function_type": TypeAttr(ft)},
                     regions=[Region([block])])
    for op in ops_of_body(block):
        block.append(op)
    return Module(Operation("builtin.module", regions=[Region([Block(operations=[func])])]))


def test_use_before_definition_and_value_from_another_function():
    t = tensor((2,), "f32")

    def body(block):
        a = block.arguments[0]
        late = Operation("stablehlo.negate", [a], [t], location=FileLineColLoc("h", 3, 1))
        early = Operation("stablehlo.abs", [late.result], [t], location=FileLineColLoc("h", 2, 1))
        return [early, late, Operation("func.return", [early.result])]

    diags = collect(_function(body, [t], [t]))
    assert len(diags) == 1 and diags[0].line == 2
    assert "does not dominate this use" in diags[0].message
    assert diags[0].notes and diags[0].notes[0].line == 3


def test_missing_terminator_and_misplaced_return():
    t = tensor((2,), "f32")

    def body(block):
        a = block.arguments[0]
        ret = Operation("func.return", [a])
        return [ret, Operation("stablehlo.abs", [a], [t])]

    msgs = [d.message for d in collect(_function(body, [t], [t]))]
    assert any("must be the last operation in the parent block" in m for m in msgs)
    assert any("must end with a terminator" in m for m in msgs)


def test_quantized_type_constraints_reported_where_the_type_appears():
    diags = verify_text("""\
func.func @q(%a: tensor<2x!quant.uniform<i8:f16, 1.0e+06>>) {
  func.return
}
""", "q.mlir")
    assert len(diags) == 1 and diags[0].line == 1
    assert "(C5) scale 1.000000e+06 out of expressed type range" in diags[0].message


def test_unknown_stablehlo_op_is_reported_and_other_dialects_are_accepted():
    msgs = messages("""\
func.func @main(%a: tensor<2xf32>) {
  %0 = "stablehlo.frobnicate"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = "mydialect.anything"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  func.return
}
""")
    assert len(msgs) == 1 and "unregistered operation 'stablehlo.frobnicate'" in msgs[0]


def test_a_failing_verifier_function_is_an_internal_error_never_swallowed(monkeypatch):
    from shlo import registry

    def broken(op, diag):
        raise RuntimeError("bug")

    monkeypatch.setattr(registry.lookup("stablehlo.add"), "verify", broken)
    monkeypatch.delenv("SHLO_DEBUG", raising=False)
    with pytest.raises(shlo.InternalError) as e:
        collect(shlo.parse(GOOD))
    msg = str(e.value)
    assert "internal error while verifying 'stablehlo.add': RuntimeError: bug" in msg
    assert "please report" in msg and e.value.diagnostics[0].line is not None
    assert isinstance(e.value.__cause__, RuntimeError)
    monkeypatch.setenv("SHLO_DEBUG", "1")
    with pytest.raises(RuntimeError, match="bug"):
        collect(shlo.parse(GOOD))


def _lines(text: str) -> list[tuple[int, str]]:
    return [(d.line, d.message) for d in verify_text(text, "t.mlir")]


DOT_ALGORITHM = """\
func.func @main(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = "stablehlo.dot_general"(%a, %b) <{
    dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1],
                                           rhs_contracting_dimensions = [0]>,
    algorithm = #stablehlo.dot_algorithm<lhs_precision_type = f32, rhs_precision_type = f32,
      accumulation_type = f32, lhs_component_count = 2, rhs_component_count = 1,
      num_primitive_operations = 1, allow_imprecise_accumulation = false>
  }> : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %0 : tensor<4x4xf32>
}
"""


def test_an_attribute_error_is_reported_on_the_attributes_line():
    """MLIR checks #stablehlo.dot_algorithm when it builds it: its error is on its line (5),
    not the op's (2); the pretty form keeps the attribute's place too."""
    ((line, msg),) = _lines(DOT_ALGORITHM)
    assert line == 5 and "dot algorithm not known to be supported on any hardware" in msg
    pretty = ("func.func @main(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {\n"
              "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0],\n"
              "    algorithm = <lhs_precision_type = f32, rhs_precision_type = f32, "
              "accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, "
              "num_primitive_operations = 0, allow_imprecise_accumulation = false>\n"
              "    : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>\n"
              "  func.return %0 : tensor<4x4xf32>\n}\n")
    ((line, msg),) = _lines(pretty)
    assert line == 3 and "num primitive operations must be positive" in msg


def test_a_missing_mesh_symbol_is_reported_only_when_nothing_else_fails():
    """As MLIR, which checks symbol uses once every op verified."""
    gather = ('  %0 = "stablehlo.all_gather"(%a) {all_gather_dim = 0 : i64, replica_groups = '
              '#stablehlo.replica_group_mesh_axes<mesh = @m, axes = []>} : '
              '(tensor<2xf32>) -> tensor<4xf32>\n')
    alone = "func.func @main(%a: tensor<2xf32>) {\n" + gather + "  func.return\n}\n"
    assert [m for _, m in _lines(alone)] == [
        "'stablehlo.all_gather' op (C2, C3, C4) replica_groups: mesh symbol 'm' not found"]
    other = alone.replace("  func.return", "  %1 = stablehlo.add %a, %a : tensor<3xf32>\n"
                                           "  func.return")
    assert [line for line, _ in _lines(other)] == [3]


def test_conv_group_count_in_the_pretty_attribute_dictionary_is_reported_there():
    text = ("func.func @main(%a: tensor<1x6x6x2xf32>, %k: tensor<3x3x2x4xf32>) -> "
            "tensor<1x4x4x4xf32> {\n"
            "  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->"
            "[b, 0, 1, f], window = {}\n"
            "    {batch_group_count = 0 : i64, feature_group_count = 1 : i64}\n"
            "    : (tensor<1x6x6x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x4x4x4xf32>\n"
            "  func.return %0 : tensor<1x4x4x4xf32>\n}\n")
    ((line, msg),) = _lines(text)
    assert line == 3 and "attribute 'batch_group_count' failed to satisfy constraint" in msg


def test_diagnostics_error_formats_label():
    op = Operation("stablehlo.add", location=FileLineColLoc("f.mlir", 4, 7))
    d = Diagnostics()
    d.error(op, "C3", "something is wrong", notes=[("look here", None)])
    assert d.items[0].format() == ("f.mlir:4:7: error: 'stablehlo.add' op (C3) something is "
                                   "wrong\nf.mlir:4:7: note: look here")


# --- --verify-diagnostics ------------------------------------------------------------------------


def test_parse_expectations_offsets_and_regex():
    text = "\n".join([
        "// expected-error@+1 {{first}}",
        "x",
        "y // expected-error {{same line}}",
        "// expected-error@-2 {{back}}",
        "// expected-error @below {{below}}",
        "z",
        "// expected-error@above {{above}}",
        "  // expected-error-re@+1 {{operand #0 must be {{.*}}, but got}}",
        "w",
        "// expected-note@+1 {{a note}}",
    ])
    exps = parse_expectations(text)
    assert [(e.kind, e.line, e.regex) for e in exps] == [
        ("error", 2, False), ("error", 3, False), ("error", 2, False), ("error", 6, False),
        ("error", 6, False), ("error", 9, True), ("note", 11, False)]
    assert exps[5].matches("'stablehlo.abs' op (I1) operand #0 must be ranked tensor of f32 "
                           "values, but got 'tensor<i32>'")
    assert not exps[5].matches("operand #1 must be x, but got")


BAD_ADD = """\
func.func @main(%a: tensor<2xf32>, %b: tensor<3xf32>) {
  // expected-error@+1 {{requires the same shape for all operands and results}}
  %0 = "stablehlo.add"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32>
  func.return
}
"""


def test_check_expectations_matches_line_and_optionally_message():
    assert check_expectations("t.mlir", BAD_ADD).passed
    assert check_expectations("t.mlir", BAD_ADD, strict_messages=True).passed
    wrong = BAD_ADD.replace("requires the same shape", "something else entirely")
    assert check_expectations("t.mlir", wrong).passed
    report = check_expectations("t.mlir", wrong, strict_messages=True)
    assert not report.passed
    assert any("unexpected error" in m for m in report.mismatches)
    assert any('expected error "something else entirely' in m for m in report.mismatches)
    moved = BAD_ADD.replace("@+1", "@+2")
    report = check_expectations("t.mlir", moved)
    assert not report.passed and len(report.mismatches) == 2


def test_parse_errors_count_as_diagnostics_on_their_line():
    text = "func.func @f() {\n  // expected-error@+1 {{}}\n  %0 = stablehlo.add %x, %x : tensor<2xf32>\n}\n"
    report = check_expectations("t.mlir", text)
    assert report.diagnostics and report.diagnostics[0].line == 3
    assert report.passed


SPLIT = GOOD + "\n// -----\n\n" + BAD_ADD + "\n// -----\n\n" + BAD_ADD.replace("@+1", "@+2")


def test_cli_verify_diagnostics_prints_mismatches_and_summary(tmp_path, capsys):
    f = tmp_path / "v.mlir"
    f.write_text(SPLIT)
    assert cli_main(["verify", str(f), "--split-input-file", "--verify-diagnostics"]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines() == ["2 passed, 1 failed"]
    err = captured.err.splitlines()
    assert len(err) == 2  # one line per mismatch (on stderr): the unexpected and the missing
    assert any("unexpected error" in line for line in err)
    assert any("was not produced" in line for line in err)


def test_cli_verify_plain(tmp_path, capsys):
    f = tmp_path / "p.mlir"
    f.write_text(GOOD)
    assert cli_main(["verify", str(f)]) == 0
    f.write_text(BAD_ADD)
    assert cli_main(["verify", str(f)]) == 1
    err = capsys.readouterr().err
    assert f"{f}:3:3: error: 'stablehlo.add' op (C1)" in err
    assert "Traceback" not in err


# --- conformance (skipped without ../shared/conformance) --------------------------------------------

needs_corpus = pytest.mark.skipif(not CONFORMANCE.is_dir(), reason="no ../shared/conformance")


def _valid_chunks(paths):
    for f in paths:
        text = f.read_text(encoding="utf-8")
        for line, chunk in split_cases(text):
            if "expected-error" not in chunk and "expected-warning" not in chunk:
                yield f, line, chunk


def _corpus_files(part: str) -> list[Path]:
    sub, _, shard = part.partition("#")
    files = sorted((CONFORMANCE / sub).glob("*.mlir"))
    if shard:
        k, n = map(int, shard.split("/"))
        files = files[k::n]
    return files


@needs_corpus
@pytest.mark.parametrize("part", ["verify", "interpret", "testdata/quantized", "testdata/dynamic",
                                  "testdata#0/3", "testdata#1/3", "testdata#2/3"])
def test_no_false_rejections(part):
    """Every valid program of the corpus verifies clean (parse errors are the parser's)."""
    from shlo.errors import ParseError

    rejected, checked = [], 0
    for f, line, chunk in _valid_chunks(_corpus_files(part)):
        try:
            module = shlo.parse(chunk, str(f))
        except ParseError:
            continue
        checked += 1
        diags = collect(module)
        if diags:
            rejected.append(diags[0].format())
    assert checked > 0
    assert rejected == []


# The share of annotated chunks that get an error on every annotated line, per file; the
# verifier must not fall below what it reached (see docs/semantics/verifier.md).
SHARES = {
    "ops_stablehlo.mlir": 1.0,
    "ops_stablehlo_quantized.mlir": 1.0,
    "infer_stablehlo.mlir": 1.0,
    "verify_async_ops.mlir": 1.0,
    "verify_bounds.mlir": 1.0,
    "verify_convolution.mlir": 1.0,
    "verify_dynamic_conv.mlir": 1.0,
    "verify_reduce.mlir": 1.0,
    "verify_reduce_window.mlir": 1.0,
    "verify_replica_groups_mesh_axes.mlir": 1.0,
    "verify_scatter.mlir": 1.0,
    "verify_select_and_scatter.mlir": 1.0,
    "verify_while.mlir": 1.0,
}


@needs_corpus
@pytest.mark.parametrize("name", sorted(SHARES))
def test_annotated_invalid_programs_are_rejected_on_their_line(name):
    reports = [r for r in verify_file_diagnostics(str(CONFORMANCE / "verify" / name))
               if r.annotated]
    hit = sum(r.lines_hit() for r in reports)
    assert reports
    assert hit / len(reports) >= SHARES[name] - 1e-9, f"{hit}/{len(reports)}"


# The core verifier files (issue 16 item 5): every chunk passes `--verify-diagnostics` with
# upstream's message text, except these (file: first lines of the chunks, and why).
CORE = sorted(SHARES) + ["ops_dot_general_algorithms.mlir", "ops_chlo.mlir", "infer_chlo.mlir"]
CORE_KNOWN = {
    # a warning of stablehlo-opt's --hlo-test-infer pass (shape reification), not the verifier's
    "infer_chlo.mlir": {65},
}


@needs_corpus
@pytest.mark.parametrize("name", CORE)
def test_core_files_pass_with_upstreams_messages(name):
    reports = verify_file_diagnostics(str(CONFORMANCE / "verify" / name), strict_messages=True)
    failed = {r.first_line for r in reports if not r.passed}
    assert reports
    assert failed == CORE_KNOWN.get(name, set()), \
        [m for r in reports if not r.passed for m in r.mismatches][:5]

