"""convolution (spec "convolution") and dynamic_conv (spec "Dynamism" ops: the padding is an
operand).

The kernel is im2col plus one batched matrix product: lhs dilation and padding (negative
padding crops) build the padded input once (:func:`shlo.ops._windows.pad`), the windows are a
strided view of it (:func:`shlo.ops._windows.window_view`: ``rhs_dilation`` and
``window_strides`` are view strides), window reversal flips the kernel, and feature/batch
groups become the batch of one :class:`~shlo.ops.linalg.matmul.Matmul`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ...attributes import (
    ConvDimensionNumbers, DenseArrayAttr, DenseElementsAttr, DictAttr, IntegerAttr, StructAttr,
    int_attr, ints, ints_attr,
)
from ...ir import Operation
from ...registry import DOT_LIKE, Kernel, define, inference, kernel, verifier
from ...syntax.directives import (
    Format, check_attr_kind, parse_attrdict, parse_int_list, types_functional,
)
from ...syntax.lexer import INTEGER
from ...types import QuantizedType, TensorType, Type, element_type
from .. import _constraints as _c
from .._windows import (
    check_padding, num_windows, pad, padding_pairs_of, pairs, positive_window, window_attr,
    window_list, window_view,
)
from .contraction_checks import precision_config_ok, quantized_dot_like_ok, result_shape_ok
from .matmul import Matmul

if TYPE_CHECKING:  # pragma: no cover
    from ...errors import Diagnostics
    from ...interpreter.evaluator import PrepareContext
    from ...syntax.parser import Parser
    from ...syntax.printer import Printer

__all__ = ["conv_dimension_numbers"]

_I64 = element_type("i64")
_I1 = element_type("i1")
_INHERENT = ("window_strides padding lhs_dilation rhs_dilation window_reversal dimension_numbers "
             "feature_group_count batch_group_count precision_config")


# --- the pretty form: `(%lhs, %rhs) dim_numbers = [b, 0, 1, f]x[...]->[...], window = {...}` -----

_WINDOW_KEYS = {"stride": "window_strides", "pad": "padding", "lhs_dilate": "lhs_dilation",
                "rhs_dilate": "rhs_dilation", "reverse": "window_reversal"}


def _parse_window(p: Parser, props: dict[str, Any]) -> None:
    p.expect("{")
    if p.v != "}":
        while True:
            key = p.bare()
            if key not in _WINDOW_KEYS or _WINDOW_KEYS[key] in props:  # (upstream's words)
                p.error(f"Unexpected keyword {key}", found=False)
            p.expect("=")
            target = _WINDOW_KEYS[key]
            if key == "pad":
                p.expect("[")
                rows: list[tuple[int, int]] = []
                if p.v != "]":
                    while True:
                        pair = parse_int_list(p)
                        if len(pair) != 2:
                            p.error(f"Expected array with 2 elements, got {len(pair)} elements "
                                    f"instead", found=False)
                        rows.append(pair)  # type: ignore[arg-type]
                        if not p.accept(","):
                            break
                p.expect("]")
                arr = np.array(rows, dtype=np.int64).reshape(len(rows), 2)
                props[target] = DenseElementsAttr(TensorType((len(rows), 2), _I64), arr)
            elif key == "reverse":
                p.expect("[")
                bools: list[bool] = []
                if p.v != "]":
                    while True:
                        if p.v in ("true", "false"):
                            bools.append(p.v == "true")
                            p._advance()
                        elif p.k == INTEGER:
                            bools.append(p.integer() != 0)
                        else:
                            p.error("expected boolean")
                        if not p.accept(","):
                            break
                p.expect("]")
                props[target] = DenseArrayAttr(_I1, tuple(bools))
            else:
                props[target] = DenseArrayAttr(_I64, parse_int_list(p))
            if not p.accept(","):
                break
    p.expect("}")


def _print_window(pr: Printer, op: Operation) -> str | None:
    parts = []
    for key, target in _WINDOW_KEYS.items():
        a = op.attr(target)
        if a is None:
            continue
        if key == "pad":
            if type(a) is not DenseElementsAttr or a.type.element_type != _I64 \
                    or a.array.ndim != 2 or a.array.shape[1:] != (2,):
                return None
            rows = ", ".join(f"[{int(lo)}, {int(hi)}]" for lo, hi in a.array.tolist())
            parts.append(f"pad = [{rows}]")
        elif key == "reverse":
            if type(a) is not DenseArrayAttr or a.element_type != _I1:
                return None
            parts.append("reverse = [" + ", ".join("true" if b else "false"
                                                   for b in a.values) + "]")
        else:
            if not check_attr_kind(a, "i64list"):
                return None
            parts.append(f"{key} = [" + ", ".join(str(int(v)) for v in a.values) + "]")
    return "{" + ", ".join(parts) + "}"


def _parse_convolution(p: Parser, name: str, nres: int, start: int) -> Operation:
    p.expect("(")
    operands = p.operand_list()
    p.expect(")")
    props: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    p.keyword("dim_numbers")
    p.expect("=")
    props["dimension_numbers"] = p.conv_dims()
    p.expect(",")
    p.keyword("window")
    p.expect("=")
    _parse_window(p, props)
    at = p.start
    parse_attrdict(p, name, props, attrs)
    for key in ("feature_group_count", "batch_group_count"):
        # MLIR's parser checks the attr-dict's inherent attributes (verifyInherentAttrs) and
        # reports at the dictionary
        if isinstance(props.get(key), IntegerAttr) and props[key].value <= 0:
            e = p.make_error(f"'{name}' op attribute '{key}' failed to satisfy constraint: "
                             f"64-bit signless integer attribute whose value is positive", at)
            e.custom_op_prefixed = True  # type: ignore[attr-defined]  (it names the op)
            raise e
    p.expect(":")
    res = types_functional(p, operands)
    return Operation(name, operands, res, props, attrs)


_CONV_ATTR = "#stablehlo.conv<"


def _print_convolution(pr: Printer, op: Operation) -> str | None:
    dn = op.attr("dimension_numbers")
    if type(dn) is not ConvDimensionNumbers or op.regions:
        return None
    # the compact `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]` spelling of the attribute printer
    # (its `raw` spelling, for inconsistent numbers, has no pretty form)
    text = pr.attr(dn)
    win = _print_window(pr, op)
    if not text.startswith(_CONV_ATTR) or text.startswith(_CONV_ATTR + "raw ") or win is None:
        return None
    dims = text[len(_CONV_ATTR):-1]
    d = pr.attr_dict(op, {"dimension_numbers", *_WINDOW_KEYS.values()})
    ops = ", ".join(pr.val(v) for v in op.operands)
    return (f"({ops}) dim_numbers = {dims}, window = {win}{d} : "
            f"{pr.functional(op.operand_types, op.result_types)}")


# --- the kernel (convolution and dynamic_conv) ----------------------------------------------------


def conv_dimension_numbers(op: Operation) -> ConvDimensionNumbers:
    """The `dimension_numbers` of a convolution: the `#stablehlo.conv<...>` attribute or, where
    an older producer spelled them separately, a struct or attributes of the spec's names."""
    dn = op.attr("dimension_numbers")
    if isinstance(dn, ConvDimensionNumbers):
        return dn
    values = {}
    for name in ConvDimensionNumbers.__dataclass_fields__:
        v = dn.get(name) if isinstance(dn, (StructAttr, DictAttr)) else None
        if v is None:
            v = op.attr(name)
        if v is None:
            raise ValueError(f"convolution: missing dimension number `{name}`")
        values[name] = ints(v) if name.endswith("dimensions") else int(
            v.value if isinstance(v, IntegerAttr) else v)
    return ConvDimensionNumbers(**values)


