"""First divergence: planted changes found at the right op with the right magnitude."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import shlo
from shlo.debug.diff import diff
from shlo.debug.trace import trace
from shlo.ir import function_type
from shlo.debug.metrics import Tolerance, compare
from shlo.debug.reproducer import reproducer
from shlo.testing.runner import run_file

ROOT = Path(__file__).resolve().parents[2]
MLP = (ROOT / "examples" / "mlp.mlir").read_text()
X = np.load(ROOT / "examples" / "mlp_input.npy")

SMALL = """
func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
  %c = stablehlo.constant dense<[1.0, 2.0, 4.0]> : tensor<3xf32>
  %0 = stablehlo.add %a, %c : tensor<3xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<3xf32>
  %2 = stablehlo.exponential %1 : tensor<3xf32>
  return %2 : tensor<3xf32>
}
"""
A = np.array([0.5, -1.0, 0.25], np.float32)


def test_metrics_by_hand():
    m = compare(np.array([1.0, 2.0, 4.0], np.float32), np.array([1.0, 2.5, 4.0], np.float32))
    assert m.max_abs == 0.5 and m.max_rel == pytest.approx(0.2)
    assert m.sqnr_db == pytest.approx(10 * math.log10((1 + 6.25 + 16) / 0.25))
    assert m.bad == 1 and m.worst == (1,)
    assert m.max_ulp == 2 ** 21  # 2.0 and 2.5 are 2^21 f32 ulps apart
    m = compare(np.array([np.nan, 1.0], np.float32), np.array([0.0, np.inf], np.float32))
    assert (m.nan_mismatch, m.inf_mismatch, m.bad) == (1, 1, 2)
    one_ulp = np.nextafter(np.float32(1), np.float32(2))
    assert not compare(np.array([one_ulp]), np.array([1.0], np.float32),
                       tolerance=Tolerance(ulp=1)).diverged
    assert compare(np.array([one_ulp]), np.array([1.0], np.float32)).diverged


def test_planted_subtract_in_small_program():
    changed = SMALL.replace("stablehlo.multiply %0, %0", "stablehlo.subtract %0, %0")
    r = diff(shlo.parse(SMALL, "a.mlir"), A, b=shlo.parse(changed, "b.mlir"))
    first = r.first
    assert first is not None and first.a.name == "stablehlo.multiply"
    assert first.a.location == "a.mlir:5:3"
    # (a + c)^2 against 0: the error is the square itself
    assert first.metrics[0].max_abs == pytest.approx(max((A + [1, 2, 4]) ** 2))
    assert [p.diverged for p in r.pairs][:3] == [False, False, True]  # constant, add agree
    msg = r.message()
    assert msg.startswith("a.mlir:5:3: error: first divergence at 'stablehlo.multiply'")


@pytest.mark.parametrize("change, where", [
    (("%14 = stablehlo.subtract %8, %13", "%14 = stablehlo.add %8, %13"), "subtract"),
    (("%15 = stablehlo.exponential %14", "%15 = stablehlo.exponential %14x"), "exponential"),
])
def test_mlp_one_op_changed(change, where):
    old, new = change
    if where == "exponential":  # a convert to bf16 and back inserted before the exponential
        new_text = MLP.replace(
            "    %15 = stablehlo.exponential %14",
            "    %14b = stablehlo.convert %14 : (tensor<2x10xf32>) -> tensor<2x10xbf16>\n"
            "    %14x = stablehlo.convert %14b : (tensor<2x10xbf16>) -> tensor<2x10xf32>\n"
            "    %15 = stablehlo.exponential %14x")
    else:
        new_text = MLP.replace(old, new)
    assert new_text != MLP
    a, b = shlo.parse(MLP, "mlp.mlir"), shlo.parse(new_text, "changed.mlir")
    r = diff(a, X, b=b)
    assert r.first is not None
    assert r.first.a.name == f"stablehlo.{where}"
    assert r.first.a.location == ("mlp.mlir:23:5" if where == "subtract" else "mlp.mlir:24:5")
    if where == "exponential":  # bf16 rounding: about 2^-9 relative at worst
        m = r.first.metrics[0]
        assert 1e-4 < m.max_rel < 2 ** -7
        assert "convert" in r.message()  # the unmatched converts of the reference are named


def test_constant_one_ulp():
    text = MLP.replace("dense<0.000000e+00> : tensor<f32>\n    %16",
                       "dense<1.401300e-45> : tensor<f32>\n    %16")
    assert text != MLP
    r = diff(shlo.parse(MLP, "mlp.mlir"), X, b=shlo.parse(text, "b.mlir"))
    assert r.first is not None and r.first.a.name == "stablehlo.constant"
    assert r.first.a.location == "mlp.mlir:25:5" and r.first.metrics[0].max_ulp == 1


def test_two_inputs():
    x2 = X.copy()
    x2[1, 5] += 1.0
    r = diff(shlo.parse(MLP, "mlp.mlir"), X, b_args=[x2])
    assert r.first.a.name == "stablehlo.dot_general" and r.first.a.location == "mlp.mlir:7:5"
    assert r.first.metrics[0].worst[0] == 1  # only row 1 of the batch differs


def test_f64_reference_finds_the_bf16_convert():
    text = SMALL.replace(
        "  %1 = stablehlo.multiply %0, %0 : tensor<3xf32>",
        "  %b = stablehlo.convert %0 : (tensor<3xf32>) -> tensor<3xbf16>\n"
        "  %0x = stablehlo.convert %b : (tensor<3xbf16>) -> tensor<3xf32>\n"
        "  %1 = stablehlo.multiply %0x, %0x : tensor<3xf32>")
    x = np.array([0.123, -1.0, 0.25], np.float32)
    r = diff(shlo.parse(text, "p.mlir"), x, against="f64")
    assert r.first.a.name == "stablehlo.convert" and r.first.a.location == "p.mlir:5:3"
    assert 1e-4 < r.first.metrics[0].max_rel <= 2 ** -8
    assert diff(shlo.parse(SMALL), x, against="f64").first is None


def test_reproducer_fails_check(tmp_path):
    changed = MLP.replace("%14 = stablehlo.subtract %8, %13", "%14 = stablehlo.add %8, %13")
    r = diff(shlo.parse(MLP, "mlp.mlir"), X, b=shlo.parse(changed, "b.mlir"))
    path = tmp_path / "repro.mlir"
    path.write_text(reproducer(r.first, "mlp.mlir"))
    text = path.read_text()
    assert "stablehlo.subtract" in text and "check.expect_close" in text
    results = run_file(str(path))
    assert results and all(c.status == "failed" for c in results)
    # the same op with the reference's own output passes: the check is the only failure
    same = diff(shlo.parse(MLP, "mlp.mlir"), X, b=shlo.parse(MLP, "b.mlir"))
    assert same.first is None


def test_quantized_against_float_sqnr():
    qtype = "tensor<2x4x!quant.uniform<i8:f32, 0.05>>"
    qtext = f"""
    func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {{
      %q = stablehlo.uniform_quantize %x : (tensor<2x4xf32>) -> {qtype}
      %a = stablehlo.add %q, %q : ({qtype}, {qtype}) -> {qtype}
      %e = stablehlo.uniform_dequantize %a : ({qtype}) -> tensor<2x4xf32>
      %t = stablehlo.tanh %e : tensor<2x4xf32>
      return %t : tensor<2x4xf32>
    }}"""
    ftext = """
    func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
      %a = stablehlo.add %x, %x : tensor<2x4xf32>
      %t = stablehlo.tanh %a : tensor<2x4xf32>
      return %t : tensor<2x4xf32>
    }"""
    x = np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4)
    r = diff(shlo.parse(qtext, "q.mlir"), x, b=shlo.parse(ftext, "f.mlir"),
             tolerance=Tolerance(rtol=0.1))
    names = [p.a.name for p in r.pairs]
    assert names == ["stablehlo.add", "stablehlo.tanh"]
    add = r.pairs[0].metrics[0]
    q = np.round(x / 0.05) * 0.05  # the quantized add, dequantized
    expect_noise = ((2 * q - 2 * x) ** 2).sum()
    assert add.sqnr_db == pytest.approx(10 * np.log10(((2 * x) ** 2).sum() / expect_noise),
                                        rel=1e-3)
    assert "SQNR dB" in r.table()


def test_bundled_int8_mlp_per_op_sqnr():
    """examples/mlp_int8.mlir (the bundled MLP with both matmuls in int8, made by
    examples/make_mlp_int8.py) against the float MLP: the first matmul's SQNR is the one of
    the int8 product computed here in numpy, and the table has an SQNR for every op."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_mlp_int8",
                                                  ROOT / "examples" / "make_mlp_int8.py")
    maker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(maker)
    text = maker.quantize_dots(MLP, X)
    assert text == (ROOT / "examples" / "mlp_int8.mlir").read_text()  # the bundled file is current
    r = diff(shlo.parse(text, "mlp_int8.mlir"), X, b=shlo.parse(MLP, "mlp.mlir"),
             tolerance=Tolerance(rtol=0.1))
    assert r.first is None
    dots = [p for p in r.pairs if p.a.name == "stablehlo.dot_general"]
    assert len(dots) == 2
    w = shlo.run(shlo.parse("""func.func @main() -> tensor<64x32xf32> {
      %0 = stablehlo.constant """ + MLP.split("%cst = stablehlo.constant ", 1)[1].split("\n", 1)[0]
                            + "\n  return %0 : tensor<64x32xf32>\n}"))[0]
    sx, sw = np.abs(X).max() / 127, np.abs(w).max() / 127
    q = (np.round(X / sx) @ np.round(w / sw)) * (sx * sw)  # i8 values: exact in f64
    ref = X.astype(np.float64) @ w.astype(np.float64)
    expect = 10 * np.log10((ref ** 2).sum() / ((q - ref) ** 2).sum())
    assert dots[0].metrics[0].sqnr_db == pytest.approx(expect, abs=0.05)
    assert 30 < dots[1].metrics[0].sqnr_db < 50
    assert "SQNR dB" in r.table()


