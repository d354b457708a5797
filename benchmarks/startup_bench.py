"""Issue 17's start-up budget, measured side by side on two trees in one run:

    python benchmarks/startup_bench.py --before TREE [--runs 10] [--layers 40]

* ``shlo --help`` and ``shlo run`` of a small program (a constant and an add) and of
  examples/mlp.mlir: wall time and CPU time (user+sys of the child), each command run by the
  venv's ``shlo`` script with ``PYTHONPATH`` set to the tree, the trees alternating run by run.
  Twice: with the trees' ``.pyc`` files (``python -m compileall``, what ``make setup`` does)
  and without them (every module compiled at each start, as with ``PYTHONDONTWRITEBYTECODE``
  and no earlier compile).
* In a child process per tree (``--child``): the verifier's fixed cost (the first
  ``shlo.verify`` of a small parsed module, then a second), and the first-run preparation of a
  1,000-op model (a residual MLP lowered by jax, as in trace_bench.py): the first ``shlo.run``
  of the parsed and verified module minus the time of a later run, and its parts (kernel
  selection, generating and compiling the Python function).

Medians over ``--runs`` (and the minimum: on a loaded machine the minimum is the better guess
of an idle core's time). ``--instructions`` also counts each command's instructions with
valgrind's callgrind: a figure the machine's load does not change.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

SMALL = """func.func @main() -> tensor<2xf32> {
  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = stablehlo.add %0, %0 : tensor<2xf32>
  func.return %1 : tensor<2xf32>
}
"""


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user+sys) seconds of ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _instructions(cmd: list[str], env: dict[str, str]) -> int | None:
    """User-space instructions ``cmd`` executes (valgrind's callgrind), which the machine's load
    does not change; None without valgrind."""
    if shutil.which("valgrind") is None:
        return None
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in p.stderr.splitlines():
        if "Collected :" in line:
            return int(line.split(":")[-1])
    return None


def _pycache(tree: str, compiled: bool) -> None:
    """Give the tree's shlo package its .pyc files, or take them away."""
    pkg = os.path.join(tree, "shlo")
    for dirpath, dirnames, _ in os.walk(pkg):
        if "__pycache__" in dirnames:
            shutil.rmtree(os.path.join(dirpath, "__pycache__"))
    if compiled:
        subprocess.run([sys.executable, "-m", "compileall", "-q", pkg], check=True,
                       env=dict(os.environ, PYTHONDONTWRITEBYTECODE=""))


def commands(work: str) -> dict[str, list[str]]:
    shlo = os.path.join(os.path.dirname(sys.executable), "shlo")
    small = os.path.join(work, "small.mlir")
    with open(small, "w", encoding="utf-8") as f:
        f.write(SMALL)
    ex = os.path.join(ROOT, "examples")
    return {
        "shlo --help": [shlo, "--help"],
        "shlo run small.mlir": [shlo, "run", small],
        "shlo run examples/mlp.mlir": [shlo, "run", os.path.join(ex, "mlp.mlir"),
                                       os.path.join(ex, "mlp_input.npy")],
    }


class _Clock:
    """Wall and CPU seconds of each named step (``with clock("name"): ...``)."""

    def __init__(self) -> None:
        self.out: dict[str, float] = {}

    def __call__(self, name: str) -> "_Clock":
        self.name = name
        return self

    def __enter__(self) -> None:
        self.t = (time.perf_counter(), time.process_time())

    def __exit__(self, *exc: object) -> None:
        self.out[self.name] = time.perf_counter() - self.t[0]
        self.out[self.name + "_cpu"] = time.process_time() - self.t[1]


def child(model_path: str, args_path: str) -> None:
    """In the child: the verifier's fixed cost and the model's first-run preparation (after
    importing what `shlo run` has imported by then: the parser, the verifier, the
    interpreter)."""
    import numpy as np

    import shlo
    import shlo.interpreter.api  # noqa: F401
    import shlo.verifier  # noqa: F401

    clock = _Clock()
    m = shlo.parse(SMALL)
    with clock("verify_first"):
        shlo.verify(m)
    with clock("verify_again"):
        shlo.verify(m)

    with open(model_path, encoding="utf-8") as f:
        text = f.read()
    data = np.load(args_path)
    args = [data[f"arr_{i}"] for i in range(len(data.files))]
    with clock("parse"):
        m = shlo.parse(text)
    with clock("verify"):
        shlo.verify(m)
    with clock("first_run"):
        first = shlo.run(m, *args, verify=False)
    best = (float("inf"), float("inf"))
    for _ in range(5):
        with clock("run"):
            again = shlo.run(m, *args, verify=False)
        best = min(best, (clock.out["run"], clock.out["run_cpu"]))
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    out = clock.out
    out["run"], out["run_cpu"] = best
    out["prepare"] = out["first_run"] - out["run"]
    out["prepare_cpu"] = out["first_run_cpu"] - out["run_cpu"]
    # the parts, on a fresh parse (the op modules are loaded now)
    from shlo.interpreter.api import prepare_entry

    m2 = shlo.parse(text)
    with clock("select_warm"):
        fn, _ = prepare_entry(m2)
    with clock("generate_warm"):
        fn.run  # noqa: B018 - generates and compiles the function
    out["ops"] = sum(1 for _ in m.op.walk())
    print(json.dumps(out))


def model(layers: int) -> tuple[str, str]:
    """The residual MLP of trace_bench.py, as files (made once: jax is slow to import)."""
    work = os.path.join(tempfile.gettempdir(), f"shlo_startup_bench_{layers}")
    path, args_path = os.path.join(work, "model.mlir"), os.path.join(work, "args.npz")
    if not os.path.exists(args_path):
        import numpy as np

        sys.path.insert(0, HERE)
        from trace_bench import model as make

        os.makedirs(work, exist_ok=True)
        text, args = make(layers, 8, 64)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        np.savez(args_path, *args)
    return path, args_path


def _fmt(ts: list[float]) -> str:
    return f"{statistics.median(ts) * 1e3:.0f} ms (min {min(ts) * 1e3:.0f})"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", help="a tree to compare with (e.g. a `git worktree` of main)")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--layers", type=int, default=40)
    ap.add_argument("--child", nargs=2, metavar=("MODEL", "ARGS"), help=argparse.SUPPRESS)
    ap.add_argument("--skip-commands", action="store_true")
    ap.add_argument("--instructions", action="store_true",
                    help="also count each command's instructions with valgrind (slow)")
    a = ap.parse_args()
    if a.child:
        child(*a.child)
        return
    trees = {"after": ROOT}
    if a.before:
        trees = {"before": os.path.abspath(a.before), "after": ROOT}
    load = os.getloadavg()
    print(f"load average: {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f}; "
          f"{os.cpu_count()} CPUs; {a.runs} runs, trees alternating")
    base_env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", OPENBLAS_NUM_THREADS="1")
    base_env.pop("PYTHONPYCACHEPREFIX", None)
    with tempfile.TemporaryDirectory() as work:
        cmds = {} if a.skip_commands else commands(work)
        for compiled in (True, False):
            for tree in trees.values():
                _pycache(tree, compiled)
            res: dict[tuple[str, str], list[tuple[float, float]]] = {}
            for _ in range(a.runs):
                for cname, cmd in cmds.items():
                    for tname, tree in trees.items():
                        env = dict(base_env, PYTHONPATH=tree)
                        res.setdefault((cname, tname), []).append(_timed(cmd, env))
            if not cmds:
                continue
            print(f"\n{'with' if compiled else 'without'} .pyc files (median, and min)\n")
            print("| command | " + " | ".join(f"{t} wall | {t} CPU" for t in trees) + " |")
            print("|---|" + "---|---|" * len(trees))
            for cname in cmds:
                cells = []
                for tname in trees:
                    r = res[(cname, tname)]
                    cells += [_fmt([w for w, _ in r]), _fmt([c for _, c in r])]
                print(f"| `{cname}` | " + " | ".join(cells) + " |")
        for tree in trees.values():  # leave the trees compiled (what make setup does)
            _pycache(tree, True)
        if cmds and a.instructions:
            py = sys.executable
            refs = {"python -c pass": [py, "-c", "pass"],
                    "python -c 'import numpy'": [py, "-c", "import numpy"]}
            print("\ninstructions (callgrind, with .pyc files; millions)\n")
            print("| command | " + " | ".join(trees) + " |")
            print("|---|" + "---|" * len(trees))
            for cname, cmd in {**refs, **cmds}.items():
                cells = []
                for tree in trees.values():
                    n = _instructions(cmd, dict(base_env, PYTHONPATH=tree))
                    cells.append("-" if n is None else f"{n / 1e6:.0f}")
                print(f"| `{cname}` | " + " | ".join(cells) + " |")
    path, args_path = model(a.layers)
    rows: dict[str, dict[str, list[float]]] = {t: {} for t in trees}
    for _ in range(max(3, a.runs // 2)):
        for tname, tree in trees.items():
            env = dict(base_env, PYTHONPATH=tree)
            p = subprocess.run([sys.executable, __file__, "--child", path, args_path], env=env,
                               capture_output=True, text=True, check=True, cwd=tree)
            for k, v in json.loads(p.stdout.strip().splitlines()[-1]).items():
                rows[tname].setdefault(k, []).append(v)
    ops = int(rows["after"]["ops"][0])
    print(f"\nin-process (median, and min), the model has {ops} ops\n")
    print("| measure | " + " | ".join(f"{t} wall | {t} CPU" for t in trees) + " |")
    print("|---|" + "---|---|" * len(trees))
    labels = {
        "verify_first": "verifier, first call (small module)",
        "verify_again": "verifier, second call",
        "parse": "parse the model",
        "verify": "verify the model",
        "first_run": "first run of the model",
        "run": "a later run",
        "prepare": "first-run preparation (first run - later run)",
        "select_warm": "  kernel selection (ops loaded)",
        "generate_warm": "  generate + compile (ops loaded)",
    }
    for k, label in labels.items():
        cells = []
        for t in trees:
            w, c = rows[t][k], rows[t][k + "_cpu"]
            cells.append(f"{statistics.median(w) * 1e3:.1f} ms (min {min(w) * 1e3:.1f}) | "
                         f"{statistics.median(c) * 1e3:.1f} ms (min {min(c) * 1e3:.1f})")
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
