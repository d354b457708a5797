"""The parser's line memo (shlo/syntax/memo.py), its constant lines
(shlo/syntax/constant_line.py) and its function memo (shlo/syntax/function_memo.py) build
exactly the IR the general path builds: the same ops,
operands, types, attributes (inherent and discardable apart, hex spelling included), value names
and locations, and the same errors."""

from __future__ import annotations

from pathlib import Path

import pytest

import shlo
from shlo.ir import Module, Operation
from shlo.syntax.parser import Parser


def _no_memo(monkeypatch) -> None:
    """Only the general path from now on: no memo, no constant lines, no function memo."""
    monkeypatch.setattr(Parser, "_memo_ops", lambda self, block: 0)
    monkeypatch.setattr(Parser, "_constant_line", lambda self, block: False)
    monkeypatch.setattr(Parser, "_memo_function", lambda self, block: False)


def _exact_difference(a: Module, b: Module) -> str | None:
    """The first difference between two parses, names and locations included (None: none)."""
    ids: dict[int, int] = {}
    ids_b: dict[int, int] = {}
    xs, ys = list(a.walk()), list(b.walk())
    if len(xs) != len(ys):
        return f"{len(xs)} vs {len(ys)} ops"
    for i, (x, y) in enumerate(zip(xs, ys)):
        where = f"op {i} ({x.name})"
        args_x, args_y = [], []
        for r in x.regions:
            for blk in r.blocks:
                args_x.append((blk.label, [(v.type, v.name, v.index) for v in blk.arguments]))
                for v in blk.arguments:
                    ids[id(v)] = len(ids)
        for r in y.regions:
            for blk in r.blocks:
                args_y.append((blk.label, [(v.type, v.name, v.index) for v in blk.arguments]))
                for v in blk.arguments:
                    ids_b[id(v)] = len(ids_b)
        if args_x != args_y:
            return f"{where}: blocks {args_x} vs {args_y}"
        for u, v in zip(x.results, y.results):
            ids[id(u)] = len(ids)
            ids_b[id(v)] = len(ids_b)
        facts_x = (x.name, x.properties, x.attributes, x.location, type(x.location),
                   [(r.type, r.name) for r in x.results], [ids.get(id(v)) for v in x.operands],
                   len(x.regions), x.parent is None, getattr(x, "attr_locations", None),
                   [getattr(a, "hex", None) for a in x.properties.values()])
        facts_y = (y.name, y.properties, y.attributes, y.location, type(y.location),
                   [(r.type, r.name) for r in y.results], [ids_b.get(id(v)) for v in y.operands],
                   len(y.regions), y.parent is None, getattr(y, "attr_locations", None),
                   [getattr(a, "hex", None) for a in y.properties.values()])
        if facts_x != facts_y:
            return f"{where}: {facts_x} vs {facts_y}"
        if x.parent is not None and x.parent.operations.index(x) != y.parent.operations.index(y):
            return f"{where}: position"
    return None


