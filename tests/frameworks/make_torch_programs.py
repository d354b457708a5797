"""Small PyTorch models exported with torch-mlir (`torch_mlir.fx.export_and_import(...,
output_type="stablehlo")`), for the differential tier: shlo runs each export and is compared
with PyTorch eager on the same inputs.

Run it directly in a virtualenv with torch and torch_mlir (no pytest needed) to export and
compare in one go::

    PYTHONPATH=$PWD /work/zoo-venv/bin/python tests/frameworks/make_torch_programs.py [DIR]

tests/frameworks/test_torch_programs.py uses the same functions and skips when torch_mlir is not
importable. Nothing is committed: the models are random-initialised at export time (seeded), so
no weights live in git. The cases: a tiny conv net (conv, batch norm, ReLU, pooling, linear) and
a tiny transformer block (layer norm, attention with softmax, GELU MLP), each static and with a
dynamic batch (run at another batch size than exported), and a 1-layer GPT-2 from transformers
when it is installed. Static exports carry `dense_resource` weights and `arith.constant`; the
dynamic ones add `shape.*`, `tensor.dim`/`from_elements` and `arith.index_cast`.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Case", "cases", "compare", "export"]


@dataclass
class Case:
    """One export: its text, the inputs shlo runs it on and PyTorch's results on them."""

    name: str
    text: str
    inputs: list[np.ndarray]
    expected: list[np.ndarray]
    rtol: float = 1e-4
    atol: float = 1e-5
    extra: dict[str, Any] = field(default_factory=dict)


def _models() -> list[tuple[str, Any, list[Any], Any, list[Any] | None]]:
    """(name, module, export inputs, dynamic_shapes, run inputs or None for the same)."""
    import torch
    from torch import nn
    from torch.export import Dim

    torch.manual_seed(0)

    class ConvNet(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c1 = nn.Conv2d(3, 8, 3, padding=1)
            self.bn = nn.BatchNorm2d(8)
            self.c2 = nn.Conv2d(8, 16, 3, stride=2)
            self.fc = nn.Linear(16, 10)

        def forward(self, x: Any) -> Any:
            x = torch.relu(self.bn(self.c1(x)))
            x = nn.functional.max_pool2d(torch.relu(self.c2(x)), 2)
            return self.fc(x.mean((2, 3)))

    class Block(nn.Module):
        def __init__(self, d: int = 32, heads: int = 4) -> None:
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
            self.heads = heads

        def forward(self, x: Any) -> Any:
            b, s, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).chunk(3, -1)
            split = lambda t: t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2)
            q, k, v = split(q), split(k), split(v)
            att = torch.softmax(q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5, -1)
            x = x + self.proj((att @ v).transpose(1, 2).reshape(b, s, d))
            return x + self.mlp(self.ln2(x))

    batch = Dim("batch", min=1, max=64)
    img, img3 = torch.randn(2, 3, 16, 16), torch.randn(3, 3, 16, 16)
    seq, seq5 = torch.randn(2, 8, 32), torch.randn(5, 8, 32)
    conv, block = ConvNet().eval(), Block().eval()
    with torch.no_grad():  # non-trivial batch-norm statistics
        conv.bn.running_mean.uniform_(-0.5, 0.5)
        conv.bn.running_var.uniform_(0.5, 2.0)
    out = [
        ("torch_convnet", conv, [img], None, None),
        ("torch_convnet_dynbatch", conv, [img], ({0: batch},), [img3]),
        ("torch_block", block, [seq], None, None),
        ("torch_block_dynbatch", block, [seq], ({0: batch},), [seq5]),
    ]
    try:
        from transformers import GPT2Config, GPT2Model
    except ImportError:
        return out

    class LastHidden(nn.Module):
        def __init__(self, m: Any) -> None:
            super().__init__()
            self.m = m

        def forward(self, ids: Any) -> Any:
            return self.m(ids, use_cache=False).last_hidden_state

    gpt = LastHidden(GPT2Model(GPT2Config(n_layer=1, n_embd=64, n_head=4, vocab_size=500,
                                          n_positions=64, attn_implementation="eager"))).eval()
    ids, ids3 = torch.randint(0, 500, (2, 16)), torch.randint(0, 500, (3, 16))
    out += [("torch_gpt2_tiny", gpt, [ids], None, None),
            ("torch_gpt2_tiny_dynbatch", gpt, [ids], ({0: batch},), [ids3])]
    return out


def export(name: str, model: Any, inputs: list[Any], dynamic: Any,
           run_inputs: list[Any] | None) -> Case:
    import torch
    from torch_mlir import fx

    for sub in model.modules():  # torch-mlir needs every buffer in the state (GPT-2's bias)
        sub._non_persistent_buffers_set.clear()
    with torch.no_grad():
        mod = fx.export_and_import(model, *inputs, output_type="stablehlo", func_name="main",
                                   dynamic_shapes=dynamic)
        run_inputs = run_inputs or inputs
        ref = model(*run_inputs)
    ref = [ref] if isinstance(ref, torch.Tensor) else list(ref)
    return Case(name, str(mod), [t.numpy() for t in run_inputs],
                [t.detach().numpy() for t in ref])


def cases() -> list[Case]:
    """Every case, exported now (needs torch and torch_mlir)."""
    return [export(*m) for m in _models()]


def compare(case: Case) -> dict[str, float]:
    """Run ``case`` on shlo; max |error| against PyTorch, the allowed tolerance, and the time."""
    import shlo

    module = shlo.parse(case.text, case.name + ".mlir")
    t0 = time.perf_counter()
    got = shlo.run(module, *case.inputs)
    dt = time.perf_counter() - t0
    err, allowed = 0.0, 0.0
    for g, e in zip(got, case.expected):
        assert g.shape == e.shape, (case.name, g.shape, e.shape)
        err = max(err, float(np.max(np.abs(g.astype(np.float64) - e))))
        allowed = max(allowed, case.atol + case.rtol * float(np.max(np.abs(e))))
    return {"max_abs_err": err, "allowed": allowed, "shlo_s": dt}


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else None
    bad = 0
    for c in cases():
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
            (out / f"{c.name}.mlir").write_text(c.text)
        r = compare(c)
        ok = r["max_abs_err"] <= r["allowed"]
        bad += not ok
        print(f"{c.name:28s} {len(c.text) / 1e3:8.1f} kB  max|shlo - torch| = "
              f"{r['max_abs_err']:.3g} (allowed {r['allowed']:.3g})  shlo {r['shlo_s']:.3f} s  "
              f"{'ok' if ok else 'MISMATCH'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
