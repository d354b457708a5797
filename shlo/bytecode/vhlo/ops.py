"""The VHLO ops of every version (upstream `VhloOps.td`): for each op, the first and last
version that has it, its operands (`*` marks a variadic group), its attributes (all inherent:
stored as properties from 0.15.0), its regions and its results.

``OPS`` maps the op name (`vhlo.add_v1`) to an :class:`OpInfo`; ``CURRENT_OP`` maps a StableHLO
(or func) op name to the VHLO op of the current version that represents it, and ``STABLEHLO_OP``
the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass

from .version import CURRENT, Version, parse_version

__all__ = ["OpInfo", "OPS", "CURRENT_OP", "STABLEHLO_OP", "op_info", "CONSTRAINED"]


@dataclass(frozen=True)
class OpInfo:
    name: str                  # `vhlo.add_v1`
    min_version: Version
    max_version: Version       # inclusive; CURRENT for ops of the current opset
    operands: tuple[str, ...]
    attrs: tuple[str, ...]     # in declaration order
    regions: tuple[str, ...]
    results: tuple[str, ...]

    @property
    def sorted_attrs(self) -> tuple[str, ...]:
        """The attributes in the order the op's properties are written (by name)."""
        return tuple(sorted(self.attrs))

    @property
    def variadic_regions(self) -> bool:
        return any(r.startswith("*") for r in self.regions)

    def legal_at(self, v: Version) -> bool:
        return self.min_version <= v <= self.max_version


