"""Module -> Module transformations, registered under their upstream names.

    from shlo.passes import run_passes
    lowered = run_passes(module, ["stablehlo-legalize-quant-to-math"])

``shlo opt FILE --pass NAME[,NAME...]`` runs the same from the command line. Names may carry
upstream-style options (``name{key=value}``) and may be wrapped the way MLIR pipelines are
(``builtin.module(func.func(name))``): the wrappers are ignored, shlo passes work on whole
modules. Passes never mutate their input: each returns a new Module.

Registered passes (``shlo.passes.PASSES``; :func:`describe` prints them):

* ``stablehlo-legalize-quant-to-math``: quantized ops to integer/float arithmetic on storage
  values (no quantized type left).
* ``stablehlo-legalize-quantized-op-to-qdq``: a quantized op becomes dequantize -> float op ->
  quantize.
* ``stablehlo-legalize-qdq-to-quantized-op``: the reverse fusion.
* ``stablehlo-quant-legalize-to-tosa-rescale``: quantized add/sub/mul/div/min/max/abs/compare
  to integer ops between ``tosa.rescale`` ops.
* ``tosa-rescale-legalize-to-stablehlo``: ``tosa.rescale`` to StableHLO integer arithmetic.
* ``stablehlo-legalize-to-tosa``: StableHLO ops to TOSA ops, upstream's PDLL and C++ patterns
  (docs/tosa.md); ``stablehlo-prepare-for-tosa``: no pattern upstream (constant uniquing only).
* ``chlo-legalize-to-stablehlo``: every chlo op decomposed into StableHLO ops, as upstream
  (package :mod:`shlo.passes.chlo`).
* ``canonicalize``: MLIR's canonicalizer (canonicalization patterns, constant uniquing,
  dead code); ``stablehlo-aggressive-folder``, ``stablehlo-aggressive-simplification``,
  ``stablehlo-target-independent-optimization``: upstream's optimization passes (see
  docs/optimization_passes.md), all on the greedy pattern driver of ``_driver.py``.
* ``shape-legalize-to-stablehlo``: shape computations of the shape/tensor/arith dialects on
  `index` become StableHLO ops on `tensor<i32>` (bridged by `unrealized_conversion_cast`).
* ``stablehlo-canonicalize-dynamism``: dynamic ops whose shape operands are constants become
  their static forms (custom_call shape operands, dynamic broadcast/conv/gather/iota/pad/
  reshape, real_dynamic_slice).
* ``stablehlo-compatibility-expander{target=X.Y.Z}``: features newer than the target decomposed
  (batching-dim gather/scatter, tan, range locations, mesh replica groups; docs/compatibility.md).
* ``stablehlo-complex-math-expander``: complex log_plus_one, sqrt, log, exponential as real math.
* ``stablehlo-check-shape-assertions``: `custom_call @shape_assertion` checked on constants and
  removed (a failing one is an error with its formatted message).
* ``stablehlo-convert-to-signless``: siN/uiN types become iN (constants keep their bits).
* ``stablehlo-legalize-deprecated-ops``: broadcast, create_token, cross-replica-sum, dot,
  unary_einsum to their supported forms (map, rng refused unless `fail-on-unused=false`).
* ``stablehlo-wrap-in-composite``: the ops named in `op-names` become composites decomposed
  by new private functions; ``stablehlo-legalize-composite-to-call``: composites become
  `func.call`s of their decompositions.
* ``interpreter-instrument-with-probe``: an `interpreter.probe` after each op's tensor results.
* ``stablehlo-refine-arguments``: the target function's arguments get the types of the ``types``
  option, behind `shape_refinement_operand_wrapper` custom calls (docs/dynamism.md).
* ``stablehlo-refine-shapes``: static shapes propagated through the program, calls specialized
  per call site, shape computations folded (docs/dynamism.md).
* ``cse``, ``inline``: MLIR's common subexpression elimination and inliner (docs/opt.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

from ..ir import Module
from ._rewrite import PassError

__all__ = ["run_passes", "register_pass", "PASSES", "PassError", "PassInfo", "Option",
           "parse_pipeline", "describe"]


@dataclass(frozen=True)
class Option:
    """A pass option as upstream declares it: ``name=value`` in ``pass{name=value}`` or
    ``--pass=name=value``. ``kind`` is int, float, bool, str or list (comma separated, with
    brackets respected: ``types=tensor<1x2xf32>,tensor<f32>``)."""

    name: str
    kind: type
    default: Any
    help: str = ""

    def convert(self, pass_name: str, text: str) -> Any:
        try:
            if self.kind is bool:
                if text.lower() in ("true", "1", ""):
                    return True
                if text.lower() in ("false", "0"):
                    return False
                raise ValueError(text)
            if self.kind is list:
                return _split_top(text, "(<[{", ")>]}")
            return self.kind(text)
        except ValueError:
            raise PassError(f"pass '{pass_name}': option '{self.name}' expects "
                            f"{self.kind.__name__}, got '{text}'") from None


@dataclass
class PassInfo:
    """A registered pass: ``run(module, options) -> Module``, with its declared options (their
    values reach ``run`` converted, defaults filled in); ``noop`` passes change nothing."""

    name: str
    run: Callable[[Module, dict[str, Any]], Module]
    noop: bool = False
    options: tuple[Option, ...] = ()

    @property
    def doc(self) -> str:
        return (self.run.__doc__ or "").strip()

    def resolve(self, given: dict[str, str]) -> dict[str, Any]:
        """The options ``run`` gets: ``given`` converted, unknown names refused."""
        by_name = {o.name: o for o in self.options}
        out = {o.name: o.default for o in self.options}
        for k, v in given.items():
            opt = by_name.get(k)
            if opt is None:
                known = ", ".join(sorted(by_name)) or "none"
                raise PassError(f"pass '{self.name}' has no option '{k}' (its options: {known})")
            out[k] = opt.convert(self.name, v)
        return out


PASSES: dict[str, PassInfo] = {}


def register_pass(name: str, noop: bool = False, options: Sequence[Option] = ()
                  ) -> Callable[[Callable[[Module, dict[str, Any]], Module]],
                                Callable[[Module, dict[str, Any]], Module]]:
    """Register ``fn(module, options) -> Module`` under the upstream pass name ``name``, with
    its upstream options."""

    def deco(fn: Callable[[Module, dict[str, Any]], Module]
             ) -> Callable[[Module, dict[str, Any]], Module]:
        PASSES[name] = PassInfo(name, fn, noop, tuple(options))
        return fn

    return deco


_OPTION = re.compile(r"\s*([\w.-]+)\s*(=\s*(\"[^\"]*\"|[^\s}]*))?")


def _split_top(text: str, opening: str = "({", closing: str = ")}") -> list[str]:
    """``text`` split at the commas outside brackets (pipeline elements; with ``<>`` and
    ``[]`` as brackets too, the items of a list option), stripped, empty items dropped."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in opening:
            depth += 1
        elif ch in closing:
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [s.strip() for s in out if s.strip()]


