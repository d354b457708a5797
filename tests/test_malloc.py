"""shlo/_malloc.py: the CLI's processes serve large arrays from the heap (freed memory reused,
not mapped afresh for every intermediate result)."""

from __future__ import annotations

import ctypes
import subprocess
import sys

import pytest

_PROBE = """
import ctypes, sys
import numpy as np
from shlo._malloc import reuse_freed_memory

class Info(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in
                "arena ordblks smblks hblks hblkhd usmblks fsmblks uordblks fordblks keepcost".split()]

libc = ctypes.CDLL("libc.so.6")
libc.mallinfo2.restype = Info
print(reuse_freed_memory())
x = np.ones(1 << 20, np.float32)  # 4 MiB
print(libc.mallinfo2().hblkhd >= x.nbytes)  # (bytes in mapped blocks)
"""


def _probe(env: dict[str, str]) -> list[str]:
    import os

    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                         env={**os.environ, **env}, check=True)
    return out.stdout.split()


def test_large_arrays_come_from_the_heap_once_set():
    try:
        ctypes.CDLL("libc.so.6").mallinfo2
    except (OSError, AttributeError):
        pytest.skip("not glibc 2.33 or later")
    assert _probe({"SHLO_SYSTEM_MALLOC": "1"}) == ["False", "True"]  # glibc's default: mapped
    assert _probe({"SHLO_SYSTEM_MALLOC": ""}) == ["True", "False"]


def test_the_cli_commands_that_run_programs_set_it(monkeypatch, tmp_path):
    from shlo import cli

    calls = []
    monkeypatch.setattr(cli, "reuse_freed_memory", lambda: calls.append(1))
    p = tmp_path / "a.mlir"
    p.write_text("func.func @main() -> tensor<f32> {\n"
                 "  %0 = stablehlo.constant dense<1.0> : tensor<f32>\n"
                 "  return %0 : tensor<f32>\n}\n")
    assert cli.main(["run", str(p)]) == 0
    assert calls == [1]
