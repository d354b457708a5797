"""Helpers for the per-op constraint tests (tests/ops/test_*_constraints.py)."""

from __future__ import annotations

from shlo.verifier import verify_text


def diagnose(text: str) -> list[str]:
    """The messages of every diagnostic of ``text`` (parse errors included)."""
    return [d.message for d in verify_text(text, "t.mlir")]


def func(args: str, body: str, results: str = "") -> str:
    """A function `@main(args) -> results` whose body is ``body`` followed by a bare return
    (the checks under test are the ops', so the function returns nothing)."""
    return f"func.func @main({args}) {{\n{body}\n  func.return\n}}\n"


def assert_verdict(text: str, expected: str | None) -> None:
    """``expected`` None: the program verifies clean; else one diagnostic contains it."""
    msgs = diagnose(text)
    if expected is None:
        assert msgs == [], msgs
    else:
        assert any(expected in m for m in msgs), (expected, msgs)
