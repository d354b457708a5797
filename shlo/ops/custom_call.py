"""custom_call (spec "custom_call"): an op whose semantics an implementation defines by target name.

A target runs, in this order of precedence, as: a callable passed to the run
(``shlo.run(..., custom_calls={"name": fn})``); a handler registered with
:func:`custom_call_target` (by the user's code, a ``--custom-calls`` module, or a package of the
``shlo.custom_calls`` entry-point group, loaded on first need); a built-in target (the
`@check.*` targets of the conformance tests, jaxlib's CPU LAPACK calls in
:mod:`shlo.ops.lapack`, `@shape_assertion`, host callbacks, `@mhlo.erf`; see
docs/custom_calls.md). Any other target is an ExecutionError naming it, raised when the op runs.

A registered handler is called ``fn(call, *operands)``: ``call`` is a :class:`CustomCall`, a
read-only view of the op (target name, attributes, backend_config, api_version, types, layouts,
called computations as callables) built once when the op is prepared. A plain callable in
``custom_calls=`` keeps the simple form ``fn(*operands)``. The op is SIDE_EFFECTS: a target may
have effects (`has_side_effect`), so it is never removed as dead code.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import threading
import warnings
from dataclasses import dataclass
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import numpy as np

from ..attributes import (ArrayAttr, BoolAttr, DenseArrayAttr, DenseElementsAttr, DictAttr,
                          EnumAttr, FloatAttr, IntegerAttr, OpaqueAttr, StringAttr, StructAttr,
                          SymbolRefAttr, TypeAttr, UnitAttr, format_attr, ints)
from ..errors import Diagnostics, ExecutionError, format_location
from ..ir import Operation
from ..registry import (QUANTIZED_AWARE, SIDE_EFFECTS, Kernel, define, extension_keys, kernel,
                        load_extension, verifier)
from ..syntax.directives import ATTRDICT, OPERANDS, attr, declarative, p_, types
from ..types import TensorType, TupleType, Type
from . import _constraints as _c
from .check import CHECK_TARGETS

if TYPE_CHECKING:  # pragma: no cover
    from ..interpreter.evaluator import PrepareContext

define("stablehlo.custom_call", spec="custom_call", traits={QUANTIZED_AWARE, SIDE_EFFECTS},
       summary="call an implementation-defined target",
       inherent="call_target_name has_side_effect backend_config api_version "
                "called_computations operand_layouts result_layouts output_operand_aliases",
       syntax=declarative(attr("call_target_name", "symbol"), p_("("), OPERANDS, p_(")"),
                          ATTRDICT, types("functional")))


# --- handlers: registration ---------------------------------------------------------------------

Handler = Callable[..., Any]
"""``fn(call: CustomCall, *operands) -> result | sequence of results`` (numpy arrays)."""

ENTRY_POINT_GROUP = "shlo.custom_calls"
"""Packages name modules (or zero-argument registration functions) in this entry-point group;
shlo imports (calls) them the first time a program needs a target it does not know."""

_TAKES_CALL = "__shlo_custom_call__"


@dataclass(frozen=True)
class _Registration:
    fn: Handler
    origin: str  # where it was registered: a module name, for messages


_USER: dict[str, _Registration] = {}
_BUILTIN: dict[str, _Registration] = {}
_plugins_loaded = False
_lock = threading.Lock()


def custom_call_target(*names: str, builtin: bool = False) -> Callable[[Handler], Handler]:
    """Decorator: register ``fn(call, *operands)`` as the handler of the targets ``names``.

    ``call`` is the op's :class:`CustomCall` view. The handler returns one array, or a
    sequence of arrays (one per result; ``None`` or ``()`` for none); shlo converts them to the
    result types' element types and checks their shapes. A later registration of the same name
    replaces an earlier one. ``builtin=True`` is for targets shlo itself provides (LAPACK,
    shape_assertion, GSPMD sharding annotations, ...): user handlers of the same name take
    precedence over them. With no names the function is only marked as taking the view, for
    use in ``shlo.run(..., custom_calls={"name": fn})``.
    """
    table = _BUILTIN if builtin else _USER

    def register(fn: Handler) -> Handler:
        setattr(fn, _TAKES_CALL, True)
        origin = getattr(fn, "__module__", None) or "?"
        for name in names:
            table[name] = _Registration(fn, origin)
        return fn

    return register


def unregister_custom_call_target(name: str) -> None:
    """Forget the user handler of ``name`` (built-in targets stay)."""
    _USER.pop(name, None)


def registered_targets(builtin: bool | None = None) -> list[str]:
    """Names of the registered targets: user ones (``builtin=False``), built-in ones (True), or
    both (None), sorted."""
    names: set[str] = set()
    if builtin is not True:
        names |= set(_USER)
    if builtin is not False:
        for name in extension_keys(_EXTENSION):
            load_extension(_EXTENSION, name)
        names |= set(_BUILTIN) | set(CHECK_TARGETS)
    return sorted(names)


_EXTENSION = "custom_call_target"
"""The registry's name for built-in targets: the modules that register them (LAPACK, GSPMD,
...) are imported when a program first names one (shlo.registry.load_extension)."""


def _builtin(name: str) -> None:
    """Import the module that registers built-in target ``name``, if there is one."""
    if name not in _BUILTIN and name not in CHECK_TARGETS:
        load_extension(_EXTENSION, name)


def load_custom_calls(source: str | os.PathLike[str]) -> ModuleType:
    """Import a module that registers handlers: a path to a ``.py`` file, or a dotted module
    name (what ``shlo run --custom-calls`` does). Returns the module."""
    import importlib.util
    from pathlib import Path

    path = Path(source)
    if path.suffix == ".py" or path.exists():
        if not path.is_file():
            raise ExecutionError(f"--custom-calls: no such file: {source}")
        name = f"shlo_custom_calls_{path.stem}_{abs(hash(str(path.resolve()))):x}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ExecutionError(f"--custom-calls: cannot import {source}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as e:
            sys.modules.pop(name, None)
            raise ExecutionError(f"--custom-calls: importing {source} failed: "
                                 f"{type(e).__name__}: {e}") from e
        return module
    try:
        return importlib.import_module(str(source))
    except Exception as e:
        raise ExecutionError(f"--custom-calls: importing module {source} failed: "
                             f"{type(e).__name__}: {e}") from e


def load_plugins(force: bool = False) -> list[str]:
    """Load the ``shlo.custom_calls`` entry points once per process (``force`` again); returns
    the names of those loaded. A plugin that fails to load is reported with a warning and
    skipped: one broken package must not stop every program."""
    global _plugins_loaded
    with _lock:
        if _plugins_loaded and not force:
            return []
        _plugins_loaded = True
    loaded = []
    import importlib.metadata  # (0.1 s: only when a program names a target shlo does not know)

    try:
        eps = importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)
    except Exception as e:  # noqa: BLE001 - a broken installation's metadata
        warnings.warn(f"shlo: cannot list the {ENTRY_POINT_GROUP} entry points: {e}",
                      RuntimeWarning, stacklevel=2)
        return loaded
    for ep in eps:
        try:
            obj = ep.load()
            if callable(obj) and not isinstance(obj, ModuleType):
                obj()
            loaded.append(ep.name)
        except Exception as e:  # noqa: BLE001 - any failure of a third-party plugin
            warnings.warn(f"shlo: the custom-call plugin {ep.name} ({ep.value}) failed to load: "
                          f"{type(e).__name__}: {e}", RuntimeWarning, stacklevel=2)
    return loaded


def _registered(name: str) -> _Registration | None:
    _builtin(name)
    reg = _USER.get(name)
    if reg is None and not _plugins_loaded:
        load_plugins()
        reg = _USER.get(name)
    return reg or _BUILTIN.get(name)


# --- the view a handler receives ----------------------------------------------------------------


def python_value(a: Any) -> Any:
    """An attribute as a plain Python value: ints, floats, bools, strings, tuples, read-only
    mappings (dictionaries, dialect structs), read-only numpy arrays (dense elements), types;
    a unit attribute is True, a symbol its name, an enum its case, an unknown dialect's
    attribute its text."""
    if isinstance(a, (IntegerAttr, FloatAttr, BoolAttr, StringAttr)):
        return a.value
    if isinstance(a, UnitAttr):
        return True
    if isinstance(a, (ArrayAttr, DenseArrayAttr, tuple, list)):
        return tuple(python_value(v) for v in (a.values if hasattr(a, "values") else a))
    if isinstance(a, DictAttr):
        return MappingProxyType({k: python_value(v) for k, v in a.items})
    if isinstance(a, StructAttr):
        return MappingProxyType({k: python_value(v) for k, v in a.params})
    if isinstance(a, DenseElementsAttr):
        arr = a.array.copy()
        arr.flags.writeable = False
        return arr
    if isinstance(a, SymbolRefAttr):
        return a.name
    if isinstance(a, EnumAttr):
        return a.value
    if isinstance(a, TypeAttr):
        return a.type
    if isinstance(a, OpaqueAttr):
        return a.text
    return a


def _layouts(a: Any) -> tuple[tuple[int, ...] | None, ...] | None:
    if not isinstance(a, (ArrayAttr, tuple, list)):
        return None
    out = []
    for lay in a:
        try:
            out.append(ints(lay))
        except (TypeError, ValueError):
            out.append(None)
    return tuple(out)


class CustomCall:
    """What a handler knows about the `custom_call` it runs (read-only; built once per op).

    * ``call_target_name``: the target (`lapack_dgetrf_ffi`).
    * ``attributes``: every attribute of the op by name, as plain Python values
      (:func:`python_value`); ``raw_attributes``: the same as shlo Attribute objects.
    * ``backend_config``: a read-only mapping for the typed-FFI form (a dictionary
      `backend_config`, or jaxlib's `mhlo.backend_config` dictionary beside an empty string),
      the string otherwise (`""` when absent).
    * ``api_version``: the attribute's value (1..4); 4 when absent and the FFI attributes are
      a `mhlo.backend_config` dictionary (as JAX prints them), 1 otherwise.
    * ``has_side_effect``; ``frontend_attributes`` (`mhlo.frontend_attributes`, a mapping).
    * ``operand_types``, ``result_types`` (shlo types: ``.shape``, ``.element_type``,
      ``.dtype``), ``operand_layouts``, ``result_layouts`` (minor-to-major per value, None when
      not given), ``output_operand_aliases`` (tuples ``(output_tuple_indices, operand_index,
      operand_tuple_indices)``).
    * ``called_computations``: the functions named by `called_computations`, as callables
      taking and returning lists of arrays (compiled on first call);
      ``called_computation_names`` their names.
    * ``location``; :meth:`error` makes an ExecutionError located at the op, :meth:`warn`
      warns once per target and program.
    """

    __slots__ = ("call_target_name", "attributes", "raw_attributes", "backend_config",
                 "api_version", "has_side_effect", "frontend_attributes", "operand_types",
                 "result_types", "operand_layouts", "result_layouts", "output_operand_aliases",
                 "called_computations", "called_computation_names", "location", "_warned",
                 "__weakref__")

    def __init__(self, op: Operation, ctx: PrepareContext | None = None) -> None:
        set_ = object.__setattr__
        raw = {**op.attributes, **op.properties}
        target = raw.get("call_target_name")
        set_(self, "call_target_name",
             target.value if isinstance(target, StringAttr) else str(target))
        set_(self, "raw_attributes", MappingProxyType(raw))
        set_(self, "attributes", MappingProxyType({k: python_value(v) for k, v in raw.items()}))
        attrs = self.attributes
        cfg, mhlo_cfg = attrs.get("backend_config"), attrs.get("mhlo.backend_config")
        api = attrs.get("api_version")
        if isinstance(api, str):  # #stablehlo<custom_call_api_version API_VERSION_...>
            api = next((k for k, v in _API_VERSIONS.items() if v == api), None)
        if isinstance(cfg, Mapping):
            config: Any = cfg
        elif isinstance(mhlo_cfg, Mapping) and not cfg:
            config = mhlo_cfg
        else:
            config = cfg if isinstance(cfg, str) else ""
        if api is None:
            api = 4 if isinstance(config, Mapping) else 1
        set_(self, "backend_config", config)
        set_(self, "api_version", int(api))
        set_(self, "has_side_effect", bool(attrs.get("has_side_effect", False)))
        fe = attrs.get("mhlo.frontend_attributes")
        set_(self, "frontend_attributes", fe if isinstance(fe, Mapping) else MappingProxyType({}))
        set_(self, "operand_types", tuple(op.operand_types))
        set_(self, "result_types", tuple(op.result_types))
        set_(self, "operand_layouts", _layouts(raw.get("operand_layouts")))
        set_(self, "result_layouts", _layouts(raw.get("result_layouts")))
        aliases = []
        for a in raw.get("output_operand_aliases") or ():
            if isinstance(a, StructAttr):
                aliases.append((_c.struct_ints(a, "output_tuple_indices"),
                                _c.struct_int(a, "operand_index", 0),
                                _c.struct_ints(a, "operand_tuple_indices")))
        set_(self, "output_operand_aliases", tuple(aliases))
        names = tuple(python_value(c) for c in (raw.get("called_computations") or ()))
        set_(self, "called_computation_names", names)
        set_(self, "called_computations", tuple(_computation(ctx, n, op) for n in names))
        set_(self, "location", op.location)
        module = ctx.module if ctx is not None else None
        # one warning per target and program: the set lives on the module (or on this view)
        warned = (module.__dict__.setdefault("_custom_call_warned", set())
                  if module is not None else set())
        set_(self, "_warned", warned)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a CustomCall view is read-only")

    def __repr__(self) -> str:
        return (f"CustomCall(@{self.call_target_name}, {len(self.operand_types)} operands, "
                f"{len(self.result_types)} results, backend_config={self.backend_config!r})")

    def error(self, message: str) -> ExecutionError:
        """An ExecutionError at the op: ``'stablehlo.custom_call' op @target: message``."""
        return ExecutionError(f"'stablehlo.custom_call' op @{self.call_target_name}: {message}",
                              self.location)

    def warn(self, message: str) -> None:
        """Warn (a RuntimeWarning naming the op's location) once per target and program."""
        key = self.call_target_name
        if key in self._warned:
            return
        self._warned.add(key)
        warnings.warn(f"{format_location(self.location)}: 'stablehlo.custom_call' op "
                      f"@{key}: {message}", RuntimeWarning, stacklevel=2)


def _computation(ctx: PrepareContext | None, name: str, op: Operation) -> Callable[..., list]:
    """``fn(*arrays) -> list`` running function @name, compiled on first call."""
    compiled: list[Any] = []

    def run(*args: Any) -> list[Any]:
        if not compiled:
            if ctx is None:
                raise ExecutionError(f"custom_call: no module to find @{name} in", op.location)
            compiled.append(ctx.function(name))
        return list(compiled[0].run(*args))

    run.__name__ = name
    return run


# --- the kernel ----------------------------------------------------------------------------------


@kernel("stablehlo.custom_call")
def custom_call(op: Operation, ctx: PrepareContext) -> Kernel:
    """Check targets, or the handler for the target (looked up when the op runs, so that one
    preparation serves runs with different ``custom_calls``); results are converted to the
    result types' dtypes and their shapes checked."""
    target = op.attr("call_target_name")
    name = target.value if isinstance(target, StringAttr) else str(target)
    _builtin(name)
    if name in CHECK_TARGETS and name not in _USER:
        return CHECK_TARGETS[name](op, ctx)
    result_types = [v.type for v in op.results]
    process = ctx.process
    view: list[CustomCall] = []

    def run(*args: Any) -> Sequence[Any]:
        fn: Any = process.custom_calls.get(name)
        takes_call = fn is not None and getattr(fn, _TAKES_CALL, False)
        if fn is None:
            reg = _registered(name)
            if reg is None:
                raise ExecutionError(
                    f"'stablehlo.custom_call' op: unsupported target @{name}; register a handler "
                    f"for it: shlo.run(..., custom_calls={{'{name}': fn}}), the "
                    f"@shlo.custom_call_target('{name}') decorator, or `shlo run --custom-calls "
                    f"my_targets.py` (docs/custom_calls.md)", op.location)
            fn, takes_call = reg.fn, True
        if takes_call:
            if not view:
                view.append(CustomCall(op, ctx))
            out = fn(view[0], *args)
        else:
            out = fn(*args)
        return _results(out, result_types, name, op)

    return run


def _results(out: Any, result_types: list[Type], name: str, op: Operation) -> list[Any]:
    if out is None:
        out = []
    elif not isinstance(out, (tuple, list)):
        out = [out]
    out = list(out)
    if len(out) != len(result_types):
        raise ExecutionError(f"custom_call @{name}: the handler returned {len(out)} values, the "
                             f"op has {len(result_types)} results", op.location)
    values = []
    for i, (v, t) in enumerate(zip(out, result_types)):
        if isinstance(t, TensorType):
            arr = np.asarray(v)
            if arr.dtype != t.dtype:
                arr = arr.astype(t.dtype)
            if t.is_static and arr.shape != tuple(t.shape):  # type: ignore[arg-type]
                raise ExecutionError(f"custom_call @{name}: result #{i} has shape "
                                     f"{arr.shape}, the op's result type is "
                                     f"'{_c.type_str(t)}'", op.location)
            v = arr
        values.append(v)
    return values


_API_VERSIONS = {1: "API_VERSION_ORIGINAL", 2: "API_VERSION_STATUS_RETURNING",
                 3: "API_VERSION_STATUS_RETURNING_UNIFIED", 4: "API_VERSION_TYPED_FFI"}


def _tuple_part(t: Any, indices: Any) -> Any:
    for i in indices:
        if not isinstance(t, TupleType) or not 0 <= i < len(t.types):
            return None
        t = t.types[i]
    return t


def _layout_text(lay: Any) -> str:
    """A layout as upstream's messages print it (`dense<[0, 1]> : tensor<2xindex>`)."""
    try:
        return format_attr(lay)
    except (TypeError, ValueError, AttributeError):
        return _c.dims_str(ints(lay))


def _check_layouts(op: Operation, diag: Diagnostics) -> bool:
    """One permutation per tensor operand/result, for both or neither."""
    ol, rl = op.attr("operand_layouts"), op.attr("result_layouts")
    if (ol is None) != (rl is None):
        diag.error(op, "", "Layout attributes should be specified for either both operands and "
                           "results or none")
        return False
    if ol is None or rl is None:
        return True
    results: list[Type] = op.result_types
    if len(results) == 1 and isinstance(results[0], TupleType):
        results = list(results[0].types)  # a single tuple result: one layout per element
    for what, kinds, layouts in (("operand", op.operand_types, ol), ("result", results, rl)):
        layouts = list(layouts) if isinstance(layouts, (ArrayAttr, tuple, list)) else None
        if layouts is None:
            continue
        if len(layouts) != len(kinds):
            diag.error(op, "", f"Number of {what}s must match the number of {what} layouts, "
                               f"{len(kinds)} != {len(layouts)}")
            return False
        for i, (t, lay) in enumerate(zip(kinds, layouts)):
            if isinstance(t, TupleType):
                diag.error(op, "", "Tuple types are not fully supported with layout "
                                   "constraints yet")
                return False
            try:
                perm = ints(lay)
            except (TypeError, ValueError):
                perm = None
            if perm is None:
                continue
            if not isinstance(t, TensorType):
                if perm:
                    diag.error(op, "", f"Only tensor types can have non-empty layout: {what} "
                                       f"#{i} of type '{_c.type_str(t)}' has layout "
                                       f"{_layout_text(lay)}")
                    return False
                continue
            rank = len(t.shape) if t.shape is not None else None
            if rank is not None and sorted(perm) != list(range(rank)):
                diag.error(op, "", f"incorrect layout {_layout_text(lay)} for type "
                                   f"'{_c.type_str(t)}', layout must be a permutation "
                                   f"of [0, {rank})")
                return False
    return True


def _check_aliases(op: Operation, diag: Diagnostics) -> bool:
    """Output/operand aliases within range and of matching types."""
    aliases = op.attr("output_operand_aliases")
    if not isinstance(aliases, (ArrayAttr, tuple, list)):
        return True
    results = op.result_types
    out_type = results[0] if len(results) == 1 else TupleType(tuple(results))
    for a in aliases:
        if not isinstance(a, StructAttr):
            continue
        idx = _c.struct_int(a, "operand_index", 0)
        if not 0 <= idx < len(op.operands):
            diag.error(op, "", f"expects operandIndex in the output_operand_alias attribute "
                               f"to be in range [0, {len(op.operands)}); got: {idx}")
            return False
        part = _tuple_part(op.operands[idx].type, _c.struct_ints(a, "operand_tuple_indices"))
        if part is None:
            diag.error(op, "", "operand_tuple_indices in the output_operand_alias attribute "
                               "out of bounds")
            return False
        out = _tuple_part(out_type, _c.struct_ints(a, "output_tuple_indices"))
        if out is None:
            diag.error(op, "", "output_tuple_indices in the output_operand_alias attribute "
                               "out of bounds")
            return False
        if not _c.same_type(part, out):
            diag.error(op, "", f"shapes mismatch in the output_operand_alias attribute: "
                               f"operand part has type '{_c.type_str(part)}' and output "
                               f"part has type '{_c.type_str(out)}'")
            return False
    return True


_MEMREF = re.compile(r"memref<((?:(?:\d+|\?)x)*)([^,<>]+(?:<[^<>]*>)?)\s*(?:,.*)?>\Z", re.S)


def _buffer_matches(tensor: Any, buffer: Any) -> bool:
    """Pin/Unpin: a tensor and a memref of compatible shapes and the same element type (a
    memref shlo cannot read is given the benefit of the doubt)."""
    m = _MEMREF.match(buffer.text)
    if m is None or not isinstance(tensor, TensorType):
        return True
    shape = tuple(None if d == "?" else int(d) for d in m.group(1).split("x")[:-1])
    return _c.compatible_shapes(tensor.shape, shape) and \
        _c.type_str(tensor.element_type) == m.group(2).strip()


def _check_known_custom_calls(op: Operation, diag: Diagnostics) -> None:
    """Upstream's buffer rules (not the spec's): the CreateBuffer, Pin and Unpin targets, and an
    aliased buffer operand or output used once, every buffer output aliased."""
    target = op.attr("call_target_name")
    target = getattr(target, "value", target)
    ins, outs = op.operand_types, op.result_types
    if target == "CreateBuffer":
        problem = ("shouldn't have any inputs" if ins else "should have one result"
                   if len(outs) != 1 else None if _c.is_buffer(outs[0]) else
                   "should have a memref result")
    elif target in ("Pin", "Unpin"):
        src, dst = ("tensor", "memref") if target == "Pin" else ("memref", "tensor")
        ok_src = (lambda t: isinstance(t, TensorType)) if target == "Pin" else _c.is_buffer
        ok_dst = _c.is_buffer if target == "Pin" else (lambda t: isinstance(t, TensorType))
        problem = ("should have one input" if len(ins) != 1 else
                   f"should have a {src} input" if not ok_src(ins[0]) else
                   "should have one output" if len(outs) != 1 else
                   f"should have a {dst} output" if not ok_dst(outs[0]) else None)
        if problem is None:
            t, b = (ins[0], outs[0]) if target == "Pin" else (outs[0], ins[0])
            if not _buffer_matches(t, b):
                problem = "should have compatible input and output types"
    else:
        _check_buffer_aliases(op, diag)
        return
    if problem is not None:
        diag.error(op, "", f"{target} custom_call {problem}")


def _check_buffer_aliases(op: Operation, diag: Diagnostics) -> None:
    operand_parts: set[tuple] = set()
    output_parts: set[tuple] = set()
    aliases = op.attr("output_operand_aliases")
    for a in aliases if isinstance(aliases, (ArrayAttr, tuple, list)) else ():
        if not isinstance(a, StructAttr):
            continue
        idx = _c.struct_int(a, "operand_index", 0)
        ti = tuple(_c.struct_ints(a, "operand_tuple_indices"))
        if not _c.is_buffer(_tuple_part(op.operands[idx].type, ti)):
            continue
        oi = tuple(_c.struct_ints(a, "output_tuple_indices"))
        if oi in output_parts:
            diag.error(op, "", f"buffer output {_c.dims_str(oi)} is used in "
                               f"output_operand_alias more than once")
        if (idx, ti) in operand_parts:
            diag.error(op, "", f"buffer operand {idx}{_c.dims_str(ti)} is used in "
                               f"output_operand_alias more than once")
        output_parts.add(oi)
        operand_parts.add((idx, ti))
    results = op.result_types
    out_type = results[0] if len(results) == 1 else TupleType(tuple(results))
    for path, t in _leaves(out_type, ()):
        if _c.is_buffer(t) and path not in output_parts:
            diag.error(op, "", f"buffer output {_c.dims_str(path)} is not used in "
                               f"output_operand_alias")
            return


def _leaves(t: Any, path: tuple) -> list[tuple[tuple, Any]]:
    if isinstance(t, TupleType):
        return [leaf for i, e in enumerate(t.types) for leaf in _leaves(e, path + (i,))]
    return [(path, t)]


@verifier("stablehlo.custom_call")
def _verify_custom_call(op: Operation, diag: Diagnostics) -> None:
    """Layouts (one permutation per tensor operand/result, for both or neither), output/operand
    aliases within range and of matching types, a backend_config of the kind the api_version
    asks for. (`called_computations` may name functions defined elsewhere: upstream does not
    resolve them, neither does shlo.)"""
    if not _c.signature(op, diag, [(_c.VALUE, "*")], [(_c.VALUE, "*")],
                        attrs={"call_target_name": "str"},
                        optional_attrs={"has_side_effect": "bool"}, regions=None):
        return
    api = op.attr("api_version")
    version = getattr(api, "value", api)
    if isinstance(version, str):
        version = next((k for k, v in _API_VERSIONS.items() if v == version), version)
    if isinstance(version, int) and not 0 <= version <= 4:  # the cases of the upstream enum
        diag.error(op, "", "attribute 'api_version' failed to satisfy constraint: Custom call "
                           "API version")
        return
    cfg = op.attr("backend_config")
    if cfg is not None and isinstance(version, int):
        if version == 4 and not isinstance(cfg, DictAttr):
            diag.error(op, "I4", "backend_config for api_version API_VERSION_TYPED_FFI must be a "
                                 "dictionary attribute")
            return
        if version != 4 and isinstance(cfg, DictAttr):
            diag.error(op, "I4", f"backend_config for api_version "
                                 f"{_API_VERSIONS.get(version, version)} must be a string "
                                 f"attribute")
            return
    if _check_layouts(op, diag) and _check_aliases(op, diag):
        _check_known_custom_calls(op, diag)