def test_against_xla():
    pytest.importorskip("jax")
    changed = MLP.replace("%14 = stablehlo.subtract %8, %13", "%14 = stablehlo.add %8, %13")
    a = shlo.parse(MLP, "mlp.mlir")
    r = diff(a, X, against="xla")
    assert r.first is None and len(r.pairs) > 20  # one compile returned every body op
    r = diff(a, X, b=shlo.parse(changed, "b.mlir"), against="xla")
    assert r.first.a.name == "stablehlo.subtract" and r.first.a.location == "mlp.mlir:23:5"
    # a planted divergence of shlo against XLA: shlo runs the changed program
    r = diff(shlo.parse(changed, "b.mlir"), X, b=a, against="xla")
    assert r.first.a.location == "b.mlir:23:5"


CALLS = """
func.func @main(%a: tensor<3xf32>) -> tensor<3xf32> {
  %0 = func.call @sq(%a) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = func.call @sq(%0) : (tensor<3xf32>) -> tensor<3xf32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c, %x = %1) : tensor<i32>, tensor<3xf32>
   cond {
    %n = stablehlo.constant dense<2> : tensor<i32>
    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %j = stablehlo.add %i, %one : tensor<i32>
    %y = stablehlo.add %x, %x : tensor<3xf32>
    stablehlo.return %j, %y : tensor<i32>, tensor<3xf32>
  }
  return %r#1 : tensor<3xf32>
}
func.func private @sq(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.multiply %x, %x : tensor<3xf32>
  %1 = stablehlo.negate %0 : tensor<3xf32>
  return %1 : tensor<3xf32>
}
"""


