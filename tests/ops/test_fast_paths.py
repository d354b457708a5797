"""The interpreter's fast paths (docs/performance.md) give exactly what the general paths give.

* blockwise reduction trees (`_regions.tree_reduce_last` on large inputs) = the level-by-level
  tree, bit for bit, also for non-associative bodies;
* `reduce` with a projected body `op(g(a), g(b))` = the same reduce evaluated as a tree;
* `sort` by value (numpy's SIMD sort) and the packed stable argsort = the permutation path;
* dot_general on one BLAS thread restores the user's BLAS thread count;
* scalar arithmetic on numpy scalars (constants, `while` loops) and the IEEE maximum/minimum
  fix-up of signed zeros;
* the compiled f16/bf16 loops (ops/_half.py) = numpy's and ml_dtypes' arithmetic and casts;
* quantized dot_general with the lhs zero point folded = the shifted-operand product.

Sizes are kept small by shrinking the block sizes with monkeypatch.
"""

from __future__ import annotations

import numpy as np
import pytest

import shlo
from shlo.ir import function_body
from shlo.ops import _regions, linalg, reduction
from shlo.ops.reduction import reduce as reduce_module, sort as sort_module


# --- blockwise pairwise tree ---------------------------------------------------------------------


def _levels_reference(combine, arrays):
    """The pairwise tree level by level over the whole arrays (the definition)."""
    n = arrays[0].shape[-1]
    while n > 1:
        h = n // 2
        out = combine([a[..., 0:2 * h:2] for a in arrays], [a[..., 1:2 * h:2] for a in arrays])
        if n % 2:
            out = [np.concatenate([o, a[..., -1:]], axis=-1) for o, a in zip(out, arrays)]
        arrays, n = out, h + n % 2
    return [a[..., 0] for a in arrays]


def _non_associative(lhs, rhs):
    return [lhs[0] * 0.75 - rhs[0] * 1.25 + 0.1, np.minimum(lhs[1], rhs[1]) * 3 + rhs[1] % 7]


@pytest.mark.parametrize("shape", [(1, 5003), (3, 2049), (700, 13), (40, 300), (2, 3, 999),
                                   (5000, 1), (1, 4096 + 256)])
def test_blockwise_tree_equals_level_tree(monkeypatch, shape):
    monkeypatch.setattr(_regions, "_BLOCK", 256)
    monkeypatch.setattr(_regions, "_SHRINK_LEVELS", 3)
    rng = np.random.default_rng(sum(shape))
    arrays = [rng.standard_normal(shape), rng.integers(0, 1000, shape)]
    got = _regions.tree_reduce_last(_non_associative, arrays)
    want = _levels_reference(_non_associative, arrays)
    for g, w in zip(got, want):
        assert g.shape == w.shape == shape[:-1]
        np.testing.assert_array_equal(g, w)


# --- reduce with a projected body ----------------------------------------------------------------


def _reduce_program(g: str, op: str, t: str, shape: str, dims: str, out: str) -> str:
    return f"""func.func @main(%x: tensor<{shape}x{t}>, %i: tensor<{t}>) -> tensor<{out}{t}> {{
  %0 = stablehlo.reduce(%x init: %i) across dimensions = [{dims}] :
      (tensor<{shape}x{t}>, tensor<{t}>) -> tensor<{out}{t}>
    reducer(%a: tensor<{t}>, %b: tensor<{t}>) {{
      %ga = {g} %a : tensor<{t}>
      %gb = {g} %b : tensor<{t}>
      %m = {op} %ga, %gb : tensor<{t}>
      stablehlo.return %m : tensor<{t}>
    }}
  return %0 : tensor<{out}{t}>
}}"""


def _without_projection(monkeypatch, text, *args):
    with monkeypatch.context() as m:
        m.setattr(reduce_module, "_projected_body", lambda block, ctx: None)
        return shlo.run(shlo.parse(text), *args)[0]


@pytest.mark.parametrize("g,op,t", [
    ("stablehlo.abs", "stablehlo.maximum", "f32"),
    ("stablehlo.abs", "stablehlo.minimum", "f64"),
    ("stablehlo.abs", "stablehlo.add", "f64"),
    ("stablehlo.floor", "stablehlo.maximum", "f32"),
    ("stablehlo.sign", "stablehlo.minimum", "f32"),
    ("stablehlo.abs", "stablehlo.maximum", "i32"),
    ("stablehlo.abs", "stablehlo.minimum", "i8"),
])
@pytest.mark.parametrize("dims,out", [("0, 1", ""), ("1", "40x"), ("0", "300x")])
def test_projected_reduce_equals_tree(monkeypatch, g, op, t, dims, out):
    monkeypatch.setattr(reduce_module, "_BLOCK", 512)  # exercise the blockwise path too
    rng = np.random.default_rng(7)
    dt = np.dtype({"f32": np.float32, "f64": np.float64, "i32": np.int32, "i8": np.int8}[t])
    if dt.kind == "f":
        x = (rng.standard_normal((40, 300)) * 5).astype(dt)
        x[3, 7], x[5, 9], x[6, 1] = -0.0, 0.0, -0.0
        init = dt.type(-0.0)
    else:
        x = rng.integers(np.iinfo(dt).min, np.iinfo(dt).max, (40, 300), dtype=dt)
        x[0, 0] = np.iinfo(dt).min  # abs wraps: abs(INT_MIN) = INT_MIN
        init = dt.type(3)
    text = _reduce_program(g, op, t, "40x300", dims, out)
    if op == "stablehlo.add":  # floats summed in a different order: compare loosely
        np.testing.assert_allclose(shlo.run(shlo.parse(text), x, init)[0],
                                   _without_projection(monkeypatch, text, x, init), rtol=1e-12)
        return
    got = shlo.run(shlo.parse(text), x, init)[0]
    want = _without_projection(monkeypatch, text, x, init)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.view(f"u{dt.itemsize}"), want.view(f"u{dt.itemsize}"))


def test_projected_reduce_nan_and_empty():
    text = _reduce_program("stablehlo.abs", "stablehlo.maximum", "f32", "4x0", "1", "4x")
    r = shlo.run(shlo.parse(text), np.zeros((4, 0), np.float32), np.float32(-2))[0]
    np.testing.assert_array_equal(r, [-2, -2, -2, -2])  # no element: the init value itself
    text = _reduce_program("stablehlo.abs", "stablehlo.maximum", "f32", "5", "0", "")
    x = np.array([1, -7, np.nan, 3, -2], np.float32)
    assert np.isnan(shlo.run(shlo.parse(text), x, np.float32(0))[0])
    x = np.array([1, -7, 2, 3, -2], np.float32)
    assert shlo.run(shlo.parse(text), x, np.float32(-9))[0] == 9  # max(|init|, |x|)


def _reducer(text: str):
    func = shlo.parse(text).function("main")
    return function_body(func).operations[0].regions[0].blocks[0]


def test_projection_not_recognised_for_non_projections():
    text = _reduce_program("stablehlo.negate", "stablehlo.maximum", "f32", "5", "0", "")
    assert reduction._projected_body(_reducer(text), None) is None
    text = _reduce_program("stablehlo.abs", "stablehlo.add", "i32", "4", "0", "")
    assert reduction._projected_body(_reducer(text), None) is None  # integer sums may wrap
    x = np.array([2**31 - 1, 5, -3, 1], np.int32)
    # the tree: |(2^31-1) + 5| wraps to -(2^31-4), its abs + 4 wraps to INT_MIN; summing
    # |x| linearly would give -(2^31-8) instead
    assert shlo.run(shlo.parse(text), x, np.int32(0))[0] == np.int32(-2**31)


# --- sort ----------------------------------------------------------------------------------------


def _sort_program(t: str, shape: str, direction: str, compare_type: str, operands: int) -> str:
    ts = ", ".join([f"tensor<{shape}x{t}>"] + ["tensor<" + shape + "xi32>"] * (operands - 1))
    args = ", ".join([f"%x: tensor<{shape}x{t}>"]
                     + [f"%y{i}: tensor<{shape}xi32>" for i in range(operands - 1)])
    names = ", ".join(["%x"] + [f"%y{i}" for i in range(operands - 1)])
    extra = "".join(f", %c{i}: tensor<i32>, %d{i}: tensor<i32>" for i in range(operands - 1))
    return f"""func.func @main({args}) -> ({ts}) {{
  %r:{operands} = "stablehlo.sort"({names}) <{{dimension = 1 : i64, is_stable = true}}> ({{
    ^bb0(%a: tensor<{t}>, %b: tensor<{t}>{extra}):
      %p = stablehlo.compare {direction}, %a, %b, {compare_type} :
          (tensor<{t}>, tensor<{t}>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
  }}) : ({ts}) -> ({ts})
  return {", ".join(f"%r#{i}" for i in range(operands))} : {ts}
}}"""


def _sort_reference(monkeypatch, text, *args):
    """The same sort through the general merge sort (no recognised comparator)."""
    with monkeypatch.context() as m:
        m.setattr(sort_module, "_analyze", lambda block, ctx: None)
        return shlo.run(shlo.parse(text), *args)


def _float_order(x: np.ndarray, descending: bool) -> np.ndarray:
    """The documented FLOAT order of shlo's keys: -0 == +0, NaNs equal and after +inf (first
    when descending), ties in input order."""
    v = x.astype(np.float64) + 0.0
    nan = np.isnan(v)
    v[nan] = 0
    return np.stack([np.lexsort((-r, ~n)) if descending else np.lexsort((r, n))
                     for r, n in zip(v, nan)])


def _float_rows(dt, rng, specials: bool) -> np.ndarray:
    x = rng.integers(-6, 6, (3, 64)).astype(dt) / 2  # many ties
    x[x == 0] = 0.5  # no zero: the sort by value applies (see _direct_sort)
    if specials:
        x[0, [1, 5, 9]] = [np.nan, -0.0, 0.0]
        x[1, [0, 3]] = [-np.nan, np.inf]
        x[2, [2, 4, 6]] = [0.0, -0.0, -0.0]
    return x


