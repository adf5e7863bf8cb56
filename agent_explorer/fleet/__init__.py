"""Fleets: every thread of a store, in batches, on any `concurrent.futures.Executor` (Dask's included).

`verify_store` replays each thread through one machine and returns a `FleetReport`; `map_batches` is the
machinery under it (batches of thread ids, the store sent as its URL, the machine as its `module:attr`,
results merged in thread order) for other per-thread tasks. Sits above the stores and the log; never
writes to a store and never imports Dask itself (the caller brings the executor).
"""

from __future__ import annotations

from .refs import MachineSpec, StoreSpec
from .report import FleetDivergence, FleetError, FleetReport, ThreadOutcome
from .runner import BatchContext, FleetJob, ThreadRead, map_batches, read_threads, run_batch, without_cyclic_gc
from .verify import verify_batch, verify_store, verify_thread

__all__ = [
    "BatchContext",
    "FleetDivergence",
    "FleetError",
    "FleetJob",
    "FleetReport",
    "MachineSpec",
    "StoreSpec",
    "ThreadOutcome",
    "ThreadRead",
    "map_batches",
    "read_threads",
    "run_batch",
    "verify_batch",
    "verify_store",
    "verify_thread",
    "without_cyclic_gc",
]
