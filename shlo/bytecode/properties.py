"""How registered ops of the builtin, func, StableHLO and CHLO dialects store their inherent
attributes in bytecode properties (version 5 and later): every inherent attribute in name
order, `?` marking one that is optional or has a default (written as an optional reference).

Derived from the ODS definitions (StableHLO `StablehloOps.td` / `ChloOps.td`, MLIR's func and
builtin ops). Ops that store nothing are absent. From bytecode version 6, ops with variadic
operand groups of different sizes (`chlo.scan`) append their segment sizes as a dense array.
"""

from __future__ import annotations

from typing import Any

from .encoding import Cursor

__all__ = ["LAYOUTS", "read_segment_sizes"]

_TABLE = {
    "builtin.module": "?sym_name ?sym_visibility",
    "chlo.broadcast_add": "?broadcast_dimensions",
    "chlo.broadcast_and": "?broadcast_dimensions",
    "chlo.broadcast_atan2": "?broadcast_dimensions",
    "chlo.broadcast_compare": "?broadcast_dimensions ?compare_type comparison_direction",
    "chlo.broadcast_complex": "?broadcast_dimensions",
    "chlo.broadcast_divide": "?broadcast_dimensions",
    "chlo.broadcast_maximum": "?broadcast_dimensions",
    "chlo.broadcast_minimum": "?broadcast_dimensions",
    "chlo.broadcast_multiply": "?broadcast_dimensions",
    "chlo.broadcast_next_after": "?broadcast_dimensions",
    "chlo.broadcast_or": "?broadcast_dimensions",
    "chlo.broadcast_polygamma": "?broadcast_dimensions",
    "chlo.broadcast_power": "?broadcast_dimensions",
    "chlo.broadcast_remainder": "?broadcast_dimensions",
    "chlo.broadcast_shift_left": "?broadcast_dimensions",
    "chlo.broadcast_shift_right_arithmetic": "?broadcast_dimensions",
    "chlo.broadcast_shift_right_logical": "?broadcast_dimensions",
    "chlo.broadcast_subtract": "?broadcast_dimensions",
    "chlo.broadcast_xor": "?broadcast_dimensions",
    "chlo.broadcast_zeta": "?broadcast_dimensions",
    "chlo.constant": "value",
    "chlo.constant_like": "value",
    "chlo.ragged_dot": "?precision_config ragged_dot_dimension_numbers",
    "chlo.scan": "dimension ?is_associative ?is_reverse ?scan_dim_size",
    "chlo.top_k": "k",
    "func.call": "?arg_attrs callee ?no_inline ?res_attrs",
    "func.call_indirect": "?arg_attrs ?res_attrs",
    "func.constant": "value",
    "func.func": "?arg_attrs function_type ?no_inline ?res_attrs sym_name ?sym_visibility",
    "stablehlo.all_gather": "all_gather_dim ?channel_handle replica_groups ?use_global_device_ids",
    "stablehlo.all_reduce": "?channel_handle replica_groups ?use_global_device_ids",
    "stablehlo.all_to_all": "?channel_handle concat_dimension replica_groups split_count split_dimension",
    "stablehlo.batch_norm_grad": "epsilon feature_index",
    "stablehlo.batch_norm_inference": "epsilon feature_index",
    "stablehlo.batch_norm_training": "epsilon feature_index",
    "stablehlo.broadcast": "broadcast_sizes",
    "stablehlo.broadcast_in_dim": "broadcast_dimensions",
    "stablehlo.cbrt": "?result_accuracy",
    "stablehlo.cholesky": "?lower",
    "stablehlo.collective_broadcast": "?channel_handle ?has_dynamic_root replica_groups",
    "stablehlo.collective_permute": "?channel_handle source_target_pairs",
    "stablehlo.collective_reduce": "?channel_handle ?has_dynamic_root replica_groups ?use_global_device_ids",
    "stablehlo.compare": "?compare_type comparison_direction",
    "stablehlo.composite": "?composite_attributes decomposition name ?version",
    "stablehlo.concatenate": "dimension",
    "stablehlo.constant": "value",
    "stablehlo.convolution": "batch_group_count dimension_numbers feature_group_count ?lhs_dilation ?padding ?precision_config ?rhs_dilation ?window_reversal ?window_strides",
    "stablehlo.cosine": "?result_accuracy",
    "stablehlo.cross-replica-sum": "replica_groups",
    "stablehlo.custom_call": "?api_version ?backend_config call_target_name ?called_computations ?has_side_effect ?operand_layouts ?output_operand_aliases ?result_layouts ?result_tilings",
    "stablehlo.dot": "?precision_config",
    "stablehlo.dot_general": "?algorithm dot_dimension_numbers ?precision_config",
    "stablehlo.dynamic_broadcast_in_dim": "broadcast_dimensions ?known_expanding_dimensions ?known_nonexpanding_dimensions",
    "stablehlo.dynamic_conv": "batch_group_count dimension_numbers feature_group_count ?lhs_dilation ?precision_config ?rhs_dilation ?window_reversal ?window_strides",
    "stablehlo.dynamic_gather": "dimension_numbers ?indices_are_sorted",
    "stablehlo.dynamic_iota": "iota_dimension",
    "stablehlo.dynamic_slice": "slice_sizes",
    "stablehlo.einsum": "einsum_config",
    "stablehlo.exponential": "?result_accuracy",
    "stablehlo.exponential_minus_one": "?result_accuracy",
    "stablehlo.fft": "fft_length fft_type",
    "stablehlo.gather": "dimension_numbers ?indices_are_sorted slice_sizes",
    "stablehlo.get_dimension_size": "dimension",
    "stablehlo.get_tuple_element": "index",
    "stablehlo.infeed": "?infeed_config ?layout",
    "stablehlo.iota": "iota_dimension",
    "stablehlo.log": "?result_accuracy",
    "stablehlo.log_plus_one": "?result_accuracy",
    "stablehlo.logistic": "?result_accuracy",
    "stablehlo.map": "dimensions",
    "stablehlo.outfeed": "?outfeed_config",
    "stablehlo.pad": "edge_padding_high edge_padding_low interior_padding",
    "stablehlo.recv": "channel_handle ?is_host_transfer ?source_target_pairs",
    "stablehlo.reduce": "dimensions",
    "stablehlo.reduce_precision": "exponent_bits mantissa_bits",
    "stablehlo.reduce_scatter": "?channel_handle replica_groups scatter_dimension ?use_global_device_ids",
    "stablehlo.reduce_window": "?base_dilations ?padding ?window_dilations window_dimensions ?window_strides",
    "stablehlo.reverse": "dimensions",
    "stablehlo.rng": "rng_distribution",
    "stablehlo.rng_bit_generator": "rng_algorithm",
    "stablehlo.rsqrt": "?result_accuracy",
    "stablehlo.scatter": "?indices_are_sorted scatter_dimension_numbers ?unique_indices",
    "stablehlo.select_and_scatter": "?padding ?window_dimensions ?window_strides",
    "stablehlo.send": "channel_handle ?is_host_transfer ?source_target_pairs",
    "stablehlo.set_dimension_size": "dimension",
    "stablehlo.sine": "?result_accuracy",
    "stablehlo.slice": "limit_indices start_indices strides",
    "stablehlo.sort": "?dimension ?is_stable",
    "stablehlo.sqrt": "?result_accuracy",
    "stablehlo.tan": "?result_accuracy",
    "stablehlo.tanh": "?result_accuracy",
    "stablehlo.torch_index_select": "batch_dims dim",
    "stablehlo.transpose": "permutation",
    "stablehlo.triangular_solve": "left_side lower transpose_a unit_diagonal",
    "stablehlo.unary_einsum": "einsum_config",
}

LAYOUTS: dict[str, tuple[tuple[str, bool], ...]] = {
    name: tuple((a.lstrip("?"), a.startswith("?")) for a in spec.split())
    for name, spec in _TABLE.items()
}


def read_segment_sizes(name: str, cur: Cursor, properties: dict[str, Any]) -> None:
    """`operandSegmentSizes` / `resultSegmentSizes` written natively (bytecode >= 6)."""
    from ..attributes import DenseArrayAttr
    from ..types import element_type

    i32 = element_type("i32")
    for key in ("operandSegmentSizes", "resultSegmentSizes"):
        if cur.at_end():
            return
        n = cur.count(f"{key} size")
        vals = tuple(cur.svarint(key) for _ in range(n))
        properties[key] = DenseArrayAttr(i32, vals)
    if not cur.at_end():
        raise cur.error(f"unread bytes at the end of the properties of '{name}'")