@pytest.mark.parametrize("t,dt", [("f32", np.float32), ("f64", np.float64), ("f16", np.float16)])
@pytest.mark.parametrize("direction", ["LT", "GT"])
@pytest.mark.parametrize("compare_type", ["FLOAT", "TOTALORDER"])
@pytest.mark.parametrize("specials", [False, True])
@pytest.mark.parametrize("operands", [1, 2])
def test_sort_fast_paths_equal_merge_sort(monkeypatch, t, dt, direction, compare_type,
                                          specials, operands):
    rng = np.random.default_rng(11)
    x = _float_rows(dt, rng, specials)
    args = [x] + [np.broadcast_to(np.arange(64, dtype=np.int32), (3, 64)).copy()] * (operands - 1)
    text = _sort_program(t, "3x64", direction, compare_type, operands)
    got = shlo.run(shlo.parse(text), *args)
    if compare_type == "FLOAT" and specials:
        # NaN is unordered under FLOAT: no comparator-only reference; shlo's documented order
        order = _float_order(x, direction == "GT")
        want = [np.take_along_axis(a, order, axis=1) for a in args]
    else:
        want = _sort_reference(monkeypatch, text, *args)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.view(f"u{g.dtype.itemsize}"),
                                      w.view(f"u{w.dtype.itemsize}"))


@pytest.mark.parametrize("t,dt", [("i32", np.int32), ("ui8", np.uint8), ("i64", np.int64)])
@pytest.mark.parametrize("direction", ["LT", "GT"])
def test_integer_sort_fast_paths(monkeypatch, t, dt, direction):
    rng = np.random.default_rng(5)
    info = np.iinfo(dt)
    x = rng.integers(info.min, info.max, (3, 64), dtype=dt)
    x[0, :10] = info.max
    x[1, :10] = info.min
    ct = "UNSIGNED" if t.startswith("u") else "SIGNED"
    for operands in (1, 2):
        args = [x] + [np.broadcast_to(np.arange(64, dtype=np.int32), (3, 64)).copy()] * (
            operands - 1)
        text = _sort_program(t, "3x64", direction, ct, operands)
        for g, w in zip(shlo.run(shlo.parse(text), *args),
                        _sort_reference(monkeypatch, text, *args)):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype,low,high", [(np.int64, -5, 5), (np.int64, -2**40, 2**40),
                                            (np.uint64, 0, 2**63), (np.int64, -2**31, 2**31)])
def test_stable_argsort_matches_numpy(dtype, low, high):
    rng = np.random.default_rng(1)
    k = rng.integers(low, high, (4, 500), dtype=dtype)
    np.testing.assert_array_equal(reduction._stable_argsort(k),
                                  np.argsort(k, axis=-1, kind="stable"))


# --- BLAS threads, scalars, maximum --------------------------------------------------------------


