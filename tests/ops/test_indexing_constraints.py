"""Constraints of gather, scatter, dynamic_slice, dynamic_update_slice (spec "Ops")."""

import pytest

from constraint_util import assert_verdict, func


def gather(dn: str, slice_sizes: str, result: str, operand="tensor<3x4x2xi32>",
           indices="tensor<2x3x2xi64>") -> str:
    return func(f"%a: {operand}, %i: {indices}",
                f'  %0 = "stablehlo.gather"(%a, %i) {{dimension_numbers = #stablehlo.gather<{dn}>, '
                f'slice_sizes = array<i64: {slice_sizes}>}} : ({operand}, {indices}) -> {result}')


GOOD_DN = "offset_dims = [2, 3], collapsed_slice_dims = [0], start_index_map = [1, 0], " \
          "index_vector_dim = 2"


def scatter(dn: str, updates="tensor<2x3x2x2xi32>", body_type="tensor<i32>") -> str:
    return func(
        f"%a: tensor<3x4x2xi32>, %i: tensor<2x3x2xi64>, %u: {updates}",
        f'  %0 = "stablehlo.scatter"(%a, %i, %u) ({{\n'
        f'  ^bb0(%x: {body_type}, %y: {body_type}):\n'
        f'    %1 = stablehlo.add %x, %y : {body_type}\n'
        f'    stablehlo.return %1 : {body_type}\n'
        f'  }}) {{scatter_dimension_numbers = #stablehlo.scatter<{dn}>}} : '
        f'(tensor<3x4x2xi32>, tensor<2x3x2xi64>, {updates}) -> tensor<3x4x2xi32>')


GOOD_SDN = "update_window_dims = [2, 3], inserted_window_dims = [0], " \
           "scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 2"

