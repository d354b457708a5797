"""Element-wise fusion (shlo/interpreter/fusion.py): which ops form a chain, and that a fused
run gives bit for bit the unfused run's results, for every element-wise op and type.

Block sizes are shrunk with monkeypatch so that small tensors span many blocks and a ragged
last block."""

from __future__ import annotations

import numpy as np
import pytest

import shlo
from shlo.interpreter import fusion
from shlo.interpreter.api import prepare_entry

N = 5000  # elements: 5 blocks of 1024 f32 values (BLOCK_BYTES 4096), the last one short


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(fusion, "BLOCK_BYTES", 4096)
    monkeypatch.setattr(fusion, "MIN_ELEMENTS", 1000)


def _unfused(monkeypatch, text, *args):
    with monkeypatch.context() as m:
        m.setattr(fusion, "plan", lambda block: [])
        return shlo.run(text, *args)


def _same(fused, unfused):
    assert len(fused) == len(unfused)
    for f, u in zip(fused, unfused):
        assert f.dtype == u.dtype and f.shape == u.shape
        np.testing.assert_array_equal(np.ascontiguousarray(f).view(np.uint8),
                                      np.ascontiguousarray(u).view(np.uint8))


def _steps(text):
    cb, _ = prepare_entry(shlo.parse(text))
    return len(cb.steps)


def _values(t, rng, shape):
    if t in ("i32", "i8", "ui16"):
        info = np.iinfo({"i32": np.int32, "i8": np.int8, "ui16": np.uint16}[t])
        return rng.integers(info.min, info.max, shape, endpoint=True).astype(info.dtype)
    if t == "i1":
        return rng.integers(0, 2, shape).astype(bool)
    from shlo.types import element_type

    dt = element_type(t).dtype
    if t in ("f16", "bf16"):  # every bit pattern: NaNs, infinities, subnormals
        return rng.integers(0, 1 << 16, shape).astype(np.uint16).view(dt)
    x = rng.standard_normal(shape) * 3
    x.reshape(-1)[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, 0.5, -2.5]
    return x.astype(dt)


UNARY_FLOAT = ["abs", "cbrt", "ceil", "cosine", "exponential", "exponential_minus_one", "floor",
               "log", "log_plus_one", "logistic", "negate", "round_nearest_afz",
               "round_nearest_even", "rsqrt", "sign", "sine", "sqrt", "tan", "tanh"]
BINARY_FLOAT = ["add", "atan2", "divide", "maximum", "minimum", "multiply", "power",
                "remainder", "subtract"]


@pytest.mark.parametrize("t", ["f32", "f64", "f16", "bf16"])
def test_float_ops_fused_equal_unfused(monkeypatch, small_blocks, t):
    """A chain through every float unary and binary op, a compare, a select and a clamp."""
    ty = f"tensor<{N}x{t}>"
    lines, prev = [], "%x"
    for i, name in enumerate(UNARY_FLOAT):
        lines.append(f"%u{i} = stablehlo.{name} %x : {ty}")
        lines.append(f"%s{i} = stablehlo.add %u{i}, {prev} : {ty}")
        prev = f"%s{i}"
    for i, name in enumerate(BINARY_FLOAT):
        lines.append(f"%b{i} = stablehlo.{name} {prev}, %y : {ty}")
        prev = f"%b{i}"
    lines += [f"%p = stablehlo.compare GT, {prev}, %y : ({ty}, {ty}) -> tensor<{N}xi1>",
              f"%q = stablehlo.select %p, %x, {prev} : tensor<{N}xi1>, {ty}",
              f"%r = stablehlo.clamp %y, %q, %x : {ty}",
              f"%w = stablehlo.convert %r : ({ty}) -> tensor<{N}xf32>"]
    body = "\n  ".join(lines)
    text = f"""func.func @main(%x: {ty}, %y: {ty}) -> ({ty}, tensor<{N}xi1>, tensor<{N}xf32>) {{
  {body}
  return %b3, %p, %w : {ty}, tensor<{N}xi1>, tensor<{N}xf32>
}}"""
    rng = np.random.default_rng(1)
    x, y = _values(t, rng, (N,)), _values(t, rng, (N,))
    with np.errstate(all="ignore"):
        fused = shlo.run(text, x, y)
        unfused = _unfused(monkeypatch, text, x, y)
    _same(fused, unfused)
    assert _steps(text) == 1


@pytest.mark.parametrize("t", ["i32", "i8", "ui16"])
def test_integer_ops_fused_equal_unfused(monkeypatch, small_blocks, t):
    ty = f"tensor<50x100x{t}>"
    names = ["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "and",
             "or", "xor", "shift_left", "shift_right_arithmetic", "shift_right_logical", "power"]
    lines, prev = [], "%x"
    for i, name in enumerate(names):
        lines.append(f"%b{i} = stablehlo.{name} {prev}, %y : {ty}")
        prev = f"%b{i}"
    for i, name in enumerate(["not", "popcnt", "count_leading_zeros", "negate", "abs", "sign"]):
        if t == "ui16" and name in ("negate", "abs", "sign"):
            continue
        lines.append(f"%u{i} = stablehlo.{name} {prev} : {ty}")
        prev = f"%u{i}"
    body = "\n  ".join(lines)
    text = f"""func.func @main(%x: {ty}, %y: {ty}) -> {ty} {{
  {body}
  return {prev} : {ty}
}}"""
    rng = np.random.default_rng(2)
    x, y = _values(t, rng, (50, 100)), _values(t, rng, (50, 100))
    _same(shlo.run(text, x, y), _unfused(monkeypatch, text, x, y))
    assert _steps(text) == 1


