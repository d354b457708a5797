"""Run every cached zoo program (see make_zoo.py) on shlo, compare with the saved reference
outputs, time shlo beside XLA, and print a table.

    PYTHONPATH=/path/to/shlo python benchmarks/zoo/run_zoo.py [--dir DIR] [--only SUBSTR]
        [--group G ...] [--timeout S] [--budget S] [--xla-python PY] [--json OUT.json]

Needs only shlo's own environment (numpy, ml_dtypes). Each program runs in its own child
process (a hang, a crash or a memory blow-up costs one row, not the run) with a timeout:
``shlo.load`` -> ``shlo.verify`` -> ``shlo.run(module, *inputs, verify=True)``.

Status: ok / ok (f64) / mismatch / parse error / verify error / run error / timeout / crashed,
with the first line of the error. "ok (f64)" means shlo differs from XLA by more than the
tolerance but is no further from the float64 reference than twice XLA's own distance from it
(or within tolerance of it): XLA is not the truth either.

Errors are reported as ``max |a - b| / (atol + rtol |b|)`` over all outputs (<= 1 passes);
outputs marked "abs" in the manifest (sign/phase-ambiguous eigen/singular vectors, Q of QR...)
are compared by absolute value.

Timing: shlo's first call (parse and preparation excluded, preparation of the run included) and
the median of up to 5 further calls within --budget seconds. XLA: with --xla-python (an
interpreter with jax), the same .mlir text is compiled by jaxlib's XLA in a helper process and
timed right before shlo (median of 5, numpy in -> numpy out, host transfers included), so both
sides run under the same machine load; where XLA cannot compile the text (sharded over 8
devices, shape-polymorphic), the export-side time from the manifest is used (marked `m`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from zoo_common import read_manifest, unpack, zoo_dir  # noqa: E402


# ----------------------------------------------------------------------------- comparison


def compare(outs, refs, rtol, atol, modes) -> tuple[float, str]:
    """Worst ``|a - b| / (atol + rtol |b|)`` over all outputs, and a note on the worst one."""
    if len(outs) != len(refs):
        return float("inf"), f"{len(outs)} results, expected {len(refs)}"
    worst, note = 0.0, ""
    for i, (a, b) in enumerate(zip(outs, refs)):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return float("inf"), f"result {i}: shape {a.shape}, expected {b.shape}"
        if a.size == 0:
            continue
        if b.dtype.kind in "biu" and a.dtype.kind in "biu" and rtol == 0 and atol == 0:
            bad = int(np.count_nonzero(a != b))
            if bad:
                return float("inf"), f"result {i}: {bad} of {a.size} elements differ"
            continue
        if b.dtype.kind in "biu" and a.dtype.kind in "biu":
            bad = np.count_nonzero(a.astype(np.int64) != b.astype(np.int64))
            if bad:
                return float("inf"), f"result {i}: {bad} of {a.size} integer elements differ"
            continue
        cast = np.complex128 if (a.dtype.kind == "c" or b.dtype.kind == "c") else np.float64
        a, b = a.astype(cast), b.astype(cast)
        if modes.get(str(i)) == "abs":
            a, b = np.abs(a), np.abs(b)
        nan_a, nan_b = np.isnan(a), np.isnan(b)
        if np.any(nan_a != nan_b):
            return float("inf"), f"result {i}: NaN in {int(np.sum(nan_a))} (expected " \
                                 f"{int(np.sum(nan_b))})"
        ok = ~nan_a
        same_inf = np.isinf(a) & np.isinf(b) & (a == b)
        ok &= ~same_inf
        if not np.any(ok):
            continue
        with np.errstate(invalid="ignore", over="ignore"):
            d = np.abs(a[ok] - b[ok]) / (atol + rtol * np.abs(b[ok]))
        k = int(np.argmax(d))
        if d[k] > worst:
            worst = float(d[k])
            idx = np.unravel_index(np.flatnonzero(ok)[k], a.shape)
            note = f"result {i}{list(idx)}: {a[idx]!r} vs {b[idx]!r}"
    return worst, note


def as_results(out, n_expected):
    """shlo returns a list of results, or per process a list of lists (a 1xN grid)."""
    if (isinstance(out, list) and out and isinstance(out[0], list)
            and len(out[0]) == n_expected):
        return out[0], len(out)
    return out, 1


# ----------------------------------------------------------------------------- child


def child(root: Path, name: str, budget: float) -> dict:
    import shlo

    e = next(x for x in read_manifest(root) if x["name"] == name)
    res: dict = {"name": name}
    path = root / e["files"]["mlir"]
    inputs = unpack(root / e["files"]["inputs"], e["in_dtypes"])
    refs = unpack(root / e["files"]["ref"], e["out_dtypes"])
    stage = "parse"
    try:
        t0 = time.perf_counter()
        module = shlo.load(str(path))  # .mlirbc too: what a user would try first
        res["parse_s"] = time.perf_counter() - t0
        stage = "verify"
        t0 = time.perf_counter()
        shlo.verify(module)
        res["verify_s"] = time.perf_counter() - t0
        stage = "run"
        t0 = time.perf_counter()
        out = shlo.run(module, *inputs, verify=True)
        first = time.perf_counter() - t0
        res["first_s"] = first
        times = []
        end = time.perf_counter() + budget
        while len(times) < 5 and (time.perf_counter() < end or not times) and first < 120:
            t0 = time.perf_counter()
            shlo.run(module, *inputs, verify=True)
            times.append(time.perf_counter() - t0)
        res["shlo_s"] = statistics.median(times) if times else first
        res["shlo_runs"] = len(times)
    except Exception as ex:  # noqa: BLE001
        status = {"ParseError": "parse error", "VerificationError": "verify error",
                  "ExecutionError": "run error"}.get(type(ex).__name__)
        if status is None:
            status = f"{stage} error (Python {type(ex).__name__})"
        msg = str(ex)
        res.update(status=status, error=msg.splitlines()[0][:400] if msg else type(ex).__name__,
                   error_full=msg[:4000])
        diags = getattr(ex, "diagnostics", None)
        if diags:
            res["diagnostics"] = [str(d)[:400] for d in list(diags)[:20]]
            res["n_diagnostics"] = len(diags)
        if not status.startswith(("parse error", "verify error", "run error")):
            res["traceback"] = traceback.format_exc()[-3000:]
        return res
    outs, nproc = as_results(out, len(refs))
    res["processes"] = nproc
    worst, note = compare(outs, refs, e["rtol"], e["atol"], e.get("compare", {}))
    res["err"], res["err_note"] = worst, note
    status = "ok" if worst <= 1 else "mismatch"
    if "ref64" in e["files"]:
        with np.load(root / e["files"]["ref64"]) as z:
            r64 = [z[f"a{i}"] for i in range(len(refs))]
        s64, n64 = compare(outs, r64, e["rtol"], e["atol"], e.get("compare", {}))
        x64, _ = compare(refs, r64, e["rtol"], e["atol"], e.get("compare", {}))
        res.update(err64_shlo=s64, err64_xla=x64, err64_note=n64)
        if status == "mismatch" and (s64 <= 1 or s64 <= 2 * x64):
            status = "ok (f64)"
    res["status"] = status
    return res


# ----------------------------------------------------------------------------- XLA timer

XLA_TIMER = r'''
import json, statistics, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
from zoo_common import unpack
import jax, jax.extend
backend = jax.extend.backend.get_backend("cpu")
dev = jax.devices("cpu")[0]
for line in sys.stdin:
    req = json.loads(line)
    try:
        text = open(req["mlir"]).read()
        exe = backend.compile_and_load(text, [dev])
        ins = unpack(req["inputs"], req["in_dtypes"])
        def call():
            return [np.asarray(o) for o in exe.execute([jax.device_put(a, dev) for a in ins])]
        call()
        ts = []
        for _ in range(5):
            t0 = time.perf_counter(); call(); ts.append(time.perf_counter() - t0)
        ans = {"xla_s": statistics.median(ts)}
    except Exception as e:
        ans = {"xla_error": f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"}
    print(json.dumps(ans), flush=True)
'''


class XlaTimer:
    def __init__(self, python: str):
        self.python = python
        self.start()

    def start(self):
        self.p = subprocess.Popen([self.python, "-c", XLA_TIMER, str(Path(__file__).parent)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  stderr=subprocess.DEVNULL,
                                  env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))

    def close(self):
        try:
            self.p.stdin.close()
            self.p.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.p.kill()

    def time(self, root: Path, e: dict) -> dict:
        # Not re-timed: bytecode, sharded programs (8 devices), and host callbacks (their
        # callback lives in the exporting process: calling it elsewhere crashes).
        if (e.get("format") == "bytecode" or e.get("group") == "sharded"
                or "xla_ffi_python_cpu_callback" in e.get("custom_calls", [])):
            return {}
        if self.p.poll() is not None:
            self.start()
        req = {"mlir": str(root / e["files"]["mlir"]), "inputs": str(root / e["files"]["inputs"]),
               "in_dtypes": e["in_dtypes"]}
        try:
            self.p.stdin.write(json.dumps(req) + "\n")
            self.p.stdin.flush()
            line = self.p.stdout.readline()
            if not line:
                self.p.wait()
                self.start()
                return {"xla_error": "XLA timer process died on this program"}
            return json.loads(line)
        except (OSError, ValueError) as ex:
            return {"xla_error": f"timer died: {ex}"}


# ----------------------------------------------------------------------------- driver


def run_in_process(root: Path, e: dict, budget: float) -> dict:
    try:
        return child(root, e["name"], budget)
    except Exception as ex:  # noqa: BLE001 - a harness failure is one row, not the run
        return {"name": e["name"], "status": "crashed (in process)", "error": repr(ex)[:300]}


def run_in_child(root: Path, e: dict, budget: float, timeout: float) -> dict:
    try:
        p = subprocess.run([sys.executable, __file__, "--child", e["name"], "--dir", str(root),
                            "--budget", str(budget)], capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"name": e["name"], "status": "timeout", "error": f"over {timeout:.0f} s"}
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("@@RESULT@@")]
    if line:
        return json.loads(line[-1][len("@@RESULT@@"):])
    tail = [ln for ln in p.stderr.strip().splitlines() if ln.strip()]
    return {"name": e["name"], "status": f"crashed (exit {p.returncode})",
            "error": tail[-1][:300] if tail else "", "traceback": p.stderr[-3000:]}


def fmt_t(s):
    if s is None:
        return "-"
    return f"{s * 1e3:.2f}" if s < 1 else f"{s * 1e3:.0f}"


def fmt_e(x):
    if x is None:
        return "-"
    return "inf" if x == float("inf") else f"{x:.3g}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir")
    ap.add_argument("--only")
    ap.add_argument("--group", action="append")
    ap.add_argument("--names", help="comma-separated entry names (with --only/--group: any)")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--budget", type=float, default=20.0)
    ap.add_argument("--xla-python", default=os.environ.get("SHLO_ZOO_XLA_PYTHON"))
    ap.add_argument("--json", help="write all results here (default DIR/results.json)")
    ap.add_argument("--inproc", action="store_true",
                    help="run the programs in this process (fast start-up; no protection "
                         "against hangs or crashes: for groups that fail fast, e.g. linalg)")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    root = zoo_dir(a.dir)
    if a.child:
        print("@@RESULT@@" + json.dumps(child(root, a.child, a.budget)))
        return 0
    names = set(a.names.split(",")) if a.names else None
    entries = [e for e in read_manifest(root)
               if (names is not None and e["name"] in names)
               or (names is None or a.only or a.group)
               and (a.only is None or a.only in e["name"])
               and (a.group is None or e.get("group") in a.group)]
    if not entries:
        print(f"no zoo programs in {root}: run make_zoo.py first")
        return 0
    timer = XlaTimer(a.xla_python) if a.xla_python else None
    results = []
    la = os.getloadavg()[0]
    out = Path(a.json) if a.json else root / "results.json"
    print(f"# shlo zoo: {len(entries)} programs from {root}; load average {la:.1f}", flush=True)
    for e in entries:
        xt = timer.time(root, e) if timer else {}
        t0 = time.time()
        r = run_in_process(root, e, a.budget) if a.inproc else \
            run_in_child(root, e, a.budget, a.timeout)
        r["wall_s"] = time.time() - t0
        if "xla_s" in xt:
            r["xla_s"], r["xla_src"] = xt["xla_s"], "x"
        else:
            r["xla_s"], r["xla_src"] = e.get("xla_time_s"), "m"
            if "xla_error" in xt:
                r["xla_retime_error"] = xt["xla_error"]
        r.update(group=e.get("group"), library=e.get("library"), kind=e.get("kind"),
                 time_source=e.get("time_source"))
        results.append(r)
        ratio = (r["shlo_s"] / r["xla_s"]) if r.get("shlo_s") and r.get("xla_s") else None
        r["ratio"] = ratio
        e64 = (f" f64:{fmt_e(r.get('err64_shlo'))}/{fmt_e(r.get('err64_xla'))}"
               if "err64_shlo" in r else "")
        print(f"{e['name']:46s} {r['status']:22s} err={fmt_e(r.get('err')):>8s}{e64} "
              f"shlo={fmt_t(r.get('shlo_s')):>9s} xla={fmt_t(r.get('xla_s')):>8s}{r['xla_src']} "
              f"ratio={'-' if ratio is None else f'{ratio:.1f}x':>7s} "
              f"{(r.get('error') or r.get('err_note') or '')[:110]}", flush=True)
        out.write_text(json.dumps({"load_average": la, "results": results}, indent=1))
    if timer:
        timer.close()
    counts: dict[str, int] = {}
    for r in results:
        counts[r["status"].split(" (")[0]] = counts.get(r["status"].split(" (")[0], 0) + 1
    print("\n" + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    print(f"results: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