def test_blas_matmul_restores_thread_count():
    from threadpoolctl import threadpool_info, threadpool_limits

    if not any(i["user_api"] == "blas" for i in threadpool_info()):
        pytest.skip("no BLAS found by threadpoolctl")
    a = np.random.default_rng(0).standard_normal((2, 64, 48))
    b = np.random.default_rng(1).standard_normal((2, 48, 32))
    with threadpool_limits(2, user_api="blas"):
        before = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
        np.testing.assert_array_equal(linalg.blas_matmul(a, b), np.matmul(a, b))
        after = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    assert before == after


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex64])
def test_batched_gemms_on_several_cores_equal_one_core(monkeypatch, dt):
    """A batch of small GEMMs spread over the cores: each GEMM on one BLAS thread, the bits of
    the one-core product; the user's BLAS thread count restored."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from shlo.ops import _pool
    from shlo.ops.linalg import matmul

    monkeypatch.setattr(matmul, "_PARALLEL_MIN_WORK", 1)
    monkeypatch.setattr(_pool, "cores", lambda: 3)
    rng = np.random.default_rng(2)
    a = rng.standard_normal((7, 33, 40)).astype(dt)
    b = rng.standard_normal((7, 40, 21)).astype(dt)
    with threadpool_limits(2, user_api="blas"):
        before = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
        got = linalg.blas_matmul(a, b)
        after = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
        with matmul._ONE_BLAS_THREAD:
            want = np.matmul(a, b)
    assert before == after
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def test_scalar_while_loop_on_numpy_scalars():
    text = """func.func @main(%x: tensor<f32>) -> (tensor<i64>, tensor<f32>) {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %n = stablehlo.constant dense<1000> : tensor<i64>
  %c = stablehlo.constant dense<0.5> : tensor<f32>
  %r:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i64>, tensor<f32>
    cond {
      %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    } do {
      %i1 = stablehlo.add %i, %one : tensor<i64>
      %a1 = stablehlo.multiply %acc, %c : tensor<f32>
      %a2 = stablehlo.add %a1, %c : tensor<f32>
      stablehlo.return %i1, %a2 : tensor<i64>, tensor<f32>
    }
  return %r#0, %r#1 : tensor<i64>, tensor<f32>
}"""
    i, acc = shlo.run(text, np.array(3.0, np.float32))
    assert i.dtype == np.int64 and i.shape == () and int(i) == 1000
    assert acc.dtype == np.float32 and float(acc) == 1.0


def test_integer_scalar_arithmetic_wraps():
    text = """func.func @main(%x: tensor<i8>) -> tensor<i8> {
  %c = stablehlo.constant dense<100> : tensor<i8>
  %0 = stablehlo.add %x, %c : tensor<i8>
  %1 = stablehlo.multiply %0, %c : tensor<i8>
  return %1 : tensor<i8>
}"""
    (r,) = shlo.run(text, np.array(100, np.int8))
    assert r.dtype == np.int8 and int(r) == (-56 * 100 + 128) % 256 - 128


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.float16])
def test_maximum_minimum_signed_zeros(dt):
    t = {np.float32: "f32", np.float64: "f64", np.float16: "f16"}[dt]
    text = f"""func.func @main(%x: tensor<6x{t}>, %y: tensor<6x{t}>)
    -> (tensor<6x{t}>, tensor<6x{t}>) {{
  %0 = stablehlo.maximum %x, %y : tensor<6x{t}>
  %1 = stablehlo.minimum %x, %y : tensor<6x{t}>
  return %0, %1 : tensor<6x{t}>, tensor<6x{t}>
}}"""
    x = np.array([-0.0, 0.0, -0.0, 0.0, np.nan, -1], dt)
    y = np.array([0.0, -0.0, -0.0, 0.0, 1, -0.0], dt)
    mx, mn = shlo.run(text, x, y)
    assert list(np.signbit(mx[:4])) == [False, False, True, False]
    assert list(np.signbit(mn[:4])) == [True, True, True, False]
    assert np.isnan(mx[4]) and np.isnan(mn[4])
    assert mx[5] == 0 and np.signbit(mx[5]) and mn[5] == -1
    for a, b in [(dt(-0.0), dt(0.0)), (dt(0.0), dt(-0.0))]:  # 0-d: numpy scalars
        mx, mn = (r.reshape(()) for r in shlo.run(text.replace("6x", ""), np.array(a),
                                                  np.array(b)))
        assert not np.signbit(mx) and np.signbit(mn)


# --- f16 / bf16 compiled loops (shlo/ops/_half.py) -----------------------------------------------

def _half_dtypes():
    import ml_dtypes

    return {"f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16)}


def _half_loops():
    from shlo.ops import _half

    mod = _half.loops()
    if mod is None:
        pytest.skip("numba is not installed (or SHLO_NO_JIT is set)")
    return mod


def _all_half_bits():
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)


def _some_half_bits(t):
    """Second operands: zeros, ones, the largest and smallest values, infinities, NaNs with
    several payloads and signs, and random patterns."""
    special = {"f16": [0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x3C00, 0xBC00, 0x3C01,
                       0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7C01, 0x7E00, 0xFE00, 0x7E55, 0xFD01,
                       0x3555, 0x1000, 0x5800],
               "bf16": [0x0000, 0x8000, 0x0001, 0x8001, 0x007F, 0x0080, 0x3F80, 0xBF80, 0x3F81,
                        0x7F7F, 0xFF7F, 0x7F80, 0xFF80, 0x7F81, 0x7FC0, 0xFFC0, 0x7FD5, 0xFF81,
                        0x3EAB, 0x2000, 0x4B00]}[t]
    rnd = np.random.default_rng(7).integers(0, 1 << 16, 43).astype(np.uint16)
    return np.concatenate([np.array(special, np.uint16), rnd])


@pytest.mark.parametrize("t", ["f16", "bf16"])
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide"])
def test_half_binary_loops_equal_numpy(t, name):
    """Every bit pattern against 64 second operands (specials, NaN payloads, random), both
    orders: the compiled loop's bits are numpy's / ml_dtypes' own, NaN payloads included;
    also without the pairs whose result is a NaN, which the loop's first pass computes alone
    (a NaN result sends it to a second pass with the operands' NaN rule)."""
    loops = _half_loops()
    dt = _half_dtypes()[t]
    x, ys = _all_half_bits(), _some_half_bits(t)
    a = np.repeat(x, ys.size)
    b = np.tile(ys, x.size)
    with np.errstate(all="ignore"):
        keep = ~np.isnan(getattr(np, name)(a.view(dt), b.view(dt)).astype(np.float32))
    assert 0.5 < keep.mean() < 1
    for lhs, rhs in ((a, b), (b, a), (a[keep], b[keep]), (b[keep], a[keep])):
        got = np.empty(lhs.size, np.uint16)
        loops.BINARY[(name, t)](lhs, rhs, got)
        with np.errstate(all="ignore"):
            want = getattr(np, name)(lhs.view(dt), rhs.view(dt)).view(np.uint16)
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, [(hex(lhs[i]), hex(rhs[i]), hex(got[i]), hex(want[i]))
                               for i in bad[:5]]
    # lengths 1..40: the compiled loop's scalar remainder as well as its vector body
    special = np.repeat(ys[:21], 2)
    for n in range(1, 41):
        lhs, rhs = special[:n], np.roll(special, 7)[:n]
        got = np.empty(n, np.uint16)
        loops.BINARY[(name, t)](lhs, rhs, got)
        with np.errstate(all="ignore"):
            want = getattr(np, name)(lhs.view(dt), rhs.view(dt)).view(np.uint16)
        np.testing.assert_array_equal(got, want)


def _f32_near_roundings():
    """float32 patterns at and next to every rounding point of f16 and bf16: each high half
    with low halves that are ties, just below and just above them, for both parities."""
    hi = (np.arange(1 << 16, dtype=np.uint32) << 16)
    lows = np.array([b << 13 | r for b in range(8) for r in (0, 1, 0xFFF, 0x1000, 0x1001, 0x1FFF)]
                    + [0x7FFF, 0x8000, 0x8001, 0xFFFF], np.uint32)
    return (hi[:, None] | lows[None, :]).reshape(-1)


@pytest.mark.parametrize("t", ["f16", "bf16"])
def test_half_casts_equal_numpy(t):
    """Both casts on every bit pattern (f16/bf16) and at every rounding point (f32), NaN
    payloads included; also without NaNs, which the loops' first pass converts alone."""
    loops = _half_loops()
    dt = _half_dtypes()[t]
    every = _all_half_bits()
    for x in (every, every[~np.isnan(every.view(dt).astype(np.float32))]):
        wide = np.empty(x.size, np.float32)
        (loops.f16_to_f32 if t == "f16" else loops.bf16_to_f32)(x, wide)
        np.testing.assert_array_equal(wide.view(np.uint32),
                                      x.view(dt).astype(np.float32).view(np.uint32))
    near = _f32_near_roundings()
    for f in (near, near[~np.isnan(near.view(np.float32))]):
        got = np.empty(f.size, np.uint16)
        (loops.f32_to_f16 if t == "f16" else loops.f32_to_bf16)(f.view(np.float32), got)
        with np.errstate(all="ignore"):
            want = f.view(np.float32).astype(dt).view(np.uint16)
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, [(hex(f[i]), hex(got[i]), hex(want[i])) for i in bad[:5]]


def test_half_gather_equals_take():
    from shlo.ops import _half

    _half_loops()
    table = np.random.default_rng(3).integers(0, 1 << 16, 1 << 16).astype(np.uint16).view(
        np.float16)
    idx = np.random.default_rng(4).integers(0, 1 << 16, (70, 90)).astype(np.uint16)
    got = _half.gather(table, idx)
    assert got is not None and got.shape == idx.shape and got.dtype == np.float16
    np.testing.assert_array_equal(got.view(np.uint16), np.take(table, idx).view(np.uint16))


@pytest.mark.parametrize("t", ["f16", "bf16"])
@pytest.mark.parametrize("axes", [(1, 0), (2, 0, 1), (0, 2, 1)])
def test_half_casts_keep_a_transposed_layout(t, axes):
    """widen / narrow of a transposed view: numpy's values, computed in the operand's memory
    order (no C-order copy first: the result is the same transpose of a C-contiguous array)."""
    from shlo.ops import _half

    _half_loops()
    dt = _half_dtypes()[t]
    shape = (64, 90, 3)[: len(axes)]  # at least _half.MIN_SIZE elements
    base = np.random.default_rng(5).standard_normal(shape).astype(np.float32)
    x = base.astype(dt).transpose(axes)
    wide = _half.widen(x)
    assert wide.shape == x.shape and wide.transpose(np.argsort(axes)).flags.c_contiguous
    np.testing.assert_array_equal(wide, x.astype(np.float32))
    f = base.transpose(axes)
    narrow = _half.narrow(f, dt)
    assert narrow.shape == f.shape and narrow.transpose(np.argsort(axes)).flags.c_contiguous
    np.testing.assert_array_equal(narrow.view(np.uint16), f.astype(dt).view(np.uint16))
    # a broadcast (stride 0) view has no memory order: the C-order path
    b = np.broadcast_to(base[:1].astype(dt), shape)
    np.testing.assert_array_equal(_half.widen(b), b.astype(np.float32))
    # binary loops: both operands transposed alike (their order), or only one (C order)
    y = (base * 0.5 + 1).astype(dt).transpose(axes)
    for lhs, rhs in ((x, y), (x, np.ascontiguousarray(y))):
        got = _half.binary("multiply", dt, lambda a, b: a * b)(lhs, rhs)
        np.testing.assert_array_equal(got.view(np.uint16), (lhs * rhs).view(np.uint16))
    table = np.random.default_rng(6).integers(0, 1 << 16, 1 << 16).astype(np.uint16)
    bits = x.view(np.uint16)
    np.testing.assert_array_equal(_half.gather(table, bits), np.take(table, bits))


@pytest.mark.parametrize("t", ["f16", "bf16"])
def test_half_loops_in_pieces_on_several_cores(monkeypatch, t):
    """Large arrays are cut into pieces for the cores (_pool.split): the same bits."""
    from shlo.ops import _half, _pool

    _half_loops()
    monkeypatch.setattr(_half, "PIECE", 4096)
    monkeypatch.setattr(_pool, "cores", lambda: 3)
    dt = _half_dtypes()[t]
    rng = np.random.default_rng(8)
    x = rng.integers(0, 1 << 16, 50_001).astype(np.uint16).view(dt)
    y = rng.integers(0, 1 << 16, 50_001).astype(np.uint16).view(dt)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(_half.widen(x), x.astype(np.float32))
        f = x.astype(np.float32) * 3
        np.testing.assert_array_equal(_half.narrow(f, dt).view(np.uint16), f.astype(dt).view(np.uint16))
        got = _half.binary("divide", dt, lambda a, b: a / b)(x, y)
        np.testing.assert_array_equal(got.view(np.uint16), (x / y).view(np.uint16))
    table = rng.integers(0, 256, 1 << 16).astype(np.uint8)
    a, b = x.view(np.uint16).astype(np.uint8), y.view(np.uint16).astype(np.uint8)
    np.testing.assert_array_equal(_half.gather_pairs(table, a, b),
                                  table[(a.astype(np.intp) << 8) | b])


def test_gather_pairs_every_pair_and_ragged_ends():
    """The compiled pair lookup (16 at a time, the rest one by one): every one of the 65,536
    pairs, and lengths around a multiple of 16, the table's own entries."""
    mod = _half_loops()
    rng = np.random.default_rng(15)
    table = rng.integers(0, 256, 1 << 16).astype(np.uint8)
    x = np.repeat(np.arange(256, dtype=np.uint8), 256)
    y = np.tile(np.arange(256, dtype=np.uint8), 256)
    for n in (x.size, 0, 1, 15, 16, 17, 4103):
        out = np.empty(n, np.uint8)
        mod.gather_pairs(table, x[-n:] if n else x[:0], y[-n:] if n else y[:0], out)
        np.testing.assert_array_equal(out, table[(x[x.size - n:].astype(np.intp) << 8) |
                                                 y[y.size - n:]])


_SCALED_FORMATS = ["f8E4M3FN", "f8E5M2", "f8E4M3", "f8E4M3FNUZ", "f8E5M2FNUZ", "f8E4M3B11FNUZ",
                   "f6E2M3FN", "f6E3M2FN"]
_PAIR_PROGRAM = """func.func @main(%x: tensor<{n}x{t}>, %y: tensor<{n}x{t}>) -> tensor<{n}x{t}> {{
  %0 = stablehlo.{op} %x, %y : tensor<{n}x{t}>
  return %0 : tensor<{n}x{t}>
}}"""


def _scaled_loops():
    mod = _half_loops()
    if not mod.SCALED:
        pytest.skip("the factored product loop needs AVX2")
    return mod


def _bit_patterns(t, n, seed):
    """``n`` values of one-byte format ``t`` drawn from a normal distribution (as their dtype),
    and every bit pattern of the format."""
    from shlo.types import element_type

    dt = element_type(t).dtype
    rng = np.random.default_rng(seed)
    with np.errstate(all="ignore"):
        normal = rng.standard_normal((2, n)).astype(np.float32).astype(dt)
    return dt, normal


@pytest.mark.parametrize("t", _SCALED_FORMATS)
@pytest.mark.parametrize("op", ["multiply", "divide"])
def test_factored_products_equal_the_table(t, op):
    """Products and quotients of one-byte floats by their factoring by exponents
    (``_pairs_jit.scaled_pairs``): accepted for every format with 1-3 mantissa bits, and the
    same bits as ml_dtypes' arithmetic on every pair (32-lane blocks and looked-up lanes), on
    normal-distributed values (mostly blocks) and at lengths around the blocks."""
    from shlo.ops.elementwise import _pair_forms

    mod = _scaled_loops()
    dt, normal = _bit_patterns(t, 100_003, 21)
    v = np.arange(256, dtype=np.uint8)
    every = np.repeat(v, 256).view(dt), np.tile(v, 256).view(dt)
    cases = [every, tuple(normal)] + [(normal[0][:n], normal[1][:n]) for n in (4096, 4127, 4128,
                                                                             4129, 4160)]
    for x, y in cases:
        text = _PAIR_PROGRAM.format(n=x.size, t=t, op=op)
        _both_paths(lambda: [np.asarray(shlo.run(text, x, y))])
    assert _pair_forms._FORMS[(f"stablehlo.{op}", dt)] is not None  # checked, so used above
    if not t.startswith("f8"):  # (f6: 4-8 exponents, so most products leave their range)
        return
    # Most normal-distributed f8 lanes are computed in the blocks: a table of one marker value
    # shows which lanes were looked up.
    from shlo.ops.elementwise import _tables

    spec = _pair_forms.scaled_form(f"stablehlo.{op}", _tables._TABLES[(f"stablehlo.{op}", dt)], dt)
    marker = np.full(1 << 16, 0xA5, np.uint8)
    out = np.empty(normal.shape[1], np.uint8)
    mod.scaled_pairs(spec, marker, normal[0].view(np.uint8), normal[1].view(np.uint8), out, False)
    assert (out == 0xA5).mean() < 0.15


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide", "maximum", "minimum",
                                "power", "remainder", "atan2"])
def test_f4_pairs_in_registers_equal_ml_dtypes(op):
    """f4E2M1FN binary ops by their table on the 16 codes in AVX2 registers
    (``_pairs_jit.nibble_pairs``): accepted for each op, the same bits as ml_dtypes' arithmetic
    (the careful path) on every byte pair, spare high bits included, and at lengths around
    the 32-lane blocks; a table with one wrong entry is rejected, and so are maximum and
    minimum, whose results keep an operand's spare high bits (they keep the byte table)."""
    from shlo.ops.elementwise import _pair_forms, _tables

    _scaled_loops()
    dt, normal = _bit_patterns("f4E2M1FN", 10_003, 5)
    v = np.arange(256, dtype=np.uint8)
    cases = [(np.repeat(v, 256).view(dt), np.tile(v, 256).view(dt))] + \
        [(normal[0][:n], normal[1][:n]) for n in (4096, 4127, 4128, 4129, 10_003)]
    for x, y in cases:
        text = _PAIR_PROGRAM.format(n=x.size, t="f4E2M1FN", op=op)
        _both_paths(lambda: [np.asarray(shlo.run(text, x, y))])
    form = _pair_forms._FORMS[(f"stablehlo.{op}", dt)]
    if op in ("maximum", "minimum"):
        assert form is None
        return
    assert form is not None  # so the runs above used it
    table = _tables._TABLES[(f"stablehlo.{op}", dt)]
    wrong = np.array(table.view(np.uint8))
    wrong[3 * 256 + 0x1B] ^= 1  # a pair with spare high bits: code (3, -3)
    _pair_forms._FORMS.pop(("wrong", dt), None)
    assert _pair_forms.register_form("wrong", dt, wrong) is None


