"""The Shardy (`sdy`) dialect and the GSPMD sharding annotations (docs/sharding.md).

* :mod:`.attrs`: `#sdy.*` attributes as values, their parser (registered here as the `sdy`
  dialect-attribute hook of the attribute parser) and their text;
* :mod:`.ops`: the sdy ops that carry shardings (identities on values), `sdy.mesh`,
  `sdy.return`, `sdy.constant`, `sdy.named_computation`;
* :mod:`.manual`: `sdy.manual_computation`, run SPMD on the process grid;
* :mod:`.gspmd`: `mhlo.sharding` strings and the `@Sharding`, `@SPMDFullToShardShape`,
  `@SPMDShardToFullShape` custom calls;
* :mod:`.plan`: how a sharded program runs (once, or one process per device).
"""

from ...syntax.parse_attributes import DIALECT_ATTRIBUTE_HOOKS
from . import attrs, gspmd, manual, ops, plan  # noqa: F401

DIALECT_ATTRIBUTE_HOOKS["sdy"] = attrs.parse_sdy_attribute
