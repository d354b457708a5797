"""Differential test of the verifier against the upstream MLIR verifier (jaxlib).

Valid programs are mutated (a wrong dimension, an out-of-range attribute, a wrong element type,
swapped operands) and each mutant is given to shlo (parse + verify) and to upstream (parse +
verify); the two must agree on acceptance. Runs when jax is installed (ORACLES.md).

Run as a script for the full measurement over the corpus's interpreter tests::

    .venv/bin/python tests/test_verifier_differential.py [--all] [-v]

and over the valid programs of the core verify/ files with ``--verify``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

CONFORMANCE = Path(__file__).resolve().parents[1] / ".." / "shared" / "conformance"

# Small valid programs covering many ops (the mutations are applied to their op lines).
SEEDS = [
    """func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = stablehlo.add %a, %b : tensor<2x3xf32>
  %1 = stablehlo.multiply %0, %b : tensor<2x3xf32>
  %2 = stablehlo.sine %1 : tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}""",
    """func.func @f(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}""",
    """func.func @f(%a: tensor<2x3xf32>) -> tensor<6xf32> {
  %0 = stablehlo.reshape %a : (tensor<2x3xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}""",
    """func.func @f(%a: tensor<3xi32>) -> tensor<2x3xi32> {
  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}""",
    """func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<2x7xf32> {
  %0 = stablehlo.concatenate %a, %b, dim = 1 : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<2x7xf32>
  return %0 : tensor<2x7xf32>
}""",
    """func.func @f(%a: tensor<4x6xf32>) -> tensor<2x2xf32> {
  %0 = stablehlo.slice %a [1:3, 0:6:3] : (tensor<4x6xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}""",
    """func.func @f(%a: tensor<2x3xf32>, %p: tensor<f32>) -> tensor<5x10xf32> {
  %0 = stablehlo.pad %a, %p, low = [1, 2], high = [2, 1], interior = [0, 2] : (tensor<2x3xf32>, tensor<f32>) -> tensor<5x10xf32>
  return %0 : tensor<5x10xf32>
}""",
    """func.func @f(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}""",
    """func.func @f(%a: tensor<5x2x3xf32>, %b: tensor<5x3x4xf32>) -> tensor<5x2x4xf32> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
  return %0 : tensor<5x2x4xf32>
}""",
    """func.func @f(%a: tensor<4x6xf32>, %i: tensor<f32>) -> tensor<6xf32> {
  %0 = stablehlo.reduce(%a init: %i) applies stablehlo.add across dimensions = [0] : (tensor<4x6xf32>, tensor<f32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}""",
    """func.func @f(%a: tensor<4x6xf32>, %i: tensor<f32>) -> tensor<2x6xf32> {
  %0 = "stablehlo.reduce_window"(%a, %i) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %1 = stablehlo.maximum %x, %y : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }) {window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 2, 1>} : (tensor<4x6xf32>, tensor<f32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}""",
    """func.func @f(%a: tensor<3x4x2xi32>, %i: tensor<2x3x2xi64>) -> tensor<2x3x2x2xi32> {
  %0 = "stablehlo.gather"(%a, %i) {
    dimension_numbers = #stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 2>,
    slice_sizes = array<i64: 1, 2, 2>, indices_are_sorted = false
  } : (tensor<3x4x2xi32>, tensor<2x3x2xi64>) -> tensor<2x3x2x2xi32>
  return %0 : tensor<2x3x2x2xi32>
}""",
    """func.func @f(%a: tensor<3x4x2xi32>, %i: tensor<2x3x2xi64>, %u: tensor<2x3x2x2xi32>) -> tensor<3x4x2xi32> {
  %0 = "stablehlo.scatter"(%a, %i, %u) ({
  ^bb0(%x: tensor<i32>, %y: tensor<i32>):
    %1 = stablehlo.add %x, %y : tensor<i32>
    stablehlo.return %1 : tensor<i32>
  }) {
    scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [2, 3], inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 2>,
    indices_are_sorted = false, unique_indices = false
  } : (tensor<3x4x2xi32>, tensor<2x3x2xi64>, tensor<2x3x2x2xi32>) -> tensor<3x4x2xi32>
  return %0 : tensor<3x4x2xi32>
}""",
    """func.func @f(%a: tensor<1x8x8x3xf32>, %k: tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32> {
  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32>
  return %0 : tensor<1x8x8x4xf32>
}""",
    """func.func @f(%a: tensor<3xi32>, %b: tensor<3xi32>) -> tensor<3xi1> {
  %0 = stablehlo.compare LT, %a, %b, SIGNED : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}""",
    """func.func @f(%p: tensor<3xi1>, %a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.select %p, %a, %b : tensor<3xi1>, tensor<3xf32>
  return %0 : tensor<3xf32>
}""",
    """func.func @f(%a: tensor<3xf32>) -> tensor<3xi32> {
  %0 = stablehlo.convert %a : (tensor<3xf32>) -> tensor<3xi32>
  %1 = stablehlo.iota dim = 0 : tensor<3xi32>
  %2 = stablehlo.add %0, %1 : tensor<3xi32>
  return %2 : tensor<3xi32>
}""",
    """func.func @f(%a: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = stablehlo.reverse %a, dims = [0] : tensor<4x3xf32>
  %1 = "stablehlo.sort"(%0) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %2 = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  }) {dimension = 0 : i64, is_stable = true} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %1 : tensor<4x3xf32>
}""",
    """func.func @f(%a: tensor<4x3xf32>, %i: tensor<i64>, %j: tensor<i64>) -> tensor<2x3xf32> {
  %0 = stablehlo.dynamic_slice %a, %i, %j, sizes = [2, 3] : (tensor<4x3xf32>, tensor<i64>, tensor<i64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}""",
    """func.func @f(%a: tensor<4x3xf32>, %u: tensor<2x3xf32>, %i: tensor<i64>, %j: tensor<i64>) -> tensor<4x3xf32> {
  %0 = stablehlo.dynamic_update_slice %a, %u, %i, %j : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<i64>, tensor<i64>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}""",
    """func.func @f(%a: tensor<i32>) -> tensor<i32> {
  %0 = stablehlo.constant dense<10> : tensor<i32>
  %1:2 = stablehlo.while(%iterArg = %a, %iterArg_0 = %0) : tensor<i32>, tensor<i32>
    cond {
    %2 = stablehlo.compare LT, %iterArg, %iterArg_0 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  } do {
    %2 = stablehlo.add %iterArg, %iterArg : tensor<i32>
    stablehlo.return %2, %iterArg_0 : tensor<i32>, tensor<i32>
  }
  return %1#0 : tensor<i32>
}""",
    """func.func @f(%p: tensor<i1>, %a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.if"(%p) ({
    stablehlo.return %a : tensor<2xf32>
  }, {
    %1 = stablehlo.negate %a : tensor<2xf32>
    stablehlo.return %1 : tensor<2xf32>
  }) : (tensor<i1>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}""",
    """func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, transpose_a = #stablehlo<transpose NO_TRANSPOSE>, unit_diagonal = false} : (tensor<4x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %1 = "stablehlo.cholesky"(%a) {lower = true} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x3xf32>
}""",
    """func.func @f(%a: tensor<3x8xcomplex<f32>>) -> tensor<3x8xcomplex<f32>> {
  %0 = stablehlo.fft %a, type = FFT, length = [8] : (tensor<3x8xcomplex<f32>>) -> tensor<3x8xcomplex<f32>>
  return %0 : tensor<3x8xcomplex<f32>>
}""",
    """func.func @f(%a: tensor<2x3x4xf32>, %s: tensor<4xf32>, %o: tensor<4xf32>, %m: tensor<4xf32>, %v: tensor<4xf32>) -> tensor<2x3x4xf32> {
  %0 = "stablehlo.batch_norm_inference"(%a, %s, %o, %m, %v) {epsilon = 0.001 : f32, feature_index = 2 : i64} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}""",
    """func.func @f(%a: tensor<8x2xf32>) -> tensor<8x8xf32> {
  %0 = "stablehlo.all_gather"(%a) {all_gather_dim = 1 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<8x2xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}""",
    """func.func @f(%a: tensor<4x16xf32>) -> tensor<16x4xf32> {
  %0 = "stablehlo.all_to_all"(%a) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 4 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<4x16xf32>) -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}""",
    """func.func @f(%a: tensor<2x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<2xf32> {
  %0 = stablehlo.add %a, %a : tensor<2x!quant.uniform<i8:f32, 0.5:3>>
  %1 = stablehlo.uniform_dequantize %0 : (tensor<2x!quant.uniform<i8:f32, 0.5:3>>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
}""",
    """func.func @f(%a: tensor<?x3xf32>, %s: tensor<2xi64>) -> tensor<?x3xf32> {
  %0 = stablehlo.dynamic_broadcast_in_dim %a, %s, dims = [0, 1] : (tensor<?x3xf32>, tensor<2xi64>) -> tensor<?x3xf32>
  %1 = stablehlo.abs %0 : tensor<?x3xf32>
  return %1 : tensor<?x3xf32>
}""",
]

_OP_LINE = re.compile(r"^\s*(%[\w#:]+ = )?\"?(stablehlo|chlo)\.")


def _sig_span(line: str) -> int:
    """Where the type signature of an op line starts (after the last ' : ')."""
    i = line.rfind(" : ")
    return i if i >= 0 else len(line)


def mutate_dim(line: str) -> str | None:
    start = _sig_span(line)
    matches = list(re.finditer(r"tensor<(\d+)x", line[start:])) or \
        list(re.finditer(r"tensor<(\d+)", line[start:]))
    if not matches:
        return None
    m = matches[-1]
    i = start + m.start(1)
    return line[:i] + str(int(m.group(1)) + 1) + line[m.end(1) + start:]


_ATTR = re.compile(r"(dims = \[|dim = |dimension = |dimensions = \[|array<i64: |_dimension = |"
                   r"split_count = |index_vector_dim = |feature_index = |offset_dims = \[|"
                   r"low = \[|interior = \[|length = \[|sizes = \[)(-?\d+)")


def mutate_attr(line: str) -> str | None:
    """An integer attribute out of range (+5)."""
    m = _ATTR.search(line)
    if not m:
        return None
    return line[:m.start(2)] + str(int(m.group(2)) + 5) + line[m.end(2):]


def mutate_attr_negative(line: str) -> str | None:
    """An integer attribute made negative."""
    m = _ATTR.search(line)
    if not m:
        return None
    return line[:m.start(2)] + "-1" + line[m.end(2):]


_ELEM = [("f32", "i32"), ("i32", "f32"), ("f64", "f32"), ("i64", "i32"), ("i1", "i8"),
         ("complex<f32>", "f32")]


def mutate_elem(line: str) -> str | None:
    start = _sig_span(line)
    sig = line[start:]
    for a, b in _ELEM:
        k = sig.rfind("x" + a + ">")
        if k < 0:
            k = sig.rfind("<" + a + ">")
        if k >= 0:
            k += 1
            return line[:start] + sig[:k] + b + sig[k + len(a):]
    return None


def mutate_swap(line: str) -> str | None:
    m = re.search(r"(%[\w#]+), (%[\w#]+)", line[:_sig_span(line)])
    if not m or m.group(1) == m.group(2) or "=" not in line[:m.start()]:
        return None
    return line[:m.start()] + f"{m.group(2)}, {m.group(1)}" + line[m.end():]


MUTATIONS = {"dim": mutate_dim, "attr": mutate_attr, "attr-negative": mutate_attr_negative,
             "elem": mutate_elem, "swap": mutate_swap}


def mutants(text: str):
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if not _OP_LINE.match(line) or "stablehlo.constant" in line:
            continue
        for kind, fn in MUTATIONS.items():
            new = fn(line)
            if new is not None and new != line:
                yield kind, "\n".join(lines[:i] + [new] + lines[i + 1:])


def corpus_seeds(limit: int | None = None) -> list[str]:
    """First chunks of the corpus's interpreter tests, check ops removed."""
    out = []
    for f in sorted((CONFORMANCE / "interpret").glob("*.mlir")):
        chunk = f.read_text(encoding="utf-8").split("// -----")[0]
        if "run_parallel" in chunk or "interpreter." in chunk:
            continue
        lines = [ln for ln in chunk.split("\n") if "check." not in ln and
                 not ln.lstrip().startswith("//")]
        out.append("\n".join(lines))
        if limit and len(out) >= limit:
            break
    return out


# The core verifier test files of ../shared/conformance/verify (issue 16 item 5).
CORE_VERIFY = ["ops_stablehlo", "ops_stablehlo_quantized", "infer_stablehlo", "verify_bounds",
               "verify_convolution", "verify_dynamic_conv", "verify_reduce",
               "verify_reduce_window", "verify_replica_groups_mesh_axes", "verify_scatter",
               "verify_select_and_scatter", "verify_while", "ops_dot_general_algorithms",
               "ops_chlo", "infer_chlo"]


def verify_seeds(limit: int | None = None) -> list[str]:
    """The valid chunks (no annotated diagnostic, no test-only ops) of the core verify/ files."""
    out = []
    for name in CORE_VERIFY:
        f = CONFORMANCE / "verify" / f"{name}.mlir"
        if not f.is_file():
            continue
        for chunk in f.read_text(encoding="utf-8").split("// -----"):
            if "expected-" in chunk or "hlo_test" in chunk or "stablehlo." not in chunk:
                continue
            lines = [ln for ln in chunk.split("\n") if not ln.lstrip().startswith("//")]
            out.append("\n".join(lines))
            if limit and len(out) >= limit:
                return out
    return out


def shlo_accepts(text: str) -> bool:
    import shlo
    from shlo.errors import ShloError
    from shlo.verifier import collect

    try:
        return not collect(shlo.parse(text))
    except ShloError:
        return False


def measure(seeds: list[str]):
    """(agreements, total, disagreements) over the mutants of ``seeds`` whose originals both
    verifiers accept."""
    from jaxlib.mlir import ir

    from shlo.testing.oracles import mlir_context

    ctx = mlir_context(allow_unregistered=True)

    def upstream_accepts(text: str) -> bool:
        try:
            with ctx:
                ir.Module.parse(text)
            return True
        except ir.MLIRError:
            return False

    agree = total = 0
    disagreements = []
    for seed in seeds:
        if not (upstream_accepts(seed) and shlo_accepts(seed)):
            continue
        for kind, text in mutants(seed):
            up, ours = upstream_accepts(text), shlo_accepts(text)
            total += 1
            if up == ours:
                agree += 1
            else:
                disagreements.append((kind, up, ours, text))
    return agree, total, disagreements


def _needs_jax():
    from shlo.testing.oracles import available

    if not available():
        pytest.skip("jax is not installed")


def test_mutations_change_programs():
    text = SEEDS[1]
    kinds = {k for k, t in mutants(text)}
    assert {"dim", "attr", "elem"} <= kinds
    assert all(t != text for _, t in mutants(text))


def test_agreement_with_upstream_on_mutants_of_builtin_programs():
    _needs_jax()
    agree, total, diffs = measure(SEEDS)
    assert total > 100
    shown = "\n\n".join(f"{k}: upstream {'accepts' if u else 'rejects'}, shlo "
                        f"{'accepts' if o else 'rejects'}\n{t}" for k, u, o, t in diffs[:3])
    assert agree / total >= 0.97, f"{agree}/{total}\n{shown}"
    # shlo must never reject what upstream accepts.
    assert not [d for d in diffs if d[1] and not d[2]], shown


@pytest.mark.skipif(not CONFORMANCE.is_dir(), reason="no ../shared/conformance")
def test_agreement_with_upstream_on_mutants_of_corpus_programs():
    _needs_jax()
    agree, total, diffs = measure(corpus_seeds())
    assert total > 100
    assert agree / total >= 0.95, f"{agree}/{total}"
    assert not [d for d in diffs if d[1] and not d[2]]


@pytest.mark.skipif(not CONFORMANCE.is_dir(), reason="no ../shared/conformance")
def test_agreement_with_upstream_on_mutants_of_the_core_verify_files():
    """Issue 16 item 5: shlo gives MLIR's verdict on every mutant of the valid programs of the
    core verify/ files (the first 150 here; the script's --verify measures them all)."""
    _needs_jax()
    agree, total, diffs = measure(verify_seeds(150))
    shown = "\n\n".join(f"{k}: upstream {'accepts' if u else 'rejects'}, shlo "
                        f"{'accepts' if o else 'rejects'}\n{t}" for k, u, o, t in diffs[:3])
    assert total > 300
    assert agree == total, f"{agree}/{total}\n{shown}"


if __name__ == "__main__":  # the full measurement
    if "--verify" in sys.argv:  # the valid programs of the core verify/ files
        seeds = verify_seeds()
    else:
        seeds = SEEDS + (corpus_seeds() if "--all" in sys.argv else corpus_seeds(25))
    agree, total, diffs = measure(seeds)
    by_kind: dict = {}
    for kind, up, ours, text in diffs:
        by_kind.setdefault((kind, up, ours), []).append(text)
    print(f"agreement: {agree}/{total} = {100 * agree / max(total, 1):.1f}%")
    for (kind, up, ours), texts in sorted(by_kind.items()):
        print(f"  {kind}: upstream {'accepts' if up else 'rejects'}, shlo "
              f"{'accepts' if ours else 'rejects'}: {len(texts)}")
    if "-v" in sys.argv:
        for kind, up, ours, text in diffs:
            print(f"--- {kind} up={up} shlo={ours}\n{text}")