@pytest.mark.parametrize("t", ["f8E4M3FN", "f8E5M2", "f8E4M3", "f8E4M3FNUZ", "f8E5M2FNUZ",
                               "f8E4M3B11FNUZ", "f8E3M4", "f6E2M3FN", "f6E3M2FN"])
@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide"])
def test_sums_in_registers_equal_ml_dtypes(t, op):
    """Sums and differences of one-byte floats, products and quotients of f6 ones, in f16/f32
    arithmetic (``_pairs_jit.exact_arithmetic``): the same bits as ml_dtypes' arithmetic on
    every pair (NaN and infinity operands looked up, overflow, zeros of both signs, 0 / 0, f6
    bytes with spare high bits), on normal-distributed values and at lengths around the
    32-lane blocks;
    accepted for every format but f8E5M2FNUZ, whose largest exponent is no finite f16's (f8
    products and quotients take their factoring by exponents)."""
    from shlo.ops.elementwise import _pair_forms

    mod = _scaled_loops()
    dt, normal = _bit_patterns(t, 10_003, 8)
    v = np.arange(256, dtype=np.uint8)
    cases = [(np.repeat(v, 256).view(dt), np.tile(v, 256).view(dt))] + \
        [(normal[0][:n], normal[1][:n]) for n in (4096, 4127, 4128, 4129, 10_003)]
    for x, y in cases:
        text = _PAIR_PROGRAM.format(n=x.size, t=t, op=op)
        _both_paths(lambda: [np.asarray(shlo.run(text, x, y))])
    form = _pair_forms._FORMS[(f"stablehlo.{op}", dt)]
    if op in ("multiply", "divide"):  # (only f6 products and quotients have this form)
        arithmetic = _pair_forms._arithmetic_form(f"stablehlo.{op}", dt,
                                                  np.zeros(1 << 16, np.uint8), mod)
        assert (arithmetic is not None) == t.startswith("f6")
        if arithmetic is None:
            return
    assert (form is None) == (t == "f8E5M2FNUZ")
    # (not a later candidate; f6E2M3FN's sums and differences are signed bytes, below)
    fixed = t == "f6E2M3FN" and op in ("add", "subtract")
    assert form is None or f"_{'fixed' if fixed else 'arithmetic'}_form" in form.__qualname__
    if t == "f8E4M3FN":  # a wrong overflow code is caught by the check
        from shlo.ops.elementwise import _tables

        table = _tables._TABLES[(f"stablehlo.{op}", dt)].view(np.uint8)
        spec = np.array([0x7E, 0x7F, 0x7F, 0, 0], np.int64)
        form = (3 if op == "subtract" else 0) << 8 | 0x83
        for cap, ok in ((0x7F, True), (0x7E, False)):
            spec[2] = cap
            assert _pair_forms.agrees(
                lambda a, b, o: mod.exact_arithmetic(spec, table, a, b, o, form), table) == ok


@pytest.mark.parametrize("op", ["add", "subtract"])
def test_f6_sums_as_signed_bytes(op):
    """f6E2M3FN sums and differences as signed bytes (``_pairs_jit.fixed_sums``): its values
    are multiples of 1/8 up to 60/8, so each sum is exact in a byte. Offered for that format
    alone (f6E3M2FN reaches 448 sixteenths; f4 has its 16 x 16 table); equal to the table on
    every pair (spare high bits, both zeros: -0 only from -0 + -0 or -0 - +0), and one wrong
    entry of either of its tables is caught."""
    from shlo.ops.elementwise import _pair_forms
    from shlo.types import element_type

    mod = _scaled_loops()
    key = f"stablehlo.{op}"
    for t in ("f6E3M2FN", "f4E2M1FN", "f8E4M3FN"):
        assert _pair_forms.fixed_spec(key, element_type(t).dtype) is None, t
    dt = element_type("f6E2M3FN").dtype
    v = np.arange(256, dtype=np.uint8)
    with np.errstate(all="ignore"):
        table = getattr(np, op)(np.repeat(v, 256).view(dt), np.tile(v, 256).view(dt))
    table = table.view(np.uint8)
    spec = _pair_forms.fixed_spec(key, dt)
    for at, ok in ((None, True), (5, False), (64 + 16 * 3 + 7, False)):
        s = spec.copy()  # a decoded magnitude; an encoded sum (chunk 1, upper copy, entry 7)
        if at is not None:
            s[at] ^= 1
        assert _pair_forms.agrees(
            lambda a, b, o: mod.fixed_sums(s, table, a, b, o, op == "subtract"), table) == ok


@pytest.mark.parametrize("t", ["f8E4M3FN", "f8E5M2", "f8E4M3", "f8E4M3FNUZ", "f8E5M2FNUZ",
                               "f8E4M3B11FNUZ", "f8E3M4", "f8E8M0FNU", "f6E2M3FN", "f6E3M2FN",
                               "f4E2M1FN"])
def test_widening_in_registers_equals_ml_dtypes(t):
    """convert of a one-byte float to f32 in registers (``_bytes_jit.widen_bytes``: the bits
    placed as an f16's, widened, scaled): ml_dtypes' cast, bit for bit, on every byte (NaNs,
    infinities, zeros, f6/f4 bytes with spare high bits) at lengths around the 16-lane blocks;
    accepted for every format but f8E5M2FNUZ (its top binade is an f16 infinity) and
    f8E8M0FNU (no sign, no mantissa); a table with one wrong entry is rejected."""
    from shlo.ops.elementwise import _pair_forms, _tables
    from shlo.types import element_type

    _scaled_loops()
    dt = element_type(t).dtype
    every = np.arange(256, dtype=np.uint8)
    for n in (4096, 4111, 5000):
        x = np.resize(every, n).view(dt)
        text = f"""func.func @main(%x: tensor<{n}x{t}>) -> tensor<{n}xf32> {{
  %0 = stablehlo.convert %x : (tensor<{n}x{t}>) -> tensor<{n}xf32>
  return %0 : tensor<{n}xf32>
}}"""
        got = np.asarray(shlo.run(text, x)[0])
        with np.errstate(all="ignore"):
            want = x.astype(np.float32)
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    key = "convert to f32"
    form = _pair_forms._WIDENINGS.get((key, dt))
    assert (form is None) == (t in ("f8E5M2FNUZ", "f8E8M0FNU"))
    if form is not None:
        wrong = np.array(_tables._TABLES[(key, dt)])
        wrong.view(np.uint32)[0x21] ^= 1
        assert _pair_forms.widening_form("wrong", dt, wrong) is None


def test_factored_products_check_rejects_a_wrong_spec():
    """The check of a factoring against its table (every pair) rejects one wrong entry of the
    significand table, and a wrong exponent offset."""
    from shlo.ops.elementwise import _pair_forms
    from shlo.types import element_type

    mod = _scaled_loops()
    dt = element_type("f8E4M3FN").dtype
    v = np.arange(256, dtype=np.uint8)
    with np.errstate(all="ignore"):
        table = (np.repeat(v, 256).view(dt) * np.tile(v, 256).view(dt)).view(np.uint8)
    spec = _pair_forms.scaled_form("stablehlo.multiply", table, dt)

    def checked(s):
        return _pair_forms.agrees(lambda a, b, o: mod.scaled_pairs(s, table, a, b, o, False), table)

    assert checked(spec)
    for at, delta in ((37, 1), (37 + 16, 1), (129, 1)):  # R[37] in both halves; the offset
        wrong = spec.copy()
        wrong[at] += delta
        assert not checked(wrong), at
    assert _pair_forms.scaled_form("stablehlo.add", table, dt) is None
    assert _pair_forms.scaled_form("stablehlo.multiply", table, element_type("f8E3M4").dtype) \
        is None


def test_factored_products_of_random_bytes_take_the_table():
    """Uniformly random bytes (a third of the lanes off the formula) go to the plain lookup after
    the first blocks: the same bits either way."""
    mod = _scaled_loops()
    from shlo.ops.elementwise import _pair_forms
    from shlo.types import element_type

    dt = element_type("f8E4M3FN").dtype
    rng = np.random.default_rng(4)
    x, y = rng.integers(0, 256, (2, 50_000)).astype(np.uint8)
    with np.errstate(all="ignore"):
        table = (np.repeat(np.arange(256, dtype=np.uint8), 256).view(dt) *
                 np.tile(np.arange(256, dtype=np.uint8), 256).view(dt)).view(np.uint8)
    spec = _pair_forms.scaled_form("stablehlo.multiply", table, dt)
    want = table[(x.astype(np.intp) << 8) | y]
    for adaptive in (True, False):
        out = np.empty(x.size, np.uint8)
        mod.scaled_pairs(spec, table, x, y, out, adaptive)
        np.testing.assert_array_equal(out, want)


def test_float8_e5m2_is_an_ml_dtypes_float():
    """ml_dtypes 0.7 gives float8_e5m2 the kind 'f' of numpy's floats: it is still one of
    ml_dtypes' formats (tables, pairwise sums, f32 widening), unlike numpy's own float16."""
    from shlo.dtypes import is_ml_float
    from shlo.types import element_type

    assert is_ml_float(element_type("f8E5M2").dtype)
    assert is_ml_float(element_type("f8E4M3FN").dtype)
    assert not is_ml_float(np.float16) and not is_ml_float(np.float32)
    assert not is_ml_float(element_type("i4").dtype)


_UNARY_PROGRAM = """func.func @main(%x: tensor<{shape}x{t}>) -> tensor<{shape}x{t}> {{
  %0 = stablehlo.{op} %x : tensor<{shape}x{t}>
  return %0 : tensor<{shape}x{t}>
}}"""


@pytest.mark.parametrize("op,t", [("tanh", "f32"), ("sine", "f32"), ("log", "f32"),
                                  ("logistic", "f32"), ("rsqrt", "f32"),
                                  ("exponential", "f64"), ("cbrt", "f64"),
                                  ("chlo.erf_inv", "f32"), ("chlo.lgamma", "f32"),
                                  ("chlo.erf", "f64"), ("chlo.digamma", "f64")])
