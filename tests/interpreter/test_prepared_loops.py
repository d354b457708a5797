"""Prepared code of loops (shlo/interpreter/emitter.py, ``Emitter``): `while`/`if`/`case`
bodies and small callees emitted in place, kernels' direct forms, and in-place
`dynamic_update_slice` of a loop's dead buffer. Each is checked against the same program run
through the kernels one by one (``PrepareContext(compiled=False)``), traced and with counted
loops, bit for bit."""

from __future__ import annotations

import re

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


def _split_at_loop(src: str) -> tuple[str, str]:
    """The generated source before its first loop's header and from it on."""
    i = re.search(r"^ *(while |for )", src, re.M).start()
    return src[:i], src[i:]


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
    before, loop = _split_at_loop(src)
    assert len(loop.splitlines()) > 12  # the callees' ops are in the loop, not calls
    assert src.count("= u") == 1 and "f" in before  # write + one copy
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
    head, body = _split_at_loop(prepare_entry(m)[0].source)
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


# (lhs shape, rhs shape, lhs contracting, rhs contracting, batching): M, K, N from the shapes
_DOTS = [((1,), (1, 2), 0, 0), ((3,), (3, 5), 0, 0), ((16,), (16, 16), 0, 0),
         ((64,), (64, 64), 0, 0), ((256,), (256, 256), 0, 0), ((7,), (7, 1), 0, 0),
         ((16, 16), (16,), 1, 0), ((5, 3), (3,), 1, 0), ((3, 5), (3,), 0, 0),
         ((4, 6), (6, 3), 1, 0), ((6, 4), (6, 3), 0, 0), ((4, 6), (3, 6), 1, 1),
         ((2, 9), (9, 2), 1, 0), ((1, 4, 6), (1, 6, 3), 2, 1), ((1, 6, 4), (1, 3, 6), 1, 2),
         ((16, 16), (16,), 0, 0), ((64, 64), (64,), 0, 0), ((64,), (64, 64), 0, 1),
         ((2, 100), (3, 100), 1, 1), ((40, 3), (40,), 0, 0)]


def _in_index_order(x, y):
    # the reference: acc = +0; acc = acc + x[:, k] * y[k, :] for k = 0, 1, ... (one (M, N)
    # slab at a time, as the spec's reduce and XLA's naive loops add)
    acc = np.zeros((x.shape[1], y.shape[2]), x.dtype)
    for i in range(x.shape[2]):
        acc = acc + x[0, :, i:i + 1] * y[0, i:i + 1, :]
    return acc


@pytest.mark.parametrize("dtype,name", [(np.float32, "f32"), (np.float64, "f64")])
@pytest.mark.parametrize("ls,rs,lc,rc", _DOTS)
def test_small_dot_is_matmuls_sequential_sum(dtype, name, ls, rs, lc, rc):
    # dot_general's direct paths for one small product (vector @ matrix: RNN steps, matrix @
    # vector, small matrices, transposed operands) against matmul's own sequential sum, bit
    # for bit, with -0, inf and NaN among the operands, and against an independent sum in
    # index order on values spread over 16 decades (where a pairwise sum differs).
    from shlo.ops.linalg.matmul import _float_matmul

    batch = "batching_dims = [0] x [0], " if len(ls) == 3 else ""
    lfree = [d for d in range(len(ls)) if d != lc and not (batch and d == 0)]
    rfree = [d for d in range(len(rs)) if d != rc and not (batch and d == 0)]
    os_ = ((1,) if batch else ()) + tuple(ls[d] for d in lfree) + tuple(rs[d] for d in rfree)

    def ty(s):
        return f"tensor<{'x'.join(map(str, s))}x{name}>"

    text = f"""func.func @main(%a: {ty(ls)}, %b: {ty(rs)}) -> {ty(os_)} {{
      %0 = stablehlo.dot_general %a, %b, {batch}contracting_dims = [{lc}] x [{rc}] : ({ty(ls)}, {ty(rs)}) -> {ty(os_)}
      return %0 : {ty(os_)}
    }}"""
    k = ls[lc]
    r = np.random.default_rng(k * len(lfree) + len(rfree))
    a, b = r.standard_normal(ls).astype(dtype), r.standard_normal(rs).astype(dtype)
    a.reshape(-1)[0] = -0.0
    if a.size > 2 and b.size > 2:
        b.reshape(-1)[0], b.reshape(-1)[-1], a.reshape(-1)[2] = np.inf, np.nan, 1e30
    spread_a = (r.standard_normal(ls) * 10.0 ** r.integers(-8, 8, ls)).astype(dtype)
    spread_b = (r.standard_normal(rs) * 10.0 ** r.integers(-8, 8, rs)).astype(dtype)
    m = shlo.parse(text)
    with np.errstate(all="ignore"):
        for x, y in ((a, b), (-np.abs(a) * 0, np.abs(b) * 0), (spread_a, spread_b)):
            got = shlo.run(m, x, y)[0]
            xt = x.transpose(([0] if batch else []) + lfree + [lc]).reshape(1, -1, k)
            yt = y.transpose(([0] if batch else []) + [rc] + rfree).reshape(1, k, -1)
            want = _float_matmul(xt, yt).reshape(os_)
            assert want.tobytes() == _in_index_order(xt, yt).tobytes()
            assert got.shape == want.shape and got.tobytes() == want.tobytes()
            assert _stepwise(m, x, y)[0].tobytes() == want.tobytes()


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


