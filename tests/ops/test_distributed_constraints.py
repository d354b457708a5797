"""Constraints of the collective and communication ops (spec "Ops")."""

import pytest

from constraint_util import assert_verdict, func


def all_gather(groups="[[0, 1, 2, 3]]", n_groups="1x4", result="tensor<8x8xf32>", extra="") -> str:
    return func("%a: tensor<8x2xf32>",
                f'  %0 = "stablehlo.all_gather"(%a) {{all_gather_dim = 1 : i64, replica_groups = '
                f'dense<{groups}> : tensor<{n_groups}xi64>{extra}}} : (tensor<8x2xf32>) -> {result}')


def all_reduce(arg="tensor<f32>", result="tensor<8xf32>") -> str:
    return func("%a: tensor<8xf32>",
                f'  %0 = "stablehlo.all_reduce"(%a) ({{\n'
                f'  ^bb0(%x: {arg}, %y: {arg}):\n'
                f'    %1 = stablehlo.add %x, %y : {arg}\n'
                f'    stablehlo.return %1 : {arg}\n'
                f'  }}) {{replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>}} : '
                f'(tensor<8xf32>) -> {result}')


CASES = [
    ("all_gather", all_gather(), None),
    ("all_gather repeated id", all_gather("[[0, 1, 1, 3]]"), "replica id #1 seen more than once"),
    ("all_gather missing id", all_gather("[[0, 1, 2, 4]]"), "replica id #3 not seen"),
    ("all_gather result", all_gather(result="tensor<8x7xf32>"),
     "(C6) result gather dimension has size 7, expected to be a multiple"),
    ("all_gather channel", all_gather(extra=", channel_handle = #stablehlo.channel_handle<handle ="
                                            " -1, type = 0>, use_global_device_ids"),
     "(C5) channel_id cannot be negative when useGlobalDeviceIds is set"),
    ("all_reduce", all_reduce(), None),
    ("all_reduce promotable", all_reduce("tensor<f64>", "tensor<8xf64>"), None),
    ("all_reduce result", all_reduce(result="tensor<8xf64>"), "(C6, C7) inferred type(s)"),
    ("all_reduce computation", all_reduce("tensor<i32>", "tensor<8xi32>"), "(C5)"),
    ("all_to_all", func("%a: tensor<4x16xf32>",
                        '  %0 = "stablehlo.all_to_all"(%a) {split_dimension = 1 : i64, '
                        'concat_dimension = 0 : i64, split_count = 4 : i64, replica_groups = '
                        'dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<4x16xf32>) -> '
                        'tensor<16x4xf32>'), None),
    ("all_to_all group size", func("%a: tensor<4x16xf32>",
                                   '  %0 = "stablehlo.all_to_all"(%a) {split_dimension = 1 : i64,'
                                   ' concat_dimension = 0 : i64, split_count = 4 : i64, '
                                   'replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : '
                                   '(tensor<4x16xf32>) -> tensor<16x4xf32>'),
     "(C8) group size of replica_groups must be 4"),
    ("reduce_scatter", func("%a: tensor<4x16xf32>",
                            '  %0 = "stablehlo.reduce_scatter"(%a) ({\n'
                            '  ^bb0(%x: tensor<f32>, %y: tensor<f32>):\n'
                            '    %1 = stablehlo.add %x, %y : tensor<f32>\n'
                            '    stablehlo.return %1 : tensor<f32>\n'
                            '  }) {scatter_dimension = 1 : i64, replica_groups = dense<[[0, 1]]> '
                            ': tensor<1x2xi64>} : (tensor<4x16xf32>) -> tensor<4x5xf32>'),
     "operand scatter dimension has size 16, expected to be a multiple of result scatter "
     "dimension size 5"),
    ("collective_permute", func("%a: tensor<4xf32>",
                                '  %0 = "stablehlo.collective_permute"(%a) {source_target_pairs '
                                '= dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} : (tensor<4xf32>) '
                                '-> tensor<4xf32>'), None),
    ("collective_permute targets", func("%a: tensor<4xf32>",
                                        '  %0 = "stablehlo.collective_permute"(%a) '
                                        '{source_target_pairs = dense<[[0, 1], [2, 1]]> : '
                                        'tensor<2x2xi64>} : (tensor<4xf32>) -> tensor<4xf32>'),
     "(C3) duplicate targets not allowed"),
    ("collective_broadcast", func("%a: tensor<4xf32>",
                                  '  %0 = "stablehlo.collective_broadcast"(%a) {replica_groups = '
                                  'dense<[[2, 1]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> '
                                  'tensor<4xf32>'), None),
    ("send host", func("%a: tensor<4xf32>, %t: !stablehlo.token",
                       '  %0 = "stablehlo.send"(%a, %t) {channel_handle = '
                       '#stablehlo.channel_handle<handle = 1, type = 1>, is_host_transfer = true}'
                       ' : (tensor<4xf32>, !stablehlo.token) -> !stablehlo.token'),
     "(C1) channel_type should be DEVICE_TO_HOST when is_host_transfer is true"),
    ("recv", func("%t: !stablehlo.token",
                  '  %0:2 = "stablehlo.recv"(%t) {channel_handle = #stablehlo.channel_handle<'
                  'handle = 1, type = 1>} : (!stablehlo.token) -> (tensor<4xf32>, '
                  '!stablehlo.token)'), None),
    ("recv token last", func("%t: !stablehlo.token",
                             '  %0:2 = "stablehlo.recv"(%t) {channel_handle = '
                             '#stablehlo.channel_handle<handle = 1, type = 1>} : '
                             '(!stablehlo.token) -> (!stablehlo.token, tensor<4xf32>)'), "(C3)"),
    ("infeed", func("%t: !stablehlo.token",
                    '  %0:2 = "stablehlo.infeed"(%t) : (!stablehlo.token) -> (tensor<4xf32>, '
                    '!stablehlo.token)'), None),
    ("infeed results", func("%t: !stablehlo.token",
                            '  "stablehlo.infeed"(%t) : (!stablehlo.token) -> ()'),
     "(C2) result is expected to be at least of size 1, but got 0"),
    ("replica_id", func("", "  %0 = stablehlo.replica_id : tensor<ui32>"), None),
    ("partition_id type", func("", '  %0 = "stablehlo.partition_id"() : () -> tensor<i32>'),
     "result #0 must be"),
]


@pytest.mark.parametrize("name,text,expected", CASES, ids=[c[0] for c in CASES])
def test_distributed_constraints(name, text, expected):
    assert_verdict(text, expected)