# name min max | operands | attributes | regions | results   (`-`: the current version)
_TABLE = [
    "abs_v1 0.9.0 - | operand |  |  | result",
    "add_v1 0.9.0 - | lhs rhs |  |  | result",
    "after_all_v1 0.9.0 - | *inputs |  |  | result",
    "all_gather_v1 0.9.0 1.4.0 | operand | all_gather_dim replica_groups channel_id use_global_device_ids |  | result",
    "all_gather_v2 1.5.0 - | *operands | all_gather_dim replica_groups channel_id use_global_device_ids |  | *results",
    "all_reduce_v1 0.9.0 1.4.0 | operand | replica_groups channel_id use_global_device_ids | computation | result",
    "all_reduce_v2 1.5.0 - | *operands | replica_groups channel_id use_global_device_ids | computation | *results",
    "all_to_all_v1 0.9.0 1.4.0 | operand | split_dimension concat_dimension split_count replica_groups channel_id |  | result",
    "all_to_all_v2 1.5.0 - | *operands | split_dimension concat_dimension split_count replica_groups channel_id |  | *results",
    "and_v1 0.9.0 - | lhs rhs |  |  | result",
    "async_start_v1 1.15.0 - | *operands |  | collective | result",
    "async_done_v1 1.15.0 - | operand |  |  | result",
    "atan2_v1 0.9.0 - | lhs rhs |  |  | result",
    "batch_norm_grad_v1 0.9.0 - | operand scale mean variance grad_output | epsilon feature_index |  | grad_operand grad_scale grad_offset",
    "batch_norm_inference_v1 0.9.0 - | operand scale offset mean variance | epsilon feature_index |  | result",
    "batch_norm_training_v1 0.9.0 - | operand scale offset | epsilon feature_index |  | output batch_mean batch_var",
    "bitcast_convert_v1 0.9.0 - | operand |  |  | result",
    "broadcast_in_dim_v1 0.9.0 - | operand | broadcast_dimensions |  | result",
    "broadcast_v1 0.9.0 - | operand | broadcast_sizes |  | result",
    "call_v1 0.9.0 - | *operands | callee |  | *results",
    "case_v1 0.9.0 - | index |  | *branches | *results",
    "cbrt_v1 0.9.0 1.9.0 | operand |  |  | result",
    "cbrt_v2 1.10.0 - | operand | result_accuracy |  | result",
    "ceil_v1 0.9.0 - | operand |  |  | result",
    "cholesky_v1 0.9.0 - | a | lower |  | result",
    "clamp_v1 0.9.0 - | min operand max |  |  | result",
    "count_leading_zeros_v1 0.9.0 - | operand |  |  | result",
    "collective_broadcast_v1 0.16.0 1.19.0 | operand | replica_groups channel_id |  | result",
    "collective_broadcast_v2 1.20.0 - | *operands | replica_groups channel_id has_dynamic_root |  | *results",
    "collective_reduce_v1 1.19.0 - | *operands | replica_groups channel_id use_global_device_ids has_dynamic_root | computation | *results",
    "collective_permute_v1 0.9.0 - | operand | source_target_pairs channel_id |  | result",
    "compare_v1 0.9.0 - | lhs rhs | comparison_direction compare_type |  | result",
    "complex_v1 0.9.0 - | lhs rhs |  |  | result",
    "composite_v1 0.19.0 1.13.0 | *inputs | name composite_attributes decomposition version |  | *results",
    "composite_v2 1.14.0 - | *inputs | name composite_attributes decomposition version | *composite_regions | *results",
    "concatenate_v1 0.9.0 - | *inputs | dimension |  | result",
    "constant_v1 0.9.0 - |  | value |  | output",
    "convert_v1 0.9.0 - | operand |  |  | result",
    "convolution_v1 0.9.0 - | lhs rhs | window_strides padding lhs_dilation rhs_dilation window_reversal input_batch_dimension input_feature_dimension input_spatial_dimensions kernel_input_feature_dimension kernel_output_feature_dimension kernel_spatial_dimensions output_batch_dimension output_feature_dimension output_spatial_dimensions feature_group_count batch_group_count precision_config |  | result",
    "cosine_v1 0.9.0 1.9.0 | operand |  |  | result",
    "cosine_v2 1.10.0 - | operand | result_accuracy |  | result",
    "create_token_v1 0.9.0 - |  |  |  | output",
    "cross-replica-sum_v1 0.9.0 - | operand | replica_groups |  | result",
    "custom_call_v1 0.9.0 1.17.0 | *inputs | call_target_name has_side_effect backend_config api_version called_computations operand_layouts result_layouts output_operand_aliases |  | *results",
    "custom_call_v2 1.18.0 - | *inputs | call_target_name has_side_effect backend_config api_version called_computations operand_layouts result_layouts output_operand_aliases result_tilings |  | *results",
    "divide_v1 0.9.0 - | lhs rhs |  |  | result",
    "dot_general_v1 0.9.0 1.5.0 | lhs rhs | lhs_batching_dimensions rhs_batching_dimensions lhs_contracting_dimensions rhs_contracting_dimensions precision_config |  | result",
    "dot_general_v2 1.6.0 - | lhs rhs | lhs_batching_dimensions rhs_batching_dimensions lhs_contracting_dimensions rhs_contracting_dimensions precision_config lhs_precision_type rhs_precision_type accumulation_type lhs_component_count rhs_component_count num_primitive_operations allow_imprecise_accumulation |  | result",
    "dot_v1 0.9.0 - | lhs rhs | precision_config |  | result",
    "dynamic_broadcast_in_dim_v1 0.9.0 - | operand output_dimensions | broadcast_dimensions known_expanding_dimensions known_nonexpanding_dimensions |  | result",
    "dynamic_conv_v1 0.9.0 0.19.0 | lhs rhs d_padding | window_strides padding lhs_dilation rhs_dilation window_reversal input_batch_dimension input_feature_dimension input_spatial_dimensions kernel_input_feature_dimension kernel_output_feature_dimension kernel_spatial_dimensions output_batch_dimension output_feature_dimension output_spatial_dimensions feature_group_count batch_group_count precision_config |  | result",
    "dynamic_conv_v2 0.20.0 - | lhs rhs padding | window_strides lhs_dilation rhs_dilation window_reversal input_batch_dimension input_feature_dimension input_spatial_dimensions kernel_input_feature_dimension kernel_output_feature_dimension kernel_spatial_dimensions output_batch_dimension output_feature_dimension output_spatial_dimensions feature_group_count batch_group_count precision_config |  | result",
    "dynamic_gather_v1 0.9.0 1.0.0 | operand start_indices slice_sizes | offset_dims collapsed_slice_dims start_index_map index_vector_dim indices_are_sorted |  | result",
    "dynamic_gather_v2 1.1.0 - | operand start_indices slice_sizes | offset_dims collapsed_slice_dims operand_batching_dims start_indices_batching_dims start_index_map index_vector_dim indices_are_sorted |  | result",
    "dynamic_iota_v1 0.9.0 - | output_shape | iota_dimension |  | result",
    "dynamic_pad_v1 0.9.0 - | operand padding_value edge_padding_low edge_padding_high interior_padding |  |  | result",
    "dynamic_reshape_v1 0.9.0 - | operand output_shape |  |  | result",
    "dynamic_slice_v1 0.9.0 - | operand *start_indices | slice_sizes |  | result",
    "dynamic_update_slice_v1 0.9.0 - | operand update *start_indices |  |  | result",
    "einsum_v1 0.9.0 - | lhs rhs | einsum_config |  | result",
    "exponential_minus_one_v1 0.9.0 1.9.0 | operand |  |  | result",
    "exponential_minus_one_v2 1.10.0 - | operand | result_accuracy |  | result",
    "exponential_v1 0.9.0 1.8.0 | operand |  |  | result",
    "exponential_v2 1.9.0 - | operand | result_accuracy |  | result",
    "fft_v1 0.9.0 - | operand | fft_type fft_length |  | result",
    "floor_v1 0.9.0 - | operand |  |  | result",
    "func_v1 0.9.0 - |  | sym_name function_type sym_visibility arg_attrs res_attrs | body | ",
    "gather_v1 0.9.0 1.0.0 | operand start_indices | offset_dims collapsed_slice_dims start_index_map index_vector_dim slice_sizes indices_are_sorted |  | result",
    "gather_v2 1.1.0 - | operand start_indices | offset_dims collapsed_slice_dims operand_batching_dims start_indices_batching_dims start_index_map index_vector_dim slice_sizes indices_are_sorted |  | result",
    "get_dimension_size_v1 0.9.0 - | operand | dimension |  | result",
    "get_tuple_element_v1 0.9.0 - | operand | index |  | result",
    "if_v1 0.9.0 - | pred |  | true_branch false_branch | *results",
    "imag_v1 0.9.0 - | operand |  |  | result",
    "infeed_v1 0.9.0 - | token | infeed_config layout |  | *results",
    "iota_v1 0.9.0 - |  | iota_dimension |  | output",
    "is_finite_v1 0.9.0 - | x |  |  | y",
    "log_plus_one_v1 0.9.0 1.9.0 | operand |  |  | result",
    "log_plus_one_v2 1.10.0 - | operand | result_accuracy |  | result",
    "logistic_v1 0.9.0 1.9.0 | operand |  |  | result",
    "logistic_v2 1.10.0 - | operand | result_accuracy |  | result",
    "log_v1 0.9.0 1.9.0 | operand |  |  | result",
    "log_v2 1.10.0 - | operand | result_accuracy |  | result",
    "map_v1 0.9.0 - | *inputs | dimensions | computation | result",
    "maximum_v1 0.9.0 - | lhs rhs |  |  | result",
    "minimum_v1 0.9.0 - | lhs rhs |  |  | result",
    "multiply_v1 0.9.0 - | lhs rhs |  |  | result",
    "negate_v1 0.9.0 - | operand |  |  | result",
    "not_v1 0.9.0 - | operand |  |  | result",
    "optimization_barrier_v1 0.9.0 - | *operand |  |  | *result",
    "or_v1 0.9.0 - | lhs rhs |  |  | result",
    "outfeed_v1 0.9.0 - | *inputs token | outfeed_config |  | result",
    "pad_v1 0.9.0 - | operand padding_value | edge_padding_low edge_padding_high interior_padding |  | result",
    "partition_id_v1 0.9.0 - |  |  |  | result",
    "popcnt_v1 0.9.0 - | operand |  |  | result",
    "power_v1 0.9.0 - | lhs rhs |  |  | result",
    "real_dynamic_slice_v1 0.9.0 - | operand start_indices limit_indices strides |  |  | result",
    "real_v1 0.9.0 - | operand |  |  | result",
    "recv_v1 0.9.0 1.11.0 | token | channel_id channel_type is_host_transfer |  | *results",
    "recv_v2 1.12.0 - | token | channel_id channel_type is_host_transfer source_target_pairs |  | *results",
    "reduce_v1 0.9.0 - | *inputs *init_values | dimensions | body | *results",
    "reduce_precision_v1 0.9.0 - | operand | exponent_bits mantissa_bits |  | output",
    "reduce_scatter_v1 0.9.0 - | operand | scatter_dimension replica_groups channel_id use_global_device_ids | computation | result",
    "reduce_window_v1 0.9.0 - | *inputs *init_values | window_dimensions window_strides base_dilations window_dilations padding | body | *results",
    "remainder_v1 0.9.0 - | lhs rhs |  |  | result",
    "replica_id_v1 0.9.0 - |  |  |  | result",
    "reshape_v1 0.9.0 - | operand |  |  | result",
    "return_v1 0.9.0 - | *results |  |  | ",
    "reverse_v1 0.9.0 - | operand | dimensions |  | result",
    "rng_bit_generator_v1 0.9.0 - | initial_state | rng_algorithm |  | output_state output",
    "rng_v1 0.9.0 - | a b shape | rng_distribution |  | result",
    "round_nearest_even_v1 0.9.0 - | operand |  |  | result",
    "round_nearest_afz_v1 0.9.0 - | operand |  |  | result",
    "rsqrt_v1 0.9.0 1.9.0 | operand |  |  | result",
    "rsqrt_v2 1.10.0 - | operand | result_accuracy |  | result",
    "scatter_v1 0.9.0 1.0.0 | *inputs scatter_indices *updates | update_window_dims inserted_window_dims scatter_dims_to_operand_dims index_vector_dim indices_are_sorted unique_indices | update_computation | *results",
    "scatter_v2 1.1.0 - | *inputs scatter_indices *updates | update_window_dims inserted_window_dims input_batching_dims scatter_indices_batching_dims scatter_dims_to_operand_dims index_vector_dim indices_are_sorted unique_indices | update_computation | *results",
    "select_and_scatter_v1 0.9.0 - | operand source init_value | window_dimensions window_strides padding | select scatter | result",
    "select_v1 0.9.0 - | pred on_true on_false |  |  | result",
    "send_v1 0.9.0 1.11.0 | *inputs token | channel_id channel_type is_host_transfer |  | result",
    "send_v2 1.12.0 - | *inputs token | channel_id channel_type is_host_transfer source_target_pairs |  | result",
    "set_dimension_size_v1 0.9.0 - | operand size | dimension |  | result",
    "shift_left_v1 0.9.0 - | lhs rhs |  |  | result",
    "shift_right_arithmetic_v1 0.9.0 - | lhs rhs |  |  | result",
    "shift_right_logical_v1 0.9.0 - | lhs rhs |  |  | result",
    "sign_v1 0.9.0 - | operand |  |  | result",
    "sine_v1 0.9.0 1.9.0 | operand |  |  | result",
    "sine_v2 1.10.0 - | operand | result_accuracy |  | result",
    "slice_v1 0.9.0 - | operand | start_indices limit_indices strides |  | result",
    "sort_v1 0.9.0 - | *inputs | dimension is_stable | comparator | *results",
    "sqrt_v1 0.9.0 1.9.0 | operand |  |  | result",
    "sqrt_v2 1.10.0 - | operand | result_accuracy |  | result",
    "subtract_v1 0.9.0 - | lhs rhs |  |  | result",
    "tan_v1 1.4.0 1.9.0 | operand |  |  | result",
    "tan_v2 1.10.0 - | operand | result_accuracy |  | result",
    "tanh_v1 0.9.0 1.9.0 | operand |  |  | result",
    "tanh_v2 1.10.0 - | operand | result_accuracy |  | result",
    "torch_index_select_v1 0.9.0 - | operand index | dim batch_dims |  | result",
    "transpose_v1 0.9.0 - | operand | permutation |  | result",
    "triangular_solve_v1 0.9.0 - | a b | left_side lower unit_diagonal transpose_a |  | result",
    "tuple_v1 0.9.0 - | *val |  |  | result",
    "unary_einsum_v1 0.9.0 - | operand | einsum_config |  | result",
    "uniform_dequantize_v1 0.9.0 - | operand |  |  | result",
    "uniform_quantize_v1 0.9.0 - | operand |  |  | result",
    "while_v1 0.9.0 - | *operand |  | cond body | *results",
    "xor_v1 0.9.0 - | lhs rhs |  |  | result",
]