def test_splats_outputs_and_interleaved_ops(monkeypatch, small_blocks):
    """Splat broadcasts join the chain; a reduce that does not read the chain sits between its
    members; values used later (by the return and by an op after the chain) are written out."""
    text = f"""func.func @main(%x: tensor<{N}xf32>, %y: tensor<{N}xf32>)
    -> (tensor<{N}xf32>, tensor<{N}xf32>, tensor<f32>, tensor<f32>) {{
  %c = stablehlo.constant dense<0.5> : tensor<f32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %h = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> tensor<{N}xf32>
  %0 = stablehlo.multiply %x, %h : tensor<{N}xf32>
  %s = stablehlo.reduce(%y init: %z) applies stablehlo.add across dimensions = [0] : (tensor<{N}xf32>, tensor<f32>) -> tensor<f32>
  %1 = stablehlo.tanh %0 : tensor<{N}xf32>
  %2 = stablehlo.add %1, %y : tensor<{N}xf32>
  %t = stablehlo.reduce(%1 init: %z) applies stablehlo.add across dimensions = [0] : (tensor<{N}xf32>, tensor<f32>) -> tensor<f32>
  return %2, %0, %s, %t : tensor<{N}xf32>, tensor<{N}xf32>, tensor<f32>, tensor<f32>
}}"""
    rng = np.random.default_rng(3)
    x, y = _values("f32", rng, (N,)), _values("f32", rng, (N,))
    fused = shlo.run(text, x, y)
    _same(fused, _unfused(monkeypatch, text, x, y))
    np.testing.assert_array_equal(fused[1], x * np.float32(0.5))
    chains = fusion.plan(shlo.parse(text).functions["main"].regions[0].blocks[0])
    assert len(chains) == 1
    (chain,) = chains
    assert [op.name.split(".")[1] for op in chain.ops] == [
        "broadcast_in_dim", "multiply", "tanh", "add"]
    assert chain.outputs == [op.results[0] for op in chain.ops[1:]]


def test_chain_ends_where_another_op_reads_it(small_blocks):
    """A reduce reading the chain's value splits it: the ops after it form a second chain."""
    text = f"""func.func @main(%x: tensor<{N}xf32>) -> (tensor<{N}xf32>, tensor<f32>) {{
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.tanh %x : tensor<{N}xf32>
  %1 = stablehlo.add %0, %x : tensor<{N}xf32>
  %s = stablehlo.reduce(%1 init: %z) applies stablehlo.add across dimensions = [0] : (tensor<{N}xf32>, tensor<f32>) -> tensor<f32>
  %2 = stablehlo.multiply %1, %x : tensor<{N}xf32>
  %3 = stablehlo.sqrt %2 : tensor<{N}xf32>
  return %3, %s : tensor<{N}xf32>, tensor<f32>
}}"""
    chains = fusion.plan(shlo.parse(text).functions["main"].regions[0].blocks[0])
    assert [[op.name for op in c.ops] for c in chains] == [
        ["stablehlo.tanh", "stablehlo.add"], ["stablehlo.multiply", "stablehlo.sqrt"]]
    x = _values("f32", np.random.default_rng(4), (N,))
    r, s = shlo.run(text, x)
    with np.errstate(invalid="ignore"):
        want = np.tanh(x) + x
        np.testing.assert_array_equal(r, np.sqrt(want * x))


def test_interleaved_chains_of_two_shapes(monkeypatch, small_blocks):
    """An optimizer update as JAX writes it: the first moments of two parameters (two shapes),
    then their second moments, then the parameters. One chain per parameter, each fused from
    all its updates; a scalar reduce of a chain value in the middle ends that chain only."""
    a, b = f"tensor<{N}xf32>", "tensor<40x30xf32>"
    text = f"""func.func @main(%p: {a}, %g: {a}, %q: {b}, %h: {b}) -> ({a}, {b}, {a}, {b}, tensor<f32>) {{
  %c = stablehlo.constant dense<0.9> : tensor<f32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %ca = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> {a}
  %cb = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> {b}
  %m1 = stablehlo.multiply %g, %ca : {a}
  %n1 = stablehlo.multiply %h, %cb : {b}
  %m2 = stablehlo.multiply %g, %g : {a}
  %n2 = stablehlo.multiply %h, %h : {b}
  %s = stablehlo.reduce(%n2 init: %z) applies stablehlo.add across dimensions = [0, 1] : ({b}, tensor<f32>) -> tensor<f32>
  %m3 = stablehlo.sqrt %m2 : {a}
  %n3 = stablehlo.sqrt %n2 : {b}
  %m4 = stablehlo.divide %m1, %m3 : {a}
  %n4 = stablehlo.divide %n1, %n3 : {b}
  %p1 = stablehlo.subtract %p, %m4 : {a}
  %q1 = stablehlo.subtract %q, %n4 : {b}
  return %p1, %q1, %m1, %n1, %s : {a}, {b}, {a}, {b}, tensor<f32>
}}"""
    monkeypatch.setattr(fusion, "MIN_ELEMENTS", 1000)
    chains = fusion.plan(shlo.parse(text).functions["main"].regions[0].blocks[0])
    names = [[op.results[0].name for op in c.ops] for c in chains]
    assert sorted(names) == sorted([["n3", "n4", "q1"],
                                    ["ca", "m1", "m2", "m3", "m4", "p1"],
                                    ["cb", "n1", "n2"]]), names
    rng = np.random.default_rng(5)
    args = [_values("f32", rng, s) for s in ((N,), (N,), (40, 30), (40, 30))]
    _same(shlo.run(text, *args), _unfused(monkeypatch, text, *args))