# --- 0-d integer loop state as Python ints (interpreter/scalars.py) -------------------------------


def _counter_loop(t: str, start: str, step_op: str, step: str, test: str, bound: str,
                  extra_body: str = "", out: str = "%r#0") -> str:
    """A `while` of one counter of type ``t``: ``i = step_op(i, step)`` while ``test(i,
    bound)``; ``extra_body`` lines may read %i and %i1; the function returns ``out``."""
    return f"""
    func.func @main(%x: tensor<f32>) -> (tensor<{t}>, tensor<f32>) {{
      %s = stablehlo.constant dense<{start}> : tensor<{t}>
      %r:2 = stablehlo.while(%i = %s, %a = %x) : tensor<{t}>, tensor<f32>
        cond {{
          %n = stablehlo.constant dense<{bound}> : tensor<{t}>
          %p = stablehlo.compare {test}, %i, %n : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
          stablehlo.return %p : tensor<i1>
        }} do {{
          %k = stablehlo.constant dense<{step}> : tensor<{t}>
          %i1 = stablehlo.{step_op} %i, %k : tensor<{t}>
          %one = stablehlo.constant dense<1.0> : tensor<f32>
          %a1 = stablehlo.add %a, %one : tensor<f32>
{extra_body}
          stablehlo.return %i1, %a1 : tensor<{t}>, tensor<f32>
        }}
      return {out}, %r#1 : tensor<{t}>, tensor<f32>
    }}"""


_COMPARE = {"LT": np.less, "GT": np.greater, "GE": np.greater_equal, "NE": np.not_equal}
_STEP = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply}


@pytest.mark.parametrize("t, start, step_op, step, test, bound", [
    # each wraps around its type's range once or more (as numpy's scalars do)
    ("i64", 9223372036854775805, "add", 1, "NE", -9223372036854775807),
    ("i32", 2147483640, "add", 5, "GT", 0),
    ("i8", 120, "add", 7, "GT", 0),
    ("i16", -32760, "add", -9, "LT", 0),
    ("i32", -2147483647, "subtract", 3, "LT", 0),
    ("i32", 2147483646, "subtract", -3, "GT", 0),
    ("ui32", 2, "subtract", 1, "NE", 4294967294),
    ("ui8", 250, "add", 3, "GE", 200),
    ("ui64", 18446744073709551610, "add", 4, "GE", 100),
    ("i16", 3, "multiply", -8, "NE", 0),
    ("ui16", 5, "multiply", 4096, "NE", 0),
])
def test_integer_loop_state_as_python_ints_wraps_as_numpy(t, start, step_op, step, test,
                                                          bound):
    dt = np.dtype(t.replace("ui", "uint") if t.startswith("ui") else t.replace("i", "int"))
    i, count = dt.type(start), 0  # the reference: numpy scalars
    with np.errstate(all="ignore"):
        while _COMPARE[test](i, dt.type(bound)):
            i, count = _STEP[step_op](i, dt.type(step)), count + 1
    assert 0 < count < 10
    m, (got, a) = _both(_counter_loop(t, start, step_op, step, test, bound),
                        np.array(0, np.float32))
    assert got.dtype == dt and got.shape == () and int(got) == int(i) and float(a) == count
    assert " & " in _split_at_loop(prepare_entry(m)[0].source)[1]  # the wrap line