MEMO_TEXT = """#loc1 = loc("p['w']")
module @jit_main attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>, %arg2: tensor<3xi32>, %arg3: tensor<3x2xf32>) -> (tensor<2x3xf32>) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    %2 = stablehlo.add %arg0, %0 : tensor<2x3xf32>
    %3 = stablehlo.add %2, %1 : tensor<2x3xf32>

    %4 = stablehlo.compare  LT, %3, %arg1,  FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
    // a comment between two lines of one template
    %5 = stablehlo.compare  LT, %2, %arg1,  FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
    %6 = stablehlo.select %4, %3, %2 : tensor<2x3xi1>, tensor<2x3xf32>
    %7 = stablehlo.select %5, %6, %3 : tensor<2x3xi1>, tensor<2x3xf32> loc(#loc2)
    %8 = stablehlo.select %5, %7, %6 : tensor<2x3xi1>, tensor<2x3xf32> loc(#loc1)
    %9 = stablehlo.dot_general %8, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
    %10 = stablehlo.dot_general %7, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
    %11 = stablehlo.tanh %arg0 : tensor<2x3xf32> loc("t.py":1:2)
    %12 = stablehlo.tanh %11 : tensor<2x3xf32> loc("t.py":1:2)
    %13 = stablehlo.tanh %12 : tensor<2x3xf32>
    %14 = stablehlo.tanh %13 {mhlo.frontend_attributes = {x = "%13"}} : tensor<2x3xf32>
    %15 = stablehlo.tanh %14 {mhlo.frontend_attributes = {x = "%14"}} : tensor<2x3xf32>
    %16:2 = "test.pair"(%15) : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
    %17 = stablehlo.tanh %16#1 : tensor<2x3xf32>
    %18 = stablehlo.tanh %16#0 : tensor<2x3xf32>
    %19 = "stablehlo.add"(%17, %18) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %20 = "stablehlo.add"(%19, %18) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %21 = stablehlo.reduce(%20 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    %22 = stablehlo.reduce(%20 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    %r1 = stablehlo.reduce(%20 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32> loc(#loc2)
    %r2 = stablehlo.reduce(%20 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32> loc(#loc2)
    %23 = stablehlo.add %21, %22 : tensor<2xf32>
    %24 = stablehlo.add %23, %21 : tensor<2xf32>
    %25 = call @f(%24) : (tensor<2xf32>) -> tensor<2xf32>
    %26 = call @f(%25) : (tensor<2xf32>) -> tensor<2xf32>
    %27 = "stablehlo.reduce"(%20, %cst) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      %t = stablehlo.add %s, %b : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    %28 = "stablehlo.reduce"(%20, %cst) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      %t = stablehlo.add %s, %b : tensor<f32>
      stablehlo.return %t : tensor<f32>
    }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    %29 = stablehlo.add %27, %28 : tensor<2xf32>  // a comment after the op
    %30 = stablehlo.add %29, %28 : tensor<2xf32>  // a comment after the op
    %31 = stablehlo.add %29, %28 : tensor<2xf32>   %32 = stablehlo.add %29, %28 : tensor<2xf32>
    return %arg0 : tensor<2x3xf32>
  }
  func.func private @f(%x: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.add %x, %x : tensor<2xf32>
    %1 = stablehlo.add %0, %x : tensor<2xf32>
    %2 = stablehlo.add %1, %x : tensor<2xi32>
    return %1 : tensor<2xf32>
  }
}
#loc2 = loc("q.py":3:4)
"""


ONE_OF_EACH = """module @jit_main {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>, %arg2: tensor<3xi32>) -> (tensor<2x3xf32>) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %c = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
    %cst_0 = stablehlo.constant dense<"0x0000803F000000400000404000008040000080C00000C0C0"> : tensor<2x3xf32>
    %cst_1 = stablehlo.constant dense<0x7FC00000> : tensor<2x3xf32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<2x3xf32>
    %2 = stablehlo.compare  LT, %1, %arg1,  FLOAT : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
    %3 = stablehlo.compare  GE, %arg2, %c : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
    %4 = stablehlo.select %2, %1, %cst_0 : tensor<2x3xi1>, tensor<2x3xf32>
    %5 = stablehlo.convert %4 : (tensor<2x3xf32>) -> tensor<2x3xf64>
    %6 = stablehlo.transpose %4, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %7 = stablehlo.reshape %6 : (tensor<3x2xf32>) -> tensor<6xf32>
    %8 = stablehlo.concatenate %7, %7, dim = 0 : (tensor<6xf32>, tensor<6xf32>) -> tensor<12xf32>
    %9 = stablehlo.iota dim = 0 : tensor<4xi32>
    %10 = stablehlo.get_dimension_size %4, dim = 1 : (tensor<2x3xf32>) -> tensor<i32>
    %11 = stablehlo.add %1, %arg0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %12 = stablehlo.reverse %4, dims = [0] : tensor<2x3xf32>
    %13 = stablehlo.tanh %12 : tensor<2x3xf32> loc("t.py":1:2)
    %14 = stablehlo.clamp %cst, %13, %cst : (tensor<f32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    return %14 : tensor<2x3xf32>
  }
}
"""


