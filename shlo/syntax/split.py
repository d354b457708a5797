"""Source text of programs and test files: reading it (`-` is standard input) and splitting it
into cases on `// -----` lines (MLIR's `-split-input-file`).

Used by :func:`shlo.load`, `shlo check` (shlo/testing/runner.py) and `shlo verify
--split-input-file` (shlo/cli.py, shlo/testing/diagnostics.py). Each case keeps the line numbers
of the file, so that diagnostics point at the right line.
"""

from __future__ import annotations

import re
import sys
from typing import Iterator

__all__ = ["SPLIT", "split_cases", "read_source", "read_program", "source_name"]

SPLIT = re.compile(r"^// -----\s*$", re.MULTILINE)
"""A separator line: `// -----` alone on its line (trailing blanks allowed)."""


def split_cases(text: str) -> Iterator[tuple[int, str]]:
    """(first line number, text padded with blank lines so line numbers match the file)."""
    pos, line = 0, 1
    for m in SPLIT.finditer(text):
        chunk = text[pos:m.start()]
        yield line, "\n" * (line - 1) + chunk
        # (the match takes the separator's newline only when a blank line follows it)
        line += chunk.count("\n") + text.count("\n", m.start(), m.end())
        pos = m.end()
    yield line, "\n" * (line - 1) + text[pos:]


def read_source(path: str) -> str:
    """The text of the file at ``path`` (UTF-8); `-` reads standard input."""
    if path == "-":
        return sys.stdin.read()
    with open(path, encoding="utf-8") as f:
        return f.read()


def read_program(path: str) -> str | bytes:
    """The program at ``path``: its text (UTF-8, universal newlines), or its bytes when it is MLIR
    bytecode, a jax.export file or not UTF-8 (the bytecode reader then says what it is)."""
    if path == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(path, "rb") as f:
            data = f.read()
    if data[:4] == b"ML\xefR":
        return data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    del data  # (a torch-mlir export is 433 MB: hold one copy, not two)
    if "\r" in text:  # (a search is 10x cheaper than two replaces over the whole text)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def source_name(path: str) -> str:
    """The file name diagnostics show for ``path`` (`<stdin>` for `-`)."""
    return "<stdin>" if path == "-" else path
