"""Type constraints of the ops' operands and results, in the style of upstream's ODS definitions
(`HLO_Tensor`, `HLO_FpTensor`, ...): element kinds, :class:`TC` and the named constraints.

:func:`shlo.ops._constraints.signature` checks an op's operands and results against them.
"""

from __future__ import annotations

from typing import Any

from ..attributes import StructAttr
from ..types import (
    ComplexType,
    FloatType,
    IntegerType,
    OpaqueType,
    QuantizedType,
    TensorType,
    TokenType,
    TupleType,
)

__all__ = [
    "bounds_of", "F", "B", "SI", "UI", "I", "C", "Q", "QA", "INDEX", "TC", "element_kind",
    "valid_quantized", "valid_quantization_dimension", "TENSOR", "TENSOR_QA", "ANY_TENSOR",
    "FP_TENSOR", "FP_Q_TENSOR", "FP_C_TENSOR", "FP_C_Q_TENSOR", "INT_TENSOR", "PRED_TENSOR",
    "PRED_INT_TENSOR", "INT_FP_C_Q_TENSOR", "SINT_FP_C_Q_TENSOR", "TOKEN", "TENSOR_OR_TOKEN",
    "TENSOR_QA_OR_TOKEN", "VALUE", "DIMENSION_TENSOR", "is_buffer",
]

# --- element kinds ---------------------------------------------------------------------------

F = 1 << 0      # floating point
B = 1 << 1      # i1 (bool)
SI = 1 << 2     # signless or signed integer, not i1
UI = 1 << 3     # unsigned integer
C = 1 << 4      # complex
Q = 1 << 5      # per-tensor quantized
QA = 1 << 6     # per-axis quantized
INDEX = 1 << 7  # the builtin `index` type (shape computations)
I = SI | UI

_KIND_CACHE: dict[Any, int] = {}


def element_kind(et: Any) -> int:
    """The kind bit of element type ``et`` (0 for anything shlo does not know)."""
    k = _KIND_CACHE.get(et)
    if k is not None:
        return k
    if isinstance(et, QuantizedType):
        k = (QA if et.quantization_dimension is not None else Q) if valid_quantized(et) else 0
    elif isinstance(et, IntegerType):
        k = B if et.width == 1 else (UI if et.signedness == "unsigned" else SI)
    elif isinstance(et, FloatType):
        k = F
    elif isinstance(et, ComplexType):
        k = C
    elif isinstance(et, OpaqueType) and et.text == "index" or getattr(et, "name", None) == "index":
        k = INDEX
    else:
        k = 0
    try:
        _KIND_CACHE[et] = k
    except TypeError:  # unhashable: do not cache
        pass
    return k


_KIND_WORDS = [
    (F, "4/6/8/16/32/64-bit float"), (B, "bool"), (I, "2/4/8/16/32/64-bit integer"),
    (SI, "2/4/8/16/32/64-bit signless integer"), (UI, "2/4/8/16/32/64-bit unsigned integer"),
    (C, "complex type with 32/64-bit float elements"), (Q, "per-tensor integer quantized"),
    (QA, "per-axis integer quantized"), (INDEX, "index"),
]


def _kinds_text(kinds: int) -> str:
    words = []
    left = kinds
    for bit, word in _KIND_WORDS:
        if left & bit == bit:
            words.append(word)
            left &= ~bit
    return " or ".join(words)


def valid_quantized(q: QuantizedType) -> bool:
    """Upstream's op-level validity of a quantized element type: a signless or unsigned storage
    type (`si8` is not a StableHLO storage type), zero points within the storage range
    (Types C8) and one scale per zero point (C10). Types C1 (storage narrower than expressed) is
    not required: upstream and real programs use `i32:f32`."""
    st = q.storage_type
    if not isinstance(st, IntegerType) or st.signedness == "signed" or st.width == 1:
        return False
    if len(q.scales) != len(q.zero_points):
        return False
    lo, hi = q.min, q.max
    return all(lo <= z <= hi for z in q.zero_points)


def valid_quantization_dimension(t: TensorType) -> bool:
    """Types C12-C13 for a per-axis quantized tensor: the dimension exists and its size matches."""
    et = t.element_type
    if not isinstance(et, QuantizedType) or et.quantization_dimension is None:
        return True
    if t.shape is None:
        return True
    qd = et.quantization_dimension
    if not 0 <= qd < len(t.shape):
        return False
    d = t.shape[qd]
    return d is None or d == len(et.scales)


