"""Build the real-world program zoo: random-initialised models from third-party libraries,
exported as StableHLO text into a cache outside git, with inputs and reference outputs.

    python benchmarks/zoo/make_zoo.py [--dir DIR] [--group G ...] [--only SUBSTR] [--big]
                                      [--torch-xla-python PY] [--list]

Needs the framework libraries (see README.md beside this file for the virtualenv): jax/jaxlib,
flax, optax, transformers (a release that still ships the Flax models), equinox, keras, torch,
torchvision, torch-mlir; torch-xla optionally, in its own interpreter (--torch-xla-python).
A group whose library is missing is skipped with a note. Weights are never committed: they
live in the cache (default ~/.cache/shlo-zoo, or $SHLO_ZOO_DIR).

Each entry ``NAME`` writes, in the cache directory:
  NAME.mlir             the program text (``jax.jit(f).lower(*args).as_text()`` or the
                        exporter's equivalent)
  NAME.inputs.npz       the flattened arguments (see zoo_common.pack)
  NAME.ref.npz          XLA's (or, for torch-mlir, PyTorch eager's) results on them
  NAME.ref64.npz        where the framework allows: the same model computed in float64
                        (inputs and weights upcast, the framework's compute dtype set to f64)
  NAME.json             the manifest line: library, kind, files, tolerance, timing, notes,
                        custom-call targets and dialects seen in the text
and, for a few, NAME.mlirbc (``Exported.mlir_module_serialized``) and NAME.jax_exported
(``Exported.serialize()``). XLA's time is the median of 5 calls of the jitted function after a
warm-up, from numpy inputs to numpy outputs (host transfers included).

Every group runs in its own child process (so XLA_FLAGS / KERAS_BACKEND can differ and one
library's crash does not stop the rest).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from zoo_common import GROUPS, pack, zoo_dir  # noqa: E402

OUT: Path = zoo_dir()
ONLY: str | None = None
BIG = False
LOG: list[str] = []


# ----------------------------------------------------------------------------- helpers


def median_time(fn, n: int = 5) -> tuple[float, list[float]]:
    fn()  # warm-up (compilation, caches)
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times


def scan_text(text: str) -> dict:
    """What the developer needs to know about a program without opening it."""
    targets = sorted(set(re.findall(r"custom_call\s*@([\w.$-]+)", text))
                     | set(re.findall(r'call_target_name\s*=\s*"([^"]+)"', text)))
    ops = re.findall(r"(?:^|[=\s\"])((?:[a-z_]+)\.[a-z_][\w.]*)[\s(\"{<]", text, re.M)
    dialects: dict[str, int] = {}
    for op in ops:
        d = op.split(".")[0]
        if d in {"stablehlo", "chlo", "func", "sdy", "mhlo", "arith", "tensor", "math",
                 "shape", "tosa", "linalg", "torch", "vhlo", "scf", "builtin", "ml_program",
                 "check", "quant"}:
            dialects[op] = dialects.get(op, 0) + 1
    foreign = sorted({op for op in dialects if op.split(".")[0] not in ("stablehlo", "func")})
    return {
        "custom_calls": targets,
        "non_stablehlo_ops": {op: dialects[op] for op in foreign},
        "dense_resource": text.count("dense_resource<"),
        "dialect_resources": "dialect_resources" in text,
        "sdy": sorted(set(re.findall(r"(#?sdy\.[a-z_]+)", text))),
        "mhlo_attrs": sorted(set(re.findall(r"(mhlo\.[a-z_]+)", text))),
        "text_bytes": len(text),
        "ops_approx": text.count(" = ") + text.count("stablehlo.return"),
    }


def want(name: str) -> bool:
    return ONLY is None or ONLY in name


def write_entry(name: str, *, library: str, kind: str, group: str, text: str,
                inputs: list, outputs: list, outputs64: list | None = None,
                rtol: float, atol: float, notes: str = "", compare: dict | None = None,
                xla_time: tuple[float, list[float]] | None = None,
                time_source: str = "xla", extra_files: dict | None = None,
                extra: dict | None = None) -> None:
    files = {"mlir": f"{name}.mlir", "inputs": f"{name}.inputs.npz", "ref": f"{name}.ref.npz"}
    (OUT / files["mlir"]).write_text(text)
    ins, in_dtypes = pack(inputs)
    np.savez(OUT / files["inputs"], **ins)
    outs, out_dtypes = pack(outputs)
    np.savez(OUT / files["ref"], **outs)
    if outputs64 is not None:
        files["ref64"] = f"{name}.ref64.npz"
        o64, _ = pack(outputs64)
        np.savez(OUT / files["ref64"], **o64)
    files.update(extra_files or {})
    entry = {
        "name": name, "library": library, "kind": kind, "group": group, "files": files,
        "rtol": rtol, "atol": atol, "compare": compare or {}, "notes": notes,
        "in_dtypes": in_dtypes, "in_shapes": [list(np.shape(a)) for a in inputs],
        "out_dtypes": out_dtypes, "out_shapes": [list(np.shape(a)) for a in outputs],
        "time_source": time_source,
        "xla_time_s": xla_time[0] if xla_time else None,
        "xla_times_s": xla_time[1] if xla_time else None,
        **scan_text(text), **(extra or {}),
    }
    (OUT / f"{name}.json").write_text(json.dumps(entry, indent=1))
    msg = (f"  {name}: {len(text) / 1e6:.1f} MB text, {len(inputs)} in, {len(outputs)} out, "
           f"xla {entry['xla_time_s'] * 1e3 if entry['xla_time_s'] else float('nan'):.2f} ms"
           + (f", custom calls {entry['custom_calls']}" if entry["custom_calls"] else ""))
    print(msg, flush=True)


def skip(name: str, why: str) -> None:
    print(f"  SKIP {name}: {why}", flush=True)
    (OUT / f"{name}.skipped.txt").write_text(why + "\n")


def guarded(fn):
    """Run one builder; an exception skips that entry (with the reason) and not the group."""
    def run(*a, **k):
        try:
            fn(*a, **k)
        except Exception as e:  # noqa: BLE001 - a builder's failure is data, not a crash
            name = k.get("name") or (a[0] if a and isinstance(a[0], str) else fn.__name__)
            skip(name, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            traceback.print_exc(limit=3)
    return run


# ----------------------------------------------------------------------------- JAX side


def _jax():
    import jax
    import jax.numpy as jnp
    return jax, jnp


def upcast(tree):
    """f16/bf16/f8/f32 -> f64, c64 -> c128; integers and bools unchanged."""
    jax, _ = _jax()

    def up(a):
        a = np.asarray(a)
        if a.dtype.kind == "c":
            return a.astype(np.complex128)
        if a.dtype.kind == "f" or a.dtype.name in ("bfloat16",) or a.dtype.name.startswith("float"):
            return a.astype(np.float64)
        return a
    return jax.tree_util.tree_map(up, tree)


def add_jax(name: str, library: str, kind: str, group: str, f, args: tuple, *,
            rtol: float = 1e-5, atol: float = 1e-5, notes: str = "", f64="auto",
            compare: dict | None = None, debug_info: bool = False, export: bool = False,
            jitted=None, x64: bool = False) -> None:
    """Lower ``f`` on ``args`` (a tuple of pytrees of numpy arrays), save text, inputs, XLA's
    outputs and timing; ``f64``: "auto" evaluates ``f`` under x64 on upcast args, a callable
    is evaluated that way instead, None skips the float64 reference."""
    if not want(name):
        return
    jax, _ = _jax()
    with jax.enable_x64(x64):
        jf = jitted if jitted is not None else jax.jit(f, keep_unused=True)
        lowered = jf.lower(*args)
        text = lowered.as_text(debug_info=debug_info)
        outs = jax.tree_util.tree_leaves(jax.device_get(jf(*args)))
        t = median_time(lambda: jax.device_get(jf(*args)))
        extra_files = {}
        if export:
            exp = jax.export.export(jf)(*args)
            (OUT / f"{name}.mlirbc").write_bytes(exp.mlir_module_serialized)
            (OUT / f"{name}.jax_exported").write_bytes(exp.serialize())
            (OUT / f"{name}.export.mlir").write_text(exp.mlir_module())
            extra_files = {"mlirbc": f"{name}.mlirbc", "jax_exported": f"{name}.jax_exported",
                           "export_mlir": f"{name}.export.mlir"}
    outs64 = None
    if f64 is not None:
        try:
            with jax.enable_x64(True):
                g = f if f64 == "auto" else f64
                outs64 = [np.asarray(o) for o in jax.tree_util.tree_leaves(
                    jax.device_get(jax.jit(g)(*upcast(args))))]
            if len(outs64) != len(outs):
                outs64 = None
        except Exception as e:  # noqa: BLE001
            notes += f" [no f64 reference: {type(e).__name__}: {str(e).splitlines()[0][:100]}]"
            outs64 = None
    write_entry(name, library=library, kind=kind, group=group, text=text,
                inputs=jax.tree_util.tree_leaves(args), outputs=outs, outputs64=outs64,
                rtol=rtol, atol=atol, notes=notes, compare=compare, xla_time=t,
                extra_files=extra_files,
                extra={"debug_info": debug_info, "x64": x64})
    if export:
        # The jax.export text and bytecode as entries of their own: same inputs and results.
        for suffix, key in ((".export", "export_mlir"), (".mlirbc", "mlirbc")):
            base = json.loads((OUT / f"{name}.json").read_text())
            base["name"] = name + suffix
            base["kind"] = kind + (" (jax.export text)" if key == "export_mlir"
                                   else " (jax.export bytecode, portable artifact)")
            base["files"] = dict(base["files"], mlir=base["files"][key])
            base["format"] = "bytecode" if key == "mlirbc" else "text"
            if key == "export_mlir":
                base.update(scan_text((OUT / base["files"][key]).read_text()))
            (OUT / f"{name}{suffix}.json").write_text(json.dumps(base, indent=1))


def rng(seed=0):
    return np.random.default_rng(seed)


# ----------------------------------------------------------------------------- hf (Flax)


def group_hf():
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    jax, jnp = _jax()
    import optax
    import transformers as tf
    from transformers import (BertConfig, FlaxBertModel, FlaxGPT2LMHeadModel, FlaxGPT2Model,
                              FlaxResNetForImageClassification, FlaxT5ForConditionalGeneration,
                              FlaxViTModel, FlaxWhisperForConditionalGeneration, GPT2Config,
                              ResNetConfig, T5Config, ViTConfig, WhisperConfig)
    lib = f"transformers {tf.__version__} (Flax)"
    r = rng(1)
    # transformers 4.57's Flax T5 calls jnp.clip(a_min=, a_max=), keywords jax 0.10 removed:
    # translate them (a compatibility shim of this script; the lowered program is the same).
    if not getattr(jnp.clip, "_zoo_shim", False):
        clip = jnp.clip

        def clip_compat(x, min=None, max=None, *, a_min=None, a_max=None, **k):  # noqa: A002
            return clip(x, a_min if min is None else min, a_max if max is None else max, **k)
        clip_compat._zoo_shim = True
        jnp.clip = clip_compat

    def to_np(tree):
        return jax.tree_util.tree_map(np.asarray, tree)

    def hf64(cls, config):
        """float64 reference: the same model class with dtype=float64, params upcast."""
        def g(params, *a, **k):
            m = cls(config, dtype=jnp.float64, _do_init=False)
            return m(*a, params=params, **k)
        return g

    gcfg = GPT2Config(n_layer=2, n_embd=768, n_head=12, n_positions=1024, vocab_size=50257)

    @guarded
    def gpt2():
        m = FlaxGPT2LMHeadModel(gcfg, seed=0)
        p = to_np(m.params)
        ids = r.integers(0, gcfg.vocab_size, (1, 128)).astype(np.int32)
        f = lambda p, ids: m(ids, params=p).logits  # noqa: E731
        g64 = hf64(FlaxGPT2LMHeadModel, gcfg)
        add_jax("hf_gpt2_fwd", lib, "GPT-2 LM forward, 2 layers, d=768, vocab 50257, 1x128",
                "hf", f, (p, ids), rtol=1e-4, atol=1e-4,
                f64=lambda p, ids: g64(p, ids).logits)
        add_jax("hf_gpt2_fwd_debuginfo", lib, "same, as_text(debug_info=True)", "hf", f,
                (p, ids), rtol=1e-4, atol=1e-4, f64=None, debug_info=True)

        prompt = r.integers(0, gcfg.vocab_size, (1, 16)).astype(np.int32)

        def greedy(p, prompt):
            return m.generate(prompt, params=p, max_new_tokens=8, do_sample=False).sequences
        add_jax("hf_gpt2_greedy", lib, "GPT-2 greedy decoding (generate, KV cache, while loop),"
                " 16 + 8 tokens", "hf", greedy, (p, prompt), rtol=0, atol=0, f64=None,
                notes="token ids: exact")

        opt = optax.adamw(1e-3, weight_decay=0.01)
        state = to_np(opt.init(p))
        batch = r.integers(0, gcfg.vocab_size, (2, 128)).astype(np.int32)

        def make_step(model_call):
            def step(p, s, batch):
                def loss(p):
                    logits = model_call(p, batch[:, :-1])
                    return optax.softmax_cross_entropy_with_integer_labels(
                        logits, batch[:, 1:]).mean()
                lv, gr = jax.value_and_grad(loss)(p)
                upd, s = opt.update(gr, s, p)
                return optax.apply_updates(p, upd), s, lv
            return step
        step = make_step(lambda p, x: m(x, params=p).logits)
        step64 = make_step(lambda p, x: g64(p, x).logits)
        add_jax("hf_gpt2_train_adamw", lib, "GPT-2 AdamW training step (optax), batch 2x128",
                "hf", step, (p, state, batch), rtol=1e-4, atol=2e-6, f64=step64,
                notes="outputs: updated params, optimizer state, loss")

    @guarded
    def bert():
        cfg = BertConfig(hidden_size=512, num_hidden_layers=4, num_attention_heads=8,
                         intermediate_size=2048, vocab_size=30522, max_position_embeddings=512)
        m = FlaxBertModel(cfg, seed=0)
        ids = r.integers(0, cfg.vocab_size, (2, 128)).astype(np.int32)
        mask = np.ones((2, 128), np.int32)
        mask[1, 100:] = 0
        tt = np.zeros((2, 128), np.int32)
        f = lambda p, ids, mask, tt: m(ids, mask, tt, params=p)[:2]  # noqa: E731
        g64 = hf64(FlaxBertModel, cfg)
        add_jax("hf_bert", lib, "BERT encoder, 4 layers, d=512, 2x128 with padding mask", "hf",
                f, (to_np(m.params), ids, mask, tt), rtol=1e-4, atol=1e-4,
                f64=lambda p, ids, mask, tt: g64(p, ids, mask, tt)[:2])

    @guarded
    def vit():
        cfg = ViTConfig(image_size=224, patch_size=16, hidden_size=384, num_hidden_layers=4,
                        num_attention_heads=6, intermediate_size=1536)
        m = FlaxViTModel(cfg, seed=0)
        x = r.standard_normal((2, 3, 224, 224)).astype(np.float32)
        g64 = hf64(FlaxViTModel, cfg)
        add_jax("hf_vit", lib, "ViT, 4 layers, d=384, patch 16, 2x3x224x224", "hf",
                lambda p, x: m(x, params=p)[:2], (to_np(m.params), x), rtol=1e-4, atol=1e-4,
                f64=lambda p, x: g64(p, x)[:2])

    @guarded
    def resnet():
        cfg = ResNetConfig(embedding_size=64, hidden_sizes=[64, 128, 256, 512],
                           depths=[2, 2, 2, 2], layer_type="basic", num_labels=1000)
        m = FlaxResNetForImageClassification(cfg, seed=0)
        x = r.standard_normal((1, 3, 224, 224)).astype(np.float32)
        p = to_np({"params": m.params["params"], "batch_stats": m.params["batch_stats"]})
        g64 = hf64(FlaxResNetForImageClassification, cfg)
        add_jax("hf_resnet18", lib, "ResNet-18 shape (basic blocks 2-2-2-2), inference, "
                "1x3x224x224", "hf", lambda p, x: m(x, params=p, train=False).logits, (p, x),
                rtol=1e-4, atol=1e-4, f64=lambda p, x: g64(p, x, train=False).logits)

    @guarded
    def t5():
        cfg = T5Config(d_model=512, d_kv=64, d_ff=2048, num_layers=4, num_decoder_layers=4,
                       num_heads=8, vocab_size=32128)
        m = FlaxT5ForConditionalGeneration(cfg, seed=0)
        ids = r.integers(0, cfg.vocab_size, (1, 128)).astype(np.int32)
        dec = r.integers(0, cfg.vocab_size, (1, 32)).astype(np.int32)
        g64 = hf64(FlaxT5ForConditionalGeneration, cfg)
        add_jax("hf_t5", lib, "T5 encoder-decoder, 4+4 layers, d=512, enc 128, dec 32", "hf",
                lambda p, i, d: m(input_ids=i, decoder_input_ids=d, params=p).logits,
                (to_np(m.params), ids, dec), rtol=1e-4, atol=1e-4,
                f64=lambda p, i, d: g64(p, input_ids=i, decoder_input_ids=d).logits)

    @guarded
    def whisper():
        cfg = WhisperConfig(d_model=384, encoder_layers=2, decoder_layers=2,
                            encoder_attention_heads=6, decoder_attention_heads=6,
                            encoder_ffn_dim=1536, decoder_ffn_dim=1536, num_mel_bins=80,
                            max_source_positions=1500, max_target_positions=448,
                            vocab_size=51865)
        m = FlaxWhisperForConditionalGeneration(cfg, seed=0)
        feats = r.standard_normal((1, 80, 3000)).astype(np.float32)
        dec = r.integers(0, cfg.vocab_size, (1, 16)).astype(np.int32)
        g64 = hf64(FlaxWhisperForConditionalGeneration, cfg)
        add_jax("hf_whisper", lib, "Whisper, 2+2 layers, d=384, 80x3000 mel frames, 16 tokens",
                "hf", lambda p, f, d: m(f, decoder_input_ids=d, params=p).logits,
                (to_np(m.params), feats, dec), rtol=1e-4, atol=1e-4,
                f64=lambda p, f, d: g64(p, f, decoder_input_ids=d).logits)

    for b in (gpt2, bert, vit, resnet, t5, whisper):
        b()


# ----------------------------------------------------------------------------- flax


def group_flax():
    jax, jnp = _jax()
    import flax
    import flax.linen as nn
    import optax
    from flax import nnx
    lib = f"flax {flax.__version__}"
    r = rng(2)

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            for w in (512, 512):
                x = nn.relu(nn.Dense(w)(x))
            return nn.log_softmax(nn.Dense(10)(x))

    class CNN(nn.Module):
        bn: bool = False

        @nn.compact
        def __call__(self, x, train: bool = False):
            for c in (32, 64):
                x = nn.Conv(c, (3, 3))(x)
                if self.bn:
                    x = nn.BatchNorm(use_running_average=not train, momentum=0.9)(x)
                x = nn.relu(x)
                x = nn.avg_pool(x, (2, 2), (2, 2))
            x = x.reshape(x.shape[0], -1)
            x = nn.relu(nn.Dense(128)(x))
            return nn.Dense(10)(x)

    @guarded
    def linen_mlp():
        x = r.standard_normal((64, 784)).astype(np.float32)
        v = jax.device_get(MLP().init(jax.random.key(0), x))
        add_jax("linen_mlp", lib, "linen MLP 784-512-512-10, batch 64", "flax",
                lambda v, x: MLP().apply(v, x), (v, x), rtol=1e-5, atol=1e-5, export=True)

    @guarded
    def linen_cnn():
        x = r.standard_normal((8, 28, 28, 1)).astype(np.float32)
        v = jax.device_get(CNN().init(jax.random.key(0), x))
        add_jax("linen_cnn", lib, "linen CNN conv32-conv64-dense128-10, 8x28x28x1", "flax",
                lambda v, x: CNN().apply(v, x), (v, x), rtol=1e-5, atol=1e-5)

    @guarded
    def linen_cnn_bn_train():
        x = r.standard_normal((32, 28, 28, 1)).astype(np.float32)
        y = r.integers(0, 10, (32,)).astype(np.int32)
        v = jax.device_get(CNN(bn=True).init(jax.random.key(0), x))
        opt = optax.adam(1e-3)
        s = jax.device_get(opt.init(v["params"]))

        def step(params, stats, s, x, y):
            def loss(params):
                logits, upd = CNN(bn=True).apply({"params": params, "batch_stats": stats}, x,
                                                 train=True, mutable=["batch_stats"])
                return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean(), upd
            (lv, upd), g = jax.value_and_grad(loss, has_aux=True)(params)
            u, s = opt.update(g, s, params)
            return optax.apply_updates(params, u), upd["batch_stats"], s, lv
        add_jax("linen_cnn_bn_train", lib, "linen CNN with BatchNorm: Adam training step, "
                "batch 32", "flax", step, (v["params"], v["batch_stats"], s, x, y),
                rtol=1e-4, atol=1e-6,
                notes="issue 17: shlo's outer-axis f32 sums put Adam moments 11% off; compare "
                      "against ref64 as well as XLA")

    @guarded
    def nnx_models():
        class NMLP(nnx.Module):
            def __init__(self, rngs):
                self.l1 = nnx.Linear(784, 512, rngs=rngs)
                self.l2 = nnx.Linear(512, 512, rngs=rngs)
                self.l3 = nnx.Linear(512, 10, rngs=rngs)

            def __call__(self, x):
                return self.l3(nnx.relu(self.l2(nnx.relu(self.l1(x)))))

        class NCNN(nnx.Module):
            def __init__(self, rngs):
                self.c1 = nnx.Conv(1, 32, (3, 3), rngs=rngs)
                self.c2 = nnx.Conv(32, 64, (3, 3), rngs=rngs)
                self.l = nnx.Linear(7 * 7 * 64, 10, rngs=rngs)

            def __call__(self, x):
                x = nnx.avg_pool(nnx.relu(self.c1(x)), (2, 2), (2, 2))
                x = nnx.avg_pool(nnx.relu(self.c2(x)), (2, 2), (2, 2))
                return self.l(x.reshape(x.shape[0], -1))

        for nm, cls, shape in (("nnx_mlp", NMLP, (64, 784)), ("nnx_cnn", NCNN, (8, 28, 28, 1))):
            model = cls(nnx.Rngs(0))
            gd, state = nnx.split(model)
            state = jax.device_get(state)
            x = r.standard_normal(shape).astype(np.float32)

            def f(state, x, gd=gd):
                return nnx.merge(gd, state)(x)
            add_jax(nm, lib, f"nnx {cls.__name__}, input {shape} (nnx.split + jax.jit)",
                    "flax", f, (state, x), rtol=1e-5, atol=1e-5)

    for b in (linen_mlp, linen_cnn, linen_cnn_bn_train, nnx_models):
        b()


# ----------------------------------------------------------------------------- equinox


def group_eqx():
    jax, jnp = _jax()
    import equinox as eqx
    lib = f"equinox {eqx.__version__}"
    r = rng(3)

    @guarded
    def mlp():
        model = eqx.nn.MLP(64, 10, 256, 3, key=jax.random.key(0))
        params, static = eqx.partition(model, eqx.is_array)
        params = jax.device_get(params)
        x = r.standard_normal((32, 64)).astype(np.float32)
        f = lambda p, x: jax.vmap(eqx.combine(p, static))(x)  # noqa: E731
        add_jax("eqx_mlp", lib, "eqx.nn.MLP 64-256x3-10, vmapped over 32", "eqx", f,
                (params, x), rtol=1e-5, atol=1e-5)

        def loss(p, x, y):
            return jnp.mean((jax.vmap(eqx.combine(p, static))(x) - y) ** 2)
        y = r.standard_normal((32, 10)).astype(np.float32)
        add_jax("eqx_mlp_grad", lib, "eqx MLP: value_and_grad of MSE (eqx.filter style)", "eqx",
                lambda p, x, y: jax.value_and_grad(loss)(p, x, y), (params, x, y),
                rtol=1e-5, atol=1e-6)
    mlp()


# ----------------------------------------------------------------------------- keras


def group_keras():
    jax, jnp = _jax()
    import keras
    assert keras.backend.backend() == "jax", keras.backend.backend()
    lib = f"keras {keras.__version__} (JAX backend)"
    r = rng(4)

    @guarded
    def cnn():
        keras.utils.set_random_seed(0)
        model = keras.Sequential([
            keras.Input((32, 32, 3)),
            keras.layers.Conv2D(32, 3, padding="same"), keras.layers.BatchNormalization(),
            keras.layers.ReLU(), keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(64, 3, padding="same"), keras.layers.BatchNormalization(),
            keras.layers.ReLU(), keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dense(128, activation="gelu"), keras.layers.Dropout(0.1),
            keras.layers.Dense(10, activation="softmax")])
        tv = [np.asarray(v.value) for v in model.trainable_variables]
        ntv = [np.asarray(v.value) for v in model.non_trainable_variables]
        x = r.standard_normal((8, 32, 32, 3)).astype(np.float32)
        f = lambda tv, ntv, x: model.stateless_call(tv, ntv, x, training=False)[0]  # noqa: E731
        add_jax("keras_cnn", lib, "keras Sequential CNN with BatchNorm, inference via "
                "stateless_call, 8x32x32x3", "keras", f, (tv, ntv, x), rtol=1e-5, atol=1e-5,
                f64=None, notes="no f64 reference: keras layers compute in their own dtype")

        lstm = keras.Sequential([keras.Input((50, 16)), keras.layers.LSTM(64),
                                 keras.layers.Dense(4)])
        tv2 = [np.asarray(v.value) for v in lstm.trainable_variables]
        ntv2 = [np.asarray(v.value) for v in lstm.non_trainable_variables]
        xs = r.standard_normal((4, 50, 16)).astype(np.float32)
        add_jax("keras_lstm", lib, "keras LSTM(64) over 50 steps (lax.scan), batch 4", "keras",
                lambda tv, ntv, x: lstm.stateless_call(tv, ntv, x)[0], (tv2, ntv2, xs),
                rtol=1e-5, atol=1e-5, f64=None)
    cnn()


# ----------------------------------------------------------------------------- sharded


def group_sharded():
    jax, jnp = _jax()
    from jax.sharding import NamedSharding, PartitionSpec as P
    assert len(jax.devices()) == 8, jax.devices()
    lib = f"jax {jax.__version__}"
    r = rng(5)
    from jax.sharding import AxisType
    # Auto axes: what with_sharding_constraint and GSPMD-style jit expect (0.10 defaults to
    # Explicit axes)
    mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto,) * 2)
    x = r.standard_normal((64, 512)).astype(np.float32)
    w1 = (r.standard_normal((512, 1024)) / 22).astype(np.float32)
    w2 = (r.standard_normal((1024, 512)) / 32).astype(np.float32)

    def mlp(x, w1, w2):
        h = jax.nn.gelu(x @ w1)
        h = jax.lax.with_sharding_constraint(h, NamedSharding(mesh, P("data", "model")))
        return jnp.tanh(h @ w2)
    shard = lambda *s: NamedSharding(mesh, P(*s))  # noqa: E731
    jf = jax.jit(mlp, in_shardings=(shard("data", None), shard(None, "model"),
                                    shard("model", None)), out_shardings=shard("data", None))
    add_jax("sharded_mlp_8dev", lib, "jit with NamedSharding over a 2x4 mesh of 8 host devices,"
            " with_sharding_constraint", "sharded", mlp, (x, w1, w2), jitted=jf,
            rtol=1e-5, atol=1e-5,
            notes="XLA time is the 8-device partitioned run; shlo should run it once, globally")

    @guarded
    def shmap():
        from jax import shard_map

        def body(x, w):
            return jax.lax.psum(x @ w, "model")
        sm = shard_map(body, mesh=mesh, in_specs=(P("data", "model"), P("model", None)),
                       out_specs=P("data", None))
        jf2 = jax.jit(sm)
        add_jax("sharded_shard_map_psum", lib, "shard_map (sdy.manual_computation) with psum "
                "over 'model'", "sharded", sm, (x, w2[:512]), jitted=jf2, rtol=1e-5, atol=1e-5,
                notes="manual computation: needs the process grid (sharded-programs issue)")
    shmap()

    @guarded
    def gspmd():
        try:
            jax.config.update("jax_use_shardy_partitioner", False)
        except Exception as e:  # noqa: BLE001
            raise RuntimeError(f"cannot switch to GSPMD: {e}") from e
        jf3 = jax.jit(mlp, in_shardings=(shard("data", None), shard(None, "model"),
                                         shard("model", None)),
                      out_shardings=shard("data", None))
        add_jax("sharded_mlp_8dev_gspmd", lib, "the same with jax_use_shardy_partitioner=False "
                "(mhlo.sharding attributes, @Sharding custom calls)", "sharded", mlp,
                (x, w1, w2), jitted=jf3, rtol=1e-5, atol=1e-5)
        jax.config.update("jax_use_shardy_partitioner", True)
    gspmd()


# ----------------------------------------------------------------------------- misc


def group_misc():
    jax, jnp = _jax()
    lib = f"jax {jax.__version__}"
    r = rng(6)
    x = r.standard_normal((16, 64)).astype(np.float32)
    w = r.standard_normal((64, 32)).astype(np.float32)

    def dbg(x, w):
        y = jnp.tanh(x @ w)
        jax.debug.print("mean={m} max={M}", m=y.mean(), M=y.max())
        return y * 2
    add_jax("debug_print", lib, "jax.debug.print inside jit", "misc", dbg, (x, w),
            rtol=1e-5, atol=1e-5, f64=None, notes="host callback with no results: skip + warn")

    @guarded
    def callback():
        def cb(x, w):
            y = jax.pure_callback(lambda a: np.sin(a).astype(a.dtype),
                                  jax.ShapeDtypeStruct(x.shape, x.dtype), x)
            return y @ w
        add_jax("pure_callback", lib, "jax.pure_callback(np.sin) inside jit", "misc", cb,
                (x, w), rtol=1e-5, atol=1e-5, f64=None,
                notes="a callback with results: shlo cannot call back into the exporting "
                      "process; expect a clear error saying how to supply a handler")
    callback()

    @guarded
    def shape_poly():
        from jax import export as jexport

        def f(x, w):
            y = jnp.tanh(x @ w)
            return y - y.mean(axis=0, keepdims=True), y.reshape(-1)[: x.shape[0]]
        b, = jexport.symbolic_shape("b")
        specs = (jax.ShapeDtypeStruct((b, 64), jnp.float32),
                 jax.ShapeDtypeStruct((64, 32), jnp.float32))
        exp = jexport.export(jax.jit(f))(*specs)
        text = exp.mlir_module()
        xb = r.standard_normal((8, 64)).astype(np.float32)
        call = jax.jit(exp.call)
        outs = [np.asarray(o) for o in jax.tree_util.tree_leaves(call(xb, w))]
        t = median_time(lambda: jax.device_get(call(xb, w)))
        name = "shape_poly_export"
        (OUT / f"{name}.mlirbc").write_bytes(exp.mlir_module_serialized)
        (OUT / f"{name}.jax_exported").write_bytes(exp.serialize())
        write_entry(name, library=lib, kind="jax.export with symbolic_shape('b'), run at b=8",
                    group="misc", text=text, inputs=[xb, w], outputs=outs, rtol=1e-5,
                    atol=1e-5, xla_time=t,
                    extra_files={"mlirbc": f"{name}.mlirbc", "jax_exported": f"{name}.jax_exported"},
                    notes="main takes tensor<?x64xf32>; shape_assertion custom calls")
        # a second one where the constraint can fail: b must be even
        def g(x):
            return x.reshape(x.shape[0] // 2, 2, x.shape[1]).sum(1)
        b2, = jexport.symbolic_shape("2*k")
        exp2 = jexport.export(jax.jit(g))(jax.ShapeDtypeStruct((b2, 64), jnp.float32))
        call2 = jax.jit(exp2.call)
        write_entry("shape_poly_even", library=lib, kind="symbolic_shape('2*k'): reshape by "
                    "b//2 (a shape_assertion that b is even)", group="misc",
                    text=exp2.mlir_module(), inputs=[xb], outputs=[np.asarray(call2(xb))],
                    rtol=1e-6, atol=1e-6, xla_time=median_time(lambda: np.asarray(call2(xb))),
                    notes="run with an odd b the assertion must fail with its message")
    shape_poly()

    def mlp(x, w):
        return jax.nn.log_softmax(jax.nn.relu(x @ w) @ w.T)
    add_jax("export_mlp", lib, "small MLP via jit + jax.export (text, .mlirbc, .jax_exported)",
            "misc", mlp, (x, w), rtol=1e-5, atol=1e-5, export=True, debug_info=True)


# ----------------------------------------------------------------------------- linalg


def group_linalg():
    jax, jnp = _jax()
    import jax.scipy.linalg as jsl
    from jax import lax
    lib = f"jax {jax.__version__} / jaxlib LAPACK"
    r = rng(7)
    ll = lax.linalg

    def gen(shape, dt):
        a = r.standard_normal(shape)
        if np.dtype(dt).kind == "c":
            a = a + 1j * r.standard_normal(shape)
        n = shape[-1]
        return (a + n * np.eye(n) * 0.5).astype(dt) if shape[-1] == shape[-2] else a.astype(dt)

    def spd(shape, dt):
        a = gen(shape, dt)
        n = shape[-1]
        return (a @ np.conj(np.swapaxes(a, -1, -2)) / n + np.eye(n)).astype(dt)

    def rhs(shape, dt):
        return gen(shape[:-1] + (3,), dt)

    def tri(shape, dt):
        a = np.tril(gen(shape, dt))
        return a

    A, S, T = gen, spd, tri
    # name: (function, argument makers, outputs compared by |.|, real-only)
    funcs = {
        "inv": (jnp.linalg.inv, [A], (), False),
        "solve": (jnp.linalg.solve, [A, rhs], (), False),
        "det": (jnp.linalg.det, [A], (), False),
        "slogdet": (lambda a: tuple(jnp.linalg.slogdet(a)), [A], (), False),
        "cholesky": (jnp.linalg.cholesky, [S], (), False),
        "eigh": (lambda a: tuple(jnp.linalg.eigh(a)), [S], (1,), False),
        "eigvalsh": (jnp.linalg.eigvalsh, [S], (), False),
        "eig": (lambda a: tuple(jnp.linalg.eig(a)), [A], (1,), False),
        "eigvals": (jnp.linalg.eigvals, [A], (), False),
        "svd": (lambda a: tuple(jnp.linalg.svd(a, full_matrices=False)), [A], (0, 2), False),
        "svd_full": (lambda a: tuple(jnp.linalg.svd(a, full_matrices=True)), [A], (0, 2), False),
        "svdvals": (lambda a: jnp.linalg.svd(a, compute_uv=False), [A], (), False),
        "svd_qr_algo": (lambda a: tuple(ll.svd(a, full_matrices=False,
                                               algorithm=ll.SvdAlgorithm.QR)), [A], (0, 2),
                        False),
        "qr": (lambda a: tuple(jnp.linalg.qr(a)), [A], (0, 1), False),
        "qr_complete": (lambda a: tuple(jnp.linalg.qr(a, mode="complete")), [A], (0, 1),
                        False),
        "qr_pivoting": (lambda a: tuple(jsl.qr(a, pivoting=True, mode="economic")), [A],
                        (0, 1), False),
        # mode="raw" is geqrf alone: (h transposed as numpy returns it, taus)
        "geqrf": (lambda a: tuple(jnp.linalg.qr(a, mode="raw")), [A], (), False),
        "householder_product": (lambda a: ll.householder_product(
            *(lambda h, t: (jnp.swapaxes(h, -1, -2), t))(*jnp.linalg.qr(a, mode="raw"))),
            [A], (), False),
        "lu": (lambda a: tuple(jsl.lu(a)), [A], (), False),
        "lax_lu": (lambda a: tuple(ll.lu(a)), [A], (), False),
        "lu_factor": (lambda a: tuple(jsl.lu_factor(a)), [A], (), False),
        "lu_solve": (lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b), [A, rhs], (), False),
        "solve_triangular": (lambda a, b: (jsl.solve_triangular(a, b, lower=True),
                                           jsl.solve_triangular(a, b, lower=False,
                                                                unit_diagonal=True, trans=1),
                                           jsl.solve_triangular(a, b, lower=True, trans=2)),
                             [T, rhs], (), False),
        "cho_solve": (lambda a, b: jsl.cho_solve(jsl.cho_factor(a, lower=True), b), [S, rhs],
                      (), False),
        "schur": (lambda a: tuple(jsl.schur(a)), [A], (0, 1), False),
        "hessenberg": (lambda a: tuple(jsl.hessenberg(a, calc_q=True)), [A], (0, 1), False),
        "tridiagonal": (lambda a: tuple(ll.tridiagonal(a, lower=True)), [S], (0,), False),
        "tridiagonal_solve": (lambda d, b: ll.tridiagonal_solve(d[..., 0, :] * 0.1,
                                                                d[..., 1, :] + 4.0,
                                                                d[..., 2, :] * 0.1, b),
                              [lambda s, dt: gen(s[:-2] + (3, s[-1]), dt), rhs], (), False),
        "pinv": (jnp.linalg.pinv, [A], (), False),
        "lstsq": (lambda a, b: jnp.linalg.lstsq(a, b)[0], [A, rhs], (), False),
        "matrix_rank": (jnp.linalg.matrix_rank, [A], (), False),
        "norm2": (lambda a: jnp.linalg.norm(a, ord=2, axis=(-2, -1)), [A], (), False),
        "cond": (jnp.linalg.cond, [A], (), False),
        "expm": (jsl.expm, [lambda s, dt: (gen(s, dt) / (2 * s[-1])).astype(dt)], (), False),
        "sqrtm": (jsl.sqrtm, [S], (), True),
        "polar": (lambda a: tuple(jsl.polar(a, method="svd")), [A], (), False),
        "tensorinv": (lambda a: jnp.linalg.tensorinv(a.reshape(a.shape[:-2] + (4, a.shape[-1] // 4,
                                                                                a.shape[-1])),
                                                     ind=2) if a.ndim == 2 else jnp.linalg.inv(a),
                      [A], (), False),
    }
    dts = ["float32", "float64", "complex64", "complex128"]
    shapes = {"": (16, 16), "_batched": (2, 3, 8, 8)}
    for fname, (fn, makers, abs_outs, real_only) in funcs.items():
        for dt in dts:
            if real_only and dt.startswith("complex"):
                continue
            for sfx, shape in shapes.items():
                name = f"linalg_{fname}_{dt}{sfx}"
                if not want(name):
                    continue
                args = tuple(m(shape, dt) for m in makers)
                x64 = dt in ("float64", "complex128")
                single = dt in ("float32", "complex64")
                tol = (2e-4, 2e-4) if single else (1e-9, 1e-9)
                try:
                    with jax.enable_x64(x64):
                        text = jax.jit(fn).lower(*args).as_text()
                except Exception as e:  # noqa: BLE001
                    skip(name, f"does not lower: {type(e).__name__}: {str(e).splitlines()[0]}")
                    continue
                if "lapack_" not in text and "custom_call" not in text:
                    skip(name, "lowers to no custom call on CPU (plain StableHLO)")
                    continue
                guarded(add_jax)(name, lib, f"{fname} {dt} {shape}", "linalg", fn, args,
                                 rtol=tol[0], atol=tol[1], x64=x64,
                                 f64="auto" if single else None,
                                 compare={str(i): "abs" for i in abs_outs},
                                 debug_info=(name == "linalg_lu_float32"),
                                 notes="outputs listed in compare are sign/phase-ambiguous: "
                                       "compared by absolute value" if abs_outs else "")


# ----------------------------------------------------------------------------- perf (issue 17)


def group_perf():
    jax, jnp = _jax()
    import ml_dtypes
    from jax import lax
    lib = f"jax {jax.__version__}"
    r = rng(8)
    # honest tolerances vs XLA: narrow types may differ by one ulp (XLA's own approximations)
    ulp_tol = {"float32": (1e-5, 1e-6), "float16": (2e-3, 1e-3), "bfloat16": (1.6e-2, 1e-2),
               "float8_e4m3fn": (1.3e-1, 2e-2)}
    for dt in ("float32", "float16", "bfloat16", "float8_e4m3fn"):
        dtype = getattr(ml_dtypes, dt) if dt not in ("float32", "float16") else np.dtype(dt)
        a = r.uniform(-3, 3, 10**6).astype(dtype)
        b = r.uniform(-3, 3, 10**6).astype(dtype)
        rt, at = ulp_tol[dt]
        for op, f, n in (("tanh", jnp.tanh, 1), ("exp", jnp.exp, 1),
                         ("multiply", jnp.multiply, 2)):
            add_jax(f"perf_{op}_1e6_{dt}", lib, f"{op} on 1e6 {dt}", "perf", f,
                    (a, b)[:n], rtol=rt, atol=at if op != "exp" else at * 20)

    def attention(q, k, v):
        s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(q.shape[-1]).astype(q.dtype)
        return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), v)
    for dt, (bb, h, s) in (("float32", (4, 12, 256)), ("float16", (4, 12, 256)),
                           ("float32", (1, 12, 1024)), ("float16", (1, 12, 1024))):
        qkv = tuple(r.standard_normal((bb, h, s, 64)).astype(dt) for _ in range(3))
        add_jax(f"perf_attention_{dt}_{bb}x{h}x{s}", lib, f"softmax attention {dt}, "
                f"{bb}x{h}x{s}x64", "perf", attention, qkv,
                rtol=1e-4 if dt == "float32" else 1e-2, atol=1e-4 if dt == "float32" else 1e-2)

    @guarded
    def gpt2():
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        from transformers import FlaxGPT2Model, GPT2Config
        cfg = GPT2Config(n_layer=2, n_embd=768, n_head=12, n_positions=1024, vocab_size=50257)
        for dt, bb, s in (("float32", 8, 128), ("bfloat16", 8, 128), ("bfloat16", 1, 512),
                          ("float32", 1, 512), ("float32", 8, 512)):
            name = f"perf_gpt2_2l_{dt}_b{bb}_s{s}"
            if not want(name):
                continue
            jdt = jnp.float32 if dt == "float32" else jnp.bfloat16
            m = FlaxGPT2Model(cfg, seed=0, dtype=jdt)
            p = jax.tree_util.tree_map(lambda a: np.asarray(a.astype(jdt)), m.params)
            ids = r.integers(0, cfg.vocab_size, (bb, s)).astype(np.int32)
            tol = (1e-4, 1e-4) if dt == "float32" else (5e-2, 5e-2)
            add_jax(name, "transformers (Flax)", f"GPT-2 2 layers (no LM head) {dt}, batch {bb},"
                    f" seq {s}", "perf", lambda p, ids, m=m: m(ids, params=p).last_hidden_state,
                    (p, ids), rtol=tol[0], atol=tol[1], f64=None)
    gpt2()

    def rnn(h0, xs, w, u, b):
        def cell(h, x):
            h = jnp.tanh(h @ w + x @ u + b)
            return h, h.sum(-1)
        return lax.scan(cell, h0, xs)
    for hdim in (64, 256):
        add_jax(f"perf_scan_rnn_1000_h{hdim}", lib, f"lax.scan tanh RNN, 1000 steps, batch 8, "
                f"h={hdim}", "perf", rnn,
                (np.zeros((8, hdim), np.float32),
                 r.standard_normal((1000, 8, hdim)).astype(np.float32),
                 (r.standard_normal((hdim, hdim)) / np.sqrt(hdim)).astype(np.float32),
                 (r.standard_normal((hdim, hdim)) / np.sqrt(hdim)).astype(np.float32),
                 np.zeros(hdim, np.float32)), rtol=1e-3, atol=1e-4)

    def while_matvec(m, v):
        return lax.fori_loop(0, 1000, lambda i, v: jnp.tanh(m @ v), v)
    add_jax("perf_while_matvec_16_1000", lib, "while loop: 1000 x (16x16 mat-vec + tanh)",
            "perf", while_matvec, ((r.standard_normal((16, 16)) / 4).astype(np.float32),
                                   r.standard_normal(16).astype(np.float32)),
            rtol=1e-4, atol=1e-5)

    def scalar_while(x):
        return lax.fori_loop(0, 100000, lambda i, x: x * 0.999 + 1.0, x)
    add_jax("perf_scalar_while_1e5", lib, "scalar fori_loop, 1e5 iterations", "perf",
            scalar_while, (np.float32(0.5),), rtol=1e-5, atol=1e-5)

    def chain_tiny(x):
        for i in range(10000):
            x = jnp.sin(x) + 0.5 if i % 2 else x * 0.99 + 0.01
        return x
    add_jax("perf_chain_10000_tiny", lib, "10,000 element-wise ops on an 8-vector", "perf",
            chain_tiny, (r.standard_normal(8).astype(np.float32),), rtol=1e-4, atol=1e-5)

    def chain_scalar(x):
        for i in range(10000):
            x = x + np.float32(1e-3 * (i % 7))
        return x
    add_jax("perf_chain_10000_scalar_adds", lib, "10,000 scalar adds", "perf", chain_scalar,
            (np.float32(1.0),), rtol=1e-6, atol=1e-6)

    def mlp_step(params, x, y):
        def loss(params):
            h = x
            for w, b in params[:-1]:
                h = jax.nn.relu(h @ w + b)
            w, b = params[-1]
            return -jnp.mean(jnp.sum(jax.nn.log_softmax(h @ w + b) * y, -1))
        lv, g = jax.value_and_grad(loss)(params)
        return jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, g), lv
    sizes = [784, 512, 512, 10]
    params = [((r.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32),
               np.zeros(b, np.float32)) for a, b in zip(sizes, sizes[1:])]
    add_jax("perf_mlp_train_b8", lib, "MLP 784-512-512-10 SGD step, batch 8", "perf",
            mlp_step, (params, r.standard_normal((8, 784)).astype(np.float32),
                       np.eye(10, dtype=np.float32)[r.integers(0, 10, 8)]),
            rtol=1e-5, atol=1e-6)

    a8 = r.integers(-128, 128, (1024, 1024)).astype(np.int8)
    b8 = r.integers(-128, 128, (1024, 1024)).astype(np.int8)
    add_jax("perf_int8_matmul_1024", lib, "i8 x i8 -> i32 matmul 1024", "perf",
            lambda a, b: lax.dot(a, b, preferred_element_type=jnp.int32), (a8, b8),
            rtol=0, atol=0, f64=None)

    def ew10(x, y):
        z = x * y + 1.0
        z = jnp.tanh(z) * 0.5 + x
        z = jnp.exp(-z * z) + y
        z = jnp.maximum(z, 0.1) / (1.0 + jnp.abs(y))
        return jnp.sqrt(z)
    for n, label in ((10**6, "1e6"),) + (((10**8, "1e8"),) if BIG else ()):
        add_jax(f"perf_ew_chain10_{label}", lib, f"10-op element-wise chain on {label} f32",
                "perf", ew10, (r.standard_normal(n).astype(np.float32),
                               r.standard_normal(n).astype(np.float32)), rtol=1e-5, atol=1e-6)

    add_jax("perf_reduce_dim0_16384x32", lib, "reduce add over dim 0 of 16384x32 of 0.1 "
            "(accuracy: exact 1638.4)", "perf", lambda x: x.sum(0),
            (np.full((16384, 32), 0.1, np.float32),), rtol=1e-6, atol=0,
            notes="issue 17: shlo gave 1638.147, XLA 1638.400")


# ----------------------------------------------------------------------------- torch-mlir


def _xla_time_text(text: str, inputs: list):
    """Compile exporter text with jaxlib's XLA and time it as the JAX entries are timed."""
    import jax
    import jax.extend
    backend = jax.extend.backend.get_backend("cpu")
    exe = backend.compile_and_load(text, jax.devices("cpu")[:1])
    dev = jax.devices("cpu")[0]

    def call():
        bufs = [jax.device_put(a, dev) for a in inputs]
        return [np.asarray(o) for o in exe.execute(bufs)]
    outs = call()
    return outs, median_time(call)