def test_python_int_counter_source():
    m, (i, a) = _both(_counter_loop("i32", 0, "add", 1, "LT", 10), np.array(0, np.float32))
    assert i.dtype == np.int32 and int(i) == 10 and float(a) == 10.0
    cb = prepare_entry(m)[0]
    head, loop = _split_at_loop(cb.source)
    header = loop.splitlines()[0].split()
    assert header[0] == "while" and header[2] == "<"  # the cond's one line is the loop's test
    assert "break" not in loop
    assert "2147483647" not in loop  # i + 1 on i < 10 cannot overflow: no wrap test
    start = head.strip().splitlines()[-1].split(" = ")[1].split(",")[0]
    assert type(cb.run.__globals__[start]) is int  # the constant enters as a Python int
    after = loop.split("pass")[1]
    assert f" = t" in after and cb.run.__globals__["t" + after.split(" = t")[1].split("(")[0]] \
        is np.int32  # and the result leaves as a numpy scalar again


@pytest.mark.parametrize("t, start, step, test, bound, checked", [
    ("i32", 2147483640, 1, "LT", 2147483647, False),  # ends at the maximum: i + 1 <= n
    ("i32", 2147483640, 2, "LT", 2147483647, True),   # i + 2 can pass it: tested
    ("i32", 2147483630, 8, "LT", 2147483640, False),  # at most n - 1 + 8 = the maximum
    ("i32", 2147483630, 9, "LT", 2147483640, True),
    ("i8", 100, 1, "LE", 126, False),                  # i <= 126: i + 1 <= 127
    ("i8", 100, 1, "LE", 127, True),
    ("ui8", 200, 1, "LT", 255, False),
    ("ui8", 200, 1, "NE", 255, True),                  # NE bounds nothing
])
def test_counter_add_without_wrap_test_where_the_loop_test_bounds_it(t, start, step, test,
                                                                      bound, checked):
    """A loop variable below its `while` test's bound plus a constant cannot leave its range:
    its add has no wrap test (emitter._in_range). Where the sum could leave it the test stays
    (a counter that wraps there never ends this loop: only the source is looked at)."""
    text = _counter_loop(t, start, "add", step, test, bound)
    cb = prepare_entry(shlo.parse(text))[0]
    cb.run  # (generates the code without running it)
    assert (" & " in _split_at_loop(cb.source)[1]) == checked
    if checked:
        return
    dt = np.dtype(t.replace("ui", "uint") if t.startswith("ui") else t.replace("i", "int"))
    i, count = dt.type(start), 0
    op = {"LT": np.less, "LE": np.less_equal}[test]
    while op(i, dt.type(bound)):
        i, count = i + dt.type(step), count + 1
    _, (got, a) = _both(text, np.array(0, np.float32))
    assert got.dtype == dt and int(got) == int(i) and float(a) == count


@pytest.mark.parametrize("test, bound, checked", [
    ("GT", 2147483647, False), ("GE", 2147483646, False), ("GE", 2147483647, True)])
def test_counter_bound_written_the_other_way_round(test, bound, checked):
    """`n > i` and `n >= i` bound `i` as `i < n` and `i <= n` do."""
    text = _counter_loop("i32", 2147483640, "add", 1, test, bound).replace(
        f"compare {test}, %i, %n", f"compare {test}, %n, %i")
    cb = prepare_entry(shlo.parse(text))[0]
    cb.run  # (generates the code without running it)
    assert (" & " in _split_at_loop(cb.source)[1]) == checked
    if not checked:
        _, (got, a) = _both(text, np.array(0, np.float32))
        assert int(got) == bound + (1 if test == "GE" else 0) and float(a) == int(got) - 2147483640


