"""What the upstream-compatible commands (`shlo opt`, `shlo translate`, `shlo inspect`) share:
their streams, input files, `--flag=value` arguments and output text."""

from __future__ import annotations

import os
import sys
from typing import BinaryIO, Callable, Sequence, TextIO

from .errors import ShloError


def streams(stdin: BinaryIO | None, stdout: BinaryIO | None,
            stderr: TextIO | None) -> tuple[BinaryIO, BinaryIO, TextIO]:
    """The given streams, or the process's own (binary stdin/stdout)."""
    return (stdin or sys.stdin.buffer, stdout or sys.stdout.buffer, stderr or sys.stderr)


def read_input(path: str | None, stdin: BinaryIO) -> tuple[bytes, str]:
    """The input's bytes and the name errors give it (`-` or no path: stdin)."""
    if path in (None, "-"):
        return stdin.read(), "<stdin>"
    with open(path, "rb") as f:
        return f.read(), path


def flag(arg: str) -> tuple[str, str | None]:
    """`--name=value` / `-name` -> ("name", value) (quotes around the value dropped)."""
    a = arg.lstrip("-")
    if "=" in a:
        k, v = a.split("=", 1)
        if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
            v = v[1:-1]
        return k, v
    return a, None


def write_text(out: BinaryIO, text: str) -> None:
    """``text`` with a final newline, UTF-8 (lone surrogates kept as the input had them)."""
    if not text.endswith("\n"):
        text += "\n"
    out.write(text.encode("utf-8", "surrogateescape"))


def report(e: ShloError, err: TextIO) -> None:
    err.write(str(e).rstrip("\n") + "\n")


def guarded(fn: Callable[..., int], argv: Sequence[str], stdin: BinaryIO | None,
            stdout: BinaryIO | None, stderr: TextIO | None) -> int:
    """``fn(argv, stdin, stdout, stderr)``, a failure that is a bug in shlo reported in one
    line, exit 2 (SHLO_DEBUG=1 shows the traceback); Ctrl-C exits 130."""
    try:
        return fn(argv, stdin, stdout, stderr)
    except KeyboardInterrupt:
        return 130
    except Exception as e:  # a bug in shlo: say so briefly
        if os.environ.get("SHLO_DEBUG"):
            raise
        (stderr or sys.stderr).write(f"internal error: {type(e).__name__}: {e} (set "
                                     "SHLO_DEBUG=1 for a traceback)\n")
        return 2
