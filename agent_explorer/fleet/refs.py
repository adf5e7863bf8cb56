"""How a store and a machine travel to a worker process: the store as its URL, the machine as `module:attr`.

The caller holds real objects; a worker gets only these references and reopens/reimports them once per
process (cached). The machine is always the one the caller gave: its reference is found from the object,
never read from a log, and a worker refuses a machine whose id or version differs from the caller's.
"""

from __future__ import annotations

import atexit
import multiprocessing.util
import os
import threading
from dataclasses import dataclass, field
from typing import Any

from ..errors import AgentError
from ..eventlog.machine_ref import find_machine_ref, import_machine
from ..stores.base import EventLogStore
from ..stores.portal import Portal
from ..stores.urls import open_store, redact_url, require_sqlite_file, store_url, without_mode

__all__ = ["MachineSpec", "StoreSpec", "describe_store", "machine_spec", "store_spec", "worker_loop"]


@dataclass(frozen=True)
class StoreSpec:
    """A store as a task receives it: a URL to reopen, or (same process only) the store itself."""

    url: str | None
    store: EventLogStore | None = field(default=None, compare=False)

    def portable(self) -> StoreSpec:
        """The spec without the object, for another process; an in-memory store cannot go there."""
        if self.url is None:
            raise AgentError(
                "an in-memory store cannot be reopened in another process: verify it in-process (executor=None "
                "or a ThreadPoolExecutor), or copy its threads into a SQLite or PostgreSQL store",
                code="invalid-argument",
            )
        return StoreSpec(self.url)

    def describe(self) -> str:
        return redact_url(self.url) if self.url else repr(self.store)

    def open(self) -> EventLogStore:
        """The store in this process: the caller's own object, else one store per URL per process (used on
        `worker_loop()` only)."""
        if self.store is not None:
            return self.store
        assert self.url is not None
        with _LOCK:
            store = _STORES.get(self.url)
            if store is None:
                store = _STORES[self.url] = _open_for_reading(self.url, loop_bound=True)
        return store


@dataclass(frozen=True)
class MachineSpec:
    """A machine as a task receives it: `module:attr` plus the id and version the caller holds."""

    ref: str | None
    machine_id: str
    version: str
    machine: Any = field(default=None, compare=False)

    def portable(self) -> MachineSpec:
        """The spec without the object, for another process; say so when there is no reference to import. A spec
        of a machine object finds its reference only here: in this process the object is used, and finding it walks
        every loaded module (40-140 ms in a notebook)."""
        ref = self.ref
        if ref is None and self.machine is not None:
            ref = find_machine_ref(self.machine)
        if ref is None:
            raise AgentError(
                f"machine {self.machine_id!r} (version {self.version}) has no importable reference, so worker "
                "processes cannot import it: define it as a top-level name of an importable module (not "
                "__main__ or a notebook cell) and pass that, or pass its 'package.module:attr' string, or "
                "verify in-process (executor=None or a ThreadPoolExecutor)",
                code="machine-not-importable",
                machine_id=self.machine_id,
            )
        return MachineSpec(ref, self.machine_id, self.version)

    def load(self) -> Any:
        """The machine in this process; a worker whose code derives another id or version refuses to run."""
        if self.machine is not None:
            return self.machine
        assert self.ref is not None
        with _LOCK:
            machine = _MACHINES.get(self.ref)
            if machine is None:
                machine = _MACHINES[self.ref] = import_machine(self.ref)
        if (machine.id, str(machine.version)) != (self.machine_id, self.version):
            raise AgentError(
                f"this worker imported {self.ref!r} as machine {machine.id!r} version {machine.version}, but the "
                f"caller's machine is {self.machine_id!r} version {self.version}: the workers run other code "
                "(install the same version of the machine's package on every worker)",
                code="machine-mismatch",
                ref=self.ref,
            )
        return machine


_LOCK = threading.Lock()
_STORES: dict[str, EventLogStore] = {}
_MACHINES: dict[str, Any] = {}
_PORTAL: list[Portal] = []


def worker_loop() -> Portal:
    """This process's one event-loop thread for tasks: the stores it opened live on it, so a PostgreSQL
    read is one await on the pool's own loop instead of a hop to the store's private loop thread."""
    with _LOCK:
        if not _PORTAL:
            _PORTAL.append(Portal(name="agent-explorer-fleet-worker"))
        return _PORTAL[0]


def close_worker_stores() -> None:
    """Close the stores this process opened for tasks (a pool's connections end cleanly, not mid-loop)."""
    with _LOCK:
        stores = list(_STORES.values())
        portal = _PORTAL.pop() if _PORTAL else None
        _STORES.clear()
    if portal is None:
        return
    for store in stores:
        try:
            portal.run(store.aclose())
        except Exception:  # noqa: BLE001 - exiting anyway; one failed close must not keep the others open
            pass
    portal.close()


def _forget_in_child() -> None:
    # A forked child has the caches but not the loop thread behind them: it starts afresh.
    _STORES.clear()
    _PORTAL.clear()


# Worker processes of a pool (and Dask's) leave through multiprocessing's exit hook, which skips atexit.
atexit.register(close_worker_stores)
multiprocessing.util.Finalize(None, close_worker_stores, exitpriority=10)
os.register_at_fork(after_in_child=_forget_in_child)


def _open_for_reading(url: str, *, loop_bound: bool) -> EventLogStore:
    # A fleet only reads: SQLite opens read-only (no WAL checkpoints, no schema); a PostgreSQL pool of one
    # or two connections per process is plenty for one task at a time (the next thread is read ahead).
    # `loop_bound`: every call comes from one event loop, so the pool can live on it (no thread hop).
    if url.lower().startswith("sqlite:"):
        return open_store(url, read_only=True)
    if url.lower().startswith(("postgresql:", "postgres:")):
        return open_store(url, min_size=1, max_size=2, dedicated_loop=not loop_bound)
    return open_store(url)


def store_spec(store: EventLogStore | str, *, loop_bound: bool) -> tuple[StoreSpec, bool]:
    """The spec of `store` (a store or a store URL), and whether the caller must close what it opens.

    `loop_bound`: the caller's copy opened from a URL is used from one event loop only."""
    if isinstance(store, str):
        require_sqlite_file(store)
        if store.lower().startswith("memory:"):
            raise AgentError("memory: names a fresh, empty store; pass the store object itself", code="invalid-argument")
        return StoreSpec(store, _open_for_reading(store, loop_bound=loop_bound)), True
    if not isinstance(store, EventLogStore):
        raise AgentError(
            f"store must be an EventLogStore or a store URL, got {type(store).__name__}", code="invalid-argument"
        )
    return StoreSpec(store_url(store), store), False


def describe_store(store: EventLogStore | str) -> str:
    """How reports name a store: its URL without a password (nor the read-only mode a reader opened it in)."""
    url = store if isinstance(store, str) else store_url(store)
    if url is None:
        return repr(store)
    return redact_url(without_mode(url))


def machine_spec(machine: Any) -> MachineSpec:
    """The spec tasks get; `machine` is a machine or its 'package.module:attr' string."""
    if isinstance(machine, MachineSpec):
        return machine
    if isinstance(machine, str):
        ref: str | None = machine
        machine = import_machine(machine)
    elif hasattr(machine, "get_persisted_snapshot"):
        ref = None  # found when another process needs it (`portable`)
    else:
        raise AgentError(
            f"machine must be a machine or a 'package.module:attr' string, got {type(machine).__name__}",
            code="invalid-machine",
        )
    return MachineSpec(ref, machine.id, str(machine.version), machine)