def test_float_functions_in_pieces_on_several_cores(monkeypatch, op, t):
    """float_unary's functions and chlo's functions computed wide, on large operands
    (elementwise/_common.on_cores): the same bits cut into pieces for three cores as whole on
    one, also for a transposed operand."""
    from shlo.ops import _pool
    dt = np.float32 if t == "f32" else np.float64
    rng = np.random.default_rng(9)
    x = (rng.standard_normal((61, 173)) * 3).astype(dt)
    x[0, :4] = [np.nan, np.inf, -np.inf, -0.0]
    text = _UNARY_PROGRAM.format(shape="173x61", t=t, op=op)
    if op.startswith("chlo."):
        x = np.tanh(x).astype(dt) if op == "chlo.erf_inv" else x  # (its domain)
        text = text.replace(f"stablehlo.{op} %x : tensor<173x61x{t}>",
                            f"{op} %x : tensor<173x61x{t}> -> tensor<173x61x{t}>")
    runs, split, pieces = {}, _pool.split, []
    monkeypatch.setattr(_pool, "split", lambda *a, **k: pieces.append(split(*a, **k)) or pieces[-1])
    for cores, least in ((1, 1 << 18), (3, 4096)):
        monkeypatch.setattr(_pool, "cores", lambda c=cores: c)
        monkeypatch.setattr(_pool, "COSTLY_MIN", least)
        with np.errstate(all="ignore"):
            runs[cores] = shlo.run(text, x.T, verify=False)[0]  # (x.T: a transposed view)
    assert runs[3].dtype == dt and runs[3].shape == (173, 61)
    bits = f"u{dt().itemsize}"
    np.testing.assert_array_equal(runs[3].view(bits), runs[1].view(bits))
    assert np.count_nonzero(runs[1] == runs[1]) > 5_000  # (not all NaN)
    # (10,553 elements in pieces of at least 2048; a compiled loop asks for one piece on one core)
    assert [len(p) for p in pieces][-1:] == [5] and all(len(p) == 1 for p in pieces[:-1])


_HALF_PROGRAM = """func.func @main(%x: tensor<64x80x{t}>, %y: tensor<64x80x{t}>, %w: tensor<80x96x{t}>)
    -> (tensor<64x80x{t}>, tensor<64x80x{t}>, tensor<64x80x{t}>, tensor<64x80x{t}>,
        tensor<64x80xf32>, tensor<64x80x{t}>, tensor<64x96x{t}>, tensor<64x80x{t}>) {{
  %0 = stablehlo.add %x, %y : tensor<64x80x{t}>
  %1 = stablehlo.subtract %x, %y : tensor<64x80x{t}>
  %2 = stablehlo.multiply %x, %y : tensor<64x80x{t}>
  %3 = stablehlo.divide %x, %y : tensor<64x80x{t}>
  %4 = stablehlo.convert %x : (tensor<64x80x{t}>) -> tensor<64x80xf32>
  %5 = stablehlo.convert %4 : (tensor<64x80xf32>) -> tensor<64x80x{t}>
  %6 = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] : (tensor<64x80x{t}>, tensor<80x96x{t}>) -> tensor<64x96x{t}>
  %7 = stablehlo.tanh %y : tensor<64x80x{t}>
  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<64x80x{t}>, tensor<64x80x{t}>, tensor<64x80x{t}>, tensor<64x80x{t}>, tensor<64x80xf32>, tensor<64x80x{t}>, tensor<64x96x{t}>, tensor<64x80x{t}>
}}"""


def _both_paths(run):
    """``run()`` on numpy's path and, when numba is installed, on the compiled loops: the
    list of results, numpy's first. The compiled results must equal numpy's bit for bit."""
    from shlo.ops import _half

    with _half.numpy_only():
        general = run()
    if not _half.available():
        return [general]
    fast = run()
    for i, (f, g) in enumerate(zip(fast, general)):
        assert f.dtype == g.dtype and f.shape == g.shape, i
        np.testing.assert_array_equal(np.ascontiguousarray(f).view(np.uint8),
                                      np.ascontiguousarray(g).view(np.uint8), err_msg=str(i))
    return [general, fast]


def _same_bits_or_both_nan(got, want):
    nan = np.isnan(want.astype(np.float32))
    np.testing.assert_array_equal(np.isnan(got.astype(np.float32)), nan)
    assert got.dtype == want.dtype and got.shape == want.shape
    u = np.dtype(f"u{got.itemsize}")
    np.testing.assert_array_equal(got.view(u)[~nan], want.view(u)[~nan])


@pytest.mark.parametrize("t", ["f16", "bf16"])
def test_half_kernels_equal_general_path(t):
    """The interpreter's f16/bf16 add, subtract, multiply, divide and converts are numpy's /
    ml_dtypes' arithmetic on either path; with numba, every result (dot_general and a tabled
    tanh too) has the same bits with the compiled loops as without them."""
    dt = _half_dtypes()[t]
    rng = np.random.default_rng(5)
    bits = rng.integers(0, 1 << 16, (2, 64, 80)).astype(np.uint16)
    x, y = bits[0].view(dt), bits[1].view(dt)
    w = rng.standard_normal((80, 96)).astype(dt)
    text = _HALF_PROGRAM.format(t=t)
    with np.errstate(all="ignore"):
        runs = _both_paths(lambda: shlo.run(text, x, y, w))
        want = [np.add(x, y), np.subtract(x, y), np.multiply(x, y), np.divide(x, y),
                x.astype(np.float32), x.astype(np.float32).astype(dt)]
    for got in runs:
        for i, wv in enumerate(want):
            _same_bits_or_both_nan(got[i], wv)


# --- quantized dot_general: the lhs zero point folded into the sums of rhs ----------------------

_QDOT = [
    # lhs type, rhs type, result type, dims, lhs shape, rhs shape
    ("!quant.uniform<i8:f32, 0.05:3>", "!quant.uniform<i8:f32, 0.02>",
     "!quant.uniform<i32:f32, 0.001>", "contracting_dims = [1] x [0]", (33, 1500), (1500, 17),
     (33, 17)),
    ("!quant.uniform<i8:f32, 0.05:-7>", "!quant.uniform<i8:f32:1, {0.02, 0.03, 0.04}>",
     "!quant.uniform<i8:f32:2, {0.5:1, 0.6:2, 0.7:-1}>",
     "batching_dims = [0] x [0], contracting_dims = [2, 3] x [2, 3]", (2, 5, 6, 7), (2, 3, 6, 7),
     (2, 5, 3)),
    ("!quant.uniform<i4:f32, 0.5:2>", "!quant.uniform<i4:f32, 0.25>",
     "!quant.uniform<i16:f32, 0.125:4>", "contracting_dims = [0] x [1]", (40, 9), (11, 40),
     (9, 11)),
]


@pytest.mark.parametrize("lq, rq, oq, dims, ls, rs, os_", _QDOT)
def test_folded_quantized_dot_equals_shifted_operands(monkeypatch, lq, rq, oq, dims, ls, rs, os_):
    def t(shape, q):
        return f"tensor<{'x'.join(map(str, shape))}x{q}>"

    a, b, o = t(ls, lq), t(rs, rq), t(os_, oq)
    text = f"""func.func @main(%a: {a}, %b: {b}) -> {o} {{
  %0 = stablehlo.dot_general %a, %b, {dims} : ({a}, {b}) -> {o}
  return %0 : {o}
}}"""
    rng = np.random.default_rng(len(ls))
    lo, hi = (-8, 7) if "i4" in lq else (-128, 127)
    x = rng.integers(lo, hi, ls, endpoint=True)
    y = rng.integers(lo, hi, rs, endpoint=True)
    dt = shlo.types.element_type("i4").dtype if "i4" in lq else np.int8
    x, y = x.astype(dt), y.astype(dt)
    folded = _folded_equals_shifted(monkeypatch, text, x, y, os_)
    assert np.any(folded != 0)


def _folded_equals_shifted(monkeypatch, text: str, x: np.ndarray, y: np.ndarray,
                           shape: tuple[int, ...]) -> np.ndarray:
    """Run ``text`` with the zero points folded (checking that path ran) and with shifted
    operands; both give the same exact integers of ``shape``; returns the folded result."""
    from shlo.ops import quantization

    real, made = quantization._folded_dot, []
    monkeypatch.setattr(quantization, "_folded_dot", lambda *a: made.append(real(*a)) or made[-1])
    (folded,) = shlo.run(text, x, y)
    assert made and made[0] is not None  # the folded path ran
    monkeypatch.setattr(quantization, "_folded_dot", lambda *a: None)
    (shifted,) = shlo.run(text, x, y)
    assert folded.dtype == shifted.dtype and folded.shape == shifted.shape == shape
    np.testing.assert_array_equal(folded, shifted)
    return folded


_QCONV = [
    # lhs type, rhs type, result type, attributes, lhs shape, rhs shape, result shape
    ("!quant.uniform<i8:f32, 0.05:3>", "!quant.uniform<i8:f32, 0.02>",
     "!quant.uniform<i32:f32, 0.001>",
     "dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], "
     "pad = [[1, 2], [2, 0]], lhs_dilate = [1, 2], rhs_dilate = [2, 1], reverse = [true, false]} "
     "{batch_group_count = 1 : i64, feature_group_count = 1 : i64}",
     (3, 9, 7, 4), (3, 2, 4, 5), (3, 4, 14, 5)),
    ("!quant.uniform<i8:f32, 0.05:-7>", "!quant.uniform<i8:f32:0, {0.02, 0.03, 0.04, 0.05}>",
     "!quant.uniform<i8:f32:1, {0.5:1, 0.6:2, 0.7:-1, 0.8:0}>",
     "dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {stride = [1], pad = [[2, 2]]} "
     "{batch_group_count = 1 : i64, feature_group_count = 2 : i64}",
     (2, 6, 10), (4, 3, 3), (2, 4, 12)),
    ("!quant.uniform<i4:f32, 0.5:2>", "!quant.uniform<i4:f32, 0.25>",
     "!quant.uniform<i16:f32, 0.125:4>",
     "dim_numbers = [f, 0, b]x[i, 0, o]->[0, b, f], window = {pad = [[1, 1]]} "
     "{batch_group_count = 1 : i64, feature_group_count = 1 : i64}",
     (5, 8, 2), (5, 3, 6), (8, 2, 6)),
]


@pytest.mark.parametrize("lq, rq, oq, attrs, ls, rs, os_", _QCONV)
def test_folded_quantized_convolution_equals_shifted_operands(monkeypatch, lq, rq, oq, attrs,
                                                              ls, rs, os_):
    """conv(l, r) - zl * conv(ones, r) = conv(pad(l - zl), r): padding, lhs dilation's holes,
    window reversal, feature groups and per-axis rhs scales, exact integers."""
    def t(shape, q):
        return f"tensor<{'x'.join(map(str, shape))}x{q}>"

    a, b, o = t(ls, lq), t(rs, rq), t(os_, oq)
    text = f"""func.func @main(%a: {a}, %b: {b}) -> {o} {{
  %0 = stablehlo.convolution(%a, %b) {attrs} : ({a}, {b}) -> {o}
  return %0 : {o}
}}"""
    rng = np.random.default_rng(len(ls) + ls[0])
    lo, hi = (-8, 7) if "i4" in lq else (-128, 127)
    dt = shlo.types.element_type("i4").dtype if "i4" in lq else np.int8
    x = rng.integers(lo, hi, ls, endpoint=True).astype(dt)
    y = rng.integers(lo, hi, rs, endpoint=True).astype(dt)
    folded = _folded_equals_shifted(monkeypatch, text, x, y, os_)
    assert np.any(folded != folded.reshape(-1)[0])


