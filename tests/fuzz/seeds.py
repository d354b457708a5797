"""Programs the campaign mutates: small built-in seeds (enough when ../shared is absent) and the
chunks of the conformance corpus (../shared/conformance) when it is there."""

from __future__ import annotations

import functools
import re
from pathlib import Path

CONFORMANCE = Path(__file__).resolve().parents[2] / ".." / "shared" / "conformance"

_F = "func.func @main({args}) -> {res} {{\n{body}\n  return {ret} : {res}\n}}"

BUILTIN = [
    _F.format(args="%a: tensor<2x3xf32>, %b: tensor<2x3xf32>", res="tensor<2x3xf32>",
              ret="%2", body="  %0 = stablehlo.add %a, %b : tensor<2x3xf32>\n"
              "  %1 = stablehlo.multiply %0, %b : tensor<2x3xf32>\n"
              "  %2 = stablehlo.sine %1 : tensor<2x3xf32>"),
    _F.format(args="%a: tensor<2x3xf32>", res="tensor<3x2xf32>", ret="%0",
              body="  %0 = stablehlo.transpose %a, dims = [1, 0] : (tensor<2x3xf32>) -> "
                   "tensor<3x2xf32>"),
    _F.format(args="%a: tensor<2x3xf32>", res="tensor<6xf32>", ret="%0",
              body="  %0 = stablehlo.reshape %a : (tensor<2x3xf32>) -> tensor<6xf32>"),
    _F.format(args="%a: tensor<3xi32>", res="tensor<2x3xi32>", ret="%0",
              body="  %0 = stablehlo.broadcast_in_dim %a, dims = [1] : (tensor<3xi32>) -> "
                   "tensor<2x3xi32>"),
    _F.format(args="%a: tensor<2x3xf32>, %b: tensor<2x4xf32>", res="tensor<2x7xf32>", ret="%0",
              body="  %0 = stablehlo.concatenate %a, %b, dim = 1 : (tensor<2x3xf32>, "
                   "tensor<2x4xf32>) -> tensor<2x7xf32>"),
    _F.format(args="%a: tensor<4x6xf32>", res="tensor<2x2xf32>", ret="%0",
              body="  %0 = stablehlo.slice %a [1:3, 0:6:3] : (tensor<4x6xf32>) -> "
                   "tensor<2x2xf32>"),
    _F.format(args="%a: tensor<2x3xf32>, %p: tensor<f32>", res="tensor<5x10xf32>", ret="%0",
              body="  %0 = stablehlo.pad %a, %p, low = [1, 2], high = [2, 1], interior = [0, 2]"
                   " : (tensor<2x3xf32>, tensor<f32>) -> tensor<5x10xf32>"),
    _F.format(args="%a: tensor<2x3xf32>, %b: tensor<3x4xf32>", res="tensor<2x4xf32>", ret="%0",
              body="  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], "
                   "precision = [DEFAULT, HIGHEST] : (tensor<2x3xf32>, tensor<3x4xf32>) -> "
                   "tensor<2x4xf32>"),
    _F.format(args="%a: tensor<4x6xf32>, %i: tensor<f32>", res="tensor<6xf32>", ret="%0",
              body="  %0 = stablehlo.reduce(%a init: %i) applies stablehlo.add across "
                   "dimensions = [0] : (tensor<4x6xf32>, tensor<f32>) -> tensor<6xf32>"),
    _F.format(args="%a: tensor<4x6xf32>, %i: tensor<f32>", res="tensor<2x6xf32>", ret="%0",
              body='  %0 = "stablehlo.reduce_window"(%a, %i) ({\n'
                   "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
                   "    %1 = stablehlo.maximum %x, %y : tensor<f32>\n"
                   "    stablehlo.return %1 : tensor<f32>\n"
                   "  }) {window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 2, 1>}"
                   " : (tensor<4x6xf32>, tensor<f32>) -> tensor<2x6xf32>"),
    _F.format(args="%a: tensor<3x4x2xi32>, %i: tensor<2x3x2xi64>", res="tensor<2x3x2x2xi32>",
              ret="%0", body='  %0 = "stablehlo.gather"(%a, %i) {dimension_numbers = '
              "#stablehlo.gather<offset_dims = [2, 3], collapsed_slice_dims = [0], "
              "start_index_map = [1, 0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 2, 2>,"
              " indices_are_sorted = false} : (tensor<3x4x2xi32>, tensor<2x3x2xi64>) -> "
              "tensor<2x3x2x2xi32>"),
    _F.format(args="%a: tensor<3x4x2xi32>, %i: tensor<2x3x2xi64>, %u: tensor<2x3x2x2xi32>",
              res="tensor<3x4x2xi32>", ret="%0",
              body='  %0 = "stablehlo.scatter"(%a, %i, %u) ({\n'
                   "  ^bb0(%x: tensor<i32>, %y: tensor<i32>):\n"
                   "    %1 = stablehlo.add %x, %y : tensor<i32>\n"
                   "    stablehlo.return %1 : tensor<i32>\n"
                   "  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = "
                   "[2, 3], inserted_window_dims = [0], scatter_dims_to_operand_dims = [1, 0], "
                   "index_vector_dim = 2>, indices_are_sorted = false, unique_indices = false} : "
                   "(tensor<3x4x2xi32>, tensor<2x3x2xi64>, tensor<2x3x2x2xi32>) -> "
                   "tensor<3x4x2xi32>"),
    _F.format(args="%a: tensor<1x8x8x3xf32>, %k: tensor<3x3x3x4xf32>", res="tensor<1x8x8x4xf32>",
              ret="%0", body="  %0 = stablehlo.convolution(%a, %k) dim_numbers = [b, 0, 1, f]x"
              "[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], "
              "rhs_dilate = [1, 1]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} :"
              " (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x8x8x4xf32>"),
    _F.format(args="%a: tensor<3xi32>, %b: tensor<3xi32>", res="tensor<3xi1>", ret="%0",
              body="  %0 = stablehlo.compare LT, %a, %b, SIGNED : (tensor<3xi32>, "
                   "tensor<3xi32>) -> tensor<3xi1>"),
    _F.format(args="%p: tensor<3xi1>, %a: tensor<3xf32>, %b: tensor<3xf32>", res="tensor<3xf32>",
              ret="%0", body="  %0 = stablehlo.select %p, %a, %b : tensor<3xi1>, tensor<3xf32>"),
    _F.format(args="%a: tensor<3xf32>", res="tensor<3xi32>", ret="%2",
              body="  %0 = stablehlo.convert %a : (tensor<3xf32>) -> tensor<3xi32>\n"
                   "  %1 = stablehlo.iota dim = 0 : tensor<3xi32>\n"
                   "  %2 = stablehlo.add %0, %1 : tensor<3xi32>"),
    _F.format(args="%a: tensor<4x3xf32>", res="tensor<4x3xf32>", ret="%1",
              body="  %0 = stablehlo.reverse %a, dims = [0] : tensor<4x3xf32>\n"
                   '  %1 = "stablehlo.sort"(%0) ({\n'
                   "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
                   "    %2 = stablehlo.compare GT, %x, %y : (tensor<f32>, tensor<f32>) -> "
                   "tensor<i1>\n    stablehlo.return %2 : tensor<i1>\n"
                   "  }) {dimension = 0 : i64, is_stable = true} : (tensor<4x3xf32>) -> "
                   "tensor<4x3xf32>"),
    _F.format(args="%a: tensor<4x3xf32>, %i: tensor<i64>, %j: tensor<i64>", res="tensor<2x3xf32>",
              ret="%0", body="  %0 = stablehlo.dynamic_slice %a, %i, %j, sizes = [2, 3] : "
              "(tensor<4x3xf32>, tensor<i64>, tensor<i64>) -> tensor<2x3xf32>"),
    _F.format(args="%a: tensor<i32>", res="tensor<i32>", ret="%1#0",
              body="  %0 = stablehlo.constant dense<10> : tensor<i32>\n"
                   "  %1:2 = stablehlo.while(%iterArg = %a, %iterArg_0 = %0) : tensor<i32>, "
                   "tensor<i32>\n    cond {\n"
                   "    %2 = stablehlo.compare LT, %iterArg, %iterArg_0 : (tensor<i32>, "
                   "tensor<i32>) -> tensor<i1>\n    stablehlo.return %2 : tensor<i1>\n"
                   "  } do {\n    %2 = stablehlo.add %iterArg, %iterArg : tensor<i32>\n"
                   "    stablehlo.return %2, %iterArg_0 : tensor<i32>, tensor<i32>\n  }"),
    _F.format(args="%p: tensor<i1>, %a: tensor<2xf32>", res="tensor<2xf32>", ret="%0",
              body='  %0 = "stablehlo.if"(%p) ({\n    stablehlo.return %a : tensor<2xf32>\n'
                   "  }, {\n    %1 = stablehlo.negate %a : tensor<2xf32>\n"
                   "    stablehlo.return %1 : tensor<2xf32>\n  }) : (tensor<i1>) -> "
                   "tensor<2xf32>"),
    _F.format(args="%a: tensor<3x8xcomplex<f32>>", res="tensor<3x8xcomplex<f32>>", ret="%0",
              body="  %0 = stablehlo.fft %a, type = FFT, length = [8] : "
                   "(tensor<3x8xcomplex<f32>>) -> tensor<3x8xcomplex<f32>>"),
    _F.format(args="%a: tensor<2x3x4xf32>, %s: tensor<4xf32>, %o: tensor<4xf32>, "
                   "%m: tensor<4xf32>, %v: tensor<4xf32>", res="tensor<2x3x4xf32>", ret="%0",
              body='  %0 = "stablehlo.batch_norm_inference"(%a, %s, %o, %m, %v) {epsilon = '
                   "0.001 : f32, feature_index = 2 : i64} : (tensor<2x3x4xf32>, tensor<4xf32>, "
                   "tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>"),
    _F.format(args="%a: tensor<2x!quant.uniform<i8:f32, 0.5:3>>", res="tensor<2xf32>", ret="%1",
              body="  %0 = stablehlo.add %a, %a : tensor<2x!quant.uniform<i8:f32, 0.5:3>>\n"
                   "  %1 = stablehlo.uniform_dequantize %0 : (tensor<2x!quant.uniform<i8:f32, "
                   "0.5:3>>) -> tensor<2xf32>"),
    _F.format(args="%a: tensor<4xf32>", res="tensor<4xf32>", ret="%0",
              body="  %0 = stablehlo.reduce_precision %a, format = e5m2 : tensor<4xf32>"),
    _F.format(args="%a: tensor<2xf32>", res="tensor<2xf32>", ret="%1",
              body="  %0 = stablehlo.constant dense<[1.5, -0.0]> : tensor<2xf32>\n"
                   "  %1 = stablehlo.custom_call @foo(%a, %0) {backend_config = \"x\", "
                   "api_version = 2 : i32} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>"),
    _F.format(args="%a: tensor<8xf32>", res="tensor<8xf32>", ret="%0",
              body='  %0 = "stablehlo.all_reduce"(%a) ({\n'
                   "  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n"
                   "    %1 = stablehlo.add %x, %y : tensor<f32>\n"
                   "    stablehlo.return %1 : tensor<f32>\n"
                   "  }) {replica_groups = dense<[[0]]> : tensor<1x1xi64>, channel_handle = "
                   "#stablehlo.channel_handle<handle = 1, type = 0>} : (tensor<8xf32>) -> "
                   "tensor<8xf32>"),
    _F.format(args="%a: tensor<2x3xf32>", res="tensor<2x3xf32>", ret="%0",
              body="  %0 = func.call @g(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>")
    + "\nfunc.func private @g(%b: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
      "  %0 = stablehlo.tanh %b : tensor<2x3xf32> loc(\"g\"(\"f.py\":3:4))\n"
      "  return %0 : tensor<2x3xf32>\n}",
    "module @m attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n"
    + _F.format(args="%a: tensor<i32>", res="tensor<i32>", ret="%0",
                body="  %0 = \"stablehlo.case\"(%a) ({\n"
                     "    stablehlo.return %a : tensor<i32>\n  }, {\n"
                     "    %1 = stablehlo.abs %a : tensor<i32>\n"
                     "    stablehlo.return %1 : tensor<i32>\n  }) : (tensor<i32>) -> tensor<i32>")
    + "\n}",
    _F.format(args="%a: tensor<2xf32>", res="tensor<2xf32>", ret="%0",
              body="  %0 = chlo.erf %a : tensor<2xf32> -> tensor<2xf32>"),
    _F.format(args="%a: tensor<?x3xf32>, %s: tensor<2xi64>", res="tensor<?x3xf32>", ret="%0",
              body="  %0 = stablehlo.dynamic_broadcast_in_dim %a, %s, dims = [0, 1] : "
                   "(tensor<?x3xf32>, tensor<2xi64>) -> tensor<?x3xf32>"),
    _F.format(args="%a: tensor<2xui8>", res="tensor<2xui8>", ret="%0",
              body='  %0 = stablehlo.bitcast_convert %a : (tensor<2xui8>) -> tensor<2xui8> '
                   'loc(#loc1)') + '\n#loc1 = loc("x.py":1:2)',
]


