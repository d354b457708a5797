"""Family (d): command lines given to ``shlo.cli.main([...])`` in process: hostile files (corrupt
.npz/.npy, bf16 arrays, invalid UTF-8, damaged bytecode, missing files, directories) and
mutated programs under every command. The contract: an exit status (argparse's SystemExit
included), never "internal error" or a traceback, and a failing command says why on stderr."""

from __future__ import annotations

import contextlib
import io
import os
import random
import re
import shutil
import tempfile
from typing import Callable

import numpy as np

from .contract import Defect
from .parser_mutations import TEXT_MUTATORS, m_utf8

PROG = ("func.func @main(%x: tensor<2xf32>, %w: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %0 = stablehlo.subtract %x, %w : tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n")
BF16 = ("func.func @main(%x: tensor<2xbf16>) -> tensor<2xbf16> {\n"
        "  %0 = stablehlo.negate %x : tensor<2xbf16>\n  return %0 : tensor<2xbf16>\n}\n")


def _write_files(d: str) -> None:
    def put(name: str, data: bytes | str) -> None:
        with open(os.path.join(d, name), "wb") as f:
            f.write(data.encode() if isinstance(data, str) else data)

    put("p.mlir", PROG)
    put("bf16.mlir", BF16)
    put("bad_utf8.mlir", PROG.encode()[:20] + b"\xff\xfe" + PROG.encode()[20:])
    put("empty.mlir", "")
    put("empty.npy", b"")
    put("text.npy", "hello, not an array\n")
    put("corrupt.npz", b"PK\x03\x04garbage")
    put("trunc.npy", _npy(np.ones(2, np.float32))[:-3])
    put("x.npy", _npy(np.ones(2, np.float32)))
    put("w.npy", _npy(np.full(2, 3, np.float32)))
    put("i.npy", _npy(np.ones(2, np.int64)))
    put("big.npy", _npy(np.ones((3, 3), np.float32)))
    put("obj.npy", _npy(np.array([1, None], object)))
    put("bf16.npy", _npy(np.ones(2, np.dtype("bfloat16") if _has_bf16() else np.float16)))
    put("garbage.bc", b"ML\xefR\x00\x01\x02garbage")
    buf = io.BytesIO()
    np.savez(buf, w=np.full(2, 3, np.float32), x=np.ones(2, np.float32))
    put("args.npz", buf.getvalue())
    put("diag.mlir", "// expected-error@+99 {{nothing}}\n" + PROG)
    put("diag2.mlir", "func.func @f() {\n  // expected-error@-9 {{x}}\n  return\n}\n")
    os.mkdir(os.path.join(d, "dir"))


def _has_bf16() -> bool:
    try:
        import ml_dtypes  # noqa: F401
        return True
    except ImportError:
        return False


def _npy(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=True)
    return buf.getvalue()


# Command lines; {d} is the directory holding the files above.
FIXED = [
    "run {d}/p.mlir --args {d}/corrupt.npz", "run {d}/p.mlir --args {d}/x.npy",
    "run {d}/p.mlir {d}/empty.npy {d}/w.npy", "run {d}/p.mlir {d}/text.npy {d}/w.npy",
    "run {d}/p.mlir {d}/trunc.npy {d}/w.npy", "run {d}/p.mlir {d}/obj.npy {d}/w.npy",
    "run {d}/p.mlir {d}/x.npy", "run {d}/p.mlir {d}/x.npy {d}/w.npy {d}/w.npy",
    "run {d}/p.mlir {d}/i.npy {d}/w.npy", "run {d}/p.mlir {d}/big.npy {d}/w.npy",
    "run {d}/p.mlir {d}/missing.npy {d}/w.npy", "run {d}/missing.mlir",
    "run {d}/p.mlir --args {d}/args.npz", "run {d}/bf16.mlir {d}/bf16.npy",
    "run {d}/bf16.mlir {d}/bf16.npy --out {d}/out.npz", "run {d}/p.mlir {d}/x.npy {d}/w.npy "
    "--out {d}/dir", "run {d}/p.mlir {d}/x.npy {d}/w.npy --entry nope",
    "run {d}/p.mlir {d}/x.npy {d}/w.npy --replicas 0", "run {d}/p.mlir {d}/x.npy {d}/w.npy "
    "--replicas -3", "run {d}/p.mlir {d}/x.npy {d}/w.npy --timeout -1",
    "run {d}/bad_utf8.mlir", "run {d}/empty.mlir", "run {d}/dir", "run {d}/garbage.bc",
    "check {d}/missing.mlir", "check {d}/bad_utf8.mlir", "check -j 0 {d}/p.mlir",
    "check {d}/dir", "verify {d}/bad_utf8.mlir", "verify {d}/missing.mlir", "verify {d}/dir",
    "verify {d}/garbage.bc", "verify --verify-diagnostics {d}/diag.mlir",
    "verify --verify-diagnostics --split-input-file {d}/diag2.mlir", "fmt {d}/bad_utf8.mlir",
    "fmt {d}/garbage.bc", "fmt {d}/empty.mlir", "fmt {d}/p.mlir --emit-bytecode --target "
    "99.0.0 -o {d}/o.bc", "fmt {d}/p.mlir --emit-bytecode --target garbage -o {d}/o.bc",
    "fmt {d}/p.mlir -o {d}/dir", "fmt {d}/p.mlir -o {d}/nodir/o.mlir",
    "opt {d}/p.mlir --pass canonicalize{{nope=1}}", "opt {d}/p.mlir --pass nonexistent-pass",
    "opt {d}/p.mlir --pass canonicalize{{", "opt {d}/bad_utf8.mlir --pass canonicalize",
    "translate --deserialize {d}/garbage.bc", "translate --serialize --target=1.2.3.4 "
    "{d}/p.mlir", "translate --interpret {d}/bad_utf8.mlir", "inspect {d}/garbage.bc",
    "inspect {d}/missing.mlir", "diff {d}/p.mlir {d}/missing.mlir",
    "graph {d}/bad_utf8.mlir", "graph {d}/p.mlir -o {d}/nodir/g.html", "nope", "",
    "run", "--version", "fmt --generic {d}/garbage.bc",
]
RANDOM_COMMANDS = ["verify {f}", "fmt {f}", "fmt --generic {f}", "run {f}",
                   "opt {f} --pass canonicalize", "inspect {f}", "graph {f} -o {d}/g.html",
                   "check -q -j 1 {f}", "fmt --emit-bytecode {f} -o {d}/o.bc"]