CASES = [
    ("gather", gather(GOOD_DN, "1, 2, 2", "tensor<2x3x2x2xi32>"), None),
    ("gather rank", gather("offset_dims = [2], collapsed_slice_dims = [0], start_index_map = "
                           "[1, 0], index_vector_dim = 2", "1, 2, 2", "tensor<2x3x2xi32>"),
     "(C1) offset_dims size (1) plus collapse_slice_dims size (1)"),
    ("gather index_vector_dim", gather(GOOD_DN.replace("index_vector_dim = 2",
                                                       "index_vector_dim = 4"),
                                       "1, 2, 2", "tensor<2x3x2x2xi32>"),
     "(C2) Expects index_vector_dim to be in range [0, rank-of('start_indices')] i.e. [0, 3]."),
    ("gather start_index_map", gather(GOOD_DN.replace("[1, 0]", "[1]"), "1, 2, 2",
                                      "tensor<2x3x2x2xi32>"),
     "(C3) start_index_map size (1) is not equal to size of index dimension (2)"),
    ("gather offset_dims sorted", gather(GOOD_DN.replace("[2, 3]", "[3, 2]"), "1, 2, 2",
                                         "tensor<2x3x2x2xi32>"),
     "(C4) expects offset_dims to be sorted"),
    ("gather collapsed slice size", gather(GOOD_DN, "2, 2, 2", "tensor<2x3x2x2xi32>"),
     "(C9) Expects that for each dim in collapsed_slice_dims, slice_sizes[dim] should be <= 1"),
    ("gather slice size", gather(GOOD_DN, "1, 5, 2", "tensor<2x3x5x2xi32>"),
     "(C21) slice size (5) is out of bounds for operand dimension (4) at index 1"),
    ("gather result", gather(GOOD_DN, "1, 2, 2", "tensor<2x3x2x3xi32>"),
     "(C13, C14) inferred type(s) 'tensor<2x3x2x2xi32>'"),
    ("gather batching", gather("offset_dims = [2], collapsed_slice_dims = [1], "
                               "operand_batching_dims = [0], start_indices_batching_dims = [1], "
                               "start_index_map = [2], index_vector_dim = 2",
                               "1, 1, 2", "tensor<2x3x2xi32>", indices="tensor<2x3x1xi64>"),
     None),
    ("gather batching sizes", gather("offset_dims = [2], collapsed_slice_dims = [1], "
                                     "operand_batching_dims = [0], start_indices_batching_dims = "
                                     "[0], start_index_map = [2], index_vector_dim = 2",
                                     "1, 1, 2", "tensor<2x3x2xi32>", indices="tensor<2x3x1xi64>"),
     "(C17) operand_batching_dims[0] and start_indices_batching_dims[0] must have compatible "
     "sizes, but got 3 and 2"),
    ("scatter", scatter(GOOD_SDN), None),
    ("scatter updates rank", scatter(GOOD_SDN, updates="tensor<2x3x2xi32>"),
     "(C4) expects updates tensor must be of rank 4"),  # (upstream checks the rank first)
    ("scatter scatter dims", scatter(GOOD_SDN, updates="tensor<2x4x2x2xi32>"),
     "(C4) expects bounds of the scatter dimensions of updates to be same as the bounds of the "
     "corresponding dimensions of scatter indices"),
    ("scatter window bound", scatter(GOOD_SDN, updates="tensor<2x3x5x2xi32>"),
     "(C4) expects bounds of the window dimensions of updates to not exceed"),
    ("scatter inserted sorted", scatter(GOOD_SDN.replace("inserted_window_dims = [0]",
                                                         "inserted_window_dims = [0, 0]")),
     "(C2) Expects rank-of operand to match"),
    ("scatter dims_to_operand", scatter(GOOD_SDN.replace("[1, 0]", "[1, 3]")),
     "(C13) Expects each element of scatter_dims_to_operand_dims to be in range"),
    ("scatter body", scatter(GOOD_SDN, body_type="tensor<f32>"),
     "(C15) The element-type of reduction-region's result type at index 0 is expected to be "
     "promotable from the op's corresponding init-value element-type"),
    ("dynamic_slice", func("%a: tensor<4x3xf32>, %i: tensor<i64>",
                           "  %0 = stablehlo.dynamic_slice %a, %i, %i, sizes = [2, 3] : "
                           "(tensor<4x3xf32>, tensor<i64>, tensor<i64>) -> tensor<2x3xf32>"), None),
    ("dynamic_slice count", func("%a: tensor<4x3xf32>, %i: tensor<i64>",
                                 "  %0 = stablehlo.dynamic_slice %a, %i, sizes = [2] : "
                                 "(tensor<4x3xf32>, tensor<i64>) -> tensor<2xf32>"), "(C2)"),
    ("dynamic_slice size", func("%a: tensor<4x3xf32>, %i: tensor<i64>",
                                "  %0 = stablehlo.dynamic_slice %a, %i, %i, sizes = [2, 4] : "
                                "(tensor<4x3xf32>, tensor<i64>, tensor<i64>) -> tensor<2x4xf32>"),
     "(C4) has slice size 4 greater than dimension size 3"),
    ("dynamic_slice index types", func(
        "%a: tensor<4x3xf32>, %i: tensor<i64>, %j: tensor<i32>",
        "  %0 = stablehlo.dynamic_slice %a, %i, %j, sizes = [2, 3] : (tensor<4x3xf32>, "
        "tensor<i64>, tensor<i32>) -> tensor<2x3xf32>"), "(C3)"),
    ("dynamic_update_slice", func(
        "%a: tensor<4x3xf32>, %u: tensor<2x3xf32>, %i: tensor<i64>",
        "  %0 = stablehlo.dynamic_update_slice %a, %u, %i, %i : (tensor<4x3xf32>, "
        "tensor<2x3xf32>, tensor<i64>, tensor<i64>) -> tensor<4x3xf32>"), None),
    ("dynamic_update_slice update", func(
        "%a: tensor<4x3xf32>, %u: tensor<2x4xf32>, %i: tensor<i64>",
        "  %0 = stablehlo.dynamic_update_slice %a, %u, %i, %i : (tensor<4x3xf32>, "
        "tensor<2x4xf32>, tensor<i64>, tensor<i64>) -> tensor<4x3xf32>"),
     "(C6) expects size at dimension 1 of update to be in range [0, 3]. Got: 4."),
]


@pytest.mark.parametrize("name,text,expected", CASES, ids=[c[0] for c in CASES])
def test_indexing_constraints(name, text, expected):
    assert_verdict(text, expected)
