"""Family (b): mutants of valid programs (one op line changed: a dimension, a rank, an element
type, an integer attribute, an enum, a dropped attribute, swapped or replaced operands). shlo's
parser and verifier must answer with their own errors only; when jaxlib is installed, shlo's
verdict (accept/reject) must be MLIR's, for mutants of programs both accept."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Callable

from .contract import Defect, TrialTimeout, disarm

OP_LINE = re.compile(r'^\s*(%[\w#:]+ = )?"?(stablehlo|chlo)\.(\w+)')
_ATTR_INT = re.compile(r"(\b\w+ = |array<i64: |, |\[|dense<)(-?\d+)(?= : i\d+|[,\]>}])")
_ENUMS = {
    "comparison": ["EQ", "NE", "GE", "GT", "LE", "LT"],
    "compare_type": ["SIGNED", "UNSIGNED", "FLOAT", "TOTALORDER"],
    "precision": ["DEFAULT", "HIGH", "HIGHEST"],
    "fft": ["FFT", "IFFT", "RFFT", "IRFFT"],
    "transpose": ["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"],
}
_ELEMS = ["f32", "i32", "f64", "i64", "i1", "i8", "f16", "bf16", "ui8", "i4", "complex<f32>",
          "f8E4M3FN", "!stablehlo.token"]
NUMS = [0, -1, 1, 2, 3, 5, 7, 64, 2 ** 31, 2 ** 31 - 1, 2 ** 32, 2 ** 63 - 1, -2 ** 63]


def _sig(line: str) -> int:
    i = line.rfind(" : ")
    return i if i >= 0 else len(line)


def _dims(line: str, start: int) -> list[re.Match]:
    return list(re.finditer(r"(?<=[<x])(\d+)(?=x)", line[start:]))


def mut_dim(rng: random.Random, line: str) -> str | None:
    s = _sig(line)
    ms = _dims(line, s)
    if not ms:
        return None
    m = rng.choice(ms)
    v = rng.choice([int(m.group(1)) + 1, max(int(m.group(1)) - 1, 0), 0, 1])
    return line[:s + m.start()] + str(v) + line[s + m.end():]


def mut_rank(rng: random.Random, line: str) -> str | None:
    s = _sig(line)
    ms = list(re.finditer(r"tensor<((?:\d+x)*)", line[s:]))
    if not ms:
        return None
    m = rng.choice(ms)
    dims = m.group(1)
    new = dims[dims.index("x") + 1:] if dims and rng.random() < 0.5 else "2x" + dims
    return line[:s + m.start(1)] + new + line[s + m.end(1):]


def mut_elem(rng: random.Random, line: str) -> str | None:
    s = _sig(line)
    ms = list(re.finditer(r"(?<=[<x])(f32|f64|i32|i64|i1|i8|f16|bf16|ui8|complex<f32>)(?=>)",
                          line[s:]))
    if not ms:
        return None
    m = rng.choice(ms)
    return line[:s + m.start()] + rng.choice(_ELEMS) + line[s + m.end():]


def mut_attr(rng: random.Random, line: str) -> str | None:
    ms = list(_ATTR_INT.finditer(line[:_sig(line)]))
    if not ms:
        return None
    m = rng.choice(ms)
    v = int(m.group(2))
    new = rng.choice([v + 1, v + 5, -1, -v - 1, rng.choice(NUMS)])
    return line[:m.start(2)] + str(new) + line[m.end(2):]


def mut_enum(rng: random.Random, line: str) -> str | None:
    words = [(m, vals) for vals in _ENUMS.values()
             for m in re.finditer(r"\b(" + "|".join(vals) + r")\b", line)]
    if not words:
        return None
    m, vals = rng.choice(words)
    return line[:m.start()] + rng.choice(vals) + line[m.end():]


def mut_drop_attr(rng: random.Random, line: str) -> str | None:
    ms = list(re.finditer(r"(, )?\b\w+ = (array<[^>]*>|-?\d+ : i\d+|true|false|\[[^\]]*\]|"
                          r"#stablehlo<[^>]*>|\"[^\"]*\")", line[:_sig(line)]))
    if not ms:
        return None
    m = rng.choice(ms)
    return line[:m.start()] + line[m.end():]


def mut_swap(rng: random.Random, line: str) -> str | None:
    m = re.search(r"(%[\w#]+), (%[\w#]+)", line[:_sig(line)])
    if not m or m.group(1) == m.group(2) or "=" not in line[:m.start()]:
        return None
    return line[:m.start()] + f"{m.group(2)}, {m.group(1)}" + line[m.end():]


def mut_number(rng: random.Random, line: str) -> str | None:
    ms = list(re.finditer(r"(?<![\w.%#^])\d+(?![\w.])", line))
    if not ms:
        return None
    m = rng.choice(ms)
    return line[:m.start()] + str(rng.choice(NUMS)) + line[m.end():]


MUTATIONS: dict[str, Callable[[random.Random, str], str | None]] = {
    "dim": mut_dim, "rank": mut_rank, "elem": mut_elem, "attr": mut_attr, "enum": mut_enum,
    "drop-attr": mut_drop_attr, "swap": mut_swap, "number": mut_number}


def mutant(rng: random.Random, text: str) -> tuple[str, str, str] | None:
    """(mutation kind, op name, mutated program) for one op line of ``text``, or None."""
    lines = text.split("\n")
    ops = [i for i, ln in enumerate(lines) if OP_LINE.match(ln)]
    if not ops:
        return None
    for _ in range(5):
        i = rng.choice(ops)
        kind = rng.choice(list(MUTATIONS))
        new = MUTATIONS[kind](rng, lines[i])
        if new is not None and new != lines[i]:
            m = OP_LINE.match(lines[i])
            return kind, f"{m.group(2)}.{m.group(3)}", "\n".join(lines[:i] + [new] +
                                                                  lines[i + 1:])
    return None


# --- the oracles --------------------------------------------------------------------------------


def shlo_verdict(text: str) -> tuple[bool, str]:
    """(accepted, first message) of shlo's parse + verify; other exceptions propagate."""
    import shlo
    from shlo.errors import InternalError, ShloError
    from shlo.verifier import collect

    try:
        diags = collect(shlo.parse(text))
    except InternalError:
        raise
    except ShloError as e:
        return False, str(e).splitlines()[0]
    return not diags, diags[0].format() if diags else ""