def test_memo_reads_each_op_form_as_the_general_path(monkeypatch):
    """Every line of ONE_OF_EACH twice (the copy's result renamed): the copies are read by the
    memo (but for the one with an inline location), with the IR the general path builds."""
    lines = []
    for ln in ONE_OF_EACH.splitlines():
        lines.append(ln)
        name = ln.strip().split(" = ", 1)[0]
        if name.startswith("%") and " = " in ln:
            lines.append(ln.replace(name + " = ", name + "_again = ", 1))
    text = "\n".join(lines) + "\n"
    read = _read_by_memo(monkeypatch, text)
    memo = shlo.parse(text, "f.mlir")
    _no_memo(monkeypatch)
    general = shlo.parse(text, "f.mlir")
    assert _exact_difference(memo, general) is None
    assert len(read) == text.count("_again = ") - 1
    assert all(r.split("=")[0].endswith("_again") for r in read)


def _read_by_memo(monkeypatch, text: str) -> list[str]:
    """The names of the ops the memo reads while ``text`` is parsed (constant lines left to the
    memo too, as if there were no constant path)."""
    from shlo.syntax import memo

    monkeypatch.setattr(Parser, "_constant_line", lambda self, block: False)

    read: list[str] = []

    def recording(self, block):
        k = len(block.operations)
        n = memo.memo_ops(self, block)
        read.extend(f"{op.results[0].name if op.results else ''}={op.name}"
                    for op in block.operations[k:])
        return n

    monkeypatch.setattr(Parser, "_memo_ops", recording)
    return read


def test_memo_builds_what_the_general_path_builds(monkeypatch):
    text = MEMO_TEXT.replace("tensor<2xi32>", "tensor<2xf32>")
    read = _read_by_memo(monkeypatch, text)
    memo = shlo.parse(text, "m.mlir")
    _no_memo(monkeypatch)
    general = shlo.parse(text, "m.mlir")
    assert _exact_difference(memo, general) is None
    # each line after the first of its template (with the operand types learned, in the same
    # default dialect) is read by the memo, in regions too, one-line region ops too (reduce's
    # `applies` form); not: inline locations, `%16#1` operands, a `%` in a string, ops over
    # several lines, trailing comments, two ops on a line
    assert read == ["cst_0=stablehlo.constant", "1=stablehlo.broadcast_in_dim",
                    "3=stablehlo.add", "5=stablehlo.compare", "7=stablehlo.select",
                    "8=stablehlo.select", "10=stablehlo.dot_general", "20=stablehlo.add",
                    "22=stablehlo.reduce", "r2=stablehlo.reduce", "24=stablehlo.add", "26=func.call", "t=stablehlo.add", "s=stablehlo.add",
                    "t=stablehlo.add", "=stablehlo.return", "0=stablehlo.add", "1=stablehlo.add",
                    "2=stablehlo.add"]
    loc7 = [op for op in memo.walk() if op.results and op.results[0].name == "7"][0].location
    assert loc7.file_line_col() == ("q.py", 3, 4)
    # reduce's `applies` form reads its location: the op's and its body's (as upstream)
    red = [op for op in memo.walk() if op.results and op.results[0].name == "r2"][0]
    assert [x.location for x in red.walk()] == [loc7] * 3


ATTRIBUTE_LOCATIONS = """func.func @m(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.add"(%a, %a) {foo = 1 : i32} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %long_name = "stablehlo.add"(%0, %a) {foo = 1 : i32} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  "stablehlo.add"(%0, %a) {foo = 1 : i32} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %2 = stablehlo.dot_general %a, %a, contracting_dims = [0] x [0], algorithm = <lhs_precision_type = f32, rhs_precision_type = f32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2xf32>, tensor<2xf32>) -> tensor<f32>
  %3 = stablehlo.dot_general %long_name, %a, contracting_dims = [0] x [0], algorithm = <lhs_precision_type = f32, rhs_precision_type = f32, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2xf32>, tensor<2xf32>) -> tensor<f32>
  return %long_name : tensor<2xf32>
}
"""


def test_memo_keeps_attribute_locations(monkeypatch):
    """A memo line keeps where its attributes were written (Operation.attr_locations, which
    verifiers report on), shifted by the lengths of its own SSA names."""
    read = _read_by_memo(monkeypatch, ATTRIBUTE_LOCATIONS)
    memo = shlo.parse(ATTRIBUTE_LOCATIONS, "m.mlir")
    _no_memo(monkeypatch)
    assert _exact_difference(memo, shlo.parse(ATTRIBUTE_LOCATIONS, "m.mlir")) is None
    assert read == ["long_name=stablehlo.add", "3=stablehlo.dot_general"]
    ops = list(memo.walk())
    # `%long_name = "stablehlo.add"(%0, %a) {foo = 1`: the value at column 47 of line 3
    assert ops[3].attr_locations["foo"].file_line_col() == ("m.mlir", 3, 47)
    assert ops[6].attr_locations["algorithm"].file_line_col() == ("m.mlir", 6, 88)


