"""The shape of the code (ARCHITECTURE.md): layers run one way, no import cycles (function-level
imports included, TYPE_CHECKING-only imports aside), modules of a size a person reads whole, and
each op declared once, beside its kernel."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "shlo"

# The layers, lowest first; a module may import its own layer and the layers below.
LAYERS: list[tuple[str, ...]] = [
    ("shlo.types", "shlo.ir", "shlo.attributes", "shlo.errors", "shlo.registry", "shlo.dtypes",
     "shlo.spelling", "shlo.resources", "shlo._gc"),
    ("shlo.syntax", "shlo.bytecode"),
    ("shlo.ops",),
    ("shlo.verifier", "shlo.interpreter"),
    ("shlo.passes", "shlo.testing", "shlo.debug", "shlo.quantization", "shlo.progress"),
    ("shlo.cli", "shlo.__main__", "shlo.api", "shlo.translate", "shlo"),
]

MAX_LINES = 800


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in ROOT.rglob("*.py")}


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or \
        (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The shlo modules ``name`` imports, at any depth of its code, except under
    ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    package = name if is_pkg else name.rpartition(".")[0]
    out: set[str] = set()

    def resolve(mod: str | None, level: int) -> str:
        if level == 0:
            return mod or ""
        base = package.split(".")
        if level > 1:
            base = base[: len(base) - (level - 1)]
        return ".".join(base + ([mod] if mod else []))

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for sub in child.orelse:
                    visit(sub)
                continue
            if isinstance(child, ast.Import):
                for a in child.names:
                    if a.name.startswith("shlo"):
                        out.add(a.name)
            elif isinstance(child, ast.ImportFrom):
                target = resolve(child.module, child.level)
                if not target.startswith("shlo"):
                    continue
                for a in child.names:
                    sub = f"{target}.{a.name}"
                    out.add(sub if sub in known else target)
            visit(child)

    visit(tree)
    out.discard(name)
    return {m for m in out if m in known}


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    known = set(mods)
    return {m: _imports(m, p, known) for m, p in mods.items()}


def _layer(mod: str) -> int:
    best = -1
    best_len = -1
    for i, prefixes in enumerate(LAYERS):
        for p in prefixes:
            if (mod == p or mod.startswith(p + ".")) and len(p) > best_len:
                best, best_len = i, len(p)
    return best


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    advanced = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_every_module_has_a_layer():
    missing = [m for m in _modules() if _layer(m) < 0]
    assert not missing, f"modules outside every layer of LAYERS: {missing}"


def test_no_import_cycles():
    cycles = _cycles(_graph())
    assert not cycles, "import cycles (function-level imports count):\n" + "\n".join(
        " <-> ".join(c) for c in cycles)


def test_layers_run_one_way():
    bad = []
    for mod, deps in _graph().items():
        for d in deps:
            if _layer(d) > _layer(mod):
                bad.append(f"{mod} (layer {_layer(mod)}) imports {d} (layer {_layer(d)})")
    assert not bad, "imports against the layers:\n" + "\n".join(sorted(bad))


def test_modules_are_a_readable_size():
    long = {m: len(p.read_text(encoding="utf-8").splitlines()) for m, p in _modules().items()}
    over = {m: n for m, n in long.items() if n > MAX_LINES}
    assert not over, f"modules over {MAX_LINES} lines: {over}"


def test_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("source,expected", [
    ("from ..registry import lookup", {"shlo.registry"}),
    ("def f():\n    from ..ops import shape", {"shlo.ops.shape"}),
    ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..ops import shape", set()),
])
def test_import_reader(tmp_path, source, expected):
    f = tmp_path / "mod.py"
    f.write_text(source)
    known = {"shlo.registry", "shlo.ops", "shlo.ops.shape", "shlo.syntax.mod"}
    assert _imports("shlo.syntax.mod", f, known) == expected


def test_every_op_is_declared_beside_its_kernel():
    """Each registered op has a definition (spec section or summary, syntax or generic form), and
    every kernel, verifier and inference belongs to a defined op."""
    from shlo import registry

    ops = registry.defined()
    undeclared = sorted(n for n, d in ops.items() if not d.extra.get("defined"))
    assert not undeclared, f"kernels/verifiers registered for ops never define()d: {undeclared}"
    unexplained = sorted(n for n, d in ops.items() if d.spec is None and not d.summary
                         and n.startswith("stablehlo."))
    assert not unexplained, f"stablehlo ops with neither a spec section nor a summary: {unexplained}"


def test_no_merge_conflict_markers():
    """A merge left `<<<<<<<` markers in a docstring once; Python does not notice them there."""
    root = ROOT.parent
    bad = []
    for p in [*root.glob("shlo/**/*.py"), *root.glob("tests/**/*.py"), *root.glob("docs/**/*.md"),
              *root.glob("benchmarks/**/*.py"), root / "README.md"]:
        for n, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if line.startswith(("<<<<<<< ", ">>>>>>> ")) or line == "=======":
                bad.append(f"{p.relative_to(root)}:{n}")
    assert not bad, bad