def test_fused_pieces_on_several_cores_equal_one_core(monkeypatch, small_blocks):
    """The blocks of a chain spread over the cores give what one core gives."""
    from shlo.ops import _pool

    text = f"""func.func @main(%x: tensor<{8 * N}xf32>) -> tensor<{8 * N}xf32> {{
  %0 = stablehlo.exponential %x : tensor<{8 * N}xf32>
  %1 = stablehlo.tanh %0 : tensor<{8 * N}xf32>
  %2 = stablehlo.multiply %1, %x : tensor<{8 * N}xf32>
  return %2 : tensor<{8 * N}xf32>
}}"""
    x = _values("f32", np.random.default_rng(6), (8 * N,))
    monkeypatch.setattr(_pool, "cores", lambda: 4)
    many = shlo.run(text, x)
    monkeypatch.setattr(_pool, "cores", lambda: 1)
    _same(many, shlo.run(text, x))
    _same(many, _unfused(monkeypatch, text, x))


def test_small_dynamic_and_mixed_shapes_not_fused(monkeypatch):
    """Below MIN_ELEMENTS, with dynamic sizes, or across shapes there is no chain."""
    small = """func.func @main(%x: tensor<100xf32>) -> tensor<100xf32> {
  %0 = stablehlo.tanh %x : tensor<100xf32>
  %1 = stablehlo.add %0, %x : tensor<100xf32>
  return %1 : tensor<100xf32>
}"""
    assert fusion.plan(shlo.parse(small).functions["main"].regions[0].blocks[0]) == []
    monkeypatch.setattr(fusion, "MIN_ELEMENTS", 10)
    dynamic = small.replace("100xf32", "?xf32")
    assert fusion.plan(shlo.parse(dynamic).functions["main"].regions[0].blocks[0]) == []
    mixed = """func.func @main(%x: tensor<100xf32>, %y: tensor<50xf32>) -> (tensor<100xf32>, tensor<50xf32>) {
  %0 = stablehlo.tanh %x : tensor<100xf32>
  %1 = stablehlo.tanh %y : tensor<50xf32>
  return %0, %1 : tensor<100xf32>, tensor<50xf32>
}"""
    assert fusion.plan(shlo.parse(mixed).functions["main"].regions[0].blocks[0]) == []


def test_error_in_a_member_names_that_op(monkeypatch, small_blocks):
    """A kernel failing inside a chain is reported at its own op's location."""
    from shlo.errors import ExecutionError
    from shlo.registry import lookup

    text = f"""func.func @main(%x: tensor<{N}xf32>) -> tensor<{N}xf32> {{
  %0 = stablehlo.add %x, %x : tensor<{N}xf32> loc("a.mlir":2:8)
  %1 = stablehlo.sqrt %0 : tensor<{N}xf32> loc("a.mlir":3:8)
  %2 = stablehlo.add %1, %x : tensor<{N}xf32> loc("a.mlir":4:8)
  return %2 : tensor<{N}xf32>
}}"""
    def broken(op, ctx):
        def fail(x):
            raise ValueError("boom")
        return lambda *a: (fail(*a),)

    monkeypatch.setattr(lookup("stablehlo.sqrt"), "prepare", broken)
    with pytest.raises(ExecutionError) as e:
        shlo.run(text, np.ones(N, np.float32))
    assert "a.mlir:3:8" in str(e.value) and "boom" in str(e.value)


_CHAIN = f"""func.func @main(%x: tensor<{N}xf32>, %y: tensor<{N}xf32>) -> tensor<{N}xf32> {{
  %0 = stablehlo.multiply %x, %y : tensor<{N}xf32>
  %1 = stablehlo.tanh %0 : tensor<{N}xf32>
  %2 = stablehlo.add %1, %x : tensor<{N}xf32>
  %3 = stablehlo.exponential %2 : tensor<{N}xf32>
  return %3 : tensor<{N}xf32>
}}"""