class TC:
    """A type constraint like upstream's ODS ones (`HLO_Tensor`, `HLO_FpTensor`, ...).

    ``kinds`` are the allowed element kinds of tensors; ``only`` restricts element types by name
    (`{"i32"}`); ``rank``/``static``/``ranked`` restrict the shape; ``token``/``tuple`` allow those
    types; ``buffer`` allows memrefs (upstream's HLO_Buffer, in tuples too); ``opaque`` allows
    types of other dialects (kept verbatim by the parser).
    """

    __slots__ = ("kinds", "ranked", "rank", "static", "token", "tuple", "only", "opaque",
                 "buffer", "_description", "_cache")

    # Results of `accepts`, shared by all constraints with the same parameters and keyed by the
    # type object's id (the parser interns types) with the type kept alive next to the answer.
    _CACHES: dict[tuple, dict[int, tuple[Any, bool]]] = {}

    def __init__(self, kinds: int = 0, *, ranked: bool = True, rank: int | None = None,
                 static: bool = False, token: bool = False, tuple: bool = False,
                 only: frozenset[str] | None = None, opaque: bool = False,
                 buffer: bool = False, description: str | None = None) -> None:
        self.kinds = kinds
        self.ranked = ranked
        self.rank = rank
        self.static = static
        self.token = token
        self.tuple = tuple
        self.only = only
        self.opaque = opaque
        self.buffer = buffer
        self._description = description
        key = (kinds, ranked, rank, static, token, tuple, only, opaque, buffer)
        cache = TC._CACHES.get(key)
        if cache is None:
            cache = TC._CACHES[key] = {}
        self._cache = cache

    @property
    def description(self) -> str:
        if self._description is None:
            self._description = self._describe()
        return self._description

    def _describe(self) -> str:
        parts = []
        if self.kinds or self.only:
            shape = "ranked tensor" if self.ranked else "tensor"
            if self.rank is not None:
                shape = f"{self.rank}D tensor"
            if self.static:  # (MLIR's StaticShapeTensorOf: "statically shaped tensor of")
                shape = "statically shaped " + ("tensor" if self.rank is None else shape)
            what = " or ".join(sorted(self.only)) if self.only else _kinds_text(self.kinds)
            parts.append(f"{shape} of {what} values")
        if self.token:
            parts.append("token")
        if self.tuple:
            parts.append("nested tuple of tensors, buffers or tokens" if self.buffer else
                         "nested tuple of tensors or tokens")
        if self.buffer:
            parts.append(f"memref of {_kinds_text(F | B | I | C | Q)} values")
        return " or ".join(parts) or "no value"

    def accepts(self, t: Any) -> bool:
        cache = self._cache
        hit = cache.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        ok = self._accepts(t)
        if len(cache) > 4096:
            cache.clear()
        cache[id(t)] = (t, ok)
        return ok

    def _accepts(self, t: Any) -> bool:
        if isinstance(t, TensorType):
            if not (self.kinds or self.only):
                return False
            if t.shape is None:
                if self.ranked or self.rank is not None or self.static:
                    return False
            else:
                if self.rank is not None and len(t.shape) != self.rank:
                    return False
                if self.static and not t.is_static:
                    b = bounds_of(t)
                    dyn = [d for d, n in enumerate(t.shape) if n is None]
                    if b is None or len(dyn) != 1 or dyn[0] >= len(b) or b[dyn[0]] is None:
                        return False
            et = t.element_type
            if self.only is not None:
                return getattr(et, "name", None) in self.only
            k = element_kind(et)
            if not k & self.kinds:
                return False
            return k != QA or valid_quantization_dimension(t)
        if isinstance(t, TokenType):
            return self.token
        if isinstance(t, TupleType):
            return self.tuple and all(
                isinstance(e, TupleType) and self._accepts(e) or
                isinstance(e, (TensorType, TokenType)) or self.buffer and is_buffer(e)
                for e in t.types)
        return self.opaque or self.buffer and is_buffer(t)

    def __repr__(self) -> str:
        return f"TC({self.description})"


TENSOR = TC(F | B | I | C | Q)
TENSOR_QA = TC(F | B | I | C | Q | QA)
ANY_TENSOR = TC(F | B | I | C | Q | QA, ranked=False)
FP_TENSOR = TC(F)
FP_Q_TENSOR = TC(F | Q)
FP_C_TENSOR = TC(F | C)
FP_C_Q_TENSOR = TC(F | C | Q)
INT_TENSOR = TC(I)
PRED_TENSOR = TC(B)
PRED_INT_TENSOR = TC(B | I)
INT_FP_C_Q_TENSOR = TC(I | F | C | Q)
SINT_FP_C_Q_TENSOR = TC(SI | F | C | Q)
TOKEN = TC(token=True)
TENSOR_OR_TOKEN = TC(F | B | I | C | Q, token=True)
TENSOR_QA_OR_TOKEN = TC(F | B | I | C | Q | QA, token=True)
VALUE = TC(F | B | I | C | Q | QA | INDEX, ranked=False, token=True, tuple=True, opaque=True,
           buffer=True, description="any value")
DIMENSION_TENSOR = TC(I | INDEX, rank=1, description="1D tensor of index or integer values")

def is_buffer(t: Any) -> bool:
    """A memref (upstream's HLO_Buffer; shlo keeps it as another dialect's type)."""
    return isinstance(t, OpaqueType) and t.text.startswith("memref<")


def bounds_of(t: Any) -> tuple | None:
    """The bounds of a bounded-dynamic tensor type (`#stablehlo.bounds<?, 5>` or
    `#stablehlo.type_extensions<bounds = [...]>`), None entries for unbounded dimensions."""
    enc = getattr(t, "encoding", None)
    if enc is None:
        return None
    if isinstance(enc, StructAttr) and enc.name in ("stablehlo.bounds",
                                                    "stablehlo.type_extensions"):
        b = enc.get("bounds")
        if isinstance(b, (tuple, list)):
            vals = (None if x is None else int(getattr(x, "value", x)) for x in b)
            return tuple(None if v is None or v < 0 else v for v in vals)  # -1: no bound
    return None