@pytest.mark.parametrize("t", ["f16", "bf16"])
@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_half_max_min_reduce_equals_tree(t, op):
    """f16/bf16 maximum/minimum reductions in float32 (compiled widening) = the pairwise tree in
    the narrow type = numpy's reduction, zeros of both signs, infinities and subnormals
    included."""
    dt = _half_dtypes()[t]
    bits = np.random.default_rng(6).integers(0, 1 << 16, (64, 300)).astype(np.uint16)
    x = bits.view(dt)
    x = np.where(np.isnan(x.astype(np.float32)), dt.type(0.5), x).astype(dt)
    x[:8, :] = dt.type(0)
    x[:4, ::3] = dt.type(-0.0)
    x[8:12, ::2] = -x[8:12, ::2]
    text = f"""func.func @main(%x: tensor<64x300x{t}>) -> (tensor<64x{t}>, tensor<300x{t}>) {{
  %i = stablehlo.constant dense<0.0> : tensor<{t}>
  %0 = stablehlo.reduce(%x init: %i) applies stablehlo.{op} across dimensions = [1] : (tensor<64x300x{t}>, tensor<{t}>) -> tensor<64x{t}>
  %1 = stablehlo.reduce(%x init: %i) applies stablehlo.{op} across dimensions = [0] : (tensor<64x300x{t}>, tensor<{t}>) -> tensor<300x{t}>
  return %0, %1 : tensor<64x{t}>, tensor<300x{t}>
}}"""
    def reference(axis):  # numpy's reduction, with IEEE's order of zeros: -0 < +0
        r = getattr(np, op).reduce(x, axis=axis)
        x32 = x.astype(np.float32)
        signed = (x32 == 0) & (np.signbit(x32) == (op == "minimum"))
        zero = dt.type(-0.0 if op == "minimum" else 0.0)
        other = dt.type(0.0 if op == "minimum" else -0.0)
        return np.where(r.astype(np.float32) == 0,
                        np.where(signed.any(axis=axis), zero, other), r).astype(dt)

    want = [reference(1), reference(0)]
    for got in _both_paths(lambda: shlo.run(text, x)):
        for g, wv in zip(got, want):
            np.testing.assert_array_equal(g.view(np.uint16), wv.view(np.uint16))


@pytest.mark.parametrize("t", ["f8E4M3FN", "f8E5M2"])
def test_one_byte_tables_compiled_gather_equals_take(t):
    """f8 unary and binary lookup tables read through the compiled gathers = numpy's take;
    multiply and divide = ml_dtypes' arithmetic on either path."""
    from shlo.types import element_type

    dt = element_type(t).dtype
    rng = np.random.default_rng(8)
    x, y = (rng.integers(0, 256, (2, 70, 80)).astype(np.uint8).view(dt))
    text = f"""func.func @main(%x: tensor<70x80x{t}>, %y: tensor<70x80x{t}>) -> (tensor<70x80x{t}>, tensor<70x80x{t}>, tensor<70x80x{t}>) {{
  %0 = stablehlo.multiply %x, %y : tensor<70x80x{t}>
  %1 = stablehlo.divide %y, %x : tensor<70x80x{t}>
  %2 = stablehlo.tanh %x : tensor<70x80x{t}>
  return %0, %1, %2 : tensor<70x80x{t}>, tensor<70x80x{t}>, tensor<70x80x{t}>
}}"""
    with np.errstate(all="ignore"):
        runs = _both_paths(lambda: shlo.run(text, x, y))
        want = [np.multiply(x, y), np.divide(y, x)]
    for got in runs:
        for g, wv in zip(got, want):
            _same_bits_or_both_nan(g, wv)


def _loops_in_child(_):
    from shlo.ops import _half

    return _half.loops() is None


def test_forked_children_do_not_use_numba():
    """numba is not fork-safe: a forked child (the conformance runner's workers) takes the
    general path."""
    import multiprocessing as mp
    import sys

    if sys.platform == "win32" or "fork" not in mp.get_all_start_methods():
        pytest.skip("no fork")
    _half_loops()
    with mp.get_context("fork").Pool(1) as pool:
        assert pool.map(_loops_in_child, [0]) == [True]


# --- float sign in two calls ----------------------------------------------------------------------


def _sign_definition(x):
    """-1 / +1, keeping -0.0, +0.0 and NaN (its bits) as they are: the spec's definition."""
    keep = np.logical_or(np.equal(x, 0), np.isnan(x))
    return np.where(keep, x, np.copysign(np.ones_like(x), x))


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_float_sign_equals_its_definition(dt):
    """arithmetic._float_sign (numpy's sign, then copysign) = the definition bit for bit: every
    f16 pattern, random f32/f64 patterns with zeros, infinities, NaNs (quiet, signaling, either
    sign) and subnormals; strided and 0-d operands."""
    from shlo.ops.elementwise.arithmetic import _float_sign

    u = np.dtype(f"u{np.dtype(dt).itemsize}")
    n = np.dtype(dt).itemsize * 8
    if dt is np.float16:
        bits = np.arange(1 << 16, dtype=np.uint32).astype(u)
    else:
        rng = np.random.default_rng(n)
        exp_all = ((1 << (n - 1)) - 1) ^ ((1 << (23 if n == 32 else 52)) - 1)  # exponent bits
        sign = 1 << (n - 1)
        specials = [0, sign, 1, sign | 1, exp_all, sign | exp_all, exp_all | 1, sign | exp_all | 1,
                    exp_all | (1 << (22 if n == 32 else 51)), sign | exp_all | 5]
        bits = np.concatenate([rng.integers(0, 1 << (n - 1), 100_000, dtype=np.uint64)
                               .astype(u) * u.type(2) + rng.integers(0, 2, 100_000).astype(u),
                               np.array(specials, u)])
    x = bits.view(dt)
    with np.errstate(all="ignore"):
        for arr in (x, x[::3]):
            got, want = _float_sign(arr), _sign_definition(arr)
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got.view(u), want.view(u))
        for b in bits[-10:] if dt is not np.float16 else bits[::4099]:
            v = np.array(b, u).view(dt)[()]  # a numpy scalar, as 0-d values run
            assert np.asarray(_float_sign(v)).view(u) == np.asarray(_sign_definition(v)).view(u)


# --- f32 functions computed in float64: the ufunc's float64 loop taken directly -------------------


def _rsqrt_pair():
    from shlo.ops.elementwise import math

    return math._rsqrt_f32, math._rsqrt


def _logistic_pair():
    from shlo.ops.elementwise import math

    return math._logistic_f32, math._logistic


@pytest.mark.parametrize("fn", [np.exp, np.expm1, np.log, np.log1p, np.cbrt, np.tan, np.arctan2,
                                np.power, _rsqrt_pair, _logistic_pair])
def test_via_f64_ufunc_equals_widened_operands(fn):
    """``via_f64(ufunc, f32)`` (``ufunc(x, dtype=float64)``), and the f32 forms of rsqrt and
    logistic, = the function on the operands widened to float64, rounded to f32, bit for bit:
    random f32 patterns with the specials, more than numpy's 8192-element buffer, strided, and
    numpy scalars."""
    from shlo.ops.elementwise._common import via_f64

    rng = np.random.default_rng(7)
    specials = np.array([0, 0x80000000, 1, 0x80000001, 0x7F800000, 0xFF800000, 0x7FC00000,
                         0xFFC00001, 0x7F800001, 0x3F800000, 0xBF800000, 0x7F7FFFFF], np.uint32)
    bits = np.concatenate([specials, rng.integers(0, 1 << 32, 20_000, dtype=np.uint64)
                           .astype(np.uint32)])
    x = bits.view(np.float32)
    y = np.roll(x, 7)
    also = rng.uniform(-3, 3, 20_000).astype(np.float32)  # ordinary values, in range
    if isinstance(fn, np.ufunc):
        got_fn, definition, nin = via_f64(fn, np.dtype(np.float32)), fn, fn.nin
    else:  # the f32 form of a composition (math.py) and the composition
        (got_fn, definition), nin = fn(), 1

    def want(*xs):
        return definition(*[np.asarray(v, np.float64) for v in xs]).astype(np.float32)

    with np.errstate(all="ignore"):
        for args in ([x, y], [x[::3], y[::3]], [also, also[::-1]], [x[1:], np.float32(2.5)]):
            args = args[:nin]
            got, w = got_fn(*args), want(*args)
            assert got.dtype == w.dtype == np.float32 and got.shape == w.shape
            np.testing.assert_array_equal(got.view(np.uint32), w.view(np.uint32))
        for v in x[:12]:  # numpy scalars (0-d values)
            got, w = got_fn(*[v, v][:nin]), want(*[v, v][:nin])
            assert type(got) is type(w) and np.asarray(got).view(np.uint32) == \
                np.asarray(w).view(np.uint32)


# --- negate and float divide as Python operators ------------------------------------------------


@pytest.mark.parametrize("t", ["i8", "i32", "i64", "ui8", "ui32", "ui64", "f16", "f32", "f64",
                               "complex<f32>", "complex<f64>"])
def test_negate_and_divide_operators_equal_the_ufuncs(t):
    """negate (and f32/f64 divide) run as Python's `-x` (`x / y`): numpy's scalar fast path on
    0-d values, numpy's ufunc on arrays; bit for bit np.negative (np.divide), wrapping at the
    integer minimum, on NaN, infinities, zeros of both signs."""
    from shlo.interpreter.api import prepare_entry

    dt = {"complex<f32>": np.complex64, "complex<f64>": np.complex128}.get(t) or \
        np.dtype(t.replace("ui", "uint") if t.startswith("ui") else
                 t.replace("i", "int").replace("f", "float")).type
    kind = np.dtype(dt).kind
    if kind in "iu":
        info = np.iinfo(dt)
        vals = np.array([info.min, info.max, 0, 1, 7], dt)
    else:
        vals = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -2.5, 3.0], dt)
    div = kind in "f" and np.dtype(dt).itemsize >= 4
    cases = [("", np.array(w, dt).reshape(()), np.array(vals[2], dt).reshape(())) for w in vals]
    cases.append((f"{len(vals)}x", vals, vals[::-1].copy()))
    for shape, x, y in cases:
        ty = f"tensor<{shape}{t}>"
        outs = [ty, ty] if div else [ty]
        body = f"%n = stablehlo.negate %x : {ty}" + \
            (f"\n  %d = stablehlo.divide %x, %y : {ty}" if div else "")
        m = shlo.parse(f"func.func @main(%x: {ty}, %y: {ty}) -> ({', '.join(outs)}) {{\n"
                       f"  {body}\n  return {'%n, %d' if div else '%n'} : {', '.join(outs)}\n}}")
        got = shlo.run(m, x, y)
        with np.errstate(all="ignore"):
            want = [np.negative(x)] + ([np.divide(x, y)] if div else [])
        for g, w in zip(got, want):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            assert np.asarray(g).tobytes() == np.asarray(w).tobytes(), (t, x, y)
        src = prepare_entry(m)[0].source
        assert "= -a" in src and (" / " in src) == div