def group_torch():
    import torch
    import torch_mlir
    import torchvision
    from torch_mlir import fx
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    torch.manual_seed(0)
    try:
        from importlib.metadata import version
        tm_ver = version("torch-mlir")
    except Exception:  # noqa: BLE001
        tm_ver = "?"
    lib0 = f"torch {torch.__version__}, torch-mlir {tm_ver}"
    del torch_mlir

    def export(name, kind, model, inputs, lib, rtol=1e-4, atol=1e-4, notes=""):
        if not want(name):
            return
        model = model.eval()
        # torch-mlir's importer finds no state for non-persistent buffers (GPT-2's causal
        # "attn.bias", BERT's "position_ids": 'Could not find state mapping for buffer'):
        # make them persistent; what the model computes does not change.
        for sub in model.modules():
            sub._non_persistent_buffers_set.clear()
        with torch.no_grad():
            mod = fx.export_and_import(model, *inputs, output_type="stablehlo",
                                       func_name="main")
            text = str(mod)
            ref = model(*inputs)
            ref = [ref] if isinstance(ref, torch.Tensor) else list(ref)
            ref = [t.detach().numpy() for t in ref]
            t_eager = median_time(lambda: model(*inputs))
            m64 = model.double()
            ins64 = [i.double() if i.is_floating_point() else i for i in inputs]
            r64 = m64(*ins64)
            r64 = [r64] if isinstance(r64, torch.Tensor) else list(r64)
            r64 = [t.numpy() for t in r64]
            model.float()
        np_in = [i.numpy() for i in inputs]
        # relative to the size of the results (random-init logits can be ~1e-3)
        atol = atol * max(1e-3, max(float(np.max(np.abs(r))) for r in ref))
        xla_note, t = "", t_eager
        src = "torch eager (XLA could not compile the text)"
        try:
            xouts, t_xla = _xla_time_text(text, np_in)
            err = max(float(np.max(np.abs(a - b))) for a, b in zip(xouts, ref))
            xla_note = f" XLA compiled this text: max |XLA - torch| = {err:.3g}."
            t, src = t_xla, "xla (jaxlib compile_and_load of the same text)"
        except Exception as e:  # noqa: BLE001
            xla_note = f" XLA rejected the text: {type(e).__name__}: {str(e).splitlines()[0][:160]}"
        write_entry(name, library=lib, kind=kind, group="torch", text=text, inputs=np_in,
                    outputs=ref, outputs64=r64, rtol=rtol, atol=atol, xla_time=t,
                    time_source=src, notes=notes + xla_note,
                    extra={"torch_eager_time_s": t_eager[0]})

    tv = f"{lib0}, torchvision {torchvision.__version__}"
    x224 = torch.randn(1, 3, 224, 224)
    guarded(export)("torch_resnet18", "torchvision resnet18 (11.7M params), 1x3x224x224",
                    torchvision.models.resnet18(), [x224], tv)
    guarded(export)("torch_mobilenet_v3_small", "torchvision mobilenet_v3_small, 1x3x224x224",
                    torchvision.models.mobilenet_v3_small(), [x224], tv)
    guarded(export)("torch_mobilenet_v3_large", "torchvision mobilenet_v3_large, 1x3x224x224",
                    torchvision.models.mobilenet_v3_large(), [x224], tv)
    from torchvision.models.vision_transformer import VisionTransformer
    vit = VisionTransformer(224, 16, 4, 6, 384, 1536)
    torch.nn.init.normal_(vit.heads.head.weight, std=0.02)  # torchvision zero-inits the head
    guarded(export)("torch_vit", "torchvision VisionTransformer 224/16, 4 layers, d=384, "
                    "6 heads (head re-initialised: torchvision zero-inits it)", vit, [x224], tv)

    import transformers as tf
    from transformers import BertConfig, BertModel, GPT2Config, GPT2Model
    tl = f"{lib0}, transformers {tf.__version__}"

    class LastHidden(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, ids, *rest):
            return self.m(ids, *rest, use_cache=False).last_hidden_state if isinstance(
                self.m, GPT2Model) else self.m(ids, *rest).last_hidden_state

    g = GPT2Model(GPT2Config(n_layer=2, n_embd=768, n_head=12, vocab_size=50257,
                             attn_implementation="eager"))
    ids = torch.randint(0, 50257, (1, 128))
    guarded(export)("torch_gpt2", "transformers GPT2Model 2 layers d=768, 1x128 (eager attn)",
                    LastHidden(g), [ids], tl)
    bcfg = BertConfig(hidden_size=512, num_hidden_layers=4, num_attention_heads=8,
                      intermediate_size=2048, attn_implementation="eager")
    mask = torch.ones(2, 128, dtype=torch.long)
    mask[1, 100:] = 0
    guarded(export)("torch_bert", "transformers BertModel 4 layers d=512, 2x128 with mask",
                    LastHidden(BertModel(bcfg)), [torch.randint(0, 30522, (2, 128)), mask], tl)


