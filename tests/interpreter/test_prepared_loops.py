"""Prepared code of loops (shlo/interpreter/evaluator.py, ``_Emitter``): `while`/`if`/`case`
bodies and small callees emitted in place, kernels' direct forms, and in-place
`dynamic_update_slice` of a loop's dead buffer. Each is checked against the same program run
through the kernels one by one (``PrepareContext(compiled=False)``), traced and with counted
loops, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import shlo
from shlo.errors import ExecutionError
from shlo.debug.trace import trace
from shlo.interpreter.api import prepare_entry

# lax.scan as JAX lowers it: three func.calls per step, a row read and a row written.
SCAN = """
func.func @main(%w: tensor<4x4xf32>, %xs: tensor<6x4xf32>, %h0: tensor<4xf32>, %init: tensor<6x4xf32>) -> (tensor<4xf32>, tensor<6x4xf32>) {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %r:4 = stablehlo.while(%i = %c, %h = %h0, %out = %init, %x = %xs) : tensor<i32>, tensor<4xf32>, tensor<6x4xf32>, tensor<6x4xf32>
    cond {
      %n = stablehlo.constant dense<6> : tensor<i32>
      %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %row = func.call @index(%x, %i) : (tensor<6x4xf32>, tensor<i32>) -> tensor<4xf32>
      %hn = func.call @step(%w, %h, %row) : (tensor<4x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %o = func.call @update(%out, %hn, %i) : (tensor<6x4xf32>, tensor<4xf32>, tensor<i32>) -> tensor<6x4xf32>
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %i1, %hn, %o, %x : tensor<i32>, tensor<4xf32>, tensor<6x4xf32>, tensor<6x4xf32>
    }
  return %r#1, %r#2 : tensor<4xf32>, tensor<6x4xf32>
}
func.func private @index(%x: tensor<6x4xf32>, %i: tensor<i32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.dynamic_slice %x, %i, %c, sizes = [1, 4] : (tensor<6x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4xf32>
  %1 = stablehlo.reshape %0 : (tensor<1x4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
func.func private @step(%w: tensor<4x4xf32>, %h: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.dot_general %h, %w, contracting_dims = [0] x [0] : (tensor<4xf32>, tensor<4x4xf32>) -> tensor<4xf32>
  %1 = stablehlo.add %0, %x : tensor<4xf32>
  %2 = stablehlo.tanh %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}
func.func private @update(%o: tensor<6x4xf32>, %r: tensor<4xf32>, %i: tensor<i32>) -> tensor<6x4xf32> {
  %0 = stablehlo.broadcast_in_dim %r, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %1 = stablehlo.dynamic_update_slice %o, %0, %i, %c : (tensor<6x4xf32>, tensor<1x4xf32>, tensor<i32>, tensor<i32>) -> tensor<6x4xf32>
  return %1 : tensor<6x4xf32>
}
"""


def _stepwise(m, *args):
    """``m`` run kernel by kernel: nothing emitted in place, no direct forms."""
    from shlo.interpreter.arguments import check_argument
    from shlo.interpreter.evaluator import PrepareContext
    from shlo.ir import function_type

    fn = PrepareContext(m, compiled=False).function("main")
    types = function_type(m.functions["main"]).inputs
    with np.errstate(all="ignore"):
        out = fn(*[check_argument(a, t, i, "main") for i, (a, t) in enumerate(zip(args, types))])
    return [np.asarray(r) for r in out]


def _both(text: str, *args):
    m = shlo.parse(text)
    fast = shlo.run(m, *args)
    slow = _stepwise(shlo.parse(text), *args)
    traced = trace(shlo.parse(text), *args).results  # observed: the same code, recorded
    counted = shlo.run(shlo.parse(text), *args, time_limit=600)  # loops count iterations
    assert len(fast) == len(slow) == len(traced) == len(counted)
    for a, b, c, d in zip(fast, slow, traced, counted):
        assert a.dtype == b.dtype == c.dtype == d.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes() == c.tobytes() == d.tobytes()
    return m, fast


def _scan_args():
    r = np.random.default_rng(1)
    return [r.standard_normal((4, 4)).astype(np.float32),
            r.standard_normal((6, 4)).astype(np.float32),
            r.standard_normal(4).astype(np.float32), np.full((6, 4), 7.0, np.float32)]


def test_scan_inlines_callees_and_updates_its_buffer_in_place():
    args = _scan_args()
    kept = [a.copy() for a in args]
    m, (h, out) = _both(SCAN, *args)
    src = prepare_entry(m)[0].source
    loop = src.split("while True:")[1]
    assert len(loop.splitlines()) > 12  # the callees' ops are in the loop, not calls
    assert src.count("= u") == 1 and "f" in src.split("while True:")[0]  # write + one copy
    # the reference: a Python loop over rows
    w, xs, hh, _ = args
    rows = []
    for i in range(6):
        acc = np.float32(0) * hh[:1]
        for k in range(4):  # sequential sum, as dot_general's small contractions
            acc = acc + hh[k] * w[k] if k else hh[0] * w[0]
        hh = np.tanh(acc + xs[i])
        rows.append(hh)
    np.testing.assert_allclose(out, np.stack(rows), rtol=1e-6)
    assert np.array_equal(h, out[-1])
    for a, b in zip(args, kept):  # inputs untouched (the loop wrote into its own copy)
        assert np.array_equal(a, b)
    again = shlo.run(m, *args)  # a second run starts from a fresh copy of %init
    assert np.array_equal(again[1], out)


def test_no_in_place_write_when_the_old_buffer_is_read_again():
    # %out is also returned unchanged in another loop variable: writing in place would change it.
    text = SCAN.replace(
        "%r:4 = stablehlo.while(%i = %c, %h = %h0, %out = %init, %x = %xs) : tensor<i32>, "
        "tensor<4xf32>, tensor<6x4xf32>, tensor<6x4xf32>",
        "%r:5 = stablehlo.while(%i = %c, %h = %h0, %out = %init, %x = %xs, %prev = %init) : "
        "tensor<i32>, tensor<4xf32>, tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>").replace(
        "stablehlo.return %i1, %hn, %o, %x : tensor<i32>, tensor<4xf32>, tensor<6x4xf32>, "
        "tensor<6x4xf32>",
        "stablehlo.return %i1, %hn, %o, %x, %out : tensor<i32>, tensor<4xf32>, "
        "tensor<6x4xf32>, tensor<6x4xf32>, tensor<6x4xf32>").replace(
        "return %r#1, %r#2 : tensor<4xf32>, tensor<6x4xf32>",
        "return %r#2, %r#4 : tensor<6x4xf32>, tensor<6x4xf32>").replace(
        "-> (tensor<4xf32>, tensor<6x4xf32>) {\n  %c", "-> (tensor<6x4xf32>, tensor<6x4xf32>) {\n  %c", 1)
    m, (out, prev) = _both(text, *_scan_args())
    assert "= u" not in prepare_entry(m)[0].source
    assert np.array_equal(prev[:5], out[:5]) and not np.array_equal(prev[5], out[5])


def test_if_and_case_inlined():
    text = """
    func.func @main(%p: tensor<i1>, %k: tensor<i32>, %x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
      %a = "stablehlo.if"(%p) ({
        %0 = stablehlo.add %x, %x : tensor<3xf32>
        stablehlo.return %0 : tensor<3xf32>
      }, {
        stablehlo.return %x : tensor<3xf32>
      }) : (tensor<i1>) -> tensor<3xf32>
      %b = "stablehlo.case"(%k) ({
        %0 = stablehlo.negate %x : tensor<3xf32>
        stablehlo.return %0 : tensor<3xf32>
      }, {
        %0 = stablehlo.multiply %x, %a : tensor<3xf32>
        stablehlo.return %0 : tensor<3xf32>
      }, {
        stablehlo.return %a : tensor<3xf32>
      }) : (tensor<i32>) -> tensor<3xf32>
      return %a, %b : tensor<3xf32>, tensor<3xf32>
    }"""
    x = np.array([1.0, -2.0, 0.5], np.float32)
    for p in (True, False):
        for k in (-1, 0, 1, 2, 7):
            _, (a, b) = _both(text, np.array(p), np.int32(k), x)
            want_a = x + x if p else x
            want_b = -x if k == 0 else x * want_a if k == 1 else want_a
            assert np.array_equal(a, want_a) and np.array_equal(b, want_b)


def test_case_of_one_branch_inlined():
    text = """
    func.func @main(%k: tensor<i32>, %x: tensor<2xf32>) -> tensor<2xf32> {
      %b = "stablehlo.case"(%k) ({
        %0 = stablehlo.negate %x : tensor<2xf32>
        stablehlo.return %0 : tensor<2xf32>
      }) : (tensor<i32>) -> tensor<2xf32>
      return %b : tensor<2xf32>
    }"""
    for k in (-3, 0, 5):
        _, (b,) = _both(text, np.int32(k), np.array([1.0, -2.0], np.float32))
        assert np.array_equal(b, [-1.0, 2.0])


def test_scalar_while_runs_on_numpy_scalars():
    text = """
    func.func @main(%x: tensor<f32>) -> tensor<f32> {
      %zero = stablehlo.constant dense<0> : tensor<i64>
      %one = stablehlo.constant dense<1> : tensor<i64>
      %n = stablehlo.constant dense<1000> : tensor<i64>
      %c = stablehlo.constant dense<0.1> : tensor<f32>
      %r:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i64>, tensor<f32>
        cond {
          %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
          stablehlo.return %p : tensor<i1>
        } do {
          %i1 = stablehlo.add %i, %one : tensor<i64>
          %a1 = stablehlo.add %acc, %c : tensor<f32>
          stablehlo.return %i1, %a1 : tensor<i64>, tensor<f32>
        }
      return %r#1 : tensor<f32>
    }"""
    m, (r,) = _both(text, np.array(0, np.float32))
    acc = np.float32(0)
    for _ in range(1000):
        acc = np.float32(acc + np.float32(0.1))
    assert isinstance(r, np.ndarray) and r.shape == () and r == acc
    body = prepare_entry(m)[0].source.split("while True:")[1]
    assert " + " in body and " < " in body and "[0]" not in body  # operators, no kernel calls


def test_error_in_an_inlined_callee_names_its_op():
    text = """
    func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %c = stablehlo.constant dense<0> : tensor<i32>
      %r:2 = stablehlo.while(%i = %c, %y = %x) : tensor<i32>, tensor<2xf32>
        cond {
          %n = stablehlo.constant dense<3> : tensor<i32>
          %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %p : tensor<i1>
        } do {
          %z = func.call @f(%y) : (tensor<2xf32>) -> tensor<2xf32>
          %one = stablehlo.constant dense<1> : tensor<i32>
          %i1 = stablehlo.add %i, %one : tensor<i32>
          stablehlo.return %i1, %z : tensor<i32>, tensor<2xf32>
        }
      return %r#1 : tensor<2xf32>
    }
    func.func private @f(%y: tensor<2xf32>) -> tensor<2xf32> {
      %0 = stablehlo.custom_call @no_such_target(%y) : (tensor<2xf32>) -> tensor<2xf32>
      return %0 : tensor<2xf32>
    }"""
    with pytest.raises(ExecutionError) as info:
        shlo.run(text, np.zeros(2, np.float32), verify=False)
    assert "custom_call" in str(info.value) and ":18:7:" in str(info.value)  # the callee's op


@pytest.mark.parametrize("dtype,name", [(np.float32, "f32"), (np.float64, "f64")])
@pytest.mark.parametrize("k,n", [(1, 2), (3, 5), (16, 16), (64, 64), (256, 256), (7, 1)])
def test_vector_matrix_dot_is_matmuls_sequential_sum(dtype, name, k, n):
    # dot_general's direct vector @ matrix path (RNN steps) against matmul's own sequential sum,
    # bit for bit, with -0, inf and NaN among the operands.
    from shlo.ops.linalg.matmul import _float_matmul

    lt, rt, ot = f"tensor<{k}x{name}>", f"tensor<{k}x{n}x{name}>", f"tensor<{n}x{name}>"
    text = f"""func.func @main(%a: {lt}, %b: {rt}) -> {ot} {{
      %0 = stablehlo.dot_general %a, %b, contracting_dims = [0] x [0] : ({lt}, {rt}) -> {ot}
      return %0 : {ot}
    }}"""
    r = np.random.default_rng(k * n)
    a, b = r.standard_normal(k).astype(dtype), r.standard_normal((k, n)).astype(dtype)
    a[0] = -0.0
    if k > 2:
        b[0, 0], b[1, -1], a[2] = np.inf, np.nan, 1e30
    m = shlo.parse(text)
    with np.errstate(all="ignore"):
        for x, y in ((a, b), (-np.abs(a) * 0, np.abs(b) * 0)):
            got = shlo.run(m, x, y)[0]
            want = _float_matmul(x.reshape(1, 1, k), y.reshape(1, k, n)).reshape(n)
            assert got.tobytes() == want.tobytes()


def test_nested_loops_with_in_place_updates():
    # The inner loop fills rows of a copy of the buffer the outer loop carries (in place: it
    # reads the outer value, not its own): each inner loop starts from a fresh copy, so the
    # value kept from the first outer iteration is not overwritten by the second.
    text = """
    func.func @main(%buf: tensor<3x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
      %c0 = stablehlo.constant dense<0> : tensor<i32>
      %r:3 = stablehlo.while(%j = %c0, %b = %buf, %first = %buf) : tensor<i32>, tensor<3x2xf32>, tensor<3x2xf32>
        cond {
          %n = stablehlo.constant dense<2> : tensor<i32>
          %p = stablehlo.compare LT, %j, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
          stablehlo.return %p : tensor<i1>
        } do {
          %s:2 = stablehlo.while(%i = %c0, %o = %b) : tensor<i32>, tensor<3x2xf32>
            cond {
              %n = stablehlo.constant dense<3> : tensor<i32>
              %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
              stablehlo.return %p : tensor<i1>
            } do {
              %row = stablehlo.dynamic_slice %b, %i, %c0, sizes = [1, 2] : (tensor<3x2xf32>, tensor<i32>, tensor<i32>) -> tensor<1x2xf32>
              %two = stablehlo.constant dense<2.0> : tensor<1x2xf32>
              %u = stablehlo.multiply %row, %two : tensor<1x2xf32>
              %o1 = stablehlo.dynamic_update_slice %o, %u, %i, %c0 : (tensor<3x2xf32>, tensor<1x2xf32>, tensor<i32>, tensor<i32>) -> tensor<3x2xf32>
              %one = stablehlo.constant dense<1> : tensor<i32>
              %i1 = stablehlo.add %i, %one : tensor<i32>
              stablehlo.return %i1, %o1 : tensor<i32>, tensor<3x2xf32>
            }
          %one = stablehlo.constant dense<1> : tensor<i32>
          %j1 = stablehlo.add %j, %one : tensor<i32>
          %is0 = stablehlo.compare EQ, %j, %c0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
          %f = stablehlo.select %is0, %s#1, %first : tensor<i1>, tensor<3x2xf32>
          stablehlo.return %j1, %s#1, %f : tensor<i32>, tensor<3x2xf32>, tensor<3x2xf32>
        }
      return %r#1, %r#2 : tensor<3x2xf32>, tensor<3x2xf32>
    }"""
    buf = np.arange(6, dtype=np.float32).reshape(3, 2)
    m, (b, first) = _both(text, buf)
    assert prepare_entry(m)[0].source.count("= u") == 1  # the inner loop writes in place
    assert np.array_equal(b, buf * 4) and np.array_equal(first, buf * 2)
    assert np.array_equal(buf, np.arange(6, dtype=np.float32).reshape(3, 2))