def test_against_xla_compares_the_ops_of_called_functions(monkeypatch):
    pytest.importorskip("jax")
    from shlo.testing import oracles

    compiles = []
    real = oracles.xla_run
    monkeypatch.setattr(oracles, "xla_run", lambda *a: compiles.append(1) or real(*a))
    a = np.array([0.5, 1.0, -2.0], np.float32)
    r = diff(shlo.parse(CALLS, "c.mlir"), a, against="xla")
    assert len(compiles) == 1  # one compile for every op
    assert r.first is None
    rows = [(p.a.name, p.a.location) for p in r.pairs]
    # each call of @sq compared on its own: (a*a), -(a*a); then (a^4), -(a^4)
    assert rows[:4] == [("stablehlo.multiply", "c.mlir:20:3"),
                        ("stablehlo.negate", "c.mlir:21:3")] * 2
    np.testing.assert_array_equal(r.pairs[0].expected[0], a * a)
    np.testing.assert_array_equal(r.pairs[3].expected[0], -(a ** 4))
    assert rows[-1] == ("stablehlo.while", "c.mlir:6:3")
    # the loop's ops (2 iterations of cond + body: 2 x 5, then the last cond: 2) are
    # reported through the while, the calls through their callees
    inside = [e for e, h in r.uncompared if h is not None]
    assert len(inside) == 12 and all(h.name == "stablehlo.while" for _, h in r.uncompared if h)
    assert inside == [e for e in r.a.events if e.parent is not None and
                      e.parent.name == "stablehlo.while"]
    assert sorted(e.name for e, h in r.uncompared if h is None) == ["func.call", "func.call"]
    notes = r.table().splitlines()[-2:]
    assert notes[0].startswith(f"not compared against xla: {len(inside)} op executions inside "
                               "'stablehlo.while' at c.mlir:6:3")
    assert notes[1] == "not compared against xla: 2 calls (inlined for xla: compared through " \
                       "their callees' ops)"
    # a divergence planted in the callee (second program on XLA): found at its op
    changed = CALLS.replace("stablehlo.negate %0", "stablehlo.abs %0")
    r = diff(shlo.parse(changed, "d.mlir"), a, b=shlo.parse(CALLS, "c.mlir"), against="xla")
    assert r.first.a.name == "stablehlo.abs" and r.first.a.location == "d.mlir:21:3"