def _parse(row: str) -> OpInfo:
    head, operands, attrs, regions, results = (part.strip() for part in row.split("|"))
    name, lo, hi = head.split()
    lov = parse_version(lo)
    hiv = CURRENT if hi == "-" else parse_version(hi)
    assert lov is not None and hiv is not None
    return OpInfo("vhlo." + name, lov, hiv, tuple(operands.split()), tuple(attrs.split()),
                  tuple(regions.split()), tuple(results.split()))


OPS: dict[str, OpInfo] = {}
for _row in _TABLE:
    _info = _parse(_row)
    OPS[_info.name] = _info

# Ops whose legality at a target also depends on their operands (VersionedOpConstraint).
CONSTRAINED = frozenset({"vhlo.all_reduce_v1", "vhlo.reduce_v1", "vhlo.reduce_scatter_v1",
                         "vhlo.reduce_window_v1", "vhlo.scatter_v1",
                         "vhlo.select_and_scatter_v1", "vhlo.custom_call_v1"})


def _stablehlo_name(vhlo_name: str) -> str:
    base = vhlo_name[len("vhlo."):].rsplit("_v", 1)[0]
    if base in ("func", "call"):
        return "func." + base
    return "stablehlo." + base


CURRENT_OP: dict[str, str] = {}
STABLEHLO_OP: dict[str, str] = {}
for _name, _info in OPS.items():
    if _info.max_version == CURRENT:
        _s = _stablehlo_name(_name)
        STABLEHLO_OP[_name] = _s
        CURRENT_OP[_s] = _name
CURRENT_OP["func.return"] = "vhlo.return_v1"


def op_info(name: str) -> OpInfo | None:
    return OPS.get(name)