def test_traced_and_profiled_runs_see_every_fused_op(monkeypatch, small_blocks):
    """A run with an observer (trace, profile) is not fused: every op of a fusable chain is
    reported, with its own value, and the results are the fused run's bit for bit."""
    from shlo.debug.profile import profile
    from shlo.debug.trace import trace

    rng = np.random.default_rng(11)
    x, y = _values("f32", rng, (N,)), _values("f32", rng, (N,))
    block = shlo.parse(_CHAIN).functions["main"].regions[0].blocks[0]
    assert len(fusion.plan(block)) == 1 and _steps(_CHAIN) == 1  # fused when not observed
    fused = shlo.run(_CHAIN, x, y)
    with np.errstate(all="ignore"):
        m = x * y
        want = [m, np.tanh(m)]
        want += [want[1] + x, np.exp(want[1] + x)]
    with np.errstate(all="ignore"):  # the operands hold inf and NaN: the summaries warn
        t = trace(_CHAIN, x, y, values=True)
        p = profile(_CHAIN, x, y)
    assert t.error is None
    assert [e.name for e in t.events] == [
        "stablehlo.multiply", "stablehlo.tanh", "stablehlo.add", "stablehlo.exponential"]
    for e, w in zip(t.events, want):
        np.testing.assert_allclose(e.values[0], w, rtol=1e-6, err_msg=e.name)
    # each value is the op's own result: the next op's input, exactly
    np.testing.assert_array_equal(t.events[1].values[0], np.tanh(t.events[0].values[0]))
    _same(t.results, fused)
    assert p.error is None
    _same(p.results, fused)
    assert sorted(r.label for r in p.by_kind()) == sorted(
        ["stablehlo.multiply", "stablehlo.tanh", "stablehlo.add", "stablehlo.exponential"])


# --- compiled chains of small tensors -------------------------------------------------------------

COMPILED_BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum"]
COMPILED_UNARY = ["negate", "abs", "sqrt"]  # and tanh, on f32


def _compiled_program(t: str, n: int, repeat: int = 2) -> str:
    """A chain through every compiled op ``repeat`` times, with splats of a 0-d argument,
    an add of a splat, an op between members that does not read them (a tanh of %x), a dead
    member result, and two outputs."""
    ty = f"tensor<{n}x{t}>"
    lines, prev, k = [], "%x", 0
    for _ in range(repeat):
        for name in COMPILED_BINARY:
            lines.append(f"%v{k} = stablehlo.{name} {prev}, %y : {ty}")
            prev, k = f"%v{k}", k + 1
        for name in COMPILED_UNARY:
            lines.append(f"%v{k} = stablehlo.{name} {prev} : {ty}")
            prev, k = f"%v{k}", k + 1
    lines += [f"%s = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<{t}>) -> {ty}",
              f"%dead = stablehlo.multiply %s, %x : {ty}",
              f"%t = stablehlo.tanh %x : {ty}",
              f"%w = stablehlo.add {prev}, %s : {ty}",
              f"%w2 = stablehlo.maximum %w, %x : {ty}",
              f"%w3 = stablehlo.minimum %y, %w2 : {ty}",
              f"%n = stablehlo.negate %x : {ty}",  # zeros of both signs meet where x is ±0
              f"%m0 = stablehlo.maximum %x, %n : {ty}",
              f"%m1 = stablehlo.minimum %n, %x : {ty}"]
    body = "\n  ".join(lines)
    return f"""func.func @main(%x: {ty}, %y: {ty}, %c: tensor<{t}>) -> ({ty}, {ty}, {ty}, {ty}, {ty}) {{
  {body}
  return %w3, {prev}, %t, %m0, %m1 : {ty}, {ty}, {ty}, {ty}, {ty}
}}"""


def _evaluator():
    vm = fusion.compiled_evaluator()
    if vm is None:
        pytest.skip("no compiled evaluator here (numba missing or disabled)")
    return vm


@pytest.fixture
def compiled(monkeypatch):
    """The compiled evaluator from the first run on, each of its calls counted: "run" (a
    small chain, "run nan" where an output held a NaN), "exact" (the small chain again with
    the NaN rules), "blocks" (a piece of a large one), "met" added where two different NaNs
    met (the chain then runs on its kernels). Skips where numba is missing or disabled."""
    vm = _evaluator()
    calls: list[str] = []

    def run(*args):
        nan = vm.run(*args)
        calls.append("run nan" if nan else "run")
        return nan

    def run_exact(*args):
        met = vm.run_exact(*args)
        calls.append("exact met" if met else "exact")
        return met

    def run_blocks(*args):
        met = vm.run_blocks(*args)
        calls.append("blocks met" if met else "blocks")
        return met

    monkeypatch.setattr(fusion._EVALUATOR, "value",
                        fusion.Evaluator(run, run_exact, run_blocks, vm.tanh))
    return calls


def _block(text):
    return shlo.parse(text).functions["main"].regions[0].blocks[0]


def _adds(k: int, ty: str = "tensor<16xf32>") -> str:
    lines = [f"%v{i} = stablehlo.add {'%x' if i == 0 else f'%v{i - 1}'}, %x : {ty}"
             for i in range(k)]
    body = "\n  ".join(lines)
    return f"""func.func @main(%x: {ty}) -> {ty} {{
  {body}
  return %v{k - 1} : {ty}
}}"""