BLOCK = ROOT / "benchmarks" / "programs" / "transformer_block.mlir"


def _block_args(m):
    rng = np.random.default_rng(3)
    return [(rng.normal(0, 0.05 if len(t.shape) == 2 and t.shape[0] != 128 else 1, t.shape)
             .astype(np.float32)) for t in function_type(m.function("main")).inputs]


@pytest.mark.parametrize("against", ["shlo", "xla"])
def test_transformer_block_one_op_changed(against):
    """The gelu's cube (x*x*x) in the block's MLP turned into x*x+x: found at its line, both in
    the two-program form and with the changed program's reference run on XLA."""
    if against == "xla":
        pytest.importorskip("jax")
    text = BLOCK.read_text()
    old = "%79 = stablehlo.multiply %78, %77 : tensor<128x1024xf32>"
    assert text.splitlines()[95].strip() == old
    changed = text.replace(old, old.replace("multiply", "add"))
    a = shlo.parse(text, "block.mlir")
    args = _block_args(a)
    if against == "xla":  # the unchanged block agrees with XLA (the exponential exceeds the
        # tolerance on one element only through its inputs: marked inherited, not at fault)
        same = diff(a, *args, against=against)
        assert same.first is None, same.message()
        assert [p.a.name for p in same.inherited] in ([], ["stablehlo.exponential"])
    r = diff(shlo.parse(changed, "changed.mlir"), *args, b=a, against=against)
    assert r.first is not None
    assert (r.first.a.name, r.first.a.location) == ("stablehlo.add", "changed.mlir:96:5")


def test_divergence_through_inputs_is_inherited_not_at_fault():
    """Across engines, an op over the tolerance whose own kernel on the reference's operands
    gives the reference's result is `inherited`; one that does not stays at fault."""
    from shlo.debug.diff import _attribute, _compare_pair

    m = shlo.parse(SMALL, "s.mlir")
    t = trace(m, A, values=True)
    mul = t.find("multiply")[0]
    ref_in = [np.nextafter(mul.operands[0], np.float32(10))] * 2  # inputs 1 ulp up
    expected = [ref_in[0] * ref_in[1]]  # what the reference computed from them
    pair = _compare_pair(mul, None, expected, Tolerance(ulp=0), False)
    assert pair.diverged
    _attribute(pair, ref_in)
    assert pair.inherited and not pair.at_fault
    wrong = _compare_pair(mul, None, [expected[0] * np.float32(1.001)], Tolerance(ulp=0), False)
    _attribute(wrong, ref_in)
    assert wrong.at_fault and not wrong.inherited