_SERVER = r"""
import json, sys
from jaxlib.mlir import ir
from shlo.testing.oracles import mlir_context
ctx = mlir_context(allow_unregistered=True)
for line in sys.stdin:
    text = json.loads(line)
    try:
        with ctx:
            ir.Module.parse(text)
        out = [True, ""]
    except Exception as e:  # MLIRError, or ValueError for some text
        out = [False, str(e).replace("\n", " ")[:300]]
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
"""


class OracleCrash(Exception):
    """MLIR's parser crashed on the text (a bug upstream, not shlo's)."""


class Upstream:
    """MLIR's verdict through jaxlib's bindings (parsing verifies), in a child process: MLIR's
    parser crashes on some mutants, and a crash must end one trial, not the campaign."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None

    def _start(self) -> subprocess.Popen:
        root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(
            [root] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
        return subprocess.Popen([sys.executable, "-c", _SERVER], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                                env=env)

    def ensure(self) -> None:
        """Start the child (jax's import takes seconds: not inside a trial's time bound)."""
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
            self.verdict("module {}")

    def verdict(self, text: str) -> tuple[bool, str]:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
        try:
            self.proc.stdin.write(json.dumps(text) + "\n")  # type: ignore[union-attr]
            self.proc.stdin.flush()  # type: ignore[union-attr]
            line = self.proc.stdout.readline()  # type: ignore[union-attr]
        except BrokenPipeError:
            line = ""
        except BaseException:  # interrupted (the trial's time bound): the child is out of step
            self.close()
            raise
        if not line:
            self.proc.kill()
            self.proc.wait()
            self.proc = None
            raise OracleCrash("MLIR's parser crashed on this text")
        ok, msg = json.loads(line)
        return ok, msg

    def close(self) -> None:
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None


def _upstream() -> Upstream | None:
    try:
        from shlo.testing.oracles import available

        return Upstream() if available() else None
    except Exception:  # noqa: BLE001 - no oracle: shlo's contract is still checked
        return None


# Some texts are known to differ for reasons outside the verifier: skip them, not hide them.
_SKIP_UPSTREAM = re.compile(r"check\.|interpreter\.|sdy\.|mhlo\.|tosa\.|\bsparse\b|#sparse")


def cases(rng: random.Random, programs: list[str], oracle: bool = True):
    up = _upstream() if oracle else None
    valid: dict[int, bool] = {}

    def both_accept(i: int) -> bool:
        if i not in valid:
            text = programs[i]
            try:
                ours = shlo_verdict(text)[0]
            except Exception:  # noqa: BLE001 - the parser family reports these
                ours = False
            try:
                valid[i] = ours and (up is None or up.verdict(text)[0])
            except OracleCrash:
                valid[i] = False
        return valid[i]

    pool = [i for i, p in enumerate(programs) if OP_LINE.search(p) or "stablehlo." in p]
    while True:
        i = rng.choice(pool)
        if not both_accept(i):
            continue
        got = mutant(rng, programs[i])
        if got is None:
            continue
        kind, op, text = got
        compare = up is not None and not _SKIP_UPSTREAM.search(text)
        if compare:
            up.ensure()

        def trial(text: str = text, kind: str = kind, op: str = op,
                  compare: bool = compare) -> str:
            ours, msg = shlo_verdict(text)
            if compare:
                try:
                    theirs, umsg = up.verdict(text)
                except OracleCrash:
                    return "oracle-crash"  # (upstream's bug: counted, not a shlo defect)
                except TrialTimeout:  # (shlo answered in time, MLIR did not: counted likewise)
                    disarm()
                    return "oracle-hang"
                if theirs != ours:
                    what = "false accept" if ours else "false reject"
                    raise Defect("disagree", f"{what}: {op} ({kind})",
                                 f"{what}: shlo says {msg or 'ok'!r}; MLIR says "
                                 f"{umsg or 'ok'!r}")
            return "accepted" if ours else "rejected"
        yield kind, text, trial