# --- float clamp: numpy's maximum and minimum when the result holds no zero -----------------------


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_float_clamp_equals_ieee_maximum_then_minimum(dt):
    """compare._float_clamp = ``min_fn(max_fn(x, lo), hi)`` (the IEEE maximum and minimum with
    their signed-zero fix) bit for bit: operands full of +-0, NaNs (with payloads), infinities
    and ordinary values, 0-d and array bounds, small and large results."""
    from shlo.ops.elementwise.arithmetic import max_fn, min_fn
    from shlo.ops.elementwise.compare import _float_clamp
    from shlo.types import element_type

    et = element_type("f32" if dt is np.float32 else "f64")
    mx, mn = max_fn(None, et), min_fn(None, et)
    clamp = _float_clamp(np.dtype(dt), mx, mn)
    u = np.dtype(f"u{np.dtype(dt).itemsize}")
    nan2 = np.array(np.nan, dt).view(u) | u.type(5)
    pool = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -2.5, np.inf, -np.inf, np.nan, 1e-40], dt)
    pool = np.concatenate([pool, nan2.reshape(1).view(dt), (-pool[8:9])])
    rng = np.random.default_rng(3)
    for n in (1, 16, 300, 5000):
        for _ in range(30):
            x, lo, hi = (rng.choice(pool, n) for _ in range(3))
            for bounds in ((lo, hi), (lo[0].reshape(()), hi[0].reshape(())),
                           (lo[:1].reshape(())[()], hi)):  # arrays, 0-d arrays, a scalar
                got, want = clamp(bounds[0], x, bounds[1]), mn(mx(x, bounds[0]), bounds[1])
                assert got.dtype == want.dtype and got.shape == want.shape
                np.testing.assert_array_equal(got.view(u), want.view(u))