def _inverse(perm: Sequence[int]) -> tuple[int, ...]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


class _Convolution:
    """A prepared convolution (spec "convolution"), run as im2col + one batched matmul.

    Canonical layouts: lhs `(N, spatial..., C)`, rhs `(spatial..., I, O)`, result
    `(N, spatial..., O)`; transposes to and from the op's dimension numbers are fixed here.
    """

    def __init__(self, op: Operation) -> None:
        dn = conv_dimension_numbers(op)
        self.ns = ns = len(dn.input_spatial_dimensions)
        self.spatial_axes = tuple(range(1, 1 + ns))
        self.lhs_perm = ((dn.input_batch_dimension,) + tuple(dn.input_spatial_dimensions)
                         + (dn.input_feature_dimension,))
        self.rhs_perm = (tuple(dn.kernel_spatial_dimensions)
                         + (dn.kernel_input_feature_dimension, dn.kernel_output_feature_dimension))
        self.out_perm = _inverse((dn.output_batch_dimension,) + tuple(dn.output_spatial_dimensions)
                                 + (dn.output_feature_dimension,))
        self.window_strides = window_attr(op, "window_strides", ns)
        self.lhs_interior = tuple(d - 1 for d in window_attr(op, "lhs_dilation", ns))
        self.rhs_dilation = window_attr(op, "rhs_dilation", ns)
        reversal = window_attr(op, "window_reversal", ns, default=0)
        self.reversed_dims = tuple(i for i, r in enumerate(reversal) if r)
        self.padding = padding_pairs_of(op, ns)
        self.feature_group_count = int_attr(op, "feature_group_count", 1)
        self.batch_group_count = int_attr(op, "batch_group_count", 1)
        self.matmul = Matmul(op.operands[0].type.element_type, op.operands[1].type.element_type,
                             op.results[0].type.element_type)
        self.result_dtype = op.results[0].type.dtype

    def __call__(self, lhs: Any, rhs: Any,
                 padding: Sequence[tuple[int, int]] | None = None) -> np.ndarray:
        ns = self.ns
        x = np.asarray(lhs).transpose(self.lhs_perm)  # (N, spatial..., C)
        w = np.asarray(rhs).transpose(self.rhs_perm)  # (spatial..., I, O)
        if self.reversed_dims:
            w = np.flip(w, self.reversed_dims)
        # `pad(lhs, 0, low, high, interior = lhs_dilation - 1)` on the spatial axes
        x = pad(x, None, self.padding if padding is None else padding, self.lhs_interior,
                self.spatial_axes)
        kernel = w.shape[:ns]
        windows = [num_windows(p, k, s, window_dilation=d) for p, k, s, d
                   in zip(x.shape[1:1 + ns], kernel, self.window_strides, self.rhs_dilation)]
        n, c, o = x.shape[0], x.shape[-1], w.shape[-1]
        fgc, bgc = self.feature_group_count, self.batch_group_count
        out_shape = (n // bgc, *windows, o)
        if 0 in out_shape or 0 in kernel or c == 0:
            return np.zeros(out_shape, self.result_dtype).transpose(self.out_perm)
        # windows: (N, out..., C, k...) as a strided view of the padded input.
        win = window_view(x, kernel, self.window_strides, self.rhs_dilation, self.spatial_axes)
        kprod = math.prod(kernel)
        if bgc > 1:
            # lhs batch splits into bgc groups, rhs output features into bgc groups.
            nb, ob = n // bgc, o // bgc
            p = win.reshape((bgc, nb) + win.shape[1:])
            p = p.transpose((0, 1) + tuple(range(2, 2 + ns)) + tuple(range(3 + ns, 3 + 2 * ns))
                            + (2 + ns,))  # (G, Nb, out..., k..., C)
            a = p.reshape(bgc, nb * math.prod(windows), kprod * c)
            b = w.reshape(kernel + (c, bgc, ob)).transpose(
                (ns + 1,) + tuple(range(ns)) + (ns, ns + 2)).reshape(bgc, kprod * c, ob)
            out = self.matmul(a, b).reshape((bgc, nb, *windows, ob))
            out = np.moveaxis(out, 0, -2).reshape(out_shape)
        else:
            g, cg, og = fgc, c // fgc, o // fgc
            p = win.reshape((n,) + tuple(windows) + (g, cg) + tuple(kernel))
            p = p.transpose((1 + ns,) + tuple(range(1 + ns)) + tuple(range(3 + ns, 3 + 2 * ns))
                            + (2 + ns,))  # (G, N, out..., k..., Cg)
            a = p.reshape(g, n * math.prod(windows), kprod * cg)
            b = w.reshape(kernel + (cg, g, og)).transpose(
                (ns + 1,) + tuple(range(ns)) + (ns, ns + 2)).reshape(g, kprod * cg, og)
            out = self.matmul(a, b).reshape((g, n, *windows, og))
            out = np.moveaxis(out, 0, -2).reshape(out_shape)
        return out.transpose(self.out_perm)


# --- the constraints (convolution and dynamic_conv) -----------------------------------------------


def _infer_conv(op: Operation, diag: Diagnostics, dynamic: bool) -> list[Type] | None:
    """(C1-C25) up to the result shape: `dim(result, output_batch_dimension) =
    dim(lhs, input_batch_dimension) / batch_group_count`, the output feature dimension is the
    kernel's, and each spatial dimension is `num_windows` of the padded, dilated input (dynamic
    for dynamic_conv, whose padding is known at run time only). The element type is not
    determined (quantized and mixed-precision convolutions): the inferred one is `lhs`'s."""
    if len(op.operands) < 2 or not all(isinstance(v.type, TensorType) for v in op.operands[:2]):
        return None
    lhs, rhs = op.operands[0].type, op.operands[1].type
    unknown = [TensorType(None, lhs.element_type)]
    dn = op.attr("dimension_numbers")
    dn = dn if isinstance(dn, ConvDimensionNumbers) else None
    fgc = int_attr(op, "feature_group_count", 1)
    bgc = int_attr(op, "batch_group_count", 1)
    if fgc <= 0:
        diag.error(op, "C21", f"op attribute 'feature_group_count' failed to satisfy constraint: "
                              f"64-bit signless integer attribute whose value is positive (got "
                              f"{fgc})")
        return None
    if bgc <= 0:
        diag.error(op, "C22", f"op attribute 'batch_group_count' failed to satisfy constraint: "
                              f"64-bit signless integer attribute whose value is positive (got "
                              f"{bgc})")
        return None
    if lhs.shape is None or rhs.shape is None or dn is None:
        return unknown
    got = f"Got: '{_c.type_str(lhs)}' and '{_c.type_str(rhs)}'."
    if len(lhs.shape) != len(rhs.shape):
        diag.error(op, "C1", f"expects convolution arguments to have same number of dimensions. "
                             f"{got}")
        return None
    n = len(lhs.shape)
    if n < 2:
        diag.error(op, "C1", f"expects convolution arguments to have >= 2 dimensions. {got}")
        return None
    isd, ksd, osd = (dn.input_spatial_dimensions, dn.kernel_spatial_dimensions,
                     dn.output_spatial_dimensions)
    if not len(isd) == len(ksd) == len(osd):
        diag.error(op, "C12, C17, C19", f"expects the same size for input, kernel and output "
                                        f"spatial-dimensions, but got {len(isd)}, {len(ksd)}, "
                                        f"and {len(osd)} resp.")
        return None
    nsp = len(isd)
    if n != nsp + 2:
        diag.error(op, "C12", f"expects convolution arguments to have {nsp + 2} dimensions. Got: "
                              f"{n}")
        return None
    # (in upstream's order, which its messages list: the two non-spatial, then spatial ones)
    ins = [dn.input_batch_dimension, dn.input_feature_dimension, *isd]
    ker = [dn.kernel_input_feature_dimension, dn.kernel_output_feature_dimension, *ksd]
    out = [dn.output_batch_dimension, dn.output_feature_dimension, *osd]
    for dims, label in ((ins, "C13"), (ker, "C18"), (out, "C20")):
        if any(not 0 <= d < n for d in dims):
            diag.error(op, label, f"expects input, kernel, and output dimension-numbers to be "
                                  f"in-range [0, {n}).")
            return None
    for name, dims, label in (("input", ins, "C13"), ("kernel", ker, "C18"),
                              ("output", out, "C20")):
        if not _c.is_unique(dims):
            diag.error(op, label, f"expects {name} dimension-numbers to be unique, got "
                                  f"{{{', '.join(map(str, dims))}}}.")
            return None
    if fgc > 1 and bgc > 1:
        diag.error(op, "C23", f"expects batch_group_count and feature_group_count not to be both"
                              f" greater than 1. Got {bgc} and {fgc} resp.")
        return None
    le, re_ = lhs.element_type, rhs.element_type
    if not isinstance(le, QuantizedType) and not isinstance(re_, QuantizedType) and \
            not _c.same_element_type(le, re_):
        diag.error(op, "C27", f"expects lhs and rhs to have compatible element type. Got: "
                              f"'{_c.type_str(le)}' and '{_c.type_str(re_)}'")
        return None
    batch = lhs.shape[dn.input_batch_dimension]
    if batch is not None and batch % bgc:
        diag.error(op, "C10", f"expects input batch dimension ({batch}) to be divisible by "
                              f"batch_group_count. Got batch_group_count = {bgc}.")
        return None
    feat = lhs.shape[dn.input_feature_dimension]
    if feat is not None and feat % fgc:
        diag.error(op, "C11", f"expects input feature dimension ({feat}) to be a multiple of "
                              f"feature_group_count. Got feature_group_count = {fgc}.")
        return None
    kin = rhs.shape[dn.kernel_input_feature_dimension]
    if feat is not None and kin is not None and feat // fgc != kin:
        diag.error(op, "C14", f"expects input feature dimension ({feat}) / feature_group_count = "
                              f"kernel input feature dimension ({kin}). Got feature_group_count "
                              f"= {fgc}.")
        return None
    kout = rhs.shape[dn.kernel_output_feature_dimension]
    if kout is not None and kout % bgc:
        diag.error(op, "C15", f"expects output feature dimension size ({kout}) to be a multiple "
                              f"of batch_group_count. Got batch_group_count = {bgc}.")
        return None
    if kout is not None and kout % fgc:
        diag.error(op, "C16", f"expects kernel output feature dimension ({kout}) to be divisible"
                              f" by feature_group_count. For feature_group_count = {fgc}.")
        return None
    if not precision_config_ok(op, diag, "C24"):
        return None
    window = [rhs.shape[d] for d in ksd]
    if not positive_window(op, diag, "C25", window):
        return None
    pads = None
    if dynamic:
        pt = op.operands[2].type if len(op.operands) > 2 else None
        if isinstance(pt, TensorType) and pt.shape is not None:
            if len(pt.shape) != 2:
                diag.error(op, "C4", f"expects padding to be of rank 2 but got {len(pt.shape)}")
                return None
            if tuple(pt.shape) != (nsp, 2):
                diag.error(op, "C4", f"expects padding to be of shape [{nsp}, 2], but got "
                                     f"[{_c.size_str(pt.shape[0])}, {_c.size_str(pt.shape[1])}]")
                return None
            # upstream checks the window attributes once the padding is a known constant
            pads = _c.constant_ints(op.operands[2])
    strides = window_list(op, diag, "C2, C3", "window_strides", "window-strides", nsp,
                          positive="stride", check_size=not dynamic or pads is not None)
    if strides is None:
        return None
    padding = [(0, 0)] * nsp if dynamic else check_padding(op, diag, "C4", nsp)
    if padding is None:
        return None
    lhs_dilation = window_list(op, diag, "C5, C6", "lhs_dilation", "base-dilation factors", nsp,
                               positive="base dilation factor")
    if lhs_dilation is None:
        return None
    rhs_dilation = window_list(op, diag, "C7, C8", "rhs_dilation", "window-dilation factors",
                               nsp, positive="window dilation factor")
    if rhs_dilation is None:
        return None
    reversal = ints_attr(op, "window_reversal", None)
    if reversal and len(reversal) != nsp:
        diag.error(op, "C9", f"expects window-reversal to have same dimension-size as size of"
                             f" window dimensions ({nsp}), but got: {len(reversal)}.")
        return None
    shape: list[int | None] = [None] * n
    shape[dn.output_batch_dimension] = None if batch is None else batch // bgc
    shape[dn.output_feature_dimension] = kout
    for i in range(nsp):
        if not dynamic and window[i] is not None:
            shape[osd[i]] = num_windows(lhs.shape[isd[i]], window[i], strides[i], padding[i],
                                        lhs_dilation[i], rhs_dilation[i])
    return [TensorType(tuple(shape), lhs.element_type)]


def _verify_conv(op: Operation, diag: Diagnostics, inferred: list[Type] | None) -> None:
    """The result shape (C25, C26) and the quantization constraints (C28-C33)."""
    if inferred is None or inferred[0].shape is None:
        return
    if not result_shape_ok(op, diag, "C25, C26", inferred[0].shape):
        return
    lhs, rhs, res = op.operands[0].type, op.operands[1].type, op.results[0].type
    dn = op.attr("dimension_numbers")
    re_, oe = rhs.element_type, res.element_type
    if isinstance(re_, QuantizedType) and re_.quantization_dimension is not None and \
            re_.quantization_dimension != dn.kernel_output_feature_dimension:
        diag.error(op, "C32", "quantization dimension of rhs should be same with "
                              "kernel_output_feature_dimension")
        return
    if isinstance(oe, QuantizedType) and oe.quantization_dimension is not None and \
            oe.quantization_dimension != dn.output_feature_dimension:
        diag.error(op, "C33", "quantization dimension of result should be same with "
                              "output_feature_dimension")
        return
    quantized_dot_like_ok(op, diag, lhs, rhs, res, "C28")


_CONV_ATTRS = {"dimension_numbers": "any", "feature_group_count": "int",
               "batch_group_count": "int"}
_CONV_OPTIONAL = {"window_strides": "ints", "lhs_dilation": "ints", "rhs_dilation": "ints",
                  "window_reversal": "any", "precision_config": "any"}


# --- convolution (spec "convolution") -------------------------------------------------------------

define("stablehlo.convolution", spec="convolution",
       summary="dot products between windows of lhs and slices of rhs",
       traits={DOT_LIKE}, inherent=_INHERENT,
       syntax=Format(_parse_convolution, _print_convolution,
                     frozenset({"dimension_numbers", *_WINDOW_KEYS.values()})))


@kernel("stablehlo.convolution")
def convolution(op: Operation, ctx: PrepareContext) -> Kernel:
    """Spec "convolution": dot products between windows of `lhs` and slices of `rhs`."""
    conv = _Convolution(op)

    def run(lhs: Any, rhs: Any) -> Sequence[Any]:
        return (conv(lhs, rhs),)

    return run


@inference("stablehlo.convolution")
def _infer_convolution(op: Operation, diag: Diagnostics) -> list[Type] | None:
    return _infer_conv(op, diag, dynamic=False)


@verifier("stablehlo.convolution")
def _verify_convolution(op: Operation, diag: Diagnostics) -> None:
    """convolution (C1-C33): window attributes, dimension numbers, group counts, the result
    shape and the quantization constraints."""
    if _c.signature(op, diag, [_c.TENSOR, _c.TENSOR_QA], [_c.TENSOR_QA], attrs=_CONV_ATTRS,
                    optional_attrs={**_CONV_OPTIONAL, "padding": "i64elements"}):
        _verify_conv(op, diag, _infer_convolution(op, diag))


# --- dynamic_conv (spec "Dynamism" ops) -----------------------------------------------------------

define("stablehlo.dynamic_conv", summary="convolution with its padding as an operand",
       traits={DOT_LIKE}, inherent=_INHERENT)


@kernel("stablehlo.dynamic_conv")
def dynamic_conv(op: Operation, ctx: PrepareContext) -> Kernel:
    """`stablehlo.dynamic_conv`: `convolution` whose padding is the third operand, a `(N-2)x2`
    integer tensor read at run time.
    """
    conv = _Convolution(op)
    ns = conv.ns

    def run(lhs: Any, rhs: Any, padding: Any) -> Sequence[Any]:
        return (conv(lhs, rhs, pairs(np.asarray(padding).reshape(-1), ns)),)

    return run


@inference("stablehlo.dynamic_conv")
def _infer_dynamic_conv(op: Operation, diag: Diagnostics) -> list[Type] | None:
    return _infer_conv(op, diag, dynamic=True)


@verifier("stablehlo.dynamic_conv")
def _verify_dynamic_conv(op: Operation, diag: Diagnostics) -> None:
    """dynamic_conv (beyond the seed spec): convolution with `padding` as an operand."""
    if _c.signature(op, diag, [_c.TENSOR, _c.TENSOR_QA, _c.INT_TENSOR], [_c.TENSOR_QA],
                    attrs=_CONV_ATTRS, optional_attrs=_CONV_OPTIONAL):
        _verify_conv(op, diag, _infer_dynamic_conv(op, diag))