def _run_cli(argv: list[str]) -> tuple[int, str, str]:
    from shlo.cli import main

    out_b, err_b = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_b, encoding="utf-8", errors="replace", write_through=True)
    err = io.TextIOWrapper(err_b, encoding="utf-8", errors="replace", write_through=True)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as e:  # argparse's usage errors and --version
            rc = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    out.flush()
    err.flush()
    return rc or 0, out_b.getvalue().decode("utf-8", "replace"), \
        err_b.getvalue().decode("utf-8", "replace")


def _norm(s: str, d: str) -> str:
    return re.sub(r"\d+", "N", s.replace(d, "D"))[:90]


def _trial(template: str, d: str, f: str | None = None) -> Callable[[], str | None]:
    def trial() -> str | None:
        line = template.format(d=d, f=f)
        argv = line.split()
        rc, out, err = _run_cli(argv)
        cmd = argv[0] if argv else "(none)"
        bad = re.search(r"internal error.*|Traceback.*", err)
        if bad:
            raise Defect("cli", f"cli {cmd}: {_norm(bad.group(0), d)}",
                         f"shlo {line}: {bad.group(0)[:300]}")
        if rc not in (0, 1, 2, 130):
            raise Defect("cli", f"cli {cmd}: exit status {rc}", f"shlo {line}: exit {rc}")
        if rc != 0 and not err.strip():
            where = " (on stdout)" if re.search(r"\berror\b", out) else ""
            raise Defect("cli", f"cli {cmd}: failed with nothing on stderr{where}",
                         f"shlo {line}: exit {rc}, stderr empty, stdout {out[:200]!r}")
        return "ok" if rc == 0 else f"exit-{rc}"
    return trial


def cases(rng: random.Random, programs: list[str]):
    """The fixed command lines first, then random commands on mutated programs."""
    d = tempfile.mkdtemp(prefix="shlo-fuzz-cli-")
    try:
        _write_files(d)
        for t in FIXED:
            yield "fixed", "shlo " + t.format(d="D"), _trial(t, d)
        n = 0
        while True:
            text = rng.choice(programs)
            r = rng.random()
            f = os.path.join(d, f"m{n % 50}.mlir")
            n += 1
            if r < 0.1:
                data = m_utf8(rng, text)
            elif r < 0.7:
                data = TEXT_MUTATORS[rng.choice(["byte", "token", "number", "truncate"])](
                    rng, text).encode("utf-8", "surrogatepass")
            else:
                data = text.encode("utf-8")
            with open(f, "wb") as fh:
                fh.write(data)
            cmd = rng.choice(RANDOM_COMMANDS)
            yield "random", f"shlo {cmd.format(d='D', f='F')}\nF = {data[:2000]!r}", \
                _trial(cmd, d, f)
    finally:
        shutil.rmtree(d, ignore_errors=True)
