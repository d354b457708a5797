"""Distribution ops (spec "Parallel execution", "Collective ops"): one module per kind.

* :mod:`.grid`: the interfaces through which the ops reach the other processes
  (``ctx.process.grid``) and start grids (``ctx.process.engine``), implemented by the
  interpreter's engines;
* :mod:`.groups`: process groups and the attributes that choose them (channel ids);
* :mod:`.process`: replica_id, partition_id, after_all, create_token;
* :mod:`.collectives`: all_gather, all_reduce, reduce_scatter, all_to_all, collective_permute,
  collective_broadcast, collective_reduce;
* :mod:`.channels`: send, recv; :mod:`.feeds`: infeed, outfeed;
* :mod:`.run_parallel`: the test op `interpreter.run_parallel`.
"""

from .._lazy import package_getattr

# The modules are imported when first used (the registry imports an op's module when the op is
# first looked up: shlo/ops/_index.py).
__getattr__ = package_getattr(__name__, {})
