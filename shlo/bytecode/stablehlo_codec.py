"""Placeholder: the StableHLO/CHLO dialect bytecode encodings (filled in below)."""

from __future__ import annotations

from typing import Any


def read_attr(r: Any, cur: Any) -> Any:
    raise cur.error("stablehlo attribute encodings are not implemented yet")


def read_type(r: Any, cur: Any) -> Any:
    raise cur.error("stablehlo type encodings are not implemented yet")


def write_attr(w: Any, e: Any, a: Any) -> bool:
    return False


def write_type(w: Any, e: Any, t: Any) -> bool:
    return False


def attr_refs(a: Any) -> tuple:
    return ()


def type_refs(t: Any) -> tuple:
    return ()


def can_write_attr(a: Any) -> bool:
    return False


def can_write_type(t: Any) -> bool:
    return False