@pytest.mark.parametrize("extra, python_ints", [
    # the counter read by a kernel (a dynamic_slice index): numpy scalars throughout
    ("""          %z = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
          %d = stablehlo.dynamic_slice %z, %i, sizes = [1] : (tensor<4xf32>, tensor<i32>) -> tensor<1xf32>""",
     False),
    # a comparison result read by a kernel (select): numpy
    ("""          %c = stablehlo.constant dense<2> : tensor<i32>
          %q = stablehlo.compare GE, %i1, %c : (tensor<i32>, tensor<i32>) -> tensor<i1>
          %sel = stablehlo.select %q, %a, %a : tensor<i1>, tensor<f32>""", False),
    # comparisons and arithmetic of Python ints only: Python ints
    ("""          %c = stablehlo.constant dense<2> : tensor<i32>
          %q = stablehlo.compare GE, %i1, %c : (tensor<i32>, tensor<i32>) -> tensor<i1>
          %m = stablehlo.multiply %i1, %i1 : tensor<i32>
          %d = stablehlo.subtract %c, %m : tensor<i32>
          %e = stablehlo.compare EQ, %q, %q : (tensor<i1>, tensor<i1>) -> tensor<i1>""", True),
])
def test_python_ints_only_where_nothing_needs_numpy(extra, python_ints):
    # (NE: the test bounds nothing, so the counter's add keeps its wrap test, the marker)
    m, (i, a) = _both(_counter_loop("i32", 0, "add", 1, "NE", 3, extra), np.array(0, np.float32))
    assert int(i) == 3 and float(a) == 3.0
    assert ("> 2147483647:" in prepare_entry(m)[0].source) == python_ints


def test_python_ints_through_inlined_calls_if_and_nested_loops():
    # The counter goes through an inlined callee (stays a Python int) and an `if` whose
    # predicate is a Python comparison; an inner loop's bound is the outer counter (a Python
    # int of the enclosing loop); the `if` returns a counter (needs numpy: not Python ints).
    text = """
    func.func @main(%x: tensor<i64>) -> (tensor<i64>, tensor<i64>) {
      %c0 = stablehlo.constant dense<0> : tensor<i64>
      %r:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i64>, tensor<i64>
        cond {
          %n = stablehlo.constant dense<5> : tensor<i64>
          %p = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
          stablehlo.return %p : tensor<i1>
        } do {
          %i1 = func.call @inc(%i) : (tensor<i64>) -> tensor<i64>
          %s:2 = stablehlo.while(%j = %c0, %t = %acc) : tensor<i64>, tensor<i64>
            cond {
              %p = stablehlo.compare LT, %j, %i1 : (tensor<i64>, tensor<i64>) -> tensor<i1>
              stablehlo.return %p : tensor<i1>
            } do {
              %j1 = func.call @inc(%j) : (tensor<i64>) -> tensor<i64>
              %t1 = stablehlo.add %t, %j1 : tensor<i64>
              stablehlo.return %j1, %t1 : tensor<i64>, tensor<i64>
            }
          stablehlo.return %i1, %s#1 : tensor<i64>, tensor<i64>
        }
      return %r#0, %r#1 : tensor<i64>, tensor<i64>
    }
    func.func private @inc(%v: tensor<i64>) -> tensor<i64> {
      %one = stablehlo.constant dense<1> : tensor<i64>
      %w = stablehlo.add %v, %one : tensor<i64>
      return %w : tensor<i64>
    }"""
    big = np.array(9223372036854775800, np.int64)
    m, (i, acc) = _both(text, big)
    # sum over i=1..5 of (1 + ... + i) = 35, added to INT64_MAX - 7: wraps
    assert int(i) == 5 and int(acc) == int(np.int64(-9223372036854775781))
    src = prepare_entry(m)[0].source
    # i + 1 and j + 1 are bounded by their loops' tests (i < 5, j < i1): only t + j1 wraps
    assert src.count(" & 18446744073709551615)") == 1
    with_if = text.replace(
        "stablehlo.return %i1, %s#1 : tensor<i64>, tensor<i64>\n        }\n      return",
        """%two = stablehlo.constant dense<2> : tensor<i64>
          %big = stablehlo.compare GT, %i1, %two : (tensor<i64>, tensor<i64>) -> tensor<i1>
          %k = "stablehlo.if"(%big) ({
            stablehlo.return %i1 : tensor<i64>
          }, {
            stablehlo.return %s#1 : tensor<i64>
          }) : (tensor<i1>) -> tensor<i64>
          stablehlo.return %i1, %k : tensor<i64>, tensor<i64>
        }
      return""", 1)
    m2, (i2, k2) = _both(with_if, np.array(0, np.int64))
    assert int(i2) == 5 and int(k2) == 5
    assert " & " not in prepare_entry(m2)[0].source  # the `if`'s result needs numpy
