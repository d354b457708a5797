"""stablehlo-refine-arguments and stablehlo-refine-shapes: hand-computed refinements, the errors
upstream reports, refined programs giving the unrefined results (jax.export programs with
symbolic shapes), and jaxlib's build of upstream's passes as a differential oracle."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import shlo
from shlo.errors import ShloError
from shlo.passes import PassError, run_passes
from shlo.types import TensorType


def refine(text: str, types: str | None = None) -> shlo.Module:
    pipeline = (f"stablehlo-refine-arguments{{types={types}}}," if types else "") + \
        "stablehlo-refine-shapes"
    return run_passes(shlo.parse(text), pipeline)


def result_types(module: shlo.Module) -> dict[str, list[str]]:
    return {op.name: [str(t) for t in op.result_types] for op in module.walk()
            if op.dialect == "stablehlo"}


def signature(module: shlo.Module, name: str = "main") -> str:
    return str(module.function(name).attr("function_type").type)


SHAPE_PROGRAM = """
func.func @main(%arg0: tensor<?xf32>) -> tensor<?x?xf32> {
  %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?xf32>) -> tensor<i32>
  %1 = stablehlo.reshape %0 : (tensor<i32>) -> tensor<1xi32>
  %c = stablehlo.constant dense<2> : tensor<1xi32>
  %2 = stablehlo.multiply %1, %c : tensor<1xi32>
  %3 = stablehlo.concatenate %c, %2, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %4 = stablehlo.dynamic_iota %2, dim = 0 : (tensor<1xi32>) -> tensor<?xf32>
  %5 = stablehlo.dynamic_broadcast_in_dim %4, %3, dims = [1] : (tensor<?xf32>, tensor<2xi32>) -> tensor<?x?xf32>
  %6 = stablehlo.abs %5 : tensor<?x?xf32>
  return %6 : tensor<?x?xf32>
}"""


def test_shape_computations_fold_and_types_become_static():
    out = refine(SHAPE_PROGRAM, "tensor<3xf32>")
    assert signature(out) == "(tensor<3xf32>) -> tensor<2x6xf32>"
    types = result_types(out)
    assert types["stablehlo.dynamic_iota"] == ["tensor<6xf32>"]
    assert types["stablehlo.abs"] == ["tensor<2x6xf32>"]
    # get_dimension_size, reshape, multiply, concatenate folded to constants; wrapper gone
    assert not {"stablehlo.get_dimension_size", "stablehlo.multiply",
                "stablehlo.concatenate", "stablehlo.custom_call"} & set(types)
    consts = sorted(op.attr("value").array.tolist() for op in out.walk()
                    if op.name == "stablehlo.constant")
    assert consts == [[2, 6], [6]]
    x = np.array([1.0, -2.0, 3.0], np.float32)
    (want,) = shlo.run(shlo.parse(SHAPE_PROGRAM), x)
    (got,) = shlo.run(out, x)
    assert np.asarray(got).shape == (2, 6)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(got)[1], np.arange(6, dtype=np.float32))


def test_refine_arguments_wraps_changed_arguments_only():
    out = run_passes(shlo.parse("""
    func.func @main(%a: tensor<?x3xf32>, %b: tensor<2xi32>) -> tensor<?x3xf32> {
      return %a : tensor<?x3xf32>
    }"""), "stablehlo-refine-arguments{types=tensor<5x3xf32>,tensor<2xi32>}")
    text = shlo.format(out)
    assert signature(out) == "(tensor<5x3xf32>, tensor<2xi32>) -> tensor<?x3xf32>"
    assert "dense<[5, 3]> : tensor<2xi64>" in text
    assert text.count("shape_refinement_operand_wrapper") == 1
    # refine-shapes then removes the wrapper and returns the argument itself
    final = run_passes(out, "stablehlo-refine-shapes")
    assert "custom_call" not in shlo.format(final)
    assert signature(final) == "(tensor<5x3xf32>, tensor<2xi32>) -> tensor<5x3xf32>"


@pytest.mark.parametrize("types, message", [
    ("tensor<f32>", "number of refinements must match number of op operands 1 vs 2"),
    ("tensor<2x3xi32>,tensor<f32>", "invalid refinement for argument 0, refinement element "
                                    "types must match in tensor<?x3xf32> -> tensor<2x3xi32>"),
    ("tensor<2x4xf32>,tensor<f32>", "refinement dimension sizes must match for static "
                                    "dimensions in tensor<?x3xf32> -> tensor<2x4xf32>"),
    ("tensor<2xf32>,tensor<f32>", "rank must match operand rank"),
    ("tensor<*xf32>,tensor<f32>", "refinement must be ranked"),
    ("tensor<2x3xf32>,!stablehlo.token", "refinement must be a tensor in tensor<f32> -> "
                                         "!stablehlo.token"),
    ("tensor<2x3xf32>,!not.a_type", "Invalid type string: !not.a_type"),
])
def test_refine_arguments_errors(types, message):
    with pytest.raises(PassError, match=message.replace("*", r"\*").replace("?", r"\?")):
        run_passes(shlo.parse("""
        func.func @main(%a: tensor<?x3xf32>, %b: tensor<f32>) -> tensor<f32> {
          return %b : tensor<f32>
        }"""), f"stablehlo-refine-arguments{{types={types}}}")


CALLS = """
module {
  func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
    %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?xf32>) -> tensor<i32>
    %0 = call @twice(%n, %x) : (tensor<i32>, tensor<?xf32>) -> tensor<?xf32>
    %1 = call @size(%n) : (tensor<i32>) -> tensor<i32>
    %2 = stablehlo.reshape %1 : (tensor<i32>) -> tensor<1xi32>
    %3 = stablehlo.dynamic_iota %2, dim = 0 : (tensor<1xi32>) -> tensor<?xf32>
    %4 = stablehlo.add %0, %3 : tensor<?xf32>
    return %4 : tensor<?xf32>
  }
  func.func private @twice(%n: tensor<i32>, %x: tensor<?xf32>) -> tensor<?xf32> {
    %0 = stablehlo.add %x, %x : tensor<?xf32>
    return %0 : tensor<?xf32>
  }
  func.func private @size(%n: tensor<i32>) -> tensor<i32> {
    %c = stablehlo.constant dense<1> : tensor<i32>
    %0 = stablehlo.multiply %n, %c : tensor<i32>
    return %0 : tensor<i32>
  }
}"""


def test_calls_are_specialized_and_constant_callees_inlined():
    out = refine(CALLS, "tensor<4xf32>")
    assert signature(out) == "(tensor<4xf32>) -> tensor<4xf32>"
    # the dimension argument is substituted and dropped; the functional one refined
    assert signature(out, "twice") == "(tensor<4xf32>) -> tensor<4xf32>"
    assert signature(out, "size") == "() -> tensor<i32>"
    calls = [op for op in out.walk() if op.name == "func.call"]
    assert [op.attr("callee").root for op in calls] == ["twice"]  # @size returned a constant
    assert [str(v.type) for v in calls[0].operands] == ["tensor<4xf32>"]
    x = np.array([1, 2, 3, 4], np.float32)
    np.testing.assert_array_equal(np.asarray(shlo.run(out, x)[0]),
                                  np.asarray(shlo.run(shlo.parse(CALLS), x)[0]))
    np.testing.assert_array_equal(np.asarray(shlo.run(out, x)[0]), 2 * x + np.arange(4))


def test_incompatible_refinement_keys_and_recursion_are_errors():
    with pytest.raises(ShloError) as e:
        refine("""
        module {
          func.func @main(%x: tensor<2xf32>, %y: tensor<3xf32>) -> tensor<?xf32> {
            %0 = stablehlo.bitcast_convert %x : (tensor<2xf32>) -> tensor<?xf32>
            %1 = stablehlo.bitcast_convert %y : (tensor<3xf32>) -> tensor<?xf32>
            %2 = call @f(%0) : (tensor<?xf32>) -> tensor<?xf32>
            %3 = call @f(%1) : (tensor<?xf32>) -> tensor<?xf32>
            return %3 : tensor<?xf32>
          }
          func.func private @f(%a: tensor<?xf32>) -> tensor<?xf32> {
            return %a : tensor<?xf32>
          }
        }""")
    msgs = [d.message for d in e.value.diagnostics]
    assert msgs[0].startswith("'func.func' op refined with incompatible refinement keys:\n"
                              "  curr=RefinementKey(f, toks=0, dim_args=[], "
                              "fn_args=[tensor<3xf32>])\n  prev=RefinementKey(f, toks=0, "
                              "dim_args=[], fn_args=[tensor<2xf32>])")
    assert any("operand type mismatch" in m for m in msgs[1:])  # the verifier, after the pass
    with pytest.raises(ShloError, match="Function f is being refined recursively"):
        refine("""
        module {
          func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
            %0 = call @f(%x) : (tensor<2xf32>) -> tensor<2xf32>
            return %0 : tensor<2xf32>
          }
          func.func private @f(%a: tensor<2xf32>) -> tensor<2xf32> {
            %0 = call @f(%a) : (tensor<2xf32>) -> tensor<2xf32>
            return %0 : tensor<2xf32>
          }
        }""")


def test_while_case_and_custom_call_refinement():
    out = refine("""
    func.func @main(%x: tensor<3xf32>, %i: tensor<i32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?x?xf32>) {
      %0 = "stablehlo.while"(%x) ({
      ^bb0(%a: tensor<?xf32>):
        %t = stablehlo.constant dense<false> : tensor<i1>
        stablehlo.return %t : tensor<i1>
      }, {
      ^bb0(%a: tensor<?xf32>):
        %n = stablehlo.negate %a : tensor<?xf32>
        stablehlo.return %n : tensor<?xf32>
      }) : (tensor<3xf32>) -> tensor<?xf32>
      %1 = "stablehlo.case"(%i) ({
        stablehlo.return %x : tensor<3xf32>
      }, {
        stablehlo.return %x : tensor<3xf32>
      }) : (tensor<i32>) -> tensor<?xf32>
      %s = stablehlo.constant dense<[2, 5]> : tensor<2xi64>
      %2 = stablehlo.custom_call @foo(%x, %s) {indices_of_shape_operands = dense<1> : tensor<1xi64>} : (tensor<3xf32>, tensor<2xi64>) -> tensor<?x?xf32>
      return %0, %1, %2 : tensor<?xf32>, tensor<?xf32>, tensor<?x?xf32>
    }""")
    assert signature(out) == ("(tensor<3xf32>, tensor<i32>) -> (tensor<3xf32>, tensor<3xf32>, "
                              "tensor<2x5xf32>)")
    types = result_types(out)
    assert types["stablehlo.negate"] == ["tensor<3xf32>"]
    assert types["stablehlo.while"] == ["tensor<3xf32>"]


def test_incompatible_operands_are_left_to_the_verifier():
    with pytest.raises(ShloError, match="requires the same shape for all operands and results"):
        refine("""
        func.func @main(%a: tensor<3xf32>, %b: tensor<4xf32>) -> tensor<?xf32> {
          %0 = stablehlo.abs %a : (tensor<3xf32>) -> tensor<?xf32>
          %1 = stablehlo.abs %b : (tensor<4xf32>) -> tensor<?xf32>
          %2 = stablehlo.add %0, %1 : tensor<?xf32>
          return %2 : tensor<?xf32>
        }""")


# --- jax.export programs with symbolic shapes: same results, and upstream's refinement -------


def _jax_programs() -> list[tuple[str, str, list[tuple[int, ...]]]]:
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    from jax import export

    a, b = export.symbolic_shape("a, b")
    f32 = jnp.float32

    def poly(x, y):
        return jnp.sin(x) * 2 + jnp.sum(y, axis=0)

    def iota_matmul(x):
        n = x.shape[0]
        z = jnp.concatenate([x, jnp.arange(n, dtype=x.dtype)]).reshape(2, n)
        return z @ jnp.ones((n, 3), x.dtype)

    def loop(x):
        def body(c):
            i, v = c
            return i + 1, jnp.tanh(v) * 1.5
        v = jax.lax.while_loop(lambda c: c[0] < 3, body, (0, x))[1]
        return jnp.max(v, axis=0) + jnp.pad(v, ((1, 0), (0, 0)))[1:].sum(axis=1).mean()

    def slicing(x):
        return x[1:] * x[:-1] + jnp.flip(x)[1:] + jnp.cumsum(x[:, None], axis=1)[1:, 0]

    def conv(x, w):
        return jax.lax.conv_general_dilated(x, w, (1, 1), "SAME")

    def gather(x, i):
        return x[i] + jnp.take(x, i[::-1], axis=0)

    def cond(x):
        return jax.lax.cond(x.sum() > 0, lambda v: v * 2, lambda v: jnp.flip(v), x)

    def scan(x):
        return jax.lax.scan(lambda c, v: (c + v, c * v), jnp.zeros(x.shape[1:], x.dtype), x)

    def bcast(x, y):
        return (jnp.broadcast_to(x[:, None], (x.shape[0], y.shape[0])) + y
                + jnp.eye(x.shape[0], y.shape[0]))

    def attention(x, w1, w2):  # jnp.var calls helpers whose select has a scalar predicate
        h = jax.nn.gelu(x @ w1) @ w2
        att = jax.nn.softmax(jnp.einsum("bsd,btd->bst", h, h) / 8.0, axis=-1)
        y = jnp.einsum("bst,btd->bsd", att, h)
        y = (y - y.mean(-1, keepdims=True)) / jnp.sqrt(y.var(-1, keepdims=True) + 1e-5)
        return jnp.tanh(y + x)

    def maxpool(x):
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2), (1, 2), "VALID")

    def segment(x):
        return jax.ops.segment_sum(x, jnp.arange(x.shape[0]) % 2, num_segments=2)

    cases = [("argsort", lambda x: jnp.argsort(x, axis=-1), [(a, b)], [(3, 4)]),
             ("segment_sum", segment, [(a, 3)], [(5, 3)]),
             ("fft", lambda x: jnp.fft.fft(x).real, [(a, 8)], [(3, 8)]),
             ("pad", lambda x: jnp.pad(x, ((1, 2), (0, 1))), [(a, b)], [(3, 4)]),
             ("maxpool", maxpool, [(a, 2 * b)], [(3, 4)]),
             ("one_hot", lambda x: jax.nn.one_hot(jnp.argmax(x, axis=1), x.shape[1]),
              [(a, b)], [(4, 3)]),
             ("poly", poly, [(a, b), (3, b)], [(4, 3), (3, 3)]),
             ("attention", attention, [(a, b, 16), (16, 32), (32, 16)],
              [(2, 5, 16), (16, 32), (32, 16)]),
             ("conv", conv, [(a, 1, b, b), (2, 1, 3, 3)], [(2, 1, 5, 5), (2, 1, 3, 3)]),
             ("gather", gather, [(a, 3), (b,)], [(5, 3), (4,)]),
             ("cond", cond, [(a,)], [(3,)]),
             ("scan", scan, [(a, b)], [(3, 4)]),
             ("bcast", bcast, [(a,), (b,)], [(3,), (4,)]),
             ("iota_matmul", iota_matmul, [(a,)], [(5,)]),
             ("loop", loop, [(a, 2)], [(6, 2)]),
             ("slicing", slicing, [(a,)], [(7,)])]
    out = []
    for name, fn, sym, concrete in cases:
        specs = [jax.ShapeDtypeStruct(s, jnp.int32 if name == "gather" and k else f32)
                 for k, s in enumerate(sym)]
        exp = export.export(jax.jit(fn))(*specs)
        types = [("i32" if name == "gather" and k else "f32") for k in range(len(sym))]
        out.append((name, exp.mlir_module(), list(zip(concrete, types))))
    return out


@pytest.fixture(scope="module")
def jax_programs():
    return _jax_programs()


def _types(args: list[tuple[tuple[int, ...], str]]) -> str:
    return ",".join(f"tensor<{'x'.join(map(str, s))}x{t}>" for s, t in args)


def test_refined_jax_programs_are_static_and_compute_the_same(jax_programs):
    for name, text, shapes in jax_programs:
        module = shlo.parse(text, name)
        refined = run_passes(module, f"stablehlo-refine-arguments{{types={_types(shapes)}}},"
                                     "stablehlo-refine-shapes")
        dynamic = [op.name for op in refined.walk() for t in op.result_types
                   if isinstance(t, TensorType) and not t.is_static]
        assert dynamic == [], name
        rng = np.random.default_rng(0)
        args = [rng.standard_normal(s).astype(np.float32) if t == "f32" else
                rng.integers(0, 3, s).astype(np.int32) for s, t in shapes]
        for want, got in zip(shlo.run(module, *args), shlo.run(refined, *args)):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want), err_msg=name)


def _upstream(text: str, pipeline: str) -> str | None:
    """jaxlib's build of upstream's passes (as /work/briefs/jaxpass.py runs them)."""
    try:
        from jaxlib.mlir import ir, passmanager
        from jaxlib.mlir._mlir_libs import _jax_mlir_ext
        from jaxlib.mlir.dialects import chlo, stablehlo
    except ImportError:
        return None
    reg = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(reg)
    ctx = ir.Context()
    ctx.append_dialect_registry(reg)
    ctx.load_all_available_dialects()
    stablehlo.register_dialect(ctx)
    chlo.register_dialect(ctx)
    stablehlo.register_stablehlo_passes()
    with ctx:
        m = ir.Module.parse(text)
        passmanager.PassManager.parse(pipeline).run(m.operation)
        return str(m)


def test_same_as_upstream_on_jax_programs(jax_programs):
    for name, text, shapes in jax_programs:
        pipeline = (f"builtin.module(stablehlo-refine-arguments{{types={_types(shapes)}}},"
                    "stablehlo-refine-shapes)")
        up = _upstream(text, pipeline)
        if up is None:
            pytest.skip("jaxlib's MLIR bindings are not available")
        ours = run_passes(shlo.parse(text, name), pipeline)
        assert shlo.format(ours) == shlo.format(shlo.parse(up)), name


def test_both_refuse_a_function_called_with_different_dimension_arguments():
    """jax's `n // 2` and `n % 3` call one helper with different constant dimension arguments:
    upstream refuses (jax inlines before refining); so does shlo, with upstream's messages."""
    jax = pytest.importorskip("jax")
    from jax import export

    (a,) = export.symbolic_shape("a")

    def floordiv(x):
        n = x.shape[0]
        return x.reshape(2, n // 2).T @ jax.numpy.ones((2, n % 3 + 1), x.dtype)

    text = export.export(jax.jit(floordiv))(
        jax.ShapeDtypeStruct((2 * a,), jax.numpy.float32)).mlir_module()
    pipeline = ("builtin.module(stablehlo-refine-arguments{types=tensor<6xf32>},"
                "stablehlo-refine-shapes)")
    with pytest.raises(ShloError) as ours:
        run_passes(shlo.parse(text), pipeline)
    msgs = [d.message for d in ours.value.diagnostics]
    where = ("'func.func' op refined with incompatible refinement keys:\n"
             "  curr=RefinementKey(_where_2, toks=0, dim_args=[0, 1, 2], fn_args=[])\n"
             "  prev=RefinementKey(_where_2, toks=0, dim_args=[0, 2, 3], fn_args=[])")
    assert msgs[:2] == [where] * 2, msgs  # upstream reports it twice too
    assert msgs[-1] == "'func.call' op incorrect number of operands for callee: expected 0, got 3"
    try:
        _upstream(text, pipeline)
    except ImportError:
        return
    except Exception as e:  # noqa: BLE001 - jaxlib's MLIRError
        assert "refined with incompatible refinement keys" in str(e)
        assert "incorrect number of operands for callee" in str(e)
    else:
        raise AssertionError("upstream refined it")


# --- the corpus's shape-polymorphic programs (testdata/dynamic) --------------------------------

DYNAMIC = Path(__file__).resolve().parents[3] / "shared" / "conformance" / "testdata" / "dynamic"
SIZE = 3  # every `?` of main's arguments, and the dimension argument


def _static(t: Any) -> Any:
    if isinstance(t, TensorType) and t.shape is not None:
        return TensorType(tuple(SIZE if d is None else d for d in t.shape), t.element_type,
                          t.encoding)
    return t


def _value(t: TensorType, rng: np.random.Generator) -> np.ndarray:
    et = t.element_type
    if t.shape == () and et.is_integer:
        return np.array(SIZE, dtype=et.dtype)  # jax's dimension argument
    if et.is_float:
        return rng.standard_normal(t.shape).astype(et.dtype)
    if et.is_complex:
        return (rng.standard_normal(t.shape) + 1j * rng.standard_normal(t.shape)).astype(et.dtype)
    if et.is_bool:
        return rng.integers(0, 2, t.shape).astype(bool)
    return rng.integers(0, 3, t.shape).astype(et.dtype)


@pytest.mark.skipif(not DYNAMIC.is_dir(), reason="no ../shared/conformance")
@pytest.mark.parametrize("name", sorted(p.name for p in DYNAMIC.glob("*.mlir"))[::25]
                         if DYNAMIC.is_dir() else [])
def test_corpus_dynamic_programs(name):
    """All 388 pass this (every 25th here): refined as jaxlib's upstream passes refine them
    (some `?` stay, as upstream's: e.g. a compare takes its lhs's shape), computing what the
    unrefined program computes."""
    text = (DYNAMIC / name).read_text()
    module = shlo.parse(text, name)
    types = [_static(a.type) for a in module.function("main").regions[0].blocks[0].arguments]
    pipeline = (f"builtin.module(stablehlo-refine-arguments{{types={','.join(map(str, types))}}},"
                "stablehlo-refine-shapes)")
    refined = run_passes(module, pipeline)
    assert shlo.format(module).count("?") > shlo.format(refined).count("?")
    up = _upstream(text, pipeline)
    if up is not None:
        assert shlo.format(refined) == shlo.format(shlo.parse(up))
    rng = np.random.default_rng(1)
    args = [_value(t, rng) for t in types]
    for want, got in zip(shlo.run(module, *args), shlo.run(refined, *args)):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