def test_compiled_chain_plan():
    """Which chains are compiled: f32/f64, rank >= 1, at least MIN_COMPILED members up to
    MAX_COMPILED elements and MIN_LARGE up to MIN_ELEMENTS; tanh on f32 only; an op that is
    not a member and does not read the chain (an f64 tanh) does not end it."""
    chains = fusion.plan(_block(_compiled_program("f32", 16)))
    assert [(c.compiled, len(c.ops), c.shape) for c in chains] == [(True, 27, (16,))]
    assert len(chains[0].outputs) == 5 and len(chains[0].inputs) == 3
    chains = fusion.plan(_block(_compiled_program("f64", fusion.MAX_COMPILED)))
    assert [(c.compiled, len(c.ops)) for c in chains] == [(True, 26)]
    assert "stablehlo.tanh" not in [op.name for op in chains[0].ops]
    big = fusion.MAX_COMPILED + 1
    assert [(c.compiled, len(c.ops)) for c in
            fusion.plan(_block(_compiled_program("f32", big)))] == [(True, 27)]
    for t, n in [("f16", 16), ("bf16", 16), ("i32", 16)]:
        assert fusion.plan(_block(_compiled_program(t, n))) == [], (t, n)
    # from MIN_ELEMENTS on, the kernels' chains (block by block), compiled where every
    # member compiles
    huge = fusion.MIN_ELEMENTS
    assert [c.compiled for c in fusion.plan(_block(_compiled_program("f32", huge)))] == [True]
    mixed = _compiled_program("f32", huge).replace("stablehlo.abs", "stablehlo.exponential")
    assert [c.compiled for c in fusion.plan(_block(mixed))] == [False]
    k = fusion.MIN_COMPILED
    assert fusion.plan(_block(_adds(k - 1))) == []
    assert [len(c.ops) for c in fusion.plan(_block(_adds(k)))] == [k]
    assert fusion.plan(_block(_adds(k + 5, "tensor<f32>"))) == []  # 0-d: the emitter's
    k, ty = fusion.MIN_LARGE, f"tensor<{big}xf32>"
    assert fusion.plan(_block(_adds(k - 1, ty))) == []
    assert [(c.compiled, len(c.ops)) for c in fusion.plan(_block(_adds(k, ty)))] == [(True, k)]


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("n", [1, 16, 1000, 20000])
def test_compiled_chain_equals_unfused(monkeypatch, compiled, t, n):
    """Bit for bit the unfused run, with ±0, ±inf, subnormals and NaNs of several payloads
    (quiet and signaling, both signs) among the operands: the compiled evaluator's own
    results, NaNs included. 20000 elements: a large chain, in blocks (the last one short)
    and pieces."""
    from shlo.types import element_type

    dt = element_type(t).dtype
    text = _compiled_program(t, n)
    rng = np.random.default_rng(n)
    c = np.array(-0.75, dt)
    finite_x, finite_y = np.abs(rng.standard_normal(n)).astype(dt), \
        (rng.standard_normal(n) * 2).astype(dt)
    if n >= 8:  # zeros of both signs (maximum, minimum), subnormals, infinities
        finite_x[:7] = [0.0, -0.0, 1e-40, 3e-45, np.inf, 1e30, 0.5]
        finite_y[:7] = [-1.5, 2.0, 1e-40, -1e-42, 3.0, 1e-30, 2.0]
    kind = "run" if n <= fusion.MAX_COMPILED else "blocks"
    fused = shlo.run(text, finite_x, finite_y, c)
    assert compiled and set(compiled) == {kind}
    _same(fused, _unfused(monkeypatch, text, finite_x, finite_y, c))
    if n > 1:
        x, y = _values(t, rng, (n,)), _values(t, rng, (n,))
        u = {"f32": np.uint32, "f64": np.uint64}[t]
        nan_bits = x.view(u)  # NaNs of other payloads and signs
        nan_bits[1::7] |= ~u(0) >> u(1) & ~(~u(0) >> u(12 if t == "f64" else 9))
        nan_bits[1::7] |= u(5)
        signaling = ~u(0) >> u(1) & ~(~u(0) >> u(12 if t == "f64" else 9)) | u(6)
        nan_bits[3::11] = y.view(u)[3::11] = signaling
        del compiled[:]
        with np.errstate(all="ignore"):
            fused = shlo.run(text, x, y, c)
        if kind == "run":  # an output holds a NaN: again with the NaN rules
            assert compiled[0] == "run nan" and compiled[1].startswith("exact")
        else:
            assert compiled and all(c.startswith("blocks") for c in compiled)
        with np.errstate(all="ignore"):
            _same(fused, _unfused(monkeypatch, text, x, y, c))


