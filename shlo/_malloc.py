"""glibc's allocator set to reuse freed memory for large arrays, in shlo's own processes.

By default glibc serves a large allocation (from 128 KiB, raised up to 32 MiB as large blocks
are freed) with a fresh `mmap` and returns it to the system when freed, and gives back the top
of its heap beyond twice that. An interpreter frees an intermediate result after its last use
and allocates the next one of the same size at once, so each op pays page faults on fresh
memory: the 10-op element-wise chain of benchmarks/issue17_bench.py on 1e6 f32 took 11.0 ms,
and 5.0 ms with allocations below 256 MiB served from the heap and up to 512 MiB of freed heap
kept (tanh 1e6 f32 3.8 -> 2.7 ms, ResNet-18 batch 8 541 -> 478 ms, GPT-2 f32 seq 512 7.10 ->
6.81 s, its peak resident memory 1.46 -> 1.73 GB).

The CLI's commands that run programs set this for their process (:func:`reuse_freed_memory`);
the Python API leaves a user's process as it is (the same effect, there, from glibc's
environment variables ``MALLOC_MMAP_THRESHOLD_=268435456 MALLOC_TRIM_THRESHOLD_=536870912``, set
before Python starts). ``SHLO_SYSTEM_MALLOC=1`` keeps glibc's defaults in the CLI too.
"""

from __future__ import annotations

import os

__all__ = ["reuse_freed_memory", "MMAP_THRESHOLD", "TRIM_THRESHOLD"]

MMAP_THRESHOLD = 256 << 20
"""Allocations of at least this many bytes get their own mapping (returned when freed)."""
TRIM_THRESHOLD = 512 << 20
"""Freed memory at the top of the heap beyond this many bytes is returned to the system."""
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # (glibc's mallopt parameters)


def reuse_freed_memory() -> bool:
    """Set glibc's thresholds (above); False where that is not glibc, or not wanted."""
    if os.environ.get("SHLO_SYSTEM_MALLOC"):
        return False
    try:
        import ctypes

        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError, ImportError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