def test_memo_with_crlf_line_ends(monkeypatch):
    text = MEMO_TEXT.replace("tensor<2xi32>", "tensor<2xf32>").replace("\n", "\r\n")
    read = _read_by_memo(monkeypatch, text)
    memo = shlo.parse(text, "m.mlir")
    _no_memo(monkeypatch)
    general = shlo.parse(text, "m.mlir")
    assert _exact_difference(memo, general) is None
    assert len(read) == 19


@pytest.mark.parametrize("bad, message", [
    ("%2 = stablehlo.add %1, %x : tensor<2xi32>",
     "use of value '%1' expects different type than prior uses"),
    ("%1 = stablehlo.add %0, %x : tensor<2xf32>", "redefinition of SSA value '%1'"),
    ("%2 = stablehlo.add %9, %x : tensor<2xf32>", "use of undeclared SSA value name '%9'"),
])
def test_memo_lines_report_the_general_paths_errors(monkeypatch, bad, message):
    text = MEMO_TEXT.replace("%2 = stablehlo.add %1, %x : tensor<2xi32>", bad)
    _same_error(monkeypatch, text, "m.mlir", message)


def _same_error(monkeypatch, text: str, filename: str, message: str) -> None:
    """Parsing ``text`` fails with ``message``, with and without the fast paths, alike."""
    with pytest.raises(shlo.ParseError) as fast:
        shlo.parse(text, filename)
    _no_memo(monkeypatch)
    with pytest.raises(shlo.ParseError) as general:
        shlo.parse(text, filename)
    assert message in str(fast.value)
    assert str(fast.value) == str(general.value)
    assert fast.value.location.file_line_col() == general.value.location.file_line_col()


def _corpus() -> Path:
    """The conformance testdata folder (the test skips without ../shared)."""
    root = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance" / "testdata"
    if not root.is_dir():
        pytest.skip("no ../shared/conformance")
    return root


def test_memo_matches_general_path_on_corpus(monkeypatch):
    root = _corpus()
    files = sorted(root.glob("*.mlir"))[::60] + sorted((root / "dynamic").glob("*.mlir"))[::40]
    texts = [(f.name, f.read_text()) for f in files]
    memo = [shlo.parse(t, n) for n, t in texts]
    _no_memo(monkeypatch)
    for (n, t), mf in zip(texts, memo):
        assert _exact_difference(mf, shlo.parse(t, n)) is None, n


def test_memo_matches_general_path_on_benchmark_programs(monkeypatch):
    root = Path(__file__).resolve().parents[2] / "benchmarks" / "programs"
    texts = [(f.name, f.read_text()) for f in sorted(root.glob("*.mlir"))]
    assert texts
    memo = [shlo.parse(t, n) for n, t in texts]
    _no_memo(monkeypatch)
    for (n, t), mf in zip(texts, memo):
        assert _exact_difference(mf, shlo.parse(t, n)) is None, n


# --- the function memo ------------------------------------------------------------------------