def test_compiled_chain_switch_after_switch_ops(monkeypatch):
    """Cold runs (the members' kernels) until the process has run SWITCH_OPS ops of compiled
    chains; the evaluator is loaded then, and only then."""
    vm = _evaluator()
    loaded: list[int] = []
    monkeypatch.setattr(fusion._EVALUATOR, "value", None)
    monkeypatch.setattr(fusion, "_COLD_OPS", 0)
    monkeypatch.setattr(fusion, "SWITCH_OPS", 60)
    calls = []
    counted = fusion.Evaluator(lambda *a: calls.append(1) or vm.run(*a), vm.run_exact,
                               vm.run_blocks, vm.tanh)
    monkeypatch.setattr(fusion._EVALUATOR, "_load", lambda: loaded.append(1) or counted)
    text = _compiled_program("f32", 16)  # one chain of 27 ops
    x = np.linspace(0.5, 2, 16, dtype=np.float32)
    results = []
    for _ in range(4):
        results.append(shlo.run(text, x, x[::-1].copy(), np.array(2.0, np.float32)))
        loaded.append(0)
    assert loaded == [0, 0, 0, 1, 0]  # 0, 27, 54 ops before runs 1-3; 81 >= 60 before run 4
    assert calls == [1]
    for r in results[1:]:
        _same(r, results[0])


def test_compiled_chain_not_within_numpy_only(monkeypatch, compiled):
    """ops._half.numpy_only (and a forked child) keeps compiled code out: the cold path."""
    from shlo.ops import _half

    text = _compiled_program("f32", 16)
    x = np.linspace(0.5, 2, 16, dtype=np.float32)
    with _half.numpy_only():
        r = shlo.run(text, x, x, np.array(2.0, np.float32))
    assert compiled == []
    _same(r, shlo.run(text, x, x, np.array(2.0, np.float32)))
    assert compiled == ["run"]


def test_compiled_chain_error_names_its_op(monkeypatch):
    """A member failing inside a compiled chain is reported at its own op's location."""
    from shlo.errors import ExecutionError
    from shlo.registry import lookup

    lines = [f'%v{k} = stablehlo.add {"%x" if k == 0 else f"%v{k - 1}"}, %x : tensor<16xf32> '
             f'loc("a.mlir":{k + 2}:8)' for k in range(20)]
    lines[7] = lines[7].replace("stablehlo.add", "stablehlo.sqrt").replace(", %x :", " :")
    body = "\n  ".join(lines)
    text = f"""func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {{
  {body}
  return %v19 : tensor<16xf32>
}}"""
    assert fusion.plan(_block(text))[0].compiled

    def broken(op, ctx):
        def fail(x):
            raise ValueError("boom")
        return lambda *a: (fail(*a),)

    monkeypatch.setattr(lookup("stablehlo.sqrt"), "prepare", broken)
    monkeypatch.setattr(fusion._EVALUATOR, "value", False)  # the members' kernels run (cold)
    with pytest.raises(ExecutionError) as e:
        shlo.run(text, np.ones(16, np.float32))
    assert "a.mlir:9:8" in str(e.value) and "boom" in str(e.value)


def test_compiled_chain_in_a_while_body(monkeypatch, compiled):
    """A loop body's chain is compiled: 200 iterations of 20 ops, the unfused run's bits."""
    ty = "tensor<16xf32>"
    body = []
    prev = "%a"
    for k in range(20):
        op = ["add", "multiply", "subtract", "maximum", "divide"][k % 5]
        body.append(f"%v{k} = stablehlo.{op} {prev}, %b : {ty}")
        prev = f"%v{k}"
    inner = "\n      ".join(body)
    text = f"""func.func @main(%x: {ty}, %y: {ty}) -> {ty} {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<i32>
  %n = stablehlo.constant dense<200> : tensor<i32>
  %r:3 = stablehlo.while(%i = %c0, %a = %x, %b = %y) : tensor<i32>, {ty}, {ty}
    cond {{
      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }} do {{
      %j = stablehlo.add %i, %c1 : tensor<i32>
      {inner}
      stablehlo.return %j, {prev}, %b : tensor<i32>, {ty}, {ty}
    }}
  return %r#1 : {ty}
}}"""
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 1.5, 16).astype(np.float32)
    y = rng.uniform(0.999, 1.001, 16).astype(np.float32)
    fused = shlo.run(text, x, y)
    assert compiled == ["run"] * 200
    _same(fused, _unfused(monkeypatch, text, x, y))


