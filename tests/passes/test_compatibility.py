"""stablehlo-compatibility-expander and stablehlo-complex-math-expander: the rewrites by target
version, their values against the ops they replace (the interpreter on both programs), and the
complex expansions against upstream's generated math tests (mpmath reference values)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import shlo
from shlo.errors import ShloError
from shlo.ir import CallSiteLoc, FileLineColLoc, NameLoc
from shlo.passes import run_passes

CONFORMANCE = Path(__file__).resolve().parents[3] / "shared" / "conformance"


def _expand(text: str, target: str = "1.0.0"):
    before = shlo.parse(text)
    after = run_passes(before, f"stablehlo-compatibility-expander{{target={target}}}")
    shlo.verify(after)
    return before, after, shlo.format(after)


def _ops(module) -> list[str]:
    return [op.name for op in module.walk() if op.dialect in ("stablehlo", "chlo")]


def _run(module, *args):
    with np.errstate(all="ignore"):
        return [np.asarray(x) for x in shlo.run(module, *args)]


# --- tan (1.4.0) ----------------------------------------------------------------------------------

TAN = """func.func @main(%x: tensor<7x{t}>) -> tensor<7x{t}> {{
  %0 = stablehlo.tan %x{acc} : tensor<7x{t}>
  return %0 : tensor<7x{t}>
}}"""


@pytest.mark.parametrize("t,dt", [("f32", np.float32), ("f64", np.float64)])
def test_tan_is_sine_over_cosine(t, dt):
    before, after, _ = _expand(TAN.format(t=t, acc=""))
    assert _ops(after) == ["stablehlo.sine", "stablehlo.cosine", "stablehlo.divide"]
    x = np.array([-3.0, -1.5, -0.5, 0.0, 0.25, 1.0, 1.5], dt)
    got, = _run(after, x)
    assert got.dtype == dt
    np.testing.assert_array_equal(got, (np.sin(x) / np.cos(x)).astype(dt))
    np.testing.assert_allclose(got, np.tan(x.astype(np.float64)), rtol=1e-5 if t == "f32"
                               else 1e-13)


def test_tan_complex_expansion_values():
    text = TAN.format(t="complex<f64>", acc="")
    before, after, _ = _expand(text)
    assert "stablehlo.tan" not in _ops(after)
    assert _ops(after).count("stablehlo.tanh") == 1 and "stablehlo.complex" in _ops(after)
    z = np.array([0.5 + 0.25j, -1 + 2j, 3 - 0.5j, 0j, 1e-3 - 1e-3j, -0.7 + 20j, 1.2 + 0j])
    got, = _run(after, z)
    np.testing.assert_allclose(got, np.tan(z), rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(got, _run(before, z)[0], rtol=1e-13)


def test_tan_kept_for_new_targets_and_other_accuracies():
    for target in ("1.4.0", "1.6.0", "current"):
        assert "stablehlo.tan" in _ops(_expand(TAN.format(t="f32", acc=""), target)[1])
    acc = (' {result_accuracy = #stablehlo.result_accuracy<ulps = 2, mode = '
           '#stablehlo.result_accuracy_mode<TOLERANCE>>}')
    assert "stablehlo.tan" in _ops(_expand(TAN.format(t="f32", acc=acc))[1])


def test_tan_of_a_dynamic_shape_uses_constant_like():
    text = """func.func @main(%z: tensor<?xcomplex<f32>>) -> tensor<?xcomplex<f32>> {
      %0 = stablehlo.tan %z : tensor<?xcomplex<f32>>
      return %0 : tensor<?xcomplex<f32>>
    }"""
    _, after, _ = _expand(text)
    like = [op for op in after.walk() if op.name == "chlo.constant_like"]
    assert len(like) == 1 and like[0].attr("value").value == 1.0
    z = np.array([0.5 + 0.25j, -1 + 2j], np.complex64)
    np.testing.assert_allclose(_run(after, z)[0], np.tan(z.astype(np.complex128)), rtol=1e-5)


# --- gather / scatter with batching dims (1.1.0) --------------------------------------------------

GATHER = """func.func @main(%x: tensor<3x2x4x7x9xi32>, %i: tensor<4x3x5x2x{it}>)
    -> tensor<4x3x5x8xi32> {{
  %0 = "stablehlo.gather"(%x, %i) {{
    dimension_numbers = #stablehlo.gather<offset_dims = [3], collapsed_slice_dims = [1, 3],
      operand_batching_dims = [0, 2], start_indices_batching_dims = [1, 0],
      start_index_map = [1, 3], index_vector_dim = 3>,
    slice_sizes = array<i64: 1, 1, 1, 1, 8>, indices_are_sorted = {sorted}
  }} : (tensor<3x2x4x7x9xi32>, tensor<4x3x5x2x{it}>) -> tensor<4x3x5x8xi32>
  return %0 : tensor<4x3x5x8xi32>
}}"""


@pytest.mark.parametrize("it,dt", [("i32", np.int32), ("i8", np.int8), ("ui8", np.uint8)])
def test_gather_batching_dims_same_values(it, dt):
    before, after, printed = _expand(GATHER.format(it=it, sorted="true"))
    assert "batching_dims" not in printed and "collapsed_slice_dims = [0, 1, 2, 3]" in printed
    assert "start_index_map = [0, 2, 1, 3]" in printed
    g = next(op for op in after.walk() if op.name == "stablehlo.gather")
    assert g.attr("indices_are_sorted").value is False  # batching dims [1, 0] are not sorted
    assert _ops(after)[:3] == ["stablehlo.iota"] * 2 + ["stablehlo.concatenate"]
    rng = np.random.default_rng(0)
    x = rng.integers(-100, 100, (3, 2, 4, 7, 9)).astype(np.int32)
    i = np.stack([rng.integers(0, 2, (4, 3, 5)), rng.integers(0, 7, (4, 3, 5))], -1).astype(dt)
    i[0, 0, 0] = (5, 9)  # out of range: clamped alike
    a, = _run(before, x, i)
    b, = _run(after, x, i)
    np.testing.assert_array_equal(a, b)
    assert a.any()


def test_gather_indices_widened_when_a_batching_dim_does_not_fit():
    text = """func.func @main(%x: tensor<128x2x4x9xi32>, %i: tensor<4x128x5xi8>)
        -> tensor<4x128x5x8xi32> {
      %0 = "stablehlo.gather"(%x, %i) {
        dimension_numbers = #stablehlo.gather<offset_dims = [3], collapsed_slice_dims = [1],
          operand_batching_dims = [0, 2], start_indices_batching_dims = [1, 0],
          start_index_map = [1], index_vector_dim = 3>,
        slice_sizes = array<i64: 1, 1, 1, 8>, indices_are_sorted = false
      } : (tensor<128x2x4x9xi32>, tensor<4x128x5xi8>) -> tensor<4x128x5x8xi32>
      return %0 : tensor<4x128x5x8xi32>
    }"""
    before, after, printed = _expand(text)
    assert _ops(after)[:2] == ["stablehlo.convert", "stablehlo.reshape"]
    assert "tensor<4x128x5x3xi32>" in printed  # i8 cannot index 128: i32
    rng = np.random.default_rng(1)
    x = rng.integers(-9, 9, (128, 2, 4, 9)).astype(np.int32)
    i = rng.integers(0, 2, (4, 128, 5)).astype(np.int8)
    np.testing.assert_array_equal(_run(before, x, i)[0], _run(after, x, i)[0])


def test_gather_kept_for_1_1_0_and_dynamic_indices():
    assert "operand_batching_dims = [0, 2]" in _expand(GATHER.format(it="i32", sorted="false"),
                                                       "1.1.0")[2]
    text = GATHER.format(it="i32", sorted="false").replace("4x3x5x2xi32", "4x?x5x2xi32")
    assert "operand_batching_dims = [0, 2]" in _expand(text)[2]


SCATTER = """func.func @main(%x: tensor<2x5x4x7x9xf32>, %i: tensor<2x3x5x2xi32>,
    %u: tensor<2x3x5x8xf32>) -> tensor<2x5x4x7x9xf32> {
  %0 = "stablehlo.scatter"(%x, %i, %u) <{
    indices_are_sorted = true,
    scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [3],
      inserted_window_dims = [2, 3], input_batching_dims = [0, 1],
      scatter_indices_batching_dims = [0, 2], scatter_dims_to_operand_dims = [2, 3],
      index_vector_dim = 3>,
    unique_indices = false
  }> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<2x5x4x7x9xf32>, tensor<2x3x5x2xi32>, tensor<2x3x5x8xf32>) -> tensor<2x5x4x7x9xf32>
  return %0 : tensor<2x5x4x7x9xf32>
}"""


def test_scatter_batching_dims_same_values():
    before, after, printed = _expand(SCATTER)
    assert "batching_dims" not in printed
    assert "inserted_window_dims = [0, 1, 2, 3]" in printed
    assert "scatter_dims_to_operand_dims = [0, 1, 2, 3]" in printed
    s = next(op for op in after.walk() if op.name == "stablehlo.scatter")
    assert s.attr("indices_are_sorted").value is True  # [0, 2] and [0, 1, 2, 3] are sorted
    assert [o.name for o in s.regions[0].blocks[0].operations] == ["stablehlo.add",
                                                                   "stablehlo.return"]
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 5, 4, 7, 9)).astype(np.float32)
    i = np.stack([rng.integers(0, 4, (2, 3, 5)), rng.integers(0, 2, (2, 3, 5))],
                 -1).astype(np.int32)
    u = rng.standard_normal((2, 3, 5, 8)).astype(np.float32)
    a, = _run(before, x, i, u)
    b, = _run(after, x, i, u)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, x)


# --- mesh-based replica groups (1.16.0) -----------------------------------------------------------

MESH = """module {{
  {sym}
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {{
    %0 = "stablehlo.all_reduce"(%x) ({{
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }}) {{replica_groups = #stablehlo.replica_group_mesh_axes<mesh = {mesh}, axes = [{axes}]>}}
      : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }}
}}"""
INLINE = ('#stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "x", size = 2>, '
          '#stablehlo.mesh_axis<name = "y", size = 2>]>')
SDY = ('"sdy.mesh"() {sym_name = "m", stablehlo.mesh = {axes = [{name = "x", size = 2 : i64}, '
       '{name = "y", size = 2 : i64}], device_ids = dense<[0, 2, 1, 3]> : tensor<4xi64>}} '
       ': () -> ()')


def _groups(module) -> list[list[int]]:
    op = next(o for o in module.walk() if o.name == "stablehlo.all_reduce")
    return np.asarray(op.attr("replica_groups").array).tolist()


@pytest.mark.parametrize("sym,mesh,axes,want", [
    ("", INLINE, '#stablehlo.axis_ref<name = "x">', [[0, 2], [1, 3]]),
    ("", INLINE, '#stablehlo.axis_ref<name = "y">', [[0, 1], [2, 3]]),
    ("", INLINE, '#stablehlo.axis_ref<name = "x">, #stablehlo.axis_ref<name = "y">',
     [[0, 1, 2, 3]]),
    (SDY, "@m", '#stablehlo.axis_ref<name = "x">', [[0, 1], [2, 3]]),
])
def test_mesh_axes_become_dense_groups(sym, mesh, axes, want):
    _, after, printed = _expand(MESH.format(sym=sym, mesh=mesh, axes=axes), "1.15.0")
    assert _groups(after) == want
    assert "replica_group_mesh_axes" not in printed
    kept = _expand(MESH.format(sym=sym, mesh=mesh, axes=axes), "1.16.0")[2]
    assert "replica_group_mesh_axes" in kept


def test_unknown_mesh_symbol_is_an_error():
    with pytest.raises(ShloError, match="mesh symbol"):
        _expand(MESH.format(sym="", mesh="@nowhere", axes=""), "1.0.0")


# --- FileLineColRange locations (1.9.0) -----------------------------------------------------------

LOCS = """module {
  func.func @main(%x: tensor<i32>) -> tensor<i32> {
    %c = stablehlo.constant dense<1> : tensor<i32> loc("f.mlir":2:8 to :10)
    %0 = stablehlo.add %x, %c : tensor<i32> loc(callsite("n"("f.mlir":1:1 to 2:2) at "f.mlir":3:3))
    return %0 : tensor<i32> loc("f.mlir":4:3)
  } loc("f.mlir":1:1 to :5)
} loc("f.mlir":0:0 to :3)"""


def test_range_locations_become_points():
    before, after, _ = _expand(LOCS, "1.8.0")
    locs = {op.name: op.location for op in after.walk()}
    assert locs["builtin.module"] == FileLineColLoc("f.mlir", 0, 0)
    assert locs["func.func"] == FileLineColLoc("f.mlir", 1, 1)
    assert locs["stablehlo.constant"] == FileLineColLoc("f.mlir", 2, 8)
    assert locs["stablehlo.add"] == CallSiteLoc(NameLoc("n", FileLineColLoc("f.mlir", 1, 1)),
                                                FileLineColLoc("f.mlir", 3, 3))
    assert locs["func.return"] == FileLineColLoc("f.mlir", 4, 3)
    # the input is not changed, and a 1.9.0 target keeps the ranges
    assert next(op for op in before.walk() if op.name == "func.func").location.end_col == 5
    kept = {op.name: op.location for op in _expand(LOCS, "1.9.0")[1].walk()}
    assert kept["stablehlo.constant"] == FileLineColLoc("f.mlir", 2, 8, None, 10)


def test_expanded_ops_take_the_replaced_ops_location():
    text = TAN.format(t="f32", acc="").replace(": tensor<7xf32>\n  return",
                                               ': tensor<7xf32> loc("t.mlir":5:7 to :9)\n  return')
    _, after, _ = _expand(text)
    assert {op.location for op in after.walk() if op.name in
            ("stablehlo.sine", "stablehlo.cosine", "stablehlo.divide")} == {
        FileLineColLoc("t.mlir", 5, 7)}


# --- the target option ----------------------------------------------------------------------------


@pytest.mark.parametrize("target,message", [
    ("", "No target version"), ("1.2", "Invalid target version"),
    ("0.1.0", "less than minimum"), ("99.0.0", "greater than current")])
def test_bad_targets(target, message):
    with pytest.raises(ShloError, match=message):
        before = shlo.parse(TAN.format(t="f32", acc=""))
        run_passes(before, "stablehlo-compatibility-expander" +
                   (f"{{target={target}}}" if target else ""))


# --- stablehlo-complex-math-expander --------------------------------------------------------------

UNARY = """func.func @main(%z: tensor<4x{t}>) -> tensor<4x{t}> {{
  %0 = stablehlo.{op} %z : tensor<4x{t}>
  return %0 : tensor<4x{t}>
}}"""


def _log1p(z: np.ndarray) -> np.ndarray:
    """log1p(x + iy) = 0.5 log1p(2x + x^2 + y^2) + i atan2(y, 1 + x) (numpy's complex log1p
    is log(1 + z), which loses the low digits near 0)."""
    x, y = z.real, z.imag
    return 0.5 * np.log1p(2 * x + x * x + y * y) + 1j * np.arctan2(y, 1 + x)


@pytest.mark.parametrize("op", ["log_plus_one", "sqrt", "log", "exponential"])
def test_complex_math_expands_complex_only(op):
    m = run_passes(shlo.parse(UNARY.format(op=op, t="complex<f64>")),
                   "stablehlo-complex-math-expander")
    shlo.verify(m)
    names = _ops(m)
    assert names[-1] == "stablehlo.complex" and len(names) > 10
    assert not any(o.name == f"stablehlo.{op}" and "complex" in str(o.operands[0].type)
                   for o in m.walk())
    z = np.array([0.5 + 0.25j, -1.5 + 2j, 3 - 0.5j, 1e-3 + 1e-4j])
    ref = {"log_plus_one": _log1p, "sqrt": np.sqrt, "log": np.log, "exponential": np.exp}[op]
    np.testing.assert_allclose(_run(m, z)[0], ref(z), rtol=1e-15)
    real = run_passes(shlo.parse(UNARY.format(op=op, t="f32")), "stablehlo-complex-math-expander")
    assert _ops(real) == [f"stablehlo.{op}"]


MATH = sorted(p.name for p in (CONFORMANCE / "math").glob("*.mlir")
              if "complex-math-expander" in p.read_text()[:200]) \
    if (CONFORMANCE / "math").is_dir() else []


@pytest.mark.skipif(not MATH, reason="no ../shared/conformance/math")
@pytest.mark.parametrize("name", MATH)
def test_upstream_math_tests(name):
    """upstream's generated tests (stablehlo/tests/math): expanded, then interpreted, every
    sample is within the file's ULP bound of mpmath's value."""
    from shlo.testing.runlines import run_file
    from shlo.opt import lit_tools

    result = run_file(str(CONFORMANCE / "math" / name), lit_tools(), features={"asserts"})
    assert result.lines and all(r.status == "passed" for r in result.lines), \
        [(r.status, r.reason, r.output[:500]) for r in result.lines]


def test_complex_log1p_accuracy_near_zero():
    """log1p(z) for tiny z is z (to first order): the expansion keeps the precision that
    log(1 + z) loses."""
    m = run_passes(shlo.parse(UNARY.format(op="log_plus_one", t="complex<f32>")),
                   "stablehlo-complex-math-expander")
    z = np.array([1e-7 + 1e-7j, -1e-8 + 3e-8j, 2e-30 - 1e-30j, 1e-6 + 0j], np.complex64)
    got, = _run(m, z)
    zz = z.astype(np.complex128)
    want = zz - zz * zz / 2  # the next term is below the f32 precision
    np.testing.assert_allclose(got.real, want.real, rtol=1e-6)
    np.testing.assert_allclose(got.imag, want.imag, rtol=1e-6)


# --- semantics on the corpus (tests/passes/semantics.py) ------------------------------------------


@pytest.mark.skipif(not (CONFORMANCE / "interpret").is_dir(), reason="no ../shared/conformance")
def test_interpreter_tests_compute_the_same_after_expansion():
    """The interpreter's own tests of batching-dim gather/scatter and tan: the same results and
    passing checks after expanding for 1.0.0 (the whole corpora: docs/compatibility.md)."""
    from semantics import check_cases

    outs = [o for name in ("gather", "scatter", "tan") for o in check_cases(
        CONFORMANCE / "interpret" / f"{name}.mlir",
        ("stablehlo-compatibility-expander{target=1.0.0}",))]
    assert len(outs) == 5 and all(o.status == "exact" for o in outs), outs
    assert sum(o.ops_after for o in outs) > sum(o.ops_before for o in outs)  # it expanded


@pytest.mark.skipif(not (CONFORMANCE / "testdata").is_dir(), reason="no ../shared/conformance")
@pytest.mark.parametrize("name", ["log1p_complex64_20_20", "sqrt_complex128_20_20",
                                  "exp_complex64_20_20", "log_complex128_20_20"])
def test_complex_corpus_programs_compute_the_same(name):
    from semantics import check_file

    o = check_file(CONFORMANCE / "testdata" / f"{name}.mlir", ("stablehlo-complex-math-expander",))
    assert o.status in ("exact", "close"), o
    assert o.ops_after > o.ops_before + 20