# ----------------------------------------------------------------------------- torch-xla


TORCH_XLA_SNIPPET = r'''
import json, os, statistics, sys, time
os.environ.setdefault("PJRT_DEVICE", "CPU")
import numpy as np, torch, torchvision
import torch_xla
from torch_xla.stablehlo import exported_program_to_stablehlo
out = sys.argv[1]
torch.manual_seed(0)
for name, model, x in (("torch_xla_resnet18", torchvision.models.resnet18(), torch.randn(1, 3, 224, 224)),
                       ("torch_xla_mlp", torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(),
                                                            torch.nn.Linear(256, 10)), torch.randn(8, 64))):
    model = model.eval()
    with torch.no_grad():
        ep = torch.export.export(model, (x,))
        shlo = exported_program_to_stablehlo(ep)
        text = shlo.get_stablehlo_text("forward")
        ref = model(x).numpy()
        ts = []
        for _ in range(6):
            t0 = time.perf_counter(); model(x); ts.append(time.perf_counter() - t0)
    # the weights are arguments of the exported function: save them with the input
    bundle = shlo._bundle
    meta = bundle.stablehlo_funcs[0].meta
    args = []
    for loc in meta.input_locations:
        kind = loc.type_.name
        if kind == "PARAMETER":
            v = bundle.state_dict[loc.name]
        elif kind == "CONSTANT":
            v = bundle.additional_constants[loc.position]
        else:
            v = (x,)[loc.position]
        args.append(np.asarray(v.detach().numpy() if hasattr(v, "detach") else v))
    open(os.path.join(out, name + ".mlir"), "w").write(text)
    np.savez(os.path.join(out, name + ".inputs.npz"), **{f"a{i}": a for i, a in enumerate(args)})
    np.savez(os.path.join(out, name + ".ref.npz"), a0=ref)
    json.dump({"name": name, "torch_xla": torch_xla.__version__, "torch": torch.__version__,
               "in_dtypes": [a.dtype.name for a in args], "in_shapes": [list(a.shape) for a in args],
               "out_dtypes": [ref.dtype.name], "out_shapes": [list(ref.shape)],
               "eager": statistics.median(ts[1:])}, open(os.path.join(out, name + ".txmeta"), "w"))
    print("  exported", name, len(text))
'''