FUNCTIONS = """#loc1 = loc("helper")
!t = tensor<4xf32>
module @m {
  func.func private @f(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32> loc(#loc1)
    %1 = "stablehlo.multiply"(%0, %arg1) {x = 1 : i32} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %2:2 = stablehlo.while(%i = %0, %j = %1) : tensor<4xf32>, tensor<4xf32>
    cond {
      %c = stablehlo.constant dense<true> : tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %s = stablehlo.add %i, %j : tensor<4xf32>
      stablehlo.return %s, %j : tensor<4xf32>, tensor<4xf32>
    }
    %3 = stablehlo.reduce(%2#0 init: %arg0) applies stablehlo.add across dimensions = [] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %3 : tensor<4xf32>
  }
  func.func private @a_much_longer_name(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<4xf32> loc(#loc1)
    %1 = "stablehlo.multiply"(%0, %arg1) {x = 1 : i32} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %2:2 = stablehlo.while(%i = %0, %j = %1) : tensor<4xf32>, tensor<4xf32>
    cond {
      %c = stablehlo.constant dense<true> : tensor<i1>
      stablehlo.return %c : tensor<i1>
    } do {
      %s = stablehlo.add %i, %j : tensor<4xf32>
      stablehlo.return %s, %j : tensor<4xf32>, tensor<4xf32>
    }
    %3 = stablehlo.reduce(%2#0 init: %arg0) applies stablehlo.add across dimensions = [] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    return %3 : tensor<4xf32>
  }
  func.func public @g(%arg0: !t) -> !t {
    %0 = stablehlo.negate %arg0 : !t
    return %0 : !t
  }

  func.func public @g2(%arg0: !t) -> !t {
    %0 = stablehlo.negate %arg0 : !t
    return %0 : !t
  }
  func.func public @g3(%arg0: !t) -> !t {
    %0 = stablehlo.negate %arg0 : !t
    return %0 : !t
  }
  loc(#loc1)
  func.func public @g4(%arg0: !t) -> !t {
    %0 = stablehlo.negate %arg0 : !t
    return %0 : !t
  } loc(#loc1)
  func.func public @h(%arg0: !t) -> !t {
    %0 = stablehlo.negate %arg0 : !t loc("file.py":3:4)
    return %0 : !t
  }
  func.func public @h2(%arg0: !t) -> !t {
    %0 = stablehlo.negate %arg0 : !t loc("file.py":3:4)
    return %0 : !t
  }
  func.func private @r(%arg0: !t) -> !t {
    %0 = func.call @r(%arg0) : (!t) -> !t
    return %0 : !t
  }
  func.func private @r2(%arg0: !t) -> !t {
    %0 = func.call @r(%arg0) : (!t) -> !t
    return %0 : !t
  }
  func.func private @d(!t) -> !t
  func.func private @d2(!t) -> !t
}
"""


def _read_by_function_memo(monkeypatch) -> list[str]:
    """The names of the functions the function memo reads while a text is parsed."""
    from shlo.syntax import function_memo

    read: list[str] = []

    def recording(self, block):
        hit = function_memo.memo_function(self, block)
        if hit:
            read.append(block.operations[-1].properties["sym_name"].value)
        return hit

    monkeypatch.setattr(Parser, "_memo_function", recording)
    return read


@pytest.mark.parametrize("crlf", [False, True])
def test_function_memo_builds_what_the_general_path_builds(monkeypatch, crlf):
    """A function whose text repeats an earlier one's but for its name is copied, regions,
    multi-results, location aliases and attribute locations included, at its own lines; not:
    the first of each text, one with a literal location (it would not move), one with text after
    its closing brace, a declaration."""
    text = FUNCTIONS.replace("\n", "\r\n") if crlf else FUNCTIONS
    read = _read_by_function_memo(monkeypatch)
    memo = shlo.parse(text, "m.mlir")
    _no_memo(monkeypatch)
    general = shlo.parse(text, "m.mlir")
    assert _exact_difference(memo, general) is None
    # @r2 calls @r, as @r does: the same text but for the name (the callee is not the name)
    # (not @g4: a location after its closing brace, on the same line)
    assert read == ["a_much_longer_name", "g2", "g3", "r2"]
    funcs = {op.properties["sym_name"].value: op for op in memo.op.regions[0].blocks[0].operations}
    mul = list(funcs["a_much_longer_name"].walk())[2]
    assert mul.name == "stablehlo.multiply"
    assert mul.location.file_line_col() == ("m.mlir", 20, 5)
    assert mul.attr_locations["x"].file_line_col() == ("m.mlir", 20, 47)  # (at `1`)
    assert funcs["g3"].regions[0].blocks[0].operations[0].location.file_line_col() == \
        ("m.mlir", 42, 5)
    # a location after the closing brace, on the next line, is the function's
    assert funcs["g3"].location == list(funcs["f"].walk())[1].location  # (loc("helper"))