def parse_pipeline(spec: str | Iterable[str]) -> list[tuple[str, dict[str, str]]]:
    """``"a,b{k=v},func.func(c)"`` -> ``[("a", {}), ("b", {"k": "v"}), ("c", {})]``."""
    items = _split_top(spec) if isinstance(spec, str) else \
        [x for s in spec for x in _split_top(s)]
    out: list[tuple[str, dict[str, str]]] = []
    for item in items:
        m = re.fullmatch(r"([\w.-]+)\s*\((.*)\)", item, re.S)
        if m:  # an op-nesting wrapper: builtin.module(...), func.func(...)
            out.extend(parse_pipeline(m.group(2)))
            continue
        m = re.fullmatch(r"([\w.-]+)\s*(?:\{(.*)\})?", item, re.S)
        if not m:
            raise PassError(f"cannot parse pass pipeline element '{item}'")
        opts: dict[str, str] = {}
        for om in _OPTION.finditer(m.group(2) or ""):
            if om.group(1):  # `key` alone is a true flag; `key=` is an empty value
                v = om.group(3) if om.group(2) else "true"
                opts[om.group(1)] = v[1:-1] if v.startswith('"') else v
        out.append((m.group(1), opts))
    return out


def run_passes(module: Module, names: str | Iterable[str],
               after: Callable[[str, Module], None] | None = None) -> Module:
    """Run the passes ``names`` (a list, or a comma-separated pipeline string) in order;
    ``after(name, module)`` is called after each (`shlo opt -verify-each` verifies there)."""
    _load()
    for name, opts in parse_pipeline(names):
        info = PASSES.get(name)
        if info is None:
            known = ", ".join(sorted(PASSES))
            raise PassError(f"unknown pass '{name}' (known: {known})")
        module = info.run(module, info.resolve(opts))
        if after is not None:
            after(name, module)
    return module


def describe() -> str:
    """Every registered pass: its name, one line of description, and its options."""
    _load()
    lines = []
    for name in sorted(PASSES):
        info = PASSES[name]
        first = _first_sentence(info.doc or "")
        lines.append(f"{name}{' (no-op)' if info.noop else ''}: {first}")
        for o in info.options:
            lines.append(f"    {o.name}={o.kind.__name__} (default {o.default!r}): {o.help}")
    return "\n".join(lines)


def _first_sentence(doc: str) -> str:
    """The docstring's first paragraph up to its first full stop, on one line."""
    para = " ".join(doc.strip().split("\n\n")[0].split())
    m = re.search(r"\.(\s|$)", para)
    return para[:m.start() + 1] if m else para


_loaded = False


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    import importlib
    import pkgutil

    for m in pkgutil.iter_modules(__path__):
        if not m.name.startswith("_"):
            importlib.import_module(f"{__name__}.{m.name}")