def group_torch_xla(python: str | None):
    if not python or not Path(python).exists():
        skip("torch_xla", f"no interpreter with torch-xla (--torch-xla-python {python})")
        return
    script = OUT / "_torch_xla_export.py"
    script.write_text(TORCH_XLA_SNIPPET)
    p = subprocess.run([python, str(script), str(OUT)], capture_output=True, text=True,
                       timeout=1800)
    sys.stdout.write(p.stdout)
    if p.returncode:
        last = [ln for ln in p.stderr.strip().splitlines() if ln.strip()]
        skip("torch_xla", f"torch-xla export failed: {last[-1] if last else p.returncode}")
        (OUT / "torch_xla.stderr.txt").write_text(p.stderr)
        return
    from zoo_common import unpack
    for meta_path in OUT.glob("torch_xla_*.txmeta"):
        meta = json.loads(meta_path.read_text())
        name = meta["name"]
        text = (OUT / f"{name}.mlir").read_text()
        ins = unpack(OUT / f"{name}.inputs.npz", meta["in_dtypes"])
        refs = unpack(OUT / f"{name}.ref.npz", meta["out_dtypes"])
        src, t = "torch eager", (meta["eager"], [])
        notes = ""
        try:
            _, t = _xla_time_text(text, ins)
            src = "xla (jaxlib compile_and_load of the same text)"
        except Exception as e:  # noqa: BLE001
            notes = f"XLA rejected the text: {type(e).__name__}: {str(e).splitlines()[0][:160]}"
        write_entry(name, library=f"torch {meta['torch']}, torch-xla {meta['torch_xla']}",
                    kind="torch_xla.stablehlo.exported_program_to_stablehlo", group="torch_xla",
                    text=text, inputs=ins, outputs=refs, rtol=1e-4, atol=1e-4, xla_time=t,
                    time_source=src, notes=notes + " weights are function arguments")


