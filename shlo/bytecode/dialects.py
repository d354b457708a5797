"""What the bytecode reader and writer need to know per dialect: the codec of its attributes
and types, how its ops store their inherent attributes (properties), and which op names it
knows.

Properties of ODS ops are their inherent attributes in name order, each written as an
attribute reference, or as an optional reference (0 = absent) when the attribute is optional or
has a default; the layouts of the ops shlo reads are in :mod:`.properties`. Unregistered ops
keep their properties as one dictionary attribute. Attributes and types of dialects without a
codec are read from their assembly text with shlo's parser.
"""

from __future__ import annotations

from typing import Any

from ..attributes import DictAttr, OpaqueAttr
from ..errors import Diagnostic
from ..ir import UNKNOWN_LOC
from .encoding import BytecodeError, Cursor, Emitter, WriteError
from .properties import LAYOUTS
from .vhlo.ops import OPS

__all__ = ["codec", "parse_text", "check_op", "split_inherent", "read_properties",
           "property_layout", "UnknownOpError"]


class _Module:
    def __init__(self, mod: Any) -> None:
        self.read_attr = mod.read_attr
        self.read_type = mod.read_type
        self.write_attr = mod.write_attr
        self.write_type = mod.write_type
        self.attr_refs = mod.attr_refs
        self.type_refs = mod.type_refs
        self.can_write_attr = mod.can_write_attr
        self.can_write_type = mod.can_write_type


_CODECS: dict[str, Any] = {}


def codec(dialect: str) -> Any:
    """The codec of ``dialect``'s attributes and types, or None."""
    c = _CODECS.get(dialect)
    if c is None and dialect not in _CODECS:
        if dialect == "builtin":
            from . import builtin as mod
        elif dialect == "vhlo":
            from .vhlo import codec as mod  # type: ignore[no-redef]
        elif dialect == "quant":
            from .quant_codec import QUANT

            c = _CODECS[dialect] = QUANT
            return c
        elif dialect in ("stablehlo", "chlo"):
            from . import stablehlo_codec

            c = _CODECS[dialect] = getattr(stablehlo_codec, dialect.upper())
            return c
        else:
            _CODECS[dialect] = None
            return None
        c = _CODECS[dialect] = _Module(mod)
    return c


def parse_text(text: str, is_attr: bool, cur: Cursor) -> Any:
    """An attribute or type written as its assembly text (the bytecode fallback)."""
    from ..errors import ParseError
    from ..syntax.parser import Parser

    try:
        if text.startswith(("#vhlo", "!vhlo")):
            from .vhlo.text import parse_attr, parse_type

            return parse_attr(text) if is_attr else parse_type(text)
        p = Parser(text, "<bytecode>")
        value = p.parse_attribute() if is_attr else p.parse_type()
        return value
    except (ParseError, ValueError) as e:
        if is_attr:
            return OpaqueAttr(text)
        raise cur.error(f"cannot read type '{text}': {e}") from None


class UnknownOpError(BytecodeError):
    """An op that the op's dialect does not define (a VHLO op from a newer version)."""


def check_op(r: Any, name: str, registered: bool, cur: Cursor, start: int) -> None:
    """Reject ops that their (known, closed) dialect does not have."""
    if name.startswith("vhlo."):
        if name not in OPS:
            err = UnknownOpError(f"unregistered operation '{name}' found in dialect ('vhlo') "
                                 "that does not allow unknown operations", start, cur.section,
                                 r.filename)
            d = err.diagnostics[0]
            d.message = (f"unregistered operation '{name}' found in dialect ('vhlo') that does "
                         f"not allow unknown operations (byte {start}, section '{cur.section}')")
            err.diagnostics.append(Diagnostic(f"in bytecode version {r.version} produced by: "
                                              f"{r.producer}", UNKNOWN_LOC, "note"))
            raise err


def split_inherent(name: str, attributes: dict[str, Any], properties: dict[str, Any]) -> None:
    """Move the inherent attributes of a VHLO op out of the merged dictionary (bytecode < 5)."""
    if not name.startswith("vhlo."):
        return
    info = OPS.get(name)
    if info is None:
        return
    for k in info.attrs:
        if k in attributes:
            properties[k] = attributes.pop(k)


_LAYOUTS: dict[str, Any] = {}
_NAMES: dict[str, frozenset[str]] = {}