@pytest.mark.parametrize("t", ["i8", "ui8", "i32", "ui32", "i64", "i4", "ui2"])
@pytest.mark.parametrize("op", ["shift_left", "shift_right_logical", "shift_right_arithmetic"])
def test_shift_by_one_splat_amount_equals_per_element_amounts(t, op):
    """A splat amount (one numpy pass) gives what the same amount per element gives, for
    amounts in range, at the width, beyond it and negative."""
    from shlo.types import element_type

    dt = element_type(t).dtype
    bits = {"i4": 4, "ui2": 2}.get(t) or np.dtype(dt).itemsize * 8
    lo, hi = ((-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if not t.startswith("ui")
              else (0, (1 << bits) - 1))
    x = np.random.default_rng(9).integers(lo, hi, 300, endpoint=True).astype(dt)
    n = "300"
    text = f"""func.func @main(%x: tensor<{n}x{t}>, %s: tensor<{t}>, %a: tensor<{n}x{t}>)
    -> (tensor<{n}x{t}>, tensor<{n}x{t}>) {{
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<{t}>) -> tensor<{n}x{t}>
  %0 = stablehlo.{op} %x, %b : tensor<{n}x{t}>
  %1 = stablehlo.{op} %x, %a : tensor<{n}x{t}>
  return %0, %1 : tensor<{n}x{t}>, tensor<{n}x{t}>
}}"""
    m = shlo.parse(text)
    amounts = [0, 1, bits - 1, bits, bits + 3, hi]
    if not t.startswith("ui"):
        amounts += [-1, lo]
    for s in amounts:
        amount = np.array(s).astype(dt)  # (wraps in the narrow types)
        s = int(amount)
        splat, each = shlo.run(m, x, amount, np.full(300, amount, dt))
        np.testing.assert_array_equal(splat, each, err_msg=f"amount {s}")
        if 0 <= s < bits and op == "shift_left" and bits >= 8:
            np.testing.assert_array_equal(splat, np.left_shift(x, dt.type(s)))
        if s >= bits and op != "shift_right_arithmetic":
            assert not splat.any()


@pytest.mark.parametrize("t", ["f32", "f64", "bf16", "f16", "f8E4M3FN", "i1", "i8", "ui16",
                               "i64", "complex<f32>", "complex<f64>"])
def test_select_bit_blend_equals_where(t):
    """`select` of large arrays through the compiled bit blend (numpy's where branches on every
    element): numpy's where, bit for bit (NaN payloads too), in C order, with a transposed
    layout, and with a 0-d predicate; complex<f64> (16-byte items) keeps numpy's where."""
    from shlo.types import element_type

    dt = element_type(t).dtype
    rng = np.random.default_rng(3)
    shape = (96, 128)
    bits = rng.integers(0, 256, (2,) + shape + (dt.itemsize,), dtype=np.uint8)
    x, y = (np.ascontiguousarray(b).view(dt).reshape(shape) for b in bits)
    p = rng.random(shape) < 0.5
    ty = f"tensor<96x128x{t}>"
    text = f"""func.func @main(%p: tensor<96x128xi1>, %x: {ty}, %y: {ty}) -> {ty} {{
  %0 = stablehlo.select %p, %x, %y : tensor<96x128xi1>, {ty}
  return %0 : {ty}
}}"""
    u = np.dtype(f"u{dt.itemsize}") if dt.itemsize <= 8 else np.dtype("u8")
    from shlo.ops import _half

    if _half.available():  # the blend runs (or, for 16-byte items, declines)
        assert (_half.select(p, x, y) is None) == (dt.itemsize > 8)
    for args in ((p, x, y), (p.T.copy().T, x.T.copy().T, y.T.copy().T)):
        for got in _both_paths(lambda: shlo.run(text, *args)):
            np.testing.assert_array_equal(np.ascontiguousarray(got[0]).view(u),
                                          np.ascontiguousarray(np.where(*args)).view(u))
            assert got[0].dtype == dt


def _careful_pairs(t):
    """Operand pairs of format ``t``: for 16-bit formats every bit pattern against specials
    (zeros, infinities, NaNs with payloads, +-1, subnormals), against its own negation (the
    two zeros meet) and against random patterns; for one-byte formats every pair."""
    from shlo.types import element_type

    dt = element_type(t).dtype
    rng = np.random.default_rng(9)
    if dt.itemsize == 2:
        every = np.arange(1 << 16, dtype=np.uint16)
        specials = np.array([0, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE01, 0x7F80, 0xFF80,
                             0x7FC0, 0x7F81, 0x3C00, 0xBC00, 0x3F80, 1, 0x8001], np.uint16)
        x = np.tile(every, 3)
        y = np.concatenate([rng.choice(specials, every.size), every ^ np.uint16(0x8000),
                            rng.integers(0, 1 << 16, every.size).astype(np.uint16)])
    else:
        v = np.arange(256, dtype=np.uint8)
        x, y = np.repeat(v, 256), np.tile(v, 256)
    return dt, x.view(dt), y.view(dt)


@pytest.mark.parametrize("t", ["f16", "bf16", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E8M0FNU",
                               "f6E2M3FN", "f4E2M1FN"])
def test_narrow_max_min_and_compare_equal_the_careful_path(t):
    """maximum, minimum (compiled loops for f16/bf16, tables for one-byte formats) and every
    comparison direction on narrow floats: the careful computation's bits (IEEE maximum with
    +0 > -0 and the first NaN; comparisons of the values widened to float32), both orders."""
    from shlo.ops.elementwise import arithmetic, compare

    dt, x, y = _careful_pairs(t)
    for is_max in (True, False):
        fast, careful = arithmetic._float_max_min(dt, is_max), arithmetic._careful_max_min(dt,
                                                                                           is_max)
        for a, b in ((x, y), (y, x)):
            np.testing.assert_array_equal(fast(a, b).view(f"u{dt.itemsize}"),
                                          careful(a, b).view(f"u{dt.itemsize}"))
    for d, ufunc in compare._DIRECTIONS.items():
        fn = compare._narrow_compare(d, ufunc, dt)
        for a, b in ((x, y), (y, x)):
            with np.errstate(invalid="ignore"):
                want = ufunc(a.astype(np.float32), b.astype(np.float32))
            got = fn(a, b)
            assert got.dtype == np.bool_
            np.testing.assert_array_equal(got, want, err_msg=d)


@pytest.mark.parametrize("t", ["f16", "bf16", "f8E4M3FN", "f8E5M2", "f8E4M3", "f8E3M4",
                               "f8E4M3FNUZ", "f8E5M2FNUZ", "f8E4M3B11FNUZ", "f8E8M0FNU",
                               "f6E2M3FN", "f6E3M2FN", "f4E2M1FN"])
def test_narrow_max_min_and_compare_loops_run(t):
    """The compiled loops are what runs for large arrays (not the careful fallback): f16/bf16
    maximum, and comparisons by integer keys, whose spec passed its check for every format of
    at most 16 bits (f6/f4: on every byte, spare high bits included)."""
    from shlo.ops import _half
    from shlo.ops.elementwise import _tables

    _half_loops()
    dt, x, y = _careful_pairs(t)
    spec = _tables.compare_form(dt)
    assert spec is not None and _half.compare(spec, "LT", x, y) is not None
    assert _half.compare(spec, "LT", x[:10], y[:10]) is None  # small: the careful path
    if dt.itemsize == 2:
        assert _half.max_min(True, x, y) is not None
    assert _tables.compare_form(np.dtype("float32")) is None


def test_compare_form_check_rejects_a_wrong_spec():
    """The check of a comparison spec rejects a wrong largest non-NaN magnitude, a missing
    NaN pattern, and f4's sign bit alone (ml_dtypes reads any spare high bit as the sign)."""
    from shlo.ops.elementwise import _tables
    from shlo.types import element_type

    mod = _half_loops()
    for t, at, wrong in (("f8E4M3FN", 1, 127), ("f8E4M3FNUZ", 3, 0), ("bf16", 1, 0x7F81),
                         ("f4E2M1FN", 0, 0x08)):
        dt = element_type(t).dtype
        spec = _tables.compare_form(dt).copy()
        assert _tables._compare_agrees(spec, dt, mod)
        spec[at] = wrong
        assert not _tables._compare_agrees(spec, dt, mod), t


_CONVERT_TYPES = ["f32", "f64", "f16", "bf16", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E3M4",
                  "f8E8M0FNU", "f4E2M1FN", "i8", "ui16", "i1"]


@pytest.mark.parametrize("src", ["f16", "bf16", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E3M4",
                                 "f8E8M0FNU", "f4E2M1FN", "f32", "f64"])
def test_narrow_conversions_equal_careful_convert(src):
    """convert from narrow floats (tables of the careful conversion) and to one-byte formats
    (the float32 narrowing table; f64 rounded to odd first, f16/bf16 widened first): the
    careful conversion's bits on every bit pattern of a 16-bit or one-byte source, and on
    float32/float64 values at every rounding boundary of the destinations and at random."""
    from shlo.ops.elementwise.convert import careful_convert, convert_fn
    from shlo.types import element_type

    s = element_type(src)
    rng = np.random.default_rng(5)
    if s.dtype.itemsize <= 2:
        x = np.arange(1 << (8 * s.dtype.itemsize), dtype=np.uint32).astype(
            f"u{s.dtype.itemsize}").view(s.dtype)
    else:
        edges = [np.arange(256, dtype=np.uint8).view(element_type(t).dtype).astype(np.float64)
                 for t in ("f8E4M3FN", "f8E5M2", "f8E3M4", "f4E2M1FN")]
        e = np.unique(np.concatenate([v[np.isfinite(v)] for v in edges]))
        mids = (e[:-1] + e[1:]) / 2
        x = np.concatenate([e, mids, mids * (1 + 2.0 ** -30), mids * (1 - 2.0 ** -30),
                            [np.inf, -np.inf, np.nan, 1e300, 1e-300],
                            rng.standard_normal(20000) * 100])
        with np.errstate(over="ignore"):
            x = x.astype(s.dtype)
        x = np.concatenate([x, -x])
    for dst in _CONVERT_TYPES:
        d = element_type(dst)
        with np.errstate(all="ignore"):
            got = np.asarray(convert_fn(s, d)(x))
            want = np.asarray(careful_convert(s, d)(x))
        assert got.dtype == want.dtype
        u = f"u{got.dtype.itemsize}"
        np.testing.assert_array_equal(got.view(u), want.view(u), err_msg=f"{src} -> {dst}")


def test_narrowing_table_check_rejects_a_wrong_entry():
    """The creation check of a float32 -> f8 narrowing table rejects a table with the entry
    of 1.0 wrong (and accepts the right one)."""
    from shlo.ops import _half
    from shlo.ops.elementwise import _tables
    from shlo.types import element_type

    mod = _half_loops()
    dt = element_type("f8E4M3FN").dtype
    table, shift = _tables._narrowing_table(dt, mod)
    assert _tables.narrowing_agrees(table, shift, dt, mod)
    wrong = table.copy()
    wrong[(np.float32(1.0).view(np.uint32) >> shift) << 1] ^= 1
    assert not _tables.narrowing_agrees(wrong, shift, dt, mod)
    assert _half.narrow_by_table(table, shift, np.ones(10, np.float32), dt) is None  # small


@pytest.mark.parametrize("t", ["f8E4M3FN", "f8E5M2", "f8E4M3", "f8E4M3FNUZ", "f8E5M2FNUZ",
                               "f8E4M3B11FNUZ", "f8E3M4", "f8E8M0FNU", "f6E2M3FN", "f6E3M2FN",
                               "f4E2M1FN"])
def test_narrowing_in_registers_equals_ml_dtypes(t):
    """convert of float32 to a one-byte float computed (``_bytes_jit.narrow_by_rounding``:
    subnormal results by the float32 adder, normal ones on the bits): ml_dtypes' cast, bit for
    bit, on every value of the format, the midpoints between neighbours and a float32 ulp
    either side, +-0, overflows, infinities, NaNs, float32 subnormals, at lengths around the
    16-lane blocks; used for every format but f8E8M0FNU (no mantissa); a wrong subnormal step
    or tie-breaking is rejected by the check."""
    from shlo.ops.elementwise import _pair_forms, _tables
    from shlo.types import element_type

    mod = _scaled_loops()
    dt = element_type(t).dtype
    with np.errstate(all="ignore"):
        v = np.unique(np.abs(np.arange(256, dtype=np.uint8).view(dt).astype(np.float64)))
        v = v[np.isfinite(v)]
        mids = (v[:-1] + v[1:]) / 2
        x = np.concatenate([v, mids, [v[-1] * 2, 1e30, np.inf, np.nan, 1e-45, 1e-39, 0.0]]
                           ).astype(np.float32)
    bits = x.view(np.uint32)
    x = np.concatenate([bits, bits + 1, bits - 1]).view(np.float32)
    x = np.concatenate([x, -x])
    for n in (4096, 4111, 5000):
        y = np.resize(x, n)
        text = f"""func.func @main(%x: tensor<{n}xf32>) -> tensor<{n}x{t}> {{
  %0 = stablehlo.convert %x : (tensor<{n}xf32>) -> tensor<{n}x{t}>
  return %0 : tensor<{n}x{t}>
}}"""
        got = np.asarray(shlo.run(text, y)[0])
        with np.errstate(all="ignore"):
            want = y.astype(dt)
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    if t == "f8E8M0FNU":  # (no narrowing table either: ml_dtypes' cast)
        assert _pair_forms.narrowing_spec(dt) is None
        return
    table, shift = _tables._NARROWING[dt]
    assert _pair_forms.narrowing_form(dt, table, shift) is not None
    spec = _pair_forms.narrowing_spec(dt)
    for field, delta in ((0, 1 << 23), (3, -1)):  # the subnormal step; ties
        wrong = spec.copy()
        wrong[field] += delta

        def loop(b, o, wrong=wrong):
            mod.narrow_by_rounding(wrong, table, shift, b, o)

        assert not _pair_forms.rounding_agrees(loop, table, shift)


@pytest.mark.parametrize("t", ["f16", "bf16", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E8M0FNU",
                               "f6E2M3FN", "f4E2M1FN"])
@pytest.mark.parametrize("op", ["negate", "abs"])
def test_narrow_negate_and_abs_equal_numpy(t, op):
    """negate and abs of narrow floats (one bitwise operation on the sign bit where it equals
    numpy's / ml_dtypes' result on every bit pattern, else the table): their bits on every
    bit pattern; f16, bf16, f6, f4 (abs: ml_dtypes clears a byte's spare high bits too), the
    f8 formats with a -0 and the FNUZ ones (whose 0x80 is their NaN: the sign of nonzero
    magnitudes only) take the bitwise path, f8E8M0FNU (no sign) the table."""
    from shlo.ops.elementwise import _tables
    from shlo.types import element_type

    dt = element_type(t).dtype
    x = np.arange(1 << (8 * dt.itemsize), dtype=np.uint32).astype(f"u{dt.itemsize}").view(dt)
    x = np.tile(x, 4096 // x.size + 1)  # (large enough for the compiled loops)
    ty = f"tensor<{x.size}x{t}>"
    text = f"""func.func @main(%x: {ty}) -> {ty} {{
  %0 = stablehlo.{op} %x : {ty}
  return %0 : {ty}
}}"""
    ufunc = np.negative if op == "negate" else np.abs
    with np.errstate(all="ignore"):
        want = ufunc(x)
    module = shlo.parse(text)
    got = np.asarray(shlo.run(module, x)[0])
    np.testing.assert_array_equal(got.view(f"u{dt.itemsize}"), want.view(f"u{dt.itemsize}"))
    fn = _tables.by_sign_bit(f"stablehlo.{op}", ufunc, dt, flip=op == "negate")
    assert (fn.__name__ == "<lambda>") == (t != "f8E8M0FNU")
    if t == "f16" and op == "negate":  # (the operator, inlined, only below _half.MIN_SIZE)
        from shlo.interpreter.api import prepare_entry

        assert "= -a" not in prepare_entry(module)[0].source


@pytest.mark.parametrize("t", ["f16", "bf16", "f8E4M3FN", "f8E5M2", "f4E2M1FN"])
@pytest.mark.parametrize("op", ["add", "multiply"])
def test_narrow_reduce_tree_equals_the_ufunc_tree(t, op):
    """A narrow float's add/multiply reduction through the compiled tree (f16/bf16 nodes as
    their element-wise loops compute them, one-byte formats' by their op's table): the bits of
    the pairwise tree of numpy's / ml_dtypes' own ufunc, for row lengths around powers of two
    (odd elements moving up), many and few rows, with NaNs (payloads), infinities and zeros."""
    from shlo.ops import _regions
    from shlo.types import element_type

    _half_loops()
    dt = element_type(t).dtype
    uf = np.add if op == "add" else np.multiply
    rng = np.random.default_rng(11)
    u = f"u{dt.itemsize}"
    for shape in ((1, 70001), (3, 4097), (257, 33), (4100, 2), (5000, 3), (2, 65536)):
        with np.errstate(all="ignore"):
            x = (rng.standard_normal(shape) * (0.5 if op == "multiply" else 4)).astype(dt)
        bits = x.view(u).reshape(-1)
        special = rng.integers(0, 1 << (8 * dt.itemsize), bits.size // 50).astype(u)
        bits[rng.integers(0, bits.size, special.size)] = special  # NaNs, infinities, zeros...
        with np.errstate(all="ignore"):
            want = _regions.tree_reduce_last(
                lambda a, b: [np.asarray(uf(a[0], b[0])).astype(dt, copy=False)], [x])[0]
            got = _regions._narrow_tree(f"stablehlo.{op}", uf, x)
        assert got is not None
        np.testing.assert_array_equal(got.view(u), np.asarray(want).view(u), err_msg=str(shape))
    if dt.itemsize == 2:  # rows of 16 specials: pairs of NaNs with other payloads (the second
        # one's wins, made quiet), signaling NaNs, infinities of both signs, zeros
        specials = np.array([0x7E01, 0xFE02, 0x7C03, 0x7D00, 0x7F81, 0xFFC1, 0x7F82, 0x7C00,
                             0xFC00, 0x7F80, 0xFF80, 0, 0x8000, 0x3C00, 0xBC00, 0x0001], u)
        x = rng.choice(specials, (4096, 16)).view(dt)
        with np.errstate(all="ignore"):
            want = _regions.tree_reduce_last(
                lambda a, b: [np.asarray(uf(a[0], b[0])).astype(dt, copy=False)], [x])[0]
            got = _regions._narrow_tree(f"stablehlo.{op}", uf, x)
        np.testing.assert_array_equal(got.view(u), np.asarray(want).view(u))