# ----------------------------------------------------------------------------- driver


BUILDERS = {"hf": group_hf, "flax": group_flax, "eqx": group_eqx, "keras": group_keras,
            "sharded": group_sharded, "misc": group_misc, "linalg": group_linalg,
            "perf": group_perf, "torch": group_torch}


def versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version
    out = {"python": sys.version.split()[0]}
    for pkg in ("numpy", "scipy", "ml_dtypes", "jax", "jaxlib", "flax", "optax", "transformers",
                "equinox", "keras", "torch", "torchvision", "torch-mlir"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = None
    return out


def main() -> int:
    global OUT, ONLY, BIG
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", help="cache directory (default $SHLO_ZOO_DIR or ~/.cache/shlo-zoo)")
    ap.add_argument("--group", action="append", choices=GROUPS, help="only these groups")
    ap.add_argument("--only", help="only entries whose name contains this")
    ap.add_argument("--big", action="store_true", help="also the 1e8-element programs")
    ap.add_argument("--torch-xla-python", default=os.environ.get("SHLO_ZOO_TORCH_XLA_PYTHON"),
                    help="interpreter of a venv with torch-xla (its own torch version)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    OUT = zoo_dir(a.dir)
    OUT.mkdir(parents=True, exist_ok=True)
    ONLY, BIG = a.only, a.big
    groups = a.group or GROUPS
    if a.child:
        (g,) = groups
        if g == "torch_xla":
            group_torch_xla(a.torch_xla_python)
        else:
            BUILDERS[g]()
        return 0
    (OUT / "versions.json").write_text(json.dumps(versions(), indent=1))
    rc = 0
    for g in groups:
        env = dict(os.environ, KERAS_BACKEND="jax", TRANSFORMERS_VERBOSITY="error",
                   TF_CPP_MIN_LOG_LEVEL="2")
        if g == "sharded":
            env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "")
                                + " --xla_force_host_platform_device_count=8").strip()
        cmd = [sys.executable, __file__, "--child", "--group", g, "--dir", str(OUT)]
        if a.only:
            cmd += ["--only", a.only]
        if a.big:
            cmd.append("--big")
        if a.torch_xla_python:
            cmd += ["--torch-xla-python", a.torch_xla_python]
        print(f"== {g}", flush=True)
        t0 = time.time()
        p = subprocess.run(cmd, env=env)
        print(f"== {g}: exit {p.returncode}, {time.time() - t0:.0f} s", flush=True)
        rc |= p.returncode != 0
    with open(OUT / "manifest.jsonl", "w") as f:
        from zoo_common import read_manifest
        for e in read_manifest(OUT):
            f.write(json.dumps(e) + "\n")
    return rc


if __name__ == "__main__":
    sys.exit(main())