def test_function_memo_is_cleared_by_an_alias_defined_between_functions(monkeypatch):
    """(An alias may change what a later function's text reads as: `!t` cannot be redefined,
    but any definition starts the memo afresh.)"""
    text = FUNCTIONS.replace("  func.func public @g2", "}\n#loc9 = loc(\"x\")\nmodule @n {\n"
                             "  func.func public @g2")
    read = _read_by_function_memo(monkeypatch)
    memo = shlo.parse(text, "m.mlir")
    _no_memo(monkeypatch)
    assert _exact_difference(memo, shlo.parse(text, "m.mlir")) is None
    assert read == ["a_much_longer_name", "g3", "r2"]


def test_function_memo_leaves_functions_with_successors_to_the_general_path(monkeypatch):
    f = """  func.func private @NAME(%arg0: tensor<f32>) -> tensor<f32> {
    "cf.br"(%arg0)[^bb1] : (tensor<f32>) -> ()
  ^bb1(%x: tensor<f32>):
    return %x : tensor<f32>
  }"""
    text = "module {\n" + f.replace("NAME", "a") + "\n" + f.replace("NAME", "bb") + "\n}\n"
    read = _read_by_function_memo(monkeypatch)
    memo = shlo.parse(text, "s.mlir")
    _no_memo(monkeypatch)
    general = shlo.parse(text, "s.mlir")
    assert read == []
    assert _exact_difference(memo, general) is None
    assert shlo.format(memo) == shlo.format(general)


@pytest.mark.parametrize("bad, message", [
    ("%0 = stablehlo.negate %arg1 : !t", "use of undeclared SSA value name '%arg1'"),
    ("%0 = stablehlo.negat %arg0 : !t", "custom op 'stablehlo.negat' is unknown"),
])
def test_function_memo_never_reads_an_error(monkeypatch, bad, message):
    """Twice the same bad function: the second is not read from the memo, and the errors are
    the general path's."""
    text = FUNCTIONS.replace("    %0 = stablehlo.negate %arg0 : !t\n    return %0 : !t\n  }\n\n", "    " + bad + "\n    return %0 : !t\n  }\n\n")
    assert text != FUNCTIONS
    _same_error(monkeypatch, text, "m.mlir", message)


# --- the printer's memo of op text templates -------------------------------------------------


def _printed(monkeypatch, text: str, memo: bool, **kw) -> str:
    from shlo.syntax.printer import Printer, format_module

    m = shlo.parse(text, "m.mlir")
    with monkeypatch.context() as mp:
        if not memo:
            mp.setattr(Printer, "_leaf_text", Printer._body)
        return format_module(m, **kw)


@pytest.mark.parametrize("kw", [{}, {"generic": True},
                                {"debug_info": True, "loc_aliases": True}])
def test_printer_memo_prints_what_the_printer_prints(monkeypatch, kw):
    from shlo.syntax.printer import Printer

    learned = []
    learn = Printer._learn
    monkeypatch.setattr(Printer, "_learn", lambda self, op, key, text: (
        learned.append(op.name), learn(self, op, key, text)))
    lines = []
    for ln in ONE_OF_EACH.splitlines():
        lines.append(ln)
        name = ln.strip().split(" = ", 1)[0]
        if name.startswith("%") and " = " in ln:
            lines.append(ln.replace(name + " = ", name + "_again = ", 1))
            lines.append(ln.replace(name + " = ", name + "_third = ", 1))
    for text in ("\n".join(lines), MEMO_TEXT.replace("tensor<2xi32>", "tensor<2xf32>")):
        with_memo = _printed(monkeypatch, text, True, **kw)
        assert with_memo == _printed(monkeypatch, text, False, **kw)
    assert "stablehlo.dot_general" in learned and "stablehlo.compare" in learned


def test_printer_memo_on_corpus(monkeypatch):
    root = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance" / "testdata"
    if not root.is_dir():
        pytest.skip("no ../shared/conformance")
    for f in sorted(root.glob("*.mlir"))[::90]:
        text = f.read_text()
        for kw in ({}, {"generic": True}):
            assert _printed(monkeypatch, text, True, **kw) == \
                _printed(monkeypatch, text, False, **kw), f.name


# --- constant lines (shlo/syntax/constant_line.py) -----------------------------------------------

