"""JAX's sharded programs over 8 host devices, run on shlo and compared with XLA.

The programs are generated at test time by a subprocess (so that its
`--xla_force_host_platform_device_count=8` does not touch this process's jax), each in the
default Shardy export and the GSPMD one (`jax_use_shardy_partitioner=False`): a data-parallel
MLP training step (shard_map + psum), a tensor-parallel matmul (all_gather, psum_scatter), a
ring ppermute, a pmap, an auto-sharded jit over a 2x4 NamedSharding mesh, a nested partially
manual shard_map; plus a single-device program with jax.debug.print (parse and verify only).
The same programs also run on the MPI engine, 8 ranks (when mpi4py is installed).
Skipped when jax is absent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import shlo
from shlo.ops.sdy.plan import sharded_plan

GENERATOR = r'''
import json, os, sys
import numpy as np
import jax, jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

out = sys.argv[1]
report = {}
rng = np.random.default_rng(0)
devs = np.array(jax.devices())
mesh8 = Mesh(devs, ("x",))
mesh24 = Mesh(devs.reshape(2, 4), ("a", "b"))


def programs():
    # data-parallel MLP training step
    def loss(p, x, y):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        return jnp.mean((h @ p["w2"] - y) ** 2)

    def dp_step(w1, b1, w2, x, y):
        p = {"w1": w1, "b1": b1, "w2": w2}
        g = jax.grad(loss)(p, x, y)
        g = jax.tree.map(lambda t: jax.lax.psum(t, "x") / 8, g)
        return tuple(p[k] - 0.1 * g[k] for k in ("w1", "b1", "w2"))

    f = jax.jit(jax.shard_map(dp_step, mesh=mesh8,
                              in_specs=(P(), P(), P(), P("x"), P("x")),
                              out_specs=(P(), P(), P())))
    yield "dp_mlp", f, [rng.normal(size=(4, 8)), rng.normal(size=(8,)), rng.normal(size=(8, 2)),
                        rng.normal(size=(32, 4)), rng.normal(size=(32, 2))]

    # tensor-parallel matmul: all_gather the activations, reduce-scatter the partial products
    def tp(a, b, c):
        full = jax.lax.all_gather(a, "x", axis=1, tiled=True)
        y = full @ b
        z = jax.lax.psum_scatter(a @ c, "x", scatter_dimension=0, tiled=True)
        return y, z

    f = jax.jit(jax.shard_map(tp, mesh=mesh8, in_specs=(P(None, "x"), P(None, "x"), P("x")),
                              out_specs=(P(None, "x"), P("x"))))
    yield "tp_matmul", f, [rng.normal(size=(8, 16)), rng.normal(size=(16, 8)),
                           rng.normal(size=(16, 4))]

    # ring collective_permute
    ring = [(i, (i + 1) % 8) for i in range(8)]
    f = jax.jit(jax.shard_map(lambda x: jax.lax.ppermute(x, "x", ring) * 2.0, mesh=mesh8,
                              in_specs=P("x"), out_specs=P("x")))
    yield "ring", f, [rng.normal(size=(16, 3))]

    # pmap
    f = jax.pmap(lambda x: x - jax.lax.pmean(x, "i") + jax.lax.axis_index("i"), axis_name="i")
    yield "pmap", f, [rng.normal(size=(8, 5))]

    # auto-sharded jit (no manual region: runs once)
    sa = NamedSharding(mesh24, P("a", "b"))
    sb = NamedSharding(mesh24, P("b", None))
    f = jax.jit(lambda a, b: (jnp.tanh(a @ b), jnp.sum(a, axis=0)), in_shardings=(sa, sb),
                out_shardings=(NamedSharding(mesh24, P("a")), NamedSharding(mesh24, P())))
    yield "auto_jit", f, [rng.normal(size=(8, 16)), rng.normal(size=(16, 4))]

    # nested, partially manual shard_map
    def outer(x):
        inner = jax.shard_map(lambda y: jax.lax.psum(y, "b"), in_specs=P(None, "b"),
                              out_specs=P(), axis_names={"b"})
        return jax.lax.psum(inner(x) * 2.0, "a")

    f = jax.jit(jax.shard_map(outer, mesh=mesh24, in_specs=P("a"), out_specs=P(),
                              axis_names={"a"}))
    yield "nested_partial", f, [rng.normal(size=(8, 16))]


for shardy in (True, False):
    jax.config.update("jax_use_shardy_partitioner", shardy)
    suffix = "" if shardy else "_gspmd"
    for name, f, args in programs():
        key = name + suffix
        try:
            args = [np.asarray(a, np.float32) for a in args]
            text = f.lower(*args).as_text()
            res = f(*args)
            res = res if isinstance(res, (tuple, list)) else (res,)
            for i, a in enumerate(args):
                np.save(os.path.join(out, f"{key}_in{i}.npy"), a)
            for i, r in enumerate(res):
                np.save(os.path.join(out, f"{key}_out{i}.npy"), np.asarray(r))
            report[key] = {"text": text, "nin": len(args), "nout": len(res)}
        except Exception as e:  # noqa: BLE001
            report[key] = {"error": f"{type(e).__name__}: {e}"}
    jax.config.update("jax_use_shardy_partitioner", True)


def dbg(x):
    jax.debug.print("x={x}", x=x)
    return x * 2

report["debug_print"] = {"text": jax.jit(dbg).lower(jnp.ones(3)).as_text(), "nin": 1, "nout": 1}
json.dump(report, open(os.path.join(out, "report.json"), "w"))
'''

NAMES = ["dp_mlp", "tp_matmul", "ring", "pmap", "auto_jit", "nested_partial"]
CASES = NAMES + [n + "_gspmd" for n in NAMES]


@pytest.fixture(scope="module")
def generated() -> dict[str, Any]:
    pytest.importorskip("jax")
    work = tempfile.mkdtemp(prefix="shlo_sharded_")
    Path(work, "gen.py").write_text(GENERATOR)
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8",
               JAX_PLATFORMS="cpu")
    proc = subprocess.run([sys.executable, os.path.join(work, "gen.py"), work], env=env,
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        pytest.skip(f"jax could not generate the programs: {proc.stderr[-2000:]}")
    return {"work": work, "report": json.loads(Path(work, "report.json").read_text())}


@pytest.mark.parametrize("name", CASES)
def test_sharded_program_matches_xla(generated: dict[str, Any], name: str) -> None:
    rep = generated["report"][name]
    if "error" in rep:
        pytest.skip(f"jax could not export/run it here: {rep['error'][:300]}")
    work = generated["work"]
    args = [np.load(os.path.join(work, f"{name}_in{i}.npy")) for i in range(rep["nin"])]
    want = [np.load(os.path.join(work, f"{name}_out{i}.npy")) for i in range(rep["nout"])]
    module = shlo.parse(rep["text"])
    plan = sharded_plan(module)
    assert plan is not None
    if name.startswith("auto_jit"):
        assert not plan.manual  # no manual region: computed once, as the global program
    got = shlo.run(module, *args)
    assert len(got) == len(want)
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, (k, g.shape, w.shape)
        np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-6, err_msg=f"{name} result {k}")


def test_debug_print_program_parses_and_verifies(generated: dict[str, Any]) -> None:
    """Its `sdy.mesh @maximal_mesh_0` and `#sdy.sharding_per_value` on the callback parse; the
    callback custom call itself is not run here."""
    text = generated["report"]["debug_print"]["text"]
    module = shlo.parse(text)
    shlo.verify(module)
    from shlo.syntax.printer import format_module

    assert "sdy.mesh @maximal_mesh_0 = <[], device_ids=[0]>" in format_module(module)


def test_sharded_programs_match_xla_on_mpi_ranks(generated: dict[str, Any]) -> None:
    """Every program of both exports on the MPI engine, one rank per device."""
    pytest.importorskip("mpi4py")
    from shlo.interpreter.mpi.launch import mpi_command, mpiexec

    try:
        mpiexec()
    except RuntimeError:
        pytest.skip("no mpiexec in this environment")
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OPENBLAS_NUM_THREADS="1")
    cmd = mpi_command(8, [])[:-1] + [str(Path(__file__).with_name("sharded_mpi_job.py")),
                                     generated["work"]]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)
    want = [n for n in CASES if "error" not in generated["report"][n]]
    assert want and {n: lines.get(n) for n in want} == {n: "OK" for n in want}, \
        r.stdout + r.stderr[-2000:]
