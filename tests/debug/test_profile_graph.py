"""Profile totals against wall time, Chrome trace, the graph page in a headless browser,
the CLI spellings of issue 13."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

import shlo
from shlo.cli import main
from shlo.debug.graph import graph_html, graph_svg, layout
from shlo.debug.profile import flops, profile

ROOT = Path(__file__).resolve().parents[2]
MLP = ROOT / "examples" / "mlp.mlir"
X = ROOT / "examples" / "mlp_input.npy"
BLOCK = ROOT / "benchmarks" / "programs" / "transformer_block.mlir"


def test_profile_totals_and_counts():
    m = shlo.load(str(MLP))
    p = profile(m, np.load(X))
    assert p.error is None
    kinds = {r.label: r for r in p.by_kind()}
    assert kinds["stablehlo.dot_general"].count == 2
    assert kinds["stablehlo.broadcast_in_dim"].count == 10
    assert sum(r.count for r in kinds.values()) == len(p.events) == 30
    assert sum(r.share for r in kinds.values()) == pytest.approx(1.0)
    top = [e for e in p.events if e.depth == 0]
    span = max(e.start + e.seconds for e in top) - min(e.start for e in top)
    assert p.total <= span * 1.001 and p.total <= p.seconds
    assert p.total >= 0.1 * span  # the rest is the observer's own bookkeeping (and load)
    dot = next(e.op for e in p.events if e.name == "stablehlo.dot_general")
    assert flops(dot) == 2 * 2 * 32 * 64
    assert kinds["stablehlo.dot_general"].nbytes == (2 * 32 + 2 * 10) * 4
    ct = p.chrome_trace()
    xs = [e for e in ct["traceEvents"] if e["ph"] == "X"]
    assert len(xs) == 30 and all(e["dur"] >= 0 for e in xs)
    assert "stablehlo.dot_general" in p.table()


def test_profile_grid_tracks():
    text = """
    module attributes {mhlo.num_replicas = 2 : i32} {
      func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
        %0 = stablehlo.add %a, %a : tensor<2xf32>
        return %0 : tensor<2xf32>
      }
    }"""
    p = profile(text, np.ones(2, np.float32), replicas=2)
    ct = p.chrome_trace()
    assert {e["pid"] for e in ct["traceEvents"] if e["ph"] == "X"} == {0, 1}
    assert len([e for e in ct["traceEvents"] if e["ph"] == "M"]) == 2


def test_graph_contains_every_op():
    m = shlo.load(str(BLOCK))
    data = layout(m)
    drawn = sum(len(g["nodes"]) for g in data["graphs"])
    consts = sum(1 for op in m.walk() if op.name == "stablehlo.constant")
    funcs = sum(1 for op in m.walk() if op.name == "func.func")
    assert drawn == sum(1 for _ in m.walk()) - 1 - funcs - consts  # all but module/func/consts
    page = graph_html(m, overlay={5: 1.0}, overlay_label="x")
    assert "<script src" not in page and "http://" not in page.replace(
        "http://www.w3.org/2000/svg", "")
    svg = graph_svg(m)
    assert svg.count('class="node"') == drawn - sum(
        len(g["nodes"]) for g in data["graphs"] if g["depth"] > 0)


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def _big_program(n: int) -> str:
    lines = ["func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {"]
    prev = "%a"
    for i in range(n):
        op = ("add", "multiply", "subtract", "maximum")[i % 4]
        lines.append(f"  %v{i} = stablehlo.{op} {prev}, {'%a' if i % 3 else prev} : "
                     f"tensor<4xf32>")
        prev = f"%v{i}"
    lines.append(f"  return {prev} : tensor<4xf32>\n}}")
    return "\n".join(lines)


ARTIFACTS = ROOT / "tests" / "debug" / "artifacts"


@pytest.mark.parametrize("which", ["transformer_block", "10000_ops"])
def test_graph_renders_in_headless_chromium(tmp_path, which):
    exe = _chromium()
    if exe is None:
        pytest.skip("no chromium on PATH")
    m = shlo.load(str(BLOCK)) if which == "transformer_block" else shlo.parse(_big_program(10000))
    page = tmp_path / f"{which}.html"
    page.write_text(graph_html(m))
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=20000"]
    t0 = time.perf_counter()
    out = subprocess.run([exe, *flags, "--dump-dom", str(page)], capture_output=True,
                         text=True, timeout=180, check=False)
    seconds = time.perf_counter() - t0
    dom = out.stdout
    assert 'data-status="ok"' in dom, out.stderr[-2000:]
    expected = sum(len(g["nodes"]) for g in layout(m)["graphs"] if g["depth"] == 0 or True)
    assert dom.count('class="node') >= expected - sum(
        len(g["nodes"]) for g in layout(m)["graphs"] if g["depth"] > 0)
    assert re.search(r'<pre id="errors" hidden="">\s*</pre>', dom)  # no script errors
    ARTIFACTS.mkdir(exist_ok=True)
    subprocess.run([exe, *flags, "--window-size=1400,900",
                    f"--screenshot={ARTIFACTS / (which + '.png')}", str(page)],
                   capture_output=True, timeout=180, check=False)
    (ARTIFACTS / f"{which}.txt").write_text(f"{which}: loaded and drawn in {seconds:.2f} s "
                                            f"(chromium start-up included)\n")


# --- the CLI -----------------------------------------------------------------------------------


def test_cli_diff_exit_codes_and_reproducer(tmp_path, capsys):
    changed = tmp_path / "changed.mlir"
    changed.write_text(MLP.read_text().replace("%14 = stablehlo.subtract %8, %13",
                                               "%14 = stablehlo.add %8, %13"))
    repro = tmp_path / "repro.mlir"
    rc = main(["diff", str(MLP), str(changed), str(X), "--reproducer", str(repro)])
    err = capsys.readouterr().err
    assert rc == 1
    assert re.search(r"mlp\.mlir:23:5: error: first divergence at 'stablehlo\.subtract'", err)
    assert main(["check", str(repro), "-q"]) == 1
    assert main(["diff", str(MLP), str(MLP), str(X), "-q"]) == 0


def test_cli_run_trace_and_profile(tmp_path, capsys):
    d = tmp_path / "trace"
    chrome = tmp_path / "p.json"
    assert main(["run", str(MLP), str(X), "--trace", str(d), "--profile", str(chrome)]) == 0
    captured = capsys.readouterr()
    assert "stablehlo.dot_general" in captured.err and "[" in captured.out
    index = (d / "index.csv").read_text().splitlines()
    assert len(index) == 30
    assert json.loads(chrome.read_text())["traceEvents"]


def test_cli_graph(tmp_path):
    out = tmp_path / "g.html"
    assert main(["graph", str(MLP), str(X), "--overlay", "time", "-o", str(out)]) == 0
    text = out.read_text()
    assert '"overlay"' in text and "relu" in text
    svg = tmp_path / "g.svg"
    assert main(["graph", str(MLP), "-o", str(svg)]) == 0
    assert svg.read_text().startswith("<svg")