CONSTANTS = """#loc1 = loc("c.py":4:5)
func.func @c() -> tensor<2x3xf32> {
  %cst = stablehlo.constant dense<"0x0000803F000000400000404000008040000080C00000C0C0"> : tensor<2x3xf32>
  %cst_0 = stablehlo.constant dense<0x7FC00000> : tensor<2x3xf32>
  %c = stablehlo.constant dense<[[1, 2], [3, -4]]> : tensor<2x2xi32>
  %c_1 = stablehlo.constant dense<9> : tensor<i4>
  %c_2 = stablehlo.constant dense<[true, false]> : tensor<2xi1>
  %cst_3 = stablehlo.constant dense<(1.000000e+00,-2.000000e+00)> : tensor<complex<f32>> loc(#loc1)
  %cst_4 = stablehlo.constant dense<[0x7F80, -1.5]> : tensor<2xbf16>
  %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %c_7 = stablehlo.constant dense<> : tensor<0xi8>
  %c_8 = stablehlo.constant dense<"0x01000000020000000300000004000000"> : tensor<2x2xui32> loc(#loc1)
  %c_9 = stablehlo.constant dense<1> : tensor<i64> loc("inline.py":1:2)
  %c_10 = stablehlo.constant {foo = 1 : i32} dense<1> : tensor<i64>
  %c_11 = stablehlo.constant dense<1> : tensor<i64>  // a comment
  %c_12 = stablehlo.constant dense<[1, 2]> : tensor<2xi64> %c_13 = stablehlo.constant dense<1> : tensor<i64>
  %c_14 = stablehlo.constant  dense<1> : tensor<i64>
  %c_15 = stablehlo.constant dense<"0x0100000002000000"> : tensor<2xi32>
  %c_16 = stablehlo.constant dense<"0x0100000002000000"> : tensor<2xi32>
  %c_17 = stablehlo.constant dense<[1,
    2]> : tensor<2xi32>
  return %cst : tensor<2x3xf32>
}
"""


def _read_by_constant_lines(monkeypatch, text: str) -> tuple[list[str], object]:
    """The names of the ops the constant path reads while ``text`` is parsed, and the module."""
    from shlo.syntax.constant_line import constant_line

    read: list[str] = []

    def recording(self, block):
        ok = constant_line(self, block)
        if ok:
            read.append(block.operations[-1].results[0].name)
        return ok

    with monkeypatch.context() as mp:
        mp.setattr(Parser, "_constant_line", recording)
        module = shlo.parse(text, "c.mlir")
    return read, module


def _debug_text(module) -> str:
    from shlo.syntax.printer import format_module

    return format_module(module, debug_info=True)


@pytest.mark.parametrize("crlf", [False, True])
def test_constant_lines_build_what_the_general_path_builds(monkeypatch, crlf):
    text = CONSTANTS.replace("\n", "\r\n") if crlf else CONSTANTS
    read, fast = _read_by_constant_lines(monkeypatch, text)
    _no_memo(monkeypatch)
    general = shlo.parse(text, "c.mlir")
    assert _exact_difference(fast, general) is None
    assert _debug_text(fast) == _debug_text(general)
    # not: an inline location, an attribute dictionary, a trailing comment, the first of two ops
    # on a line (the second, which ends the line, is), two spaces after the op name; nor the
    # repetitions of a short literal's line, which the memo learned and reads
    assert read == ["cst", "cst_0", "c", "c_1", "c_2", "cst_3", "cst_4", "cst_5", "c_7",
                    "c_8", "c_13", "c_15", "c_17"]
    ops = {op.results[0].name: op for op in fast.walk() if op.results}
    assert ops["c_1"].attr("value").array.tolist() == -7  # (MLIR reads 9 : i4 as its bits)
    assert ops["cst"].attr("value").hex and not ops["c"].attr("value").hex
    assert ops["cst"].attr("value").array.tolist() == [[1, 2, 3], [4, -4, -6]]
    assert ops["cst_3"].location.file_line_col() == ("c.py", 4, 5)
    assert ops["cst_0"].location.file_line_col() == ("c.mlir", 4, 3)
    # one attribute per (short literal, type) in a parse, as the memo shares them
    assert ops["cst_5"].attr("value") is ops["cst_6"].attr("value")


