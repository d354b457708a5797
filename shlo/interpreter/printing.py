"""Printing run-time values: :func:`format_value` (its home is :mod:`shlo.ops.values`, where the
`interpreter.print` op's kernel uses it too)."""

from ..ops.values import format_value

__all__ = ["format_value"]
