"""Random-number ops: rng and rng_bit_generator (spec sections "rng", "rng_bit_generator").

Both generators are counter-based (Salmon et al., SC 2011, "Parallel random numbers: as easy as
1, 2, 3"), so every output element is computed independently from (key, counter): the rounds are
numpy uint32/uint64 arithmetic over the whole array of counters at once.

``rng_bit_generator`` reproduces XLA's bits (``xla/hlo/builder/lib/prng.cc`` and
``xla/service/rng_bit_generator_expander.cc``): THREE_FRY is Threefry-2x32 with 20 rounds,
PHILOX is Philox-4x32 with 10 rounds, DEFAULT is PHILOX (as on XLA:CPU), and the output state,
the placement of the counters in the output and the treatment of narrow types follow XLA. See
``docs/semantics/random_chlo.md`` for what is matched and how it was checked.

``rng`` is implementation-defined; shlo uses Philox-4x32 with a key derived from a seed and the
op's position in the program, and a hidden counter per process (like XLA's RngExpander).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..attributes import enum_attr
from ..errors import Diagnostics, ExecutionError
from ..ir import Operation
from ..registry import Kernel, define, inference, kernel, verifier
from ..syntax.directives import ATTRDICT, COMMA, OPERAND, declarative, named, types
from ..types import FloatType, IntegerType, TensorType, Type
from . import _constraints as _c

if TYPE_CHECKING:  # pragma: no cover
    from ..interpreter.evaluator import PrepareContext

__all__ = [
    "threefry2x32", "philox4x32", "threefry_bits", "philox_bits", "rng_bit_generator_values",
    "DEFAULT_SEED", "set_default_seed", "reset_rng_state",
]

_U32 = np.uint32
_U64 = np.uint64
_MASK32 = 0xFFFFFFFF
_MASK64 = 0xFFFFFFFFFFFFFFFF

# --- the block ciphers ---------------------------------------------------------------------------

_THREEFRY_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_THREEFRY_PARITY = 0x1BD11BDA


def threefry2x32(x0: np.ndarray, x1: np.ndarray, key0: int, key1: int) -> tuple[np.ndarray,
                                                                                np.ndarray]:
    """Threefry-2x32 with 20 rounds over arrays of uint32 counter words (XLA's ThreeFry2x32)."""
    ks = (key0 & _MASK32, key1 & _MASK32, (_THREEFRY_PARITY ^ key0 ^ key1) & _MASK32)
    x0 = x0.astype(_U32) + _U32(ks[0])
    x1 = x1.astype(_U32) + _U32(ks[1])
    for i in range(5):
        for r in _THREEFRY_ROTATIONS[i % 2]:
            x0 += x1
            x1 = (x1 << _U32(r)) | (x1 >> _U32(32 - r))
            x1 ^= x0
        x0 += _U32(ks[(i + 1) % 3])
        x1 += _U32((ks[(i + 2) % 3] + i + 1) & _MASK32)
    return x0, x1


_PHILOX_W32A, _PHILOX_W32B = 0x9E3779B9, 0xBB67AE85
_PHILOX_M4X32A, _PHILOX_M4X32B = 0xD2511F53, 0xCD9E8D57


def philox4x32(x: Sequence[np.ndarray], key0: int, key1: int) -> list[np.ndarray]:
    """Philox-4x32 with 10 rounds over four arrays of uint32 counter words (XLA's Philox4x32)."""
    x0, x1, x2, x3 = (np.asarray(w, dtype=_U32) for w in x)
    k0, k1 = key0 & _MASK32, key1 & _MASK32
    for _ in range(10):
        p0 = x0.astype(_U64) * _U64(_PHILOX_M4X32A)
        p1 = x2.astype(_U64) * _U64(_PHILOX_M4X32B)
        hi0, lo0 = (p0 >> _U64(32)).astype(_U32), p0.astype(_U32)
        hi1, lo1 = (p1 >> _U64(32)).astype(_U32), p1.astype(_U32)
        x0, x1, x2, x3 = hi1 ^ x1 ^ _U32(k0), lo1, hi0 ^ x3 ^ _U32(k1), lo0
        k0 = (k0 + _PHILOX_W32A) & _MASK32
        k1 = (k1 + _PHILOX_W32B) & _MASK32
    return [x0, x1, x2, x3]


def _split64(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return v.astype(_U32), (v >> _U64(32)).astype(_U32)


def _join64(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return lo.astype(_U64) | (hi.astype(_U64) << _U64(32))


# --- XLA's bit generators ------------------------------------------------------------------------


def _split_shape(shape: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
    """XLA's SplitShapeIntoHalves: the dimension split in two halves, and the half shape.

    The split dimension is the first even one, else the (first) largest; a 0-d shape is
    treated as (1,).
    """
    if not shape:
        return 0, (1,)
    d = next((i for i, s in enumerate(shape) if s % 2 == 0), None)
    if d is None:
        d = max(range(len(shape)), key=lambda i: (shape[i], -i))
    half = list(shape)
    half[d] = (shape[d] + 1) // 2
    return d, tuple(half)


def _combine_halves(a: np.ndarray, b: np.ndarray, d: int, shape: tuple[int, ...]) -> np.ndarray:
    """XLA's CombineShapePair: interleave two half arrays along dimension ``d``."""
    if not shape:
        return a.reshape(())
    both = np.stack([a, b], axis=d + 1)  # [..., ceil(s/2), 2, ...]
    full = list(shape)
    full[d] = 2 * a.shape[d]
    out = both.reshape(full)
    if full[d] != shape[d]:
        out = np.take(out, np.arange(shape[d]), axis=d)
    return out


def _counters(start: int, n: int) -> np.ndarray:
    """``start + [0, n)`` as wrapping uint64."""
    return np.arange(n, dtype=_U64) + _U64(start & _MASK64)


def threefry_bits(key: int, counter: int, shape: tuple[int, ...], bits: int
                  ) -> tuple[np.ndarray, int]:
    """XLA's ThreeFryBitGenerator: (unsigned bits of width ``bits`` in ``shape``, new counter)."""
    k0, k1 = key & _MASK32, (key >> 32) & _MASK32
    if bits == 64:
        n = math.prod(shape)
        lo, hi = _split64(_counters(counter, n))
        y0, y1 = threefry2x32(lo, hi, k0, k1)
        return _join64(y0, y1).reshape(shape), (counter + n) & _MASK64
    d, half = _split_shape(shape)
    n = math.prod(half)
    lo, hi = _split64(_counters(counter, n))
    y0, y1 = threefry2x32(lo, hi, k0, k1)
    out = _combine_halves(y0.reshape(half), y1.reshape(half), d, shape)
    return out, (counter + n) & _MASK64


def philox_bits(key: int, counter: tuple[int, int], shape: tuple[int, ...], bits: int
                ) -> tuple[np.ndarray, tuple[int, int]]:
    """XLA's PhiloxBitGenerator: (unsigned bits, new 128-bit counter as (low, high) words)."""
    k0, k1 = key & _MASK32, (key >> 32) & _MASK32
    n = math.prod(shape)
    words = n * 2 if bits == 64 else n
    blocks = -(-words // 4)
    low, high = counter
    lows = _counters(low, blocks)
    highs = np.where(lows < _U64(low), _U64((high + 1) & _MASK64), _U64(high))
    out = philox4x32([*_split64(lows), *_split64(highs)], k0, k1)
    if bits == 64:
        lanes = np.stack([_join64(out[0], out[1]), _join64(out[2], out[3])], axis=1)
    else:
        lanes = np.stack(out, axis=1)
    values = lanes.reshape(-1)[:n].reshape(shape)
    total = low + blocks
    new = (total & _MASK64, (high + (total >> 64)) & _MASK64)
    return values, new


def _storage_bits(element: Any) -> int:
    """The bit width of an output element type (integer other than i1, or float)."""
    if isinstance(element, IntegerType) and not element.is_bool:
        return element.width
    if isinstance(element, FloatType) and element.name != "tf32":
        return element.width
    raise ExecutionError(f"rng_bit_generator: unsupported output element type {element}")


def _bits_to_type(bits: np.ndarray, element: Any) -> np.ndarray:
    """Reinterpret generated bits (uint32 or uint64) as values of ``element``.

    Widths below 32 keep the low bits of each 32-bit word, as XLA's narrow path does.
    """
    width = _storage_bits(element)
    dtype = element.dtype
    if width in (32, 64):
        return bits.view(dtype) if bits.dtype.itemsize * 8 == width else bits.astype(dtype)
    low = bits & _U32((1 << width) - 1)
    if isinstance(element, IntegerType):
        if element.is_unsigned:
            return low.astype(np.uint64).astype(dtype)
        signed = low.astype(np.int64)
        signed = np.where(signed >= (1 << (width - 1)), signed - (1 << width), signed)
        return signed.astype(dtype)
    storage = np.uint16 if dtype.itemsize == 2 else np.uint8
    return low.astype(storage).view(dtype)


def rng_bit_generator_values(algorithm: str, initial_state: np.ndarray, shape: tuple[int, ...],
                             element: Any) -> tuple[np.ndarray, np.ndarray]:
    """(output_state, output) of rng_bit_generator, bit-compatible with XLA."""
    state = [int(v) for v in np.asarray(initial_state, dtype=_U64).reshape(-1)]
    width = _storage_bits(element)
    bits = 64 if width == 64 else 32
    if algorithm == "DEFAULT":
        algorithm = "PHILOX"
    if algorithm == "THREE_FRY":
        if len(state) != 2:
            raise ExecutionError(f"rng_bit_generator (C2): THREE_FRY needs a state of 2 ui64, "
                                 f"got {len(state)}")
        values, counter = threefry_bits(state[0], state[1], shape, bits)
        new_state = [state[0], counter]
    elif algorithm == "PHILOX":
        if len(state) not in (2, 3):
            raise ExecutionError(f"rng_bit_generator (C2): PHILOX needs a state of 2 or 3 ui64, "
                                 f"got {len(state)}")
        # XLA: with 3 words the counter is (state[1], state[2]); with 2 words it is
        # (state[1], state[0]) and only its low word is written back.
        counter = (state[1], state[2]) if len(state) == 3 else (state[1], state[0])
        values, new = philox_bits(state[0], counter, shape, bits)
        new_state = [state[0], *new] if len(state) == 3 else [state[0], new[0]]
    else:
        raise ExecutionError(f"rng_bit_generator: unknown rng_algorithm {algorithm}")
    return np.array(new_state, dtype=_U64), _bits_to_type(values, element)


def _enum(op: Operation, name: str, default: str) -> str:
    """The case of enum attribute ``name``, ``default`` when absent (malformed raises)."""
    return default if op.attr(name) is None else enum_attr(op, name)


def _static_tensor(op: Operation, i: int) -> TensorType:
    t = op.results[i].type
    if not isinstance(t, TensorType) or not t.is_static:
        raise ExecutionError(f"{op.name}: result {i} must be a statically shaped tensor",
                             op.location)
    return t


# --- rng_bit_generator (spec "rng_bit_generator") ------------------------------------------------

define("stablehlo.rng_bit_generator", spec="rng_bit_generator",
       summary="uniform random bits and the updated generator state",
       syntax=declarative(OPERAND, COMMA,
                          *named("algorithm", "rng_algorithm", "enum:rng_algorithm"), ATTRDICT,
                          types("functional")))


@kernel("stablehlo.rng_bit_generator")
def rng_bit_generator(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "rng_bit_generator": uniform random bits and the updated state.

    ``output`` is a deterministic function of ``initial_state`` (and of the algorithm, the
    output type and shape), bit-identical to XLA's for THREE_FRY, PHILOX and DEFAULT.
    """
    algorithm = _enum(op, "rng_algorithm", "DEFAULT")
    out = _static_tensor(op, 1)
    shape, element = tuple(out.shape), out.element_type  # type: ignore[arg-type]
    _storage_bits(element)  # reject unsupported output types when preparing

    def run(initial_state: Any) -> Sequence[Any]:
        return rng_bit_generator_values(algorithm, initial_state, shape, element)

    return run


_INT_FP = _c.TC(_c.I | _c.F)
_STATE_SIZES = {"THREE_FRY": (2,), "PHILOX": (2, 3)}


@verifier("stablehlo.rng_bit_generator")
def _verify_rng_bit_generator(op: Operation, diag: Diagnostics) -> None:
    """(C1) `type(initial_state) = type(output_state)`; (C2) the state size the algorithm needs
    (2 for THREE_FRY, 2 or 3 for PHILOX, implementation-defined for DEFAULT). The type of
    `output` is free (no type inference)."""
    if not _c.signature(op, diag, [_INT_FP], [_INT_FP, _INT_FP],
                        attrs={"rng_algorithm": "any"}):
        return
    state, out_state = op.operands[0].type, op.results[0].type
    alg = enum_attr(op, "rng_algorithm", None)
    if alg not in ("DEFAULT", "THREE_FRY", "PHILOX"):
        diag.error(op, "I1", f"rng_algorithm must be DEFAULT, THREE_FRY or PHILOX, got {alg}")
        return
    if not _c.compatible(state, out_state):
        diag.error(op, "C1", f"output state shape must be compatible with initial state shape. "
                             f"Got: '{_c.type_str(state)}' and '{_c.type_str(out_state)}'")
        return
    sizes = _STATE_SIZES.get(alg)
    if sizes and state.shape is not None and len(state.shape) == 1 and \
            state.shape[0] is not None and state.shape[0] not in sizes:
        diag.error(op, "C2", f"{alg} needs an initial_state of size "
                             f"{' or '.join(map(str, sizes))}, got {state.shape[0]}")


# --- rng (spec "rng") ----------------------------------------------------------------------------

define("stablehlo.rng", spec="rng",
       summary="random numbers of a given shape and distribution",
       syntax=declarative(OPERAND, COMMA, OPERAND, COMMA, OPERAND, COMMA,
                          *named("distribution", "rng_distribution", "enum:rng_distribution"),
                          ATTRDICT, types("functional")))

DEFAULT_SEED = 0
"""The seed `rng` uses when the process sets none (see :func:`set_default_seed`)."""


def set_default_seed(seed: int) -> None:
    """Set the seed used by `rng` in processes without their own ``rng_seed``."""
    global DEFAULT_SEED
    DEFAULT_SEED = int(seed)


def reset_rng_state(process: Any, seed: int | None = None) -> None:
    """Forget the hidden `rng` counters of ``process`` (and optionally set its seed)."""
    process.__dict__.pop("rng_counters", None)
    if seed is not None:
        process.rng_seed = int(seed)


def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


def _next_bits(process: Any, occurrence: int, shape: tuple[int, ...], bits: int) -> np.ndarray:
    """Philox bits for one execution of the `rng` op number ``occurrence`` of the program."""
    seed = getattr(process, "rng_seed", None)
    seed = DEFAULT_SEED if seed is None else int(seed)
    key = _splitmix64((seed & _MASK64) ^ _splitmix64(occurrence))
    counters = process.__dict__.setdefault("rng_counters", {})
    counter = counters.get(occurrence, (0, 0))
    values, counters[occurrence] = philox_bits(key, counter, shape, bits)
    return values


def _uniform01(bits: np.ndarray) -> np.ndarray:
    """Floats in [0, 1) from uint32 (24 significant bits) or uint64 (53 bits)."""
    if bits.dtype == _U64:
        return (bits >> _U64(11)).astype(np.float64) * 2.0 ** -53
    return (bits >> _U32(8)).astype(np.float64) * 2.0 ** -24


def _float_below(b: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The largest value of ``dtype`` strictly below the finite value ``b``."""
    if dtype in (np.float16, np.float32, np.float64):
        return np.nextafter(b.astype(dtype), dtype.type(-np.inf))
    # ml_dtypes formats have at most 2**16 bit patterns: search the sorted finite values.
    storage = np.uint16 if dtype.itemsize == 2 else np.uint8
    values = np.arange(np.iinfo(storage).max + 1, dtype=np.uint32).astype(storage).view(dtype)
    finite = np.unique(values[np.isfinite(values.astype(np.float64))].astype(np.float64))
    i = int(np.searchsorted(finite, float(b), side="left"))
    return np.asarray(finite[max(i - 1, 0)]).astype(dtype)


def _uniform(bits: np.ndarray, a: Any, b: Any, element: Any) -> np.ndarray:
    dtype = element.dtype
    if isinstance(element, FloatType):
        a64, b64 = float(np.asarray(a, np.float64)), float(np.asarray(b, np.float64))
        if not a64 < b64:
            raise ExecutionError(f"rng UNIFORM: needs a < b, got a = {a64}, b = {b64}")
        with np.errstate(over="ignore", invalid="ignore"):
            u = _uniform01(bits)
            out = (a64 + u * (b64 - a64)).astype(dtype)
            bb = np.asarray(b, dtype)
            if np.isfinite(b64) and bool((out >= bb).any()):  # rounding reached b: keep [a, b)
                out = np.where(out >= bb, _float_below(bb, dtype), out).astype(dtype)
        return out
    lo, hi = int(np.asarray(a)), int(np.asarray(b))
    if not lo < hi:
        raise ExecutionError(f"rng UNIFORM: needs a < b, got a = {lo}, b = {hi}")
    span = hi - lo
    if bits.dtype == _U64:
        dist = bits % _U64(span) if span < (1 << 64) else bits
        if element.is_unsigned:
            return (_U64(lo) + dist).astype(dtype)
        return (dist + _U64(lo & _MASK64)).view(np.int64).astype(dtype)
    dist = (bits.astype(np.int64) % span)
    return (dist + lo).astype(dtype)


def _normal(bits: np.ndarray, mu: Any, sigma: Any, element: Any) -> np.ndarray:
    """Box-Muller on pairs of uniforms; computed in float64, rounded once to the type."""
    m, s = float(np.asarray(mu, np.float64)), float(np.asarray(sigma, np.float64))
    if s < 0:
        raise ExecutionError(f"rng NORMAL: needs b (sigma) >= 0, got {s}")
    u = _uniform01(bits.reshape(-1))
    half = (u.size + 1) // 2
    u1 = 1.0 - u[:half]  # in (0, 1]: log is finite
    u2 = u[half:2 * half] if u.size >= 2 * half else np.concatenate([u[half:], u[:1]])
    r = np.sqrt(-2.0 * np.log(u1))
    z = np.concatenate([r * np.cos(2 * np.pi * u2), r * np.sin(2 * np.pi * u2)])[:u.size]
    with np.errstate(over="ignore", invalid="ignore"):
        return (m + s * z).reshape(bits.shape).astype(element.dtype)


@kernel("stablehlo.rng")
def rng(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "rng": random numbers of a given shape, UNIFORM over [a, b) or NORMAL(a, b).

    Implementation-defined generator (docs/semantics/random_chlo.md): Philox-4x32 keyed by the
    process seed (``process.rng_seed``, else :data:`DEFAULT_SEED`) and the op's position among
    the `rng` ops prepared in the program; a hidden per-process counter advances on every
    execution, so repeated executions (in a loop) draw fresh numbers while a fresh process
    replays the same sequence. ``a >= b`` (UNIFORM) and ``b < 0`` (NORMAL), undefined in the
    spec, raise an ExecutionError.
    """
    distribution = _enum(op, "rng_distribution", "UNIFORM")
    out = op.results[0].type
    if not isinstance(out, TensorType):
        raise ExecutionError("rng: the result must be a tensor", op.location)
    element = out.element_type
    static_shape = tuple(out.shape) if out.is_static else None  # type: ignore[arg-type]
    counter = ctx.__dict__.setdefault("_rng_occurrences", [0])
    occurrence = counter[0]
    counter[0] += 1
    process = ctx.process
    if distribution == "NORMAL" and not isinstance(element, FloatType):
        raise ExecutionError("rng (C2): NORMAL needs a floating-point type", op.location)
    if distribution not in ("UNIFORM", "NORMAL"):
        raise ExecutionError(f"rng: unknown rng_distribution {distribution}", op.location)
    # 64 random bits per value for 64-bit types, 32 otherwise.
    nbits = 64 if getattr(element, "width", 0) == 64 else 32

    def run(a: Any, b: Any, shape: Any) -> Sequence[Any]:
        dims = static_shape if static_shape is not None else \
            tuple(int(v) for v in np.asarray(shape).reshape(-1))
        bits = _next_bits(process, occurrence, dims, nbits)
        if distribution == "NORMAL":
            return (_normal(bits, a, b, element),)
        if isinstance(element, IntegerType) and element.is_bool:
            lo, hi = int(bool(a)), int(bool(b))
            if not lo < hi:
                raise ExecutionError(f"rng UNIFORM: needs a < b, got a = {lo}, b = {hi}")
            return (np.zeros(dims, dtype=np.bool_),)
        return (_uniform(bits, a, b, element),)

    return run


_SCALAR = _c.TC(_c.B | _c.I | _c.F, rank=0)
_PRED_INT_FP = _c.TC(_c.B | _c.I | _c.F)


@inference("stablehlo.rng")
def _infer_rng(op: Operation, diag: Diagnostics) -> list[Type] | None:
    """(C3) `shape(result) = shape` (its values when it is a constant, else `?` in each of its
    `size(shape)` dimensions), with the element type of `a` (C1)."""
    if len(op.operands) != 3:
        return None
    a, shape = op.operands[0].type, op.operands[2].type
    if not isinstance(a, TensorType) or not isinstance(shape, TensorType):
        return None
    values = _c.constant_ints(op.operands[2])
    if values is not None:
        inferred = tuple(_c.size_of(v) for v in values)
    elif shape.shape and shape.shape[0] is not None:
        inferred = (None,) * shape.shape[0]
    else:
        return None
    return [TensorType(inferred, a.element_type)]


@verifier("stablehlo.rng")
def _verify_rng(op: Operation, diag: Diagnostics) -> None:
    """(C1) `element_type(a) = element_type(b) = element_type(result)`; (C2) NORMAL needs
    floats; (C3) `shape(result) = shape`."""
    if not _c.signature(op, diag, [_SCALAR, _SCALAR, _c.TC(_c.I | _c.INDEX, rank=1, static=True,
                                                          description="statically shaped "
                                                          "1-dimensional tensor of index or "
                                                          "integer values")],
                        [_PRED_INT_FP], attrs={"rng_distribution": "any"}):
        return
    a, b, shape = (v.type for v in op.operands)
    res = op.results[0].type
    dist = enum_attr(op, "rng_distribution", None)
    if dist not in ("UNIFORM", "NORMAL"):
        diag.error(op, "I4", f"rng_distribution must be UNIFORM or NORMAL, got {dist}")
        return
    if not (_c.same_element_type(a.element_type, b.element_type) and
            _c.same_element_type(a.element_type, res.element_type)):
        diag.error(op, "C1", f"failed to verify that all of {{a, b, result}} have same element "
                             f"type: {_c.types_str([a, b, res])}")
        return
    if dist == "NORMAL" and not isinstance(a.element_type, FloatType):
        diag.error(op, "C2", f"mu and sigma must be floats for the NORMAL distribution, got "
                             f"'{_c.type_str(a.element_type)}'")
        return
    inferred = _infer_rng(op, diag)
    if inferred is not None:
        _c.check_inferred(op, diag, "C3", inferred)