def property_layout(name: str) -> tuple[tuple[str, bool], ...] | None:
    """``((attr name, optional), ...)`` in the order the op's properties are written."""
    try:
        return _LAYOUTS[name]
    except KeyError:
        pass
    if name.startswith("vhlo."):
        info = OPS.get(name)
        layout = None if info is None else tuple((a, False) for a in info.sorted_attrs)
    else:
        layout = LAYOUTS.get(name)
    if len(_LAYOUTS) < 100_000:
        _LAYOUTS[name] = layout
    return layout


def _property_names(name: str) -> frozenset[str]:
    names = _NAMES.get(name)
    if names is None:
        names = _NAMES[name] = frozenset(n for n, _ in property_layout(name) or ())
    return names


def read_properties(r: Any, name: str, registered: bool, cur: Cursor,
                    properties: dict[str, Any], attributes: dict[str, Any]) -> None:
    if not registered:
        a = r.attr(cur.varint("unregistered op properties"))
        if isinstance(a, DictAttr):
            properties.update(a.items)
        return
    layout = property_layout(name)
    if layout is None:
        raise cur.error(f"op '{name}' stores properties in an encoding shlo does not know")
    for i, (attr_name, optional) in enumerate(layout):
        if cur.at_end() and all(opt for _, opt in layout[i:]):
            # an older producer whose op definition lacked these trailing optional properties
            # (plain StableHLO bytecode follows the producer's op definitions; e.g. jaxlib's
            # stablehlo.custom_call has no `result_tilings` yet)
            break
        if optional:
            v = cur.varint(f"property '{attr_name}'")
            if v:
                properties[attr_name] = r.attr(v >> 1)
        else:
            properties[attr_name] = r.attr(cur.varint(f"property '{attr_name}'"))
    if not cur.at_end():
        from .properties import read_segment_sizes

        read_segment_sizes(name, cur, properties)


# --- writing ---------------------------------------------------------------------------------------

_KNOWN_DIALECTS = ("builtin.", "func.", "stablehlo.", "chlo.")


_REGISTERED: dict[str, bool] = {}


def is_registered(name: str) -> bool:
    """Whether MLIR knows op ``name`` (writes it as a registered op)."""
    r = _REGISTERED.get(name)
    if r is None:
        r = name in OPS if name.startswith("vhlo.") else name.startswith(_KNOWN_DIALECTS)
        if len(_REGISTERED) < 100_000:
            _REGISTERED[name] = r
    return r


def split(op: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The op's inherent attributes (in property order) and its discardable ones."""
    registered = is_registered(op.name)
    if not registered:
        return dict(op.properties), dict(op.attributes)
    names = _property_names(op.name)
    if not op.attributes and all(k in names for k in op.properties):
        return op.properties, op.attributes
    props: dict[str, Any] = {}
    disc: dict[str, Any] = {}
    for d in (op.properties, op.attributes):
        for k, v in d.items():
            (props if k in names else disc)[k] = v
    return props, disc


def has_properties(op: Any) -> bool:
    if not is_registered(op.name):
        return True
    return bool(property_layout(op.name))


def property_refs(op: Any, registered: bool, props: dict[str, Any] | None = None) -> list[Any]:
    """The attributes the op's properties refer to, in the order they are written
    (``props``: the op's inherent attributes, when :func:`split` has been called already)."""
    if props is None:
        props, _ = split(op)
    if not registered:
        return [DictAttr(tuple(sorted(props.items())))] if props else []
    layout = property_layout(op.name) or ()
    return [props[n] for n, _ in layout if n in props]


def write_properties(w: Any, op: Any, registered: bool,
                     props: dict[str, Any] | None = None) -> bytes | None:
    """The encoded properties of ``op`` (None: the op has no properties storage)."""
    if props is None:
        props, _ = split(op)
    e = Emitter()
    if not registered:
        if not props:
            return None
        e.varint(w.attr_index(DictAttr(tuple(sorted(props.items())))))
        return bytes(e.out)
    layout = property_layout(op.name)
    if not layout:
        return None
    for n, optional in layout:
        a = props.get(n)
        if optional:
            e.varint(0 if a is None else (w.attr_index(a) << 1) | 1)
        else:
            if a is None:
                raise WriteError(f"op '{op.name}' lacks its required attribute '{n}'")
            e.varint(w.attr_index(a))
    return bytes(e.out)
