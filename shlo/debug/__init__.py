"""Debugging a model op by op (docs/debugging.md): :func:`trace` records every intermediate,
:func:`diff` finds the first op where two executions diverge, :func:`profile` times ops,
:func:`graph_html` draws the program. They observe the interpreter through its observer hook
(:class:`shlo.interpreter.evaluator.Observer`), never by patching it."""

from __future__ import annotations

from .diff import DiffReport, diff
from .graph import graph_html
from .profile import Profile, profile
from .trace import Trace, read_probe_dir, trace

__all__ = [
           "DiffReport",
           "Profile",
           "Trace",
           "diff",
           "graph_html",
           "profile",
           "read_probe_dir",
           "trace",
]