def split_chunks(text: str) -> list[str]:
    return [c for c in re.split(r"^// -----\s*$", text, flags=re.M) if c.strip()]


@functools.lru_cache(maxsize=None)
def corpus_programs(max_chars: int = 20000) -> tuple[str, ...]:
    """Chunks of the corpus's .mlir files (interpret, verify, transforms, passes, math, a sample
    of testdata), each under ``max_chars``; empty when ../shared is absent."""
    if not CONFORMANCE.is_dir():
        return ()
    out: list[str] = []
    for sub in ("interpret", "verify", "transforms", "passes", "math", "vhlo"):
        for f in sorted((CONFORMANCE / sub).glob("*.mlir")):
            try:
                text = f.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            out += [c for c in split_chunks(text) if len(c) <= max_chars]
    testdata = sorted((CONFORMANCE / "testdata").glob("*.mlir"))
    for f in testdata[::7]:
        if f.stat().st_size <= max_chars:
            out.append(f.read_text(encoding="utf-8"))
    return tuple(out)


@functools.lru_cache(maxsize=None)
def bytecode_files(max_bytes: int = 200000) -> tuple[bytes, ...]:
    """The corpus's portable artifacts (vhlo/*.bc), for byte mutations of the bytecode reader."""
    if not CONFORMANCE.is_dir():
        return ()
    return tuple(f.read_bytes() for f in sorted((CONFORMANCE / "vhlo").glob("*.bc"))
                 if f.stat().st_size <= max_bytes)


def programs() -> list[str]:
    return list(BUILTIN) + list(corpus_programs())
