"""The evaluator of the pattern DAGs in :mod:`._patterns` (upstream's DRR decompositions: atan,
atanh, conj, is_inf, mulhi, tan, and the functional_algorithms ones: asin, acos, acosh, asinh,
complex atan/atanh, square, `_asin_acos_kernel`)."""

from __future__ import annotations

import math
import re
from typing import Any, Sequence, Union

from ...ir import Operation, Value
from ...types import ComplexType, IntegerType
from ._builder import Builder, NotLowered, float_info, lowering, tensor
from ._patterns import PATTERNS

__all__ = ["Node", "parse", "evaluate"]

Node = Union[str, tuple]
"""A parsed DAG: a leaf string (``$name`` or a literal) or ``(head, bind, [args])``."""

_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def parse(text: str) -> Node:
    tokens = _TOKEN.findall(text)
    pos = 0

    def node() -> Node:
        nonlocal pos
        tok = tokens[pos]
        pos += 1
        if tok != "(":
            return tok
        head, _, bind = tokens[pos].partition(":")
        pos += 1
        args = []
        while tokens[pos] != ")":
            args.append(node())
        pos += 1
        return (head, bind or None, args)

    out = node()
    assert pos == len(tokens), text
    return out


def _literal(text: str) -> Any:
    named = {"NAN": math.nan, "M_PI": math.pi, "0xFFFFFFFFULL": 0xFFFFFFFF}
    if text in named:
        return named[text]
    try:
        return int(text, 0)
    except ValueError:
        return float(text)


def _float_constant(kind: str, like: Value) -> Any:
    fi = float_info(tensor(like).element_type)
    return {"max_finite": float(fi.max), "pos_inf": math.inf, "neg_inf": -math.inf,
            "smallest_normal": float(fi.smallest_normal)}[kind]


def evaluate(b: Builder, dag: Node, env: dict[str, Value], op: Operation) -> Value:
    """Create the ops of ``dag`` (arguments first, left to right; a named node once)."""

    def value(n: Node) -> Value:
        if isinstance(n, str):
            if not n.startswith("$"):
                raise ValueError(f"a literal where a value is expected: {n}")
            return env[n[1:]]
        head, bind, args = n
        if bind is not None and bind in env:
            return env[bind]
        out = build(head, args)
        if bind is not None:
            env[bind] = out
        return out

    def build(head: str, args: list[Node]) -> Value:
        if head == "c":
            assert isinstance(args[0], str)
            return b.like(_literal(args[0]), value(args[1]))
        vals = [value(a) for a in args]
        if head in ("max_finite", "pos_inf", "neg_inf", "smallest_normal"):
            return b.like(_float_constant(head, vals[0]), vals[0])
        if head.startswith("compare."):
            return b.cmp(head.split(".", 1)[1], *vals)
        if head.startswith("chlo."):
            return b.chlo1(head, *vals)
        et = tensor(vals[0]).element_type
        if head == "upcast":
            assert isinstance(et, IntegerType)
            return b.convert(vals[0], IntegerType(et.width * 2, et.signedness))
        if head == "unsigned":
            assert isinstance(et, IntegerType)
            return b.convert(vals[0], IntegerType(et.width, "unsigned"))
        if head == "width":
            assert isinstance(et, IntegerType)
            return b.like(et.width, vals[1])
        if head == "convert_result":
            return b.convert(vals[0], tensor(op.results[0]).element_type)
        return b.op(head, *vals)

    return value(dag)


def _kind_matches(kind: str, operands: Sequence[Value]) -> bool:
    et = tensor(operands[0]).element_type
    if kind == "any":
        return True
    if kind == "complex":
        return isinstance(et, ComplexType)
    if kind == "real":
        return not isinstance(et, ComplexType)
    if not isinstance(et, IntegerType) or not et.is_integer:
        return False
    signed = kind.startswith("signed")
    return et.is_signed == signed and (et.width < 64 if "<" in kind else et.width == 64)


_BY_OP: dict[str, list[tuple[str, tuple[str, ...], Node]]] = {}
for _name, _kind, _params, _text in PATTERNS:
    _BY_OP.setdefault(_name, []).append((_kind, _params, parse(_text)))


def _lower(b: Builder, op: Operation, operands: Sequence[Value]) -> Sequence[Value]:
    for kind, params, dag in _BY_OP[op.name]:
        if _kind_matches(kind, operands):
            env = dict(zip(params, operands))
            out = evaluate(b, dag, env, op)
            return [out]
    raise NotLowered(f"no decomposition of {op.name} for element type "
                     f"{tensor(operands[0]).element_type}")


lowering(*_BY_OP)(_lower)

