"""Differential tier: models built with third-party JAX libraries (Flax linen and nnx, Equinox,
Keras 3 on the JAX backend, Hugging Face Flax GPT-2), random-initialised at small sizes,
lowered with ``jax.jit(f).lower(...)`` and run unchanged on shlo, against XLA's result of the
same jitted function. Each library's cases skip when it is not installed (they run in the zoo
environment: see benchmarks/zoo/README.md); nothing of the models is committed.

Tolerance: shlo and XLA both compute in f32 but sum in different orders, so the comparison is
relative to the output's scale: ``max |shlo - xla| <= 1e-4 * max(1, max |xla|)``.
"""

from __future__ import annotations

import os
from typing import Any, Callable

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "jax")
jax = pytest.importorskip("jax")
jnp = jax.numpy

import shlo  # noqa: E402

RNG = np.random.default_rng(0)


def _run_both(f: Callable[..., Any], *args: Any) -> None:
    """Lower ``f`` at ``args``, run the lowering on shlo (flattened arguments) and XLA."""
    lowered = jax.jit(f).lower(*args)
    leaves = [np.asarray(a) for a in jax.tree_util.tree_leaves(args)]
    got = shlo.run(lowered, *leaves)
    want = [np.asarray(w) for w in jax.tree_util.tree_leaves(jax.jit(f)(*args))]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype
        scale = max(1.0, float(np.max(np.abs(w.astype(np.float64))))) if w.size else 1.0
        err = float(np.max(np.abs(g.astype(np.float64) - w.astype(np.float64)))) \
            if w.size else 0.0
        assert err <= 1e-4 * scale, (err, scale)


def _x(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def test_flax_linen_cnn_with_batchnorm_inference_and_a_training_gradient() -> None:
    nn = pytest.importorskip("flax.linen")

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x: Any, train: bool = False) -> Any:
            x = nn.Conv(8, (3, 3))(x)
            x = nn.BatchNorm(use_running_average=not train)(x)
            x = nn.relu(x)
            x = nn.avg_pool(x, (2, 2), (2, 2))
            x = x.reshape((x.shape[0], -1))
            return nn.Dense(10)(x)

    model = CNN()
    x = _x(4, 8, 8, 3)
    variables = model.init(jax.random.key(0), x)
    _run_both(lambda v, x: model.apply(v, x), variables, x)

    y = jax.nn.one_hot(np.arange(4) % 10, 10)

    def loss(params: Any, stats: Any, x: Any) -> Any:
        out, _ = model.apply({"params": params, "batch_stats": stats}, x, train=True,
                             mutable=["batch_stats"])
        return jnp.mean((out - y) ** 2)

    _run_both(jax.value_and_grad(loss), variables["params"], variables["batch_stats"], x)


def test_flax_nnx_mlp() -> None:
    nnx = pytest.importorskip("flax.nnx")

    class MLP(nnx.Module):
        def __init__(self, rngs: Any) -> None:
            self.l1 = nnx.Linear(32, 64, rngs=rngs)
            self.l2 = nnx.Linear(64, 10, rngs=rngs)

        def __call__(self, x: Any) -> Any:
            return self.l2(nnx.gelu(self.l1(x)))

    graphdef, state = nnx.split(MLP(nnx.Rngs(0)))
    _run_both(lambda s, x: nnx.merge(graphdef, s)(x), state, _x(16, 32))


def test_equinox_mlp_vmapped_and_its_gradient() -> None:
    eqx = pytest.importorskip("equinox")
    model = eqx.nn.MLP(16, 4, 32, 2, key=jax.random.key(1))
    params, static = eqx.partition(model, eqx.is_array)
    x, y = _x(8, 16), _x(8, 4)

    def loss(p: Any, x: Any, y: Any) -> Any:
        return jnp.mean((jax.vmap(eqx.combine(p, static))(x) - y) ** 2)

    _run_both(lambda p, x: jax.vmap(eqx.combine(p, static))(x), params, x)
    _run_both(jax.value_and_grad(loss), params, x, y)


def test_keras_cnn_and_lstm_on_the_jax_backend() -> None:
    keras = pytest.importorskip("keras")
    if keras.backend.backend() != "jax":
        pytest.skip("keras is not on the JAX backend")
    keras.utils.set_random_seed(0)
    cnn = keras.Sequential([keras.Input((8, 8, 3)), keras.layers.Conv2D(4, 3, padding="same"),
                            keras.layers.BatchNormalization(), keras.layers.ReLU(),
                            keras.layers.GlobalAveragePooling2D(),
                            keras.layers.Dense(5, activation="softmax")])
    lstm = keras.Sequential([keras.Input((12, 6)), keras.layers.LSTM(8), keras.layers.Dense(3)])
    for model, x in ((cnn, _x(2, 8, 8, 3)), (lstm, _x(2, 12, 6))):
        tv = [np.asarray(v.value) for v in model.trainable_variables]
        ntv = [np.asarray(v.value) for v in model.non_trainable_variables]
        _run_both(lambda tv, ntv, x, m=model: m.stateless_call(tv, ntv, x, training=False)[0],
                  tv, ntv, x)


def test_hugging_face_flax_gpt2_forward() -> None:
    transformers = pytest.importorskip("transformers")
    if not hasattr(transformers, "FlaxGPT2LMHeadModel"):
        pytest.skip("this transformers release has no Flax models")
    pytest.importorskip("flax")
    config = transformers.GPT2Config(n_layer=2, n_embd=32, n_head=4, vocab_size=97,
                                     n_positions=16)
    model = transformers.FlaxGPT2LMHeadModel(config, seed=0)
    ids = (np.arange(2 * 12).reshape(2, 12) % 97).astype(np.int32)
    _run_both(lambda p, ids: model(ids, params=p).logits, model.params, ids)