@pytest.mark.parametrize("seed", range(16))
def test_random_compiled_chains_equal_unfused(monkeypatch, compiled, seed):
    """Random chains (operands drawn from every earlier value, values read again long after,
    dead results, several outputs; tanh on f32), small and large (in blocks), on operands with
    NaNs of several payloads: the register allocation's reuse of dead values' registers and the
    NaN rules give the unfused run's bits."""
    rng = np.random.default_rng(seed)
    t = ["f32", "f64"][seed % 2]
    n = [3, 16, 200, 20000][seed % 4]
    ty = f"tensor<{n}x{t}>"
    values, lines = ["%x", "%y", "%z"], []
    unary = COMPILED_UNARY + (["tanh"] if t == "f32" else [])
    for k in range(int(rng.integers(16, 60))):
        name = rng.choice(COMPILED_BINARY + unary + ["splat"])
        if name == "splat":
            lines.append(f"%v{k} = stablehlo.broadcast_in_dim %c, dims = [] : "
                         f"(tensor<{t}>) -> {ty}")
        elif name in unary:
            lines.append(f"%v{k} = stablehlo.{name} {rng.choice(values)} : {ty}")
        else:
            a, b = rng.choice(values, 2)
            lines.append(f"%v{k} = stablehlo.{name} {a}, {b} : {ty}")
        values.append(f"%v{k}")
    outs = sorted(set(rng.choice(values[3:], 3).tolist()) | {values[-1]})
    body = "\n  ".join(lines)
    text = f"""func.func @main(%x: {ty}, %y: {ty}, %z: {ty}, %c: tensor<{t}>) -> ({", ".join([ty] * len(outs))}) {{
  {body}
  return {", ".join(outs)} : {", ".join([ty] * len(outs))}
}}"""
    chains = fusion.plan(_block(text))
    assert len(chains) == 1 and chains[0].compiled
    dt = np.float32 if t == "f32" else np.float64
    args = [rng.uniform(0.5, 2.0, n).astype(dt) for _ in range(3)] + [np.array(1.25, dt)]
    u = np.uint32 if t == "f32" else np.uint64
    for a, payload in zip(args[:2], (1, 2)):  # NaNs of other payloads (one negative), apart
        bits = a.view(u)
        bits[payload::4] = np.array(np.nan, dt).view(u) | u(payload) | \
            (u(payload - 1) << u(8 * bits.itemsize - 1))
    with np.errstate(all="ignore"):
        fused = shlo.run(text, *args)
        _same(fused, _unfused(monkeypatch, text, *args))
    assert compiled  # the evaluator ran (where two different NaNs met, then the kernels)


def test_compiled_chain_of_rank_2_transposed_operands(monkeypatch, compiled):
    """Rank-2 values, one operand a transposed view: loaded into the registers in its logical
    order, results of the declared shape."""
    ty = "tensor<4x6xf32>"
    lines = [f"%v{k} = stablehlo.{['add', 'multiply', 'subtract'][k % 3]} "
             f"{'%x' if k == 0 else f'%v{k - 1}'}, %y : {ty}" for k in range(10)]
    body = "\n  ".join(lines)
    text = f"""func.func @main(%x: {ty}, %y: {ty}) -> {ty} {{
  {body}
  return %v9 : {ty}
}}"""
    rng = np.random.default_rng(4)
    x = rng.uniform(0.5, 2, (6, 4)).astype(np.float32).T  # (a transposed view)
    y = rng.uniform(0.5, 2, (4, 6)).astype(np.float32)
    fused = shlo.run(text, x, y)
    assert compiled == ["run"] and fused[0].shape == (4, 6)
    _same(fused, _unfused(monkeypatch, text, x, y))


def test_large_compiled_chain_in_pieces_equals_one_core(monkeypatch, compiled):
    """A large chain cut into pieces for three cores (ragged pieces and blocks) gives the
    one-core run's bits, and the unfused run's (NaNs made by sqrt among them)."""
    from shlo.ops import _pool

    n = 3 * fusion.COMPILED_BLOCK * 7 + 13
    text = _compiled_program("f32", n)
    rng = np.random.default_rng(11)
    x, y = (rng.uniform(-2, 2, n).astype(np.float32) for _ in range(2))
    c = np.array(0.25, np.float32)
    runs = {}
    for cores in (1, 3):
        monkeypatch.setattr(_pool, "cores", lambda c=cores: c)
        monkeypatch.setattr(fusion, "PIECE_NS", 1000.0)
        del compiled[:]
        with np.errstate(all="ignore"):
            runs[cores] = shlo.run(text, x, y, c)
        assert compiled == ["blocks"] * cores
    _same(runs[3], runs[1])
    with np.errstate(all="ignore"):
        _same(runs[1], _unfused(monkeypatch, text, x, y, c))


def test_large_chain_of_too_many_inputs_runs_on_its_kernels(monkeypatch, compiled):
    """A large chain reading more inputs whole than run_blocks takes stays on its members'
    kernels: the unfused bits."""
    n, k = fusion.MAX_COMPILED + 5, fusion.MAX_INPUTS + 1
    ty = f"tensor<{n}xf32>"
    params = ", ".join(f"%a{i}: {ty}" for i in range(k))
    lines = [f"%v1 = stablehlo.add %a0, %a1 : {ty}"] + [
        f"%v{i} = stablehlo.multiply %v{i - 1}, %a{i} : {ty}" for i in range(2, k)]
    body = "\n  ".join(lines)
    text = f"""func.func @main({params}) -> {ty} {{
  {body}
  return %v{k - 1} : {ty}
}}"""
    assert [c.compiled for c in fusion.plan(_block(text))] == [True]
    args = [np.random.default_rng(i).uniform(0.9, 1.1, n).astype(np.float32) for i in range(k)]
    fused = shlo.run(text, *args)
    assert compiled == []
    _same(fused, _unfused(monkeypatch, text, *args))


def test_probe_rejects_evaluators_breaking_the_nan_rules():
    """The load-time probe checks the NaN rules: an evaluator that returns a signaling NaN
    unquieted from add, or that does not report two different NaNs meeting, fails it."""
    vm = _evaluator()
    for dt in (np.dtype(np.float32), np.dtype(np.float64)):
        assert fusion._probe(vm.run_exact, dt)

        def unquieted(code, regs, scalars):
            met = vm.run_exact(code, regs, scalars)
            if code[0, 0] == 0 and len(code) > 1:  # the add row of the probe's program
                x, y = regs[0], regs[1]
                regs[2] = np.where(np.isnan(x), x, np.where(np.isnan(y), y, x + y))
            return met

        with np.errstate(all="ignore"):
            assert not fusion._probe(unquieted, dt)
            assert not fusion._probe(lambda *a: bool(vm.run_exact(*a) and False), dt)


