"""jax.export artifacts: `Exported.mlir_module_serialized` (a portable artifact) and
`Exported.serialize()` (a flatbuffer around it) run in shlo with jax's calling convention and
match what XLA computes (jax on CPU)."""

import dataclasses

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax import export  # noqa: E402

from shlo.bytecode import deserialize  # noqa: E402
from shlo.bytecode.jax_export import is_jax_exported, read_exported  # noqa: E402
from shlo.translate import run_exported  # noqa: E402

RNG = np.random.default_rng(0)
W1 = RNG.normal(0, 0.2, (64, 32)).astype(np.float32)
B1 = RNG.normal(0, 0.1, (32,)).astype(np.float32)
W2 = RNG.normal(0, 0.2, (32, 10)).astype(np.float32)
B2 = RNG.normal(0, 0.1, (10,)).astype(np.float32)


def mlp(x):  # examples/make_mlp.py's model: weights closed over, exported as constants
    h = jax.nn.relu(x @ W1 + B1)
    return jax.nn.softmax(h @ W2 + B2, axis=-1)


def attention(q, k, v):
    s = q @ k.T / np.float32(np.sqrt(q.shape[-1]))
    return jax.nn.softmax(s, axis=-1) @ v


def loop(x, n):
    return jax.lax.fori_loop(0, n, lambda i, acc: acc * 0.5 + jnp.sin(acc), x)


def several(x, unused, y):  # an unused argument (not kept by the module), two results
    return jnp.cumsum(x, axis=0), {"m": jnp.max(y), "i": jnp.argmax(y).astype(jnp.int32)}


CASES = {
    "mlp": (mlp, [RNG.normal(0, 1, (2, 64)).astype(np.float32)]),
    "attention": (attention, [RNG.normal(size=(4, 8)).astype(np.float32),
                              RNG.normal(size=(6, 8)).astype(np.float32),
                              RNG.normal(size=(6, 8)).astype(np.float32)]),
    "loop": (loop, [RNG.normal(size=(5,)).astype(np.float32), np.int32(7)]),
    "several": (several, [RNG.normal(size=(3, 4)).astype(np.float32), np.float32(1),
                          RNG.normal(size=(9,)).astype(np.float32)]),
}


def _check(got, expected):
    leaves = jax.tree_util.tree_leaves(expected)
    assert len(got) == len(leaves)
    for g, e in zip(got, leaves):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-5, atol=2e-6)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("platforms", [("cpu",), ("cpu", "cuda")])
def test_serialized_exported_runs_like_xla(name, platforms):
    fn, args = CASES[name]
    exp = export.export(jax.jit(fn), platforms=list(platforms))(*args)
    expected = jax.jit(fn)(*args)
    data = exp.serialize()
    assert is_jax_exported(data)
    e = read_exported(data)
    assert e.platforms == list(platforms) and e.function_name == exp.fun_name
    assert list(e.module_kept_var_idx) == list(exp.module_kept_var_idx)
    _check(run_exported(data, *args), expected)


@pytest.mark.parametrize("name", sorted(CASES))
def test_mlir_module_serialized_runs_like_xla(name):
    from shlo.interpreter.api import run

    fn, args = CASES[name]
    exp = export.export(jax.jit(fn))(*args)
    module = deserialize(exp.mlir_module_serialized)
    kept = [args[i] for i in exp.module_kept_var_idx]
    _check(run(module, *kept, entry="main"), jax.jit(fn)(*args))


def _effect_class():
    from jax._src import effects

    class ShloTestEffect(effects.Effect):
        def __eq__(self, other):
            return type(other) is type(self)

        def __hash__(self):
            return hash(type(self))

    for kind in (effects.lowerable_effects, effects.ordered_effects):
        kind.add_type(ShloTestEffect)
    return ShloTestEffect


def test_ordered_effect_tokens():
    """A module with an ordered effect takes and returns one token per effect, after the
    platform index and before the arguments (jax's calling convention >= 9)."""
    from jaxlib.mlir.dialects import stablehlo as jhlo

    effect = _effect_class()
    x = np.arange(3, dtype=np.float32)
    exp = export.export(jax.jit(lambda a: jnp.sin(a) * 2))(x)
    text = """
func.func public @main(%arg0: !stablehlo.token {jax.token = true}, %arg1: tensor<3xf32>) -> (!stablehlo.token {jax.token = true}, tensor<3xf32>) {
  %0 = stablehlo.sine %arg1 : tensor<3xf32>
  %c = stablehlo.constant dense<2.0> : tensor<3xf32>
  %1 = stablehlo.multiply %0, %c : tensor<3xf32>
  %t = stablehlo.after_all %arg0 : !stablehlo.token
  return %t, %1 : !stablehlo.token, tensor<3xf32>
}"""
    art = jhlo.serialize_portable_artifact_str(text, "1.0.0")
    with_effect = dataclasses.replace(exp, mlir_module_serialized=art,
                                      ordered_effects=(effect(),))
    data = with_effect.serialize()
    e = read_exported(data)
    assert len(e.ordered_effects) == 1 and "ShloTestEffect" in e.ordered_effects[0]
    expected = jax.jit(export.deserialize(data).call)(x)
    _check(run_exported(data, x), [expected])


def test_cli_runs_exported_file(tmp_path):
    import subprocess
    import sys

    fn, args = CASES["mlp"]
    exp = export.export(jax.jit(fn))(*args)
    p = tmp_path / "mlp.jax_exported"
    p.write_bytes(exp.serialize())
    a = tmp_path / "x.npy"
    np.save(a, args[0])
    out = tmp_path / "out.npz"
    proc = subprocess.run([sys.executable, "-m", "shlo", "run", str(p), str(a), "--out", str(out)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    with np.load(out) as z:
        got = [z[k] for k in z.files]
    _check(got, jax.jit(fn)(*args))


def test_wrong_argument_count_is_an_error():
    from shlo.errors import ShloError

    fn, args = CASES["attention"]
    data = export.export(jax.jit(fn))(*args).serialize()
    with pytest.raises(ShloError, match="arguments"):
        run_exported(data, args[0])
