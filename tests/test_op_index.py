"""The op index (shlo/ops/_index.py): generated from the eager registry, it lets the registry
import only the modules of the ops a program uses. Each check runs in a fresh interpreter (the
test process has long imported every op)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _python(code: str, *args: str) -> str:
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], env=env,
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_the_index_is_current() -> None:
    """A new or moved op without `python -m shlo.ops._make_index` fails here."""
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, "-m", "shlo.ops._make_index", "--check"], env=env,
                       capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr


_DESCRIBE = """
from shlo import registry

def describe(d):
    return [d.spec, d.summary, sorted(d.traits), sorted(d.inherent or ()),
            type(d.syntax).__name__, d.prepare is not None, d.verify is not None,
            d.infer is not None, bool(d.extra.get("defined"))]
"""


def test_lazy_lookups_give_the_eager_definitions() -> None:
    """Each op looked up with only its indexed modules imported is what a full import gives;
    names_with answers before any op module is imported as after all are."""
    out = json.loads(_python(_DESCRIBE + """
import json, sys
from shlo.ops import index
traits = {t: sorted(registry.names_with(t)) for t in sorted(registry.TRAITS)}
loaded = [m for m in sys.modules if m.startswith("shlo.ops.") and m.count(".") > 2]
lazy = {n: describe(registry.lookup(n)) for n in sorted(index().modules)}
eager = {n: describe(d) for n, d in registry.defined().items()}
after = {t: sorted(registry.names_with(t)) for t in sorted(registry.TRAITS)}
print(json.dumps([traits, after, loaded, lazy, eager]))
"""))
    traits, after, loaded, lazy, eager = out
    assert not loaded  # names_with imported no op module
    assert traits == after
    assert sorted(lazy) == sorted(eager)
    assert {n: d for n, d in lazy.items() if d != eager[n]} == {}
    assert "stablehlo.add" in after["commutative"] and "func.return" in after["terminator"]


def test_one_op_imports_its_own_module_only() -> None:
    out = json.loads(_python(_DESCRIBE + """
import json, sys
d = registry.lookup("stablehlo.cbrt")
print(json.dumps([describe(d), sorted(m for m in sys.modules if m.startswith("shlo.ops."))]))
"""))
    d, modules = out
    assert d[0] == "cbrt" and d[5] and d[6]  # spec section, kernel, verifier
    assert "shlo.ops.elementwise.math" in modules
    assert "shlo.ops.linalg.convolution" not in modules
    assert "shlo.ops.reduction.sort" not in modules


def test_extensions_load_on_first_use() -> None:
    """`#sdy.*` attributes and built-in custom_call targets (LAPACK, GSPMD) work in a fresh
    process, and the targets listed before any is used are those a full import registers."""
    out = json.loads(_python("""
import json
import shlo
from shlo.ops.custom_call import registered_targets
text = '''
sdy.mesh @mesh = <["x"=2]>
func.func @main(%a: tensor<4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<4xf32> {
  func.return %a : tensor<4xf32>
}'''
m = shlo.parse(text)
attr = m.functions["main"].attr("arg_attrs")
listed = registered_targets(builtin=True)
from shlo.ops import load_all
load_all()
print(json.dumps([type(list(attr)[0].items[0][1]).__name__, listed,
                  registered_targets(builtin=True)]))
"""))
    kind, listed, eager = out
    assert kind != "OpaqueAttr"  # the sdy parser read it
    assert listed == eager
    assert "lapack_sgetrf_ffi" in listed and "Sharding" in listed


def test_a_builtin_target_runs_in_a_fresh_process() -> None:
    out = _python("""
import numpy as np
import shlo
text = '''
func.func @main(%a: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.custom_call @mhlo.erf(%a) : (tensor<f32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}'''
print(float(shlo.run(text, np.float32(0.5))[0]))
""")
    assert abs(float(out) - 0.5204998778) < 1e-6


def test_a_small_run_imports_only_what_it_uses(tmp_path) -> None:
    """`shlo run` of an add loads none of the opset's other families, scipy, ml_dtypes, the
    bytecode reader, the passes or importlib.metadata (issue 17: lean start-up)."""
    prog = tmp_path / "small.mlir"
    prog.write_text("""func.func @main() -> tensor<2xf32> {
  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = stablehlo.add %0, %0 : tensor<2xf32>
  func.return %1 : tensor<2xf32>
}
""")
    out = _python("""
import sys
from shlo.cli import main
assert main(["run", sys.argv[1]]) == 0
print(" ".join(sorted(sys.modules)))
""", str(prog))
    printed, modules = out.rsplit("\n", 2)[0], set(out.split("\n")[-2].split())
    assert "4.000000e+00" in printed
    assert "shlo.ops.elementwise.arithmetic" in modules
    unwanted = {"scipy", "ml_dtypes", "importlib.metadata", "shlo.bytecode.reader",
                "shlo.passes", "shlo.ops.linalg.convolution", "shlo.ops.linalg.dot",
                "shlo.ops.reduction.reduce", "shlo.ops.elementwise.math", "shlo.ops.lapack",
                "shlo.ops.sdy.attrs", "shlo.ops.chlo.unary", "shlo.ops.indexing.gather"}
    assert unwanted & modules == set()


def test_help_imports_no_numpy() -> None:
    out = _python("""
import sys
from shlo.cli import main
try:
    main(["--help"])
except SystemExit:
    pass
print("numpy" in sys.modules, "shlo.ops" in sys.modules)
""")
    assert out.split("\n")[-2] == "False False"


def test_registrations_made_by_a_helper_belong_to_the_importing_module(tmp_path) -> None:
    """The index generator's rule: a registration belongs to the module whose import ran it,
    also when a helper of another module makes it."""
    pkg = tmp_path / "idxpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helper.py").write_text(
        "from shlo.registry import define\n"
        "def declare(name):\n    define(name, summary='x')\n")
    (pkg / "user.py").write_text("from .helper import declare\ndeclare('idxtest.op')\n")
    out = _python(f"""
import sys
sys.path.insert(0, {str(tmp_path)!r})
from shlo import registry
origins = registry.record_origins()
import idxpkg.user
print(sorted(origins["idxtest.op"]))
""")
    assert out.strip() == "['idxpkg.user']"