@pytest.mark.parametrize("bad, message", [
    ("%c = stablehlo.constant dense<[1, 2]> : tensor<3xi32>", "3"),
    ("%c = stablehlo.constant dense<\"0x0100\"> : tensor<2xi32>", "hex"),
    ("%c = stablehlo.constant dense<1> : tensor<2xfoo>", "foo"),
    ("%c = stablehlo.constant dense<1> : tensor<?xi32>", "static"),
    ("%c = stablehlo.constant dense<1> : tensor<i32>\n  %c = stablehlo.constant dense<2> : "
     "tensor<i32>", "redefinition of SSA value '%c'"),
    ("%c = stablehlo.constant dense<300> : tensor<i8>", "300"),
    ("%c = stablehlo.constant dense<1> : tensor<i32> loc(#a) loc(#a)", "loc"),
    ("%c = stablehlo.constant dense<1> : tensor<i32>>", ">"),
    ("%c#0 = stablehlo.constant dense<1> : tensor<i32>", "#"),
])
def test_constant_lines_report_the_general_paths_errors(monkeypatch, bad, message):
    _same_error(monkeypatch, f"func.func @f() {{\n  {bad}\n  return\n}}\n", "c.mlir", message)


def test_fast_paths_match_general_path_on_every_corpus_file(monkeypatch):
    """Memo and constant lines on vs off over every file of the conformance testdata: the same
    printed text with debug info (locations), the same IR on a sample."""
    root = _corpus()
    files = sorted(root.glob("*.mlir")) + sorted((root / "dynamic").glob("*.mlir"))
    fast = []
    for f in files:
        m = shlo.parse(f.read_text(), f.name)
        fast.append((_debug_text(m), m))
    _no_memo(monkeypatch)
    for i, (f, (text, m)) in enumerate(zip(files, fast)):
        general = shlo.parse(f.read_text(), f.name)
        assert text == _debug_text(general), f.name
        if i % 20 == 0:
            assert _exact_difference(m, general) is None, f.name


CALLS = """func.func private @f1(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
func.func private @f2(%x: tensor<2xf32>) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = func.call @f1(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %1 = func.call @f2(%0) : (tensor<2xf32>) -> tensor<2xf32>
  %2 = func.call @f1(%1) {tag = "@f9"} : (tensor<2xf32>) -> tensor<2xf32>
  %3 = func.call @f2(%2) {tag = "@f9"} : (tensor<2xf32>) -> tensor<2xf32>
  %4 = func.call @f1(%3) {tag = "a @f1 b"} : (tensor<2xf32>) -> tensor<2xf32>
  %5 = func.call @f2(%4) {tag = "a @f1 b"} : (tensor<2xf32>) -> tensor<2xf32>
  %6 = "func.call"(%5) <{callee = @f1}> : (tensor<2xf32>) -> tensor<2xf32>
  %7 = "func.call"(%6) <{callee = @f2}> : (tensor<2xf32>) -> tensor<2xf32>
  %8 = func.call @f1(%7) {other = @f2} : (tensor<2xf32>) -> tensor<2xf32>
  %9 = func.call @f2(%8) {other = @f2} : (tensor<2xf32>) -> tensor<2xf32>
  return %9 : tensor<2xf32>
}
"""


def test_memo_reads_calls_to_other_functions(monkeypatch):
    """A call line's callee is taken out of its template: a call of another function is read
    by the memo with its own callee; a symbol inside a string or two symbols on a line are
    not taken out (the line is a template of its own)."""
    read = _read_by_memo(monkeypatch, CALLS)
    memo = shlo.parse(CALLS, "c.mlir")
    _no_memo(monkeypatch)
    general = shlo.parse(CALLS, "c.mlir")
    assert _exact_difference(memo, general) is None
    # %1 and %3 (each after a line of its template calling another function); not: a symbol
    # in a string with a space after it (two `@` names), the generic form (its attribute
    # locations stay with the general path), two symbols; @main's return (@f2, the same text
    # as @f1 but for its name, is read whole by the function memo)
    assert read == ["1=func.call", "3=func.call", "=func.return"]
    callees = [op.attr("callee").name for op in memo.walk() if op.name == "func.call"]
    assert callees == ["f1", "f2"] * 5
