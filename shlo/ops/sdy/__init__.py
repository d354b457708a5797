"""The Shardy (`sdy`) dialect and the GSPMD sharding annotations (docs/sharding.md).

* :mod:`.attrs`: `#sdy.*` attributes as values, their parser (the `sdy` dialect-attribute hook
  of the attribute parser, registered there) and their text;
* :mod:`.ops`: the sdy ops that carry shardings (identities on values), `sdy.mesh`,
  `sdy.return`, `sdy.constant`, `sdy.named_computation`;
* :mod:`.manual`: `sdy.manual_computation`, run SPMD on the process grid;
* :mod:`.gspmd`: `mhlo.sharding` strings and the `@Sharding`, `@SPMDFullToShardShape`,
  `@SPMDShardToFullShape` custom calls;
* :mod:`.plan`: how a sharded program runs (once, or one process per device).
"""

from .._lazy import package_getattr

# The modules are imported when first used (the registry imports an op's module when the op is
# first looked up: shlo/ops/_index.py).
__getattr__ = package_getattr(__name__, {})