@pytest.mark.parametrize("n", [16, 20000])
def test_compiled_chain_where_two_different_nans_meet(monkeypatch, compiled, n):
    """Two NaNs of different bits meeting in a member (numpy's pick between them depends on
    its code path): the evaluator says so and the chain runs on its kernels, the unfused
    bits."""
    ty = f"tensor<{n}xf32>"
    ops = ["add", "multiply", "subtract", "divide", "maximum", "minimum"]
    lines = [f"%v{k} = stablehlo.{ops[k % 6]} {'%x' if k == 0 else f'%v{k - 1}'}, %y : {ty}"
             for k in range(12)]
    body = "\n  ".join(lines)
    text = f"""func.func @main(%x: {ty}, %y: {ty}) -> {ty} {{
  {body}
  return %v11 : {ty}
}}"""
    x = np.linspace(0.5, 2, n, dtype=np.float32)
    y = x[::-1].copy()
    x.view(np.uint32)[n // 2] = 0xFFC00002
    y.view(np.uint32)[n // 2] = 0x7FC00001
    with np.errstate(all="ignore"):
        fused = shlo.run(text, x, y)
        _same(fused, _unfused(monkeypatch, text, x, y))
    assert compiled and "met" in compiled[-1]


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("n", [16, 20000])
def test_compiled_nan_rules(monkeypatch, compiled, t, n):
    """NaNs of several payloads, both signs, quiet and signaling, meeting numbers in every
    compiled op (a linear chain: a NaN never meets another), and NaNs made by invalid
    operations (inf - inf, 0 * inf, sqrt of a negative): the evaluator's own results, the
    unfused bits."""
    ty = f"tensor<{n}x{t}>"
    ops = COMPILED_BINARY + COMPILED_UNARY + (["tanh"] if t == "f32" else [])
    lines = []
    for k in range(2 * len(ops)):
        name, prev = ops[k % len(ops)], "%x" if k == 0 else f"%v{k - 1}"
        operands = f"{prev}, %y" if name in COMPILED_BINARY else prev
        lines.append(f"%v{k} = stablehlo.{name} {operands} : {ty}")
    body = "\n  ".join(lines)
    last = f"%v{len(lines) - 1}"
    text = f"""func.func @main(%x: {ty}, %y: {ty}) -> {ty} {{
  {body}
  return {last} : {ty}
}}"""
    dt, u = (np.float32, np.uint32) if t == "f32" else (np.float64, np.uint64)
    rng = np.random.default_rng(n)
    x = rng.uniform(-2, 2, n).astype(dt)
    y = rng.uniform(-2, 2, n).astype(dt)
    y[3::13], y[5::17] = np.inf, 0.0
    nan = np.array(np.nan, dt).view(u)
    bits = x.view(u)
    top = u(8 * bits.itemsize - 1)
    mant = u(22 if t == "f32" else 51)  # the quiet bit
    exp_ones = nan & ~(u(1) << mant)
    bits[1::7] = exp_ones | (u(1) << mant) | u(5)  # quiet, payload 5
    bits[2::11] = exp_ones | (u(1) << mant) | u(9) | (u(1) << top)  # quiet, negative
    bits[4::19] = exp_ones | u(3)  # signaling
    with np.errstate(all="ignore"):
        fused = shlo.run(text, x, y)
        _same(fused, _unfused(monkeypatch, text, x, y))
    assert compiled and not any("met" in c for c in compiled)
    assert np.isnan(fused[0]).any()


@pytest.mark.parametrize("n", [N, fusion.MAX_COMPILED + 1000])
def test_compiled_chain_of_huge_tensors_cold_and_hot(monkeypatch, small_blocks, n):
    """From MIN_ELEMENTS on, a chain whose members all compile is compiled; before the switch
    it runs block by block through its kernels; both runs give the unfused bits."""
    vm = _evaluator()
    text = _compiled_program("f32", n)
    chains = fusion.plan(_block(text))
    assert [c.compiled for c in chains] == [True]
    rng = np.random.default_rng(12)
    x, y = (rng.uniform(-2, 2, n).astype(np.float32) for _ in range(2))
    c = np.array(0.5, np.float32)
    with np.errstate(all="ignore"):
        want = _unfused(monkeypatch, text, x, y, c)
        monkeypatch.setattr(fusion._EVALUATOR, "value", False)
        _same(shlo.run(text, x, y, c), want)
        calls = []
        monkeypatch.setattr(fusion._EVALUATOR, "value", fusion.Evaluator(
            lambda *a: calls.append(1) or vm.run(*a), vm.run_exact,
            lambda *a: calls.append(1) or vm.run_blocks(*a), vm.tanh))
        _same(shlo.run(text, x, y, c), want)
    assert calls
