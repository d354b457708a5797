"""`shlo inspect`: what a portable artifact (or any bytecode or program text) holds.

Reports the producer, bytecode version and StableHLO version of a bytecode file, its dialects
and op counts (per dialect, as written: VHLO ops with their versions), the smallest StableHLO
version that can hold the program, its functions with their signatures, and the number and
size of its constants.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..ir import Module

__all__ = ["describe", "summary"]


def summary(data: bytes, filename: str | None = None) -> dict[str, Any]:
    """The facts :func:`describe` prints, as a dictionary."""
    from . import is_bytecode
    from .portable import portable_artifact_version, read_vhlo
    from .vhlo import ir as vir
    from .vhlo.to_stablehlo import vhlo_to_stablehlo
    from .vhlo.to_version import convert_to_version, smallest_version
    from .vhlo.to_vhlo import stablehlo_to_vhlo
    from .vhlo.version import CURRENT

    info: dict[str, Any] = {"file": filename or "<stdin>", "size": len(data)}
    if is_bytecode(data):
        m, r = read_vhlo(data, filename)
        info["format"] = "MLIR bytecode"
        info["bytecode_version"] = r.version
        info["producer"] = r.producer
        v = portable_artifact_version(data)
        info["stablehlo_version"] = str(v) if v else None
        info["dialects"] = [d.name for d in r.dialects]
    else:
        from ..syntax.parser import parse

        m = parse(data.decode("utf-8", "surrogateescape"), filename)
        info["format"] = "text"
        vir.structurize(m)
    written = Counter(op.name for op in m.walk())
    info["ops"] = dict(sorted(written.items()))
    info["op_count"] = sum(written.values())
    vhlo = vir.is_vhlo_module(m)
    if vhlo:
        work = vir.clone(m)
        convert_to_version(work, CURRENT)
        info["smallest_version"] = str(smallest_version(work))
        vhlo_to_stablehlo(work)
        stable = work
    else:
        stable = m
        try:
            work = vir.clone(m)
            stablehlo_to_vhlo(work)
            info["smallest_version"] = str(smallest_version(work))
        except Exception as e:  # not expressible as VHLO at all
            info["smallest_version"] = f"none ({_first_line(e)})"
    info["functions"] = _functions(stable)
    info["constants"] = _constants(stable)
    return info


def _first_line(e: Exception) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__


def _functions(m: Module) -> list[str]:
    from ..syntax.printer import format_type

    out = []
    for op in m.body.operations:
        if op.name != "func.func":
            continue
        ft = op.attr("function_type").type
        vis = op.attr("sym_visibility")
        vis_s = f"{vis.value} " if vis is not None else ""
        ins = ", ".join(format_type(t) for t in ft.inputs)
        outs = ", ".join(format_type(t) for t in ft.results)
        out.append(f"{vis_s}@{op.attr('sym_name').value}({ins}) -> ({outs})")
    return out


def _constants(m: Module) -> dict[str, int]:
    from ..attributes import DenseElementsAttr

    count = 0
    elements = 0
    nbytes = 0
    for op in m.walk():
        for d in (op.properties, op.attributes):
            for a in d.values():
                if isinstance(a, DenseElementsAttr):
                    count += 1
                    elements += int(a.array.size)
                    nbytes += int(a.array.size) * a.array.dtype.itemsize
    return {"count": count, "elements": elements, "bytes": nbytes}


def describe(data: bytes, filename: str | None = None) -> str:
    """A human-readable report of :func:`summary` (for a serialized `jax.export.Exported`:
    its calling convention, then the report of the artifact inside)."""
    from .jax_export import is_jax_exported, read_exported

    if is_jax_exported(data):
        e = read_exported(data)
        head = [f"file: {filename or '<stdin>'} ({len(data)} bytes, jax.export.Exported "
                f"serialization version {e.serialization_version})",
                f"function: {e.function_name}",
                f"calling convention version: {e.calling_convention_version}",
                "platforms: " + ", ".join(e.platforms),
                "inputs: " + ", ".join(str(a) for a in e.in_avals),
                "outputs: " + ", ".join(str(a) for a in e.out_avals),
                "arguments kept by the module: " + str(list(e.module_kept_var_idx)),
                "ordered effects: " + (", ".join(e.ordered_effects) or "none"),
                "unordered effects: " + (", ".join(e.unordered_effects) or "none"),
                f"devices: {e.nr_devices}",
                "module:"]
        inner = describe(bytes(e.mlir_module_serialized), "<mlir_module_serialized>")
        return "\n".join(head + ["  " + x for x in inner.splitlines()])
    s = summary(data, filename)
    lines = [f"file: {s['file']} ({s['size']} bytes, {s['format']})"]
    if s["format"] != "text":
        lines.append(f"producer: {s['producer']}")
        lines.append(f"bytecode version: {s['bytecode_version']}")
        sv = s["stablehlo_version"] or "unknown (not a portable artifact)"
        lines.append(f"StableHLO version: {sv}")
        lines.append("dialects: " + ", ".join(s["dialects"]))
    lines.append(f"smallest target version: {s['smallest_version']}")
    lines.append(f"ops: {s['op_count']}")
    by_dialect: dict[str, list[tuple[str, int]]] = {}
    for name, n in s["ops"].items():
        by_dialect.setdefault(name.split(".", 1)[0], []).append((name, n))
    for d, items in by_dialect.items():
        total = sum(n for _, n in items)
        lines.append(f"  {d}: {total}")
        for name, n in sorted(items, key=lambda x: (-x[1], x[0])):
            lines.append(f"    {name}: {n}")
    lines.append(f"functions: {len(s['functions'])}")
    lines += ["  " + f for f in s["functions"]]
    c = s["constants"]
    lines.append(f"constants: {c['count']} ({c['elements']} elements, {_size(c['bytes'])})")
    return "\n".join(lines)


def _size(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)
