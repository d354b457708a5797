"""Issue 17's programs (narrow floats, small and integer dots, outer-axis sums), timed on one or
two shlo trees and on XLA in one run:

    python benchmarks/issue17_bench.py [--before /path/to/other/tree] [--numpy-only]
        [--trials 5] [--only S]

Each program is timed in a child process per tree (so two versions of shlo can be compared
side by side, alternating program by program), as the median of ``--trials`` timings, each the
best of a few runs; XLA (when jax is installed) is timed in this process the same way,
execution only (compile excluded, host transfers included). Prints a markdown table.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _unary(op: str, t: str, n: int) -> str:
    ty = f"tensor<{n}x{t}>"
    return f"""func.func @main(%a: {ty}) -> {ty} {{
  %0 = stablehlo.{op} %a : {ty}
  return %0 : {ty}
}}"""


def _binary(op: str, t: str, n: int) -> str:
    ty = f"tensor<{n}x{t}>"
    return f"""func.func @main(%a: {ty}, %b: {ty}) -> {ty} {{
  %0 = stablehlo.{op} %a, %b : {ty}
  return %0 : {ty}
}}"""


def _dot(t: str, r: str, g: int, m: int, k: int, n: int) -> str:
    lt, rt, ot = f"tensor<{g}x{m}x{k}x{t}>", f"tensor<{g}x{k}x{n}x{t}>", f"tensor<{g}x{m}x{n}x{r}>"
    return f"""func.func @main(%a: {lt}, %b: {rt}) -> {ot} {{
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : ({lt}, {rt}) -> {ot}
  return %0 : {ot}
}}"""


def _sum0(t: str, r: int, c: int) -> str:
    return f"""func.func @main(%x: tensor<{r}x{c}x{t}>) -> tensor<{c}x{t}> {{
  %z = stablehlo.constant dense<0.0> : tensor<{t}>
  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<{r}x{c}x{t}>, tensor<{t}>) -> tensor<{c}x{t}>
  return %0 : tensor<{c}x{t}>
}}"""


def _attention(b: int, h: int, s: int, d: int) -> str:
    """Softmax attention in f16 as JAX writes it: scores, scale, max-subtracted exp, the sum
    in f32, divide, the value product."""
    x, p, r = f"tensor<{b}x{h}x{s}x{d}xf16>", f"tensor<{b}x{h}x{s}x{s}xf16>", f"{b}x{h}x{s}"
    return f"""func.func @main(%q: {x}, %k: {x}, %v: {x}) -> {x} {{
  %s = stablehlo.dot_general %q, %k, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [3] : ({x}, {x}) -> {p}
  %c = stablehlo.constant dense<0.125> : tensor<f16>
  %cb = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f16>) -> {p}
  %s2 = stablehlo.multiply %s, %cb : {p}
  %ninf = stablehlo.constant dense<0xFC00> : tensor<f16>
  %m = stablehlo.reduce(%s2 init: %ninf) applies stablehlo.maximum across dimensions = [3] : ({p}, tensor<f16>) -> tensor<{r}xf16>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<{r}xf16>) -> {p}
  %dd = stablehlo.subtract %s2, %mb : {p}
  %e = stablehlo.exponential %dd : {p}
  %ef = stablehlo.convert %e : ({p}) -> tensor<{b}x{h}x{s}x{s}xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%ef init: %z) applies stablehlo.add across dimensions = [3] : (tensor<{b}x{h}x{s}x{s}xf32>, tensor<f32>) -> tensor<{r}xf32>
  %sh = stablehlo.convert %sum : (tensor<{r}xf32>) -> tensor<{r}xf16>
  %sb = stablehlo.broadcast_in_dim %sh, dims = [0, 1, 2] : (tensor<{r}xf16>) -> {p}
  %pr = stablehlo.divide %e, %sb : {p}
  %o = stablehlo.dot_general %pr, %v, batching_dims = [0, 1] x [0, 1], contracting_dims = [3] x [2] : ({p}, {x}) -> {x}
  return %o : {x}
}}"""


_QA, _QB, _QO = "!quant.uniform<i8:f32, 0.05:3>", "!quant.uniform<i8:f32, 0.02>", \
    "!quant.uniform<i32:f32, 0.001>"


def _quantized_dot(n: int) -> str:
    a, b, o = f"tensor<{n}x{n}x{_QA}>", f"tensor<{n}x{n}x{_QB}>", f"tensor<{n}x{n}x{_QO}>"
    return f"""func.func @main(%a: {a}, %b: {b}) -> {o} {{
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : ({a}, {b}) -> {o}
  return %0 : {o}
}}"""


def _quantized_dot_xla(n: int) -> str:
    """The same product in integers, as stablehlo-legalize-quant-to-int writes it (XLA has no
    quantized types): i8 x i8 -> i32, zero points folded in with row and column sums, the
    scale ratio applied in f32, rounded and clamped to i32 (the spec allows a zero point on the
    lhs only: acc - z_lhs * column sums of rhs)."""
    i8, i32, f32 = f"tensor<{n}x{n}xi8>", f"tensor<{n}x{n}xi32>", f"tensor<{n}x{n}xf32>"
    v = f"tensor<{n}xi32>"
    return f"""func.func @main(%a: {i8}, %b: {i8}) -> {i32} {{
  %acc = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : ({i8}, {i8}) -> {i32}
  %b32 = stablehlo.convert %b : ({i8}) -> {i32}
  %z = stablehlo.constant dense<0> : tensor<i32>
  %cb = stablehlo.reduce(%b32 init: %z) applies stablehlo.add across dimensions = [0] : ({i32}, tensor<i32>) -> {v}
  %cbb = stablehlo.broadcast_in_dim %cb, dims = [1] : ({v}) -> {i32}
  %za = stablehlo.constant dense<3> : {i32}
  %t2 = stablehlo.multiply %cbb, %za : {i32}
  %s2 = stablehlo.subtract %acc, %t2 : {i32}
  %f = stablehlo.convert %s2 : ({i32}) -> {f32}
  %m = stablehlo.constant dense<1.0> : {f32}
  %fm = stablehlo.multiply %f, %m : {f32}
  %r = stablehlo.round_nearest_even %fm : {f32}
  %lo = stablehlo.constant dense<-2147483648.0> : {f32}
  %hi = stablehlo.constant dense<2147483520.0> : {f32}
  %c = stablehlo.clamp %lo, %r, %hi : {f32}
  %o = stablehlo.convert %c : ({f32}) -> {i32}
  return %o : {i32}
}}"""


def _quantized_conv(xla: bool = False) -> str:
    """A 3x3 convolution, 8x56x56x64 -> 64 features, i8 storage with lhs zero point 3, padded;
    for XLA the plain i8 x i8 -> i32 convolution (a lower bound of the integer program)."""
    a, b = ("tensor<8x56x56x64xi8>", "tensor<3x3x64x64xi8>") if xla else \
        (f"tensor<8x56x56x64x{_QA}>", f"tensor<3x3x64x64x{_QB}>")
    o = "tensor<8x56x56x64xi32>" if xla else f"tensor<8x56x56x64x{_QO}>"
    return f"""func.func @main(%a: {a}, %b: {b}) -> {o} {{
  %0 = stablehlo.convolution(%a, %b) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {{pad = [[1, 1], [1, 1]]}} {{batch_group_count = 1 : i64, feature_group_count = 1 : i64}} : ({a}, {b}) -> {o}
  return %0 : {o}
}}"""


def _chain(n: int) -> str:
    """Ten element-wise ops on two f32 tensors (and a splat constant)."""
    t = f"tensor<{n}xf32>"
    return f"""func.func @main(%x: {t}, %y: {t}) -> {t} {{
  %c = stablehlo.constant dense<0.5> : tensor<f32>
  %h = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<f32>) -> {t}
  %0 = stablehlo.multiply %x, %y : {t}
  %1 = stablehlo.add %0, %h : {t}
  %2 = stablehlo.tanh %1 : {t}
  %3 = stablehlo.multiply %2, %x : {t}
  %4 = stablehlo.subtract %3, %y : {t}
  %5 = stablehlo.abs %4 : {t}
  %6 = stablehlo.add %5, %x : {t}
  %7 = stablehlo.divide %6, %h : {t}
  %8 = stablehlo.maximum %7, %y : {t}
  %9 = stablehlo.sqrt %8 : {t}
  return %9 : {t}
}}"""


N = 1_000_000
PROGRAMS: dict[str, tuple[str, list[tuple[tuple[int, ...], str]]]] = {}
for _t in ("f32", "f16", "bf16", "f8E4M3FN"):
    PROGRAMS[f"tanh 1e6 {_t}"] = (_unary("tanh", _t, N), [((N,), _t)])
    PROGRAMS[f"exp 1e6 {_t}"] = (_unary("exponential", _t, N), [((N,), _t)])
    PROGRAMS[f"multiply 1e6 {_t}"] = (_binary("multiply", _t, N), [((N,), _t), ((N,), _t)])
for _t in ("f32", "f8E4M3FN"):  # (the one-byte add has no factoring: its plain table lookup)
    PROGRAMS[f"add 1e6 {_t}"] = (_binary("add", _t, N), [((N,), _t), ((N,), _t)])
PROGRAMS["multiply 1e6 f8E5M2"] = (_binary("multiply", "f8E5M2", N), [((N,), "f8E5M2")] * 2)
PROGRAMS["logistic 1e6 bf16"] = (_unary("logistic", "bf16", N), [((N,), "bf16")])
PROGRAMS["dot 8x512 @ 512x10 f32"] = (_dot("f32", "f32", 1, 8, 512, 10),
                                      [((1, 8, 512), "f32"), ((1, 512, 10), "f32")])
PROGRAMS["dot 1x64 @ 64x64 f32 (RNN step)"] = (_dot("f32", "f32", 1, 1, 64, 64),
                                               [((1, 1, 64), "f32"), ((1, 64, 64), "f32")])
PROGRAMS["batched dot 96x(128x64 @ 64x128) f32"] = (
    _dot("f32", "f32", 96, 128, 64, 128), [((96, 128, 64), "f32"), ((96, 64, 128), "f32")])
PROGRAMS["dot 512^3 bf16"] = (_dot("bf16", "bf16", 1, 512, 512, 512),
                              [((1, 512, 512), "bf16"), ((1, 512, 512), "bf16")])
PROGRAMS["dot 1024^3 i8 -> i32"] = (_dot("i8", "i32", 1, 1024, 1024, 1024),
                                    [((1, 1024, 1024), "i8"), ((1, 1024, 1024), "i8")])
PROGRAMS["reduce add dim 0 16384x32 f32"] = (_sum0("f32", 16384, 32), [((16384, 32), "f32")])
PROGRAMS["reduce add dim 0 1000x1000 f32"] = (_sum0("f32", 1000, 1000), [((1000, 1000), "f32")])
for _b, _s in ((4, 256), (1, 1024)):
    PROGRAMS[f"attention f16 {_b}x12x{_s} (d=64)"] = (_attention(_b, 12, _s, 64),
                                                   [((_b, 12, _s, 64), "f16")] * 3)
PROGRAMS["quantized dot 1024^3 i8 -> i32"] = (_quantized_dot(1024),
                                              [((1024, 1024), "i8"), ((1024, 1024), "i8")])
PROGRAMS["quantized conv 3x3 8x56x56x64 -> 64 i8"] = (
    _quantized_conv(), [((8, 56, 56, 64), "i8"), ((3, 3, 64, 64), "i8")])
XLA_TEXT = {"quantized dot 1024^3 i8 -> i32": _quantized_dot_xla(1024),
            "quantized conv 3x3 8x56x56x64 -> 64 i8": _quantized_conv(xla=True)}
PROGRAMS["10-op element-wise chain 1e6 f32"] = (_chain(N), [((N,), "f32")] * 2)
PROGRAMS["10-op element-wise chain 1e8 f32"] = (_chain(100 * N), [((100 * N,), "f32")] * 2)


def _gpt2(dtype: str, batch: int, seq: int, layers: int = 2,
          train: bool = False) -> tuple[str, list[np.ndarray]]:
    """A GPT-2 forward pass (124M's shapes: d=768, 12 heads, vocab 50257; ``layers`` blocks of
    pre-norm attention and a GELU MLP, tied embedding as the LM head) on token ids, lowered by
    jax with its parameters as arguments, in ``dtype`` (f32 or bf16); with ``train``, an AdamW
    training step instead (next-token cross-entropy, its gradient, the moment and weight
    updates: the parameters and both moments in and out)."""
    import jax
    import jax.numpy as jnp

    d, h, vocab, ctx = 768, 12, 50257, 1024
    dt = {"f32": jnp.float32, "bf16": jnp.bfloat16}[dtype]
    r = np.random.default_rng(0)

    def w(*shape: int) -> np.ndarray:
        return (r.standard_normal(shape, dtype=np.float32) * 0.02).astype(dt)

    params = {"wte": w(vocab, d), "wpe": w(ctx, d), "lnf": (np.ones(d, dt), np.zeros(d, dt)),
              "blocks": [{"ln1": (np.ones(d, dt), np.zeros(d, dt)), "qkv": w(d, 3 * d),
                          "proj": w(d, d), "ln2": (np.ones(d, dt), np.zeros(d, dt)),
                          "fc": w(d, 4 * d), "out": w(4 * d, d)} for _ in range(layers)]}

    def norm(x, g_b):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) * jax.lax.rsqrt(v + 1e-5) * g_b[0] + g_b[1]

    def model(p, ids):
        x = p["wte"][ids] + p["wpe"][:ids.shape[1]]
        mask = jnp.tril(jnp.ones((ids.shape[1], ids.shape[1]), bool))
        for blk in p["blocks"]:
            q, k, v = jnp.split(norm(x, blk["ln1"]) @ blk["qkv"], 3, axis=-1)
            q, k, v = (t.reshape(*t.shape[:2], h, d // h).transpose(0, 2, 1, 3) for t in (q, k, v))
            a = jnp.where(mask, q @ k.transpose(0, 1, 3, 2) / np.sqrt(d // h).astype(dt),
                          jnp.asarray(-1e4, dt))
            a = jax.nn.softmax(a, axis=-1) @ v
            x = x + a.transpose(0, 2, 1, 3).reshape(x.shape) @ blk["proj"]
            x = x + jax.nn.gelu(norm(x, blk["ln2"]) @ blk["fc"]) @ blk["out"]
        return norm(x, p["lnf"]) @ p["wte"].T

    ids = r.integers(0, vocab, (batch, seq)).astype(np.int32)
    flat, _ = jax.tree_util.tree_flatten(params)
    if not train:
        text = jax.jit(model).lower(params, ids).as_text()
        return text, [np.asarray(a) for a in flat] + [ids]

    def loss(p, ids):
        logits = model(p, ids[:, :-1]).astype(jnp.float32)
        logp = jax.nn.log_softmax(logits, axis=-1)
        return -jnp.take_along_axis(logp, ids[:, 1:, None], axis=-1).mean()

    def step(p, m, v, ids):  # AdamW, lr 3e-4, betas (0.9, 0.999), weight decay 0.01, step 1
        g = jax.grad(loss)(p, ids)
        m = jax.tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g, m, g)
        v = jax.tree_util.tree_map(lambda v, g: 0.999 * v + 0.001 * g * g, v, g)
        p = jax.tree_util.tree_map(
            lambda p, m, v: p - 3e-4 * ((m / 0.1) / (jnp.sqrt(v / 0.001) + 1e-8) + 0.01 * p),
            p, m, v)
        return p, m, v

    zeros = jax.tree_util.tree_map(np.zeros_like, params)
    text = jax.jit(step).lower(params, zeros, zeros, ids).as_text()
    z = [np.zeros_like(a) for a in flat]
    return text, [np.asarray(a) for a in flat] + z + z + [ids]


GPT2 = {f"GPT-2 2 layers {t}, batch {b}, seq {s}": (t, b, s)
        for t, b, s in (("f32", 8, 128), ("bf16", 8, 128), ("bf16", 1, 512), ("f32", 8, 512))}
GPT2["GPT-2 2 layers f32 AdamW training step, batch 4, seq 128"] = ("f32", 4, 128, 2, True)


def _resnet18(batch: int, size: int = 224) -> tuple[str, list[np.ndarray]]:
    """A ResNet-18 forward pass in inference mode (NHWC, f32; the 7x7 stem, max pool, four
    stages of two basic blocks with 1x1 projection shortcuts, batch norm from its running
    statistics, global average pool, a 1000-way classifier), lowered by jax with its
    parameters as arguments."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    r = np.random.default_rng(0)

    def conv_p(k: int, cin: int, cout: int) -> dict:
        return {"w": (r.standard_normal((k, k, cin, cout), dtype=np.float32)
                      * np.sqrt(2 / (k * k * cin))).astype(np.float32),
                "bn": [np.ones(cout, np.float32), np.zeros(cout, np.float32),
                       r.standard_normal(cout, dtype=np.float32) * 0.1,
                       np.ones(cout, np.float32)]}

    params: dict = {"stem": conv_p(7, 3, 64), "blocks": []}
    cin = 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        for i in range(2):
            s = stride if i == 0 else 1
            blk = {"c1": conv_p(3, cin, cout), "c2": conv_p(3, cout, cout)}
            if s != 1 or cin != cout:
                blk["proj"] = conv_p(1, cin, cout)
            params["blocks"].append((blk, s))
            cin = cout
    params["fc"] = (r.standard_normal((512, 1000), dtype=np.float32) * 0.03,
                    np.zeros(1000, np.float32))
    strides = [s for _, s in params["blocks"]]
    tree = {"stem": params["stem"], "blocks": [b for b, _ in params["blocks"]], "fc": params["fc"]}

    def conv_bn(x, p, stride, relu=True):
        k = p["w"].shape[0]
        y = lax.conv_general_dilated(x, p["w"], (stride, stride), [(k // 2, k // 2)] * 2,
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        g, b, m, v = p["bn"]
        y = (y - m) * (g * lax.rsqrt(v + 1e-5)) + b
        return jax.nn.relu(y) if relu else y

    def model(p, x):
        x = conv_bn(x, p["stem"], 2)
        x = lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1),
                              [(0, 0), (1, 1), (1, 1), (0, 0)])
        for blk, s in zip(p["blocks"], strides):
            y = conv_bn(conv_bn(x, blk["c1"], s), blk["c2"], 1, relu=False)
            x = jax.nn.relu(y + (conv_bn(x, blk["proj"], s, relu=False) if "proj" in blk else x))
        return x.mean(axis=(1, 2)) @ p["fc"][0] + p["fc"][1]

    x = r.standard_normal((batch, size, size, 3), dtype=np.float32)
    flat, _ = jax.tree_util.tree_flatten(tree)
    text = jax.jit(model).lower(tree, x).as_text()
    return text, [np.asarray(a) for a in flat] + [x]


RESNET = {"ResNet-18 f32, batch 1, 224x224": 1, "ResNet-18 f32, batch 8, 224x224": 8}


def program(name: str) -> tuple[str, list[np.ndarray]]:
    if name in GPT2:
        return _gpt2(*GPT2[name])
    if name in RESNET:
        return _resnet18(RESNET[name])
    return PROGRAMS[name][0], _args(PROGRAMS[name][1])


def _args(spec: list[tuple[tuple[int, ...], str]]) -> list[np.ndarray]:
    from shlo.types import element_type

    r = np.random.default_rng(0)
    out = []
    for shape, t in spec:
        if t.startswith("i"):
            out.append(r.integers(-127, 128, shape).astype(np.int8))
        else:
            x = r.standard_normal(shape, dtype=np.float32)
            out.append(x if t == "f32" else x.astype(element_type(t).dtype))
    return out


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    from sidebyside import main

    main(list(PROGRAMS) + list(GPT2) + list(RESNET), program, str(Path(__file__).resolve()), xla_text=XLA_TEXT)
