"""Version bridge (docs/semantics/replay.md "Version bridge"): carry a run across a machine version change.

Job: from an old log plus the snapshot it ended in, run the machine-owned `migrate` and start a
new, self-contained segment whose `@agent.init` entry carries the migrated snapshot and
`metadata.migratedFrom`. The old log stays history under its old version: this module never
edits or replays old entries through the new machine, and never executes an action.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from ..canonical.jcs import state_hash
from ..errors import AgentError, AgentMachineVersionMismatchError, AgentSnapshotDivergedError
from .entries import init_entry, recorded_state_hash
from .fold import require_init_entry, strip_agent_meta

__all__ = ["bridge_version", "segment_version"]


def segment_version(entries: Sequence[Mapping[str, Any]]) -> tuple[str | None, str | None]:
    """(machineId, machineVersion) the segment was recorded with: its last entry's stamp."""
    if not entries:
        return None, None
    last = entries[-1]
    return last.get("machineId"), last.get("machineVersion")


def bridge_version(
    machine: Any,
    old_entries: Sequence[Mapping[str, Any]],
    old_snapshot: Mapping[str, Any] | None,
    *,
    log_id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    now: Callable[[], datetime] | None = None,
    id: str | None = None,
) -> list[dict[str, Any]]:
    """A new segment for `machine` continuing `old_entries`, starting from the migrated snapshot.

    `now` and `id` inject the init entry's clock and id (a bridged segment regenerates byte for byte).

    - The old snapshot must be the state the old log ended in: if the old tail entry carries a
      stateHash it must equal the snapshot's (else `AgentSnapshotDivergedError`), and an
      `agentMeta.logIndex` on it must equal the old log's length.
    - `machine.migrate(snapshot, from_version)` runs when the versions differ (a machine without
      `migrate` takes the snapshot as is); the result must restore on `machine`.
    - The returned segment is `[init_entry]`: its event carries the migrated persisted snapshot,
      `metadata.migratedFrom` is `{machineId, version, logIndex}` plus `logId` when known.
    - Old events without a snapshot raise `AgentMachineVersionMismatchError` when they were
      recorded by another version: there is nothing to migrate from. (Same version and no
      snapshot: nothing to bridge, the old log is returned as a new list.)
    """
    require_init_entry(old_entries[0] if old_entries else None)
    from_id, from_version = segment_version(old_entries)
    same_version = from_id == machine.id and from_version == machine.version
    if old_snapshot is None:
        if same_version:
            return [dict(entry) for entry in old_entries]
        raise AgentMachineVersionMismatchError(
            f"The log was recorded by machine {from_id!r} version {from_version!r}; this machine is "
            f"{machine.id!r} version {machine.version!r}, and no snapshot was given to migrate. Old "
            "events cannot be replayed by a new version: pass the snapshot the old log ended in "
            "(bridge_version(machine, old_entries, old_snapshot)), or replay with the old machine.",
            machine_id=machine.id,
            machine_version=machine.version,
            entry_machine_id=from_id,
            entry_machine_version=from_version,
        )
    meta = old_snapshot.get("agentMeta") if isinstance(old_snapshot, Mapping) else None
    if isinstance(meta, Mapping):
        from_version = meta.get("version", from_version)
        log_id = log_id if log_id is not None else meta.get("logId")
        if meta.get("logIndex") not in (None, len(old_entries)):
            raise AgentSnapshotDivergedError(
                f"The old snapshot caches index {meta.get('logIndex')} but the old log has "
                f"{len(old_entries)} entries: bridge from the snapshot of the log's end.",
                log_id=log_id,
                log_index=meta.get("logIndex"),
            )
    old_persisted = strip_agent_meta(old_snapshot)
    tail_hash = recorded_state_hash(old_entries[-1])
    old_hash = None if tail_hash is None else state_hash(old_persisted)
    if old_hash != tail_hash:
        raise AgentSnapshotDivergedError(
            f"The old snapshot hashes to {old_hash}, but the old log's last entry "
            f"(index {len(old_entries) - 1}) recorded {tail_hash}: it is not the state the old log "
            "ended in, so migrating it would break the lineage.",
            log_id=log_id,
            expected_hash=tail_hash,
            actual_hash=old_hash,
        )
    migrated: Any = copy.deepcopy(old_persisted)
    migrate = getattr(machine, "migrate", None)
    if migrate is not None and from_version != machine.version:
        try:
            migrated = migrate(migrated, from_version)
        except Exception as error:
            raise AgentError(
                f"machine.migrate(snapshot, {from_version!r}) raised {type(error).__name__}: {error}. "
                f"Fix the migration of machine {machine.id!r} version {machine.version!r}.",
                code="migration-failed",
            ) from error
    if not isinstance(migrated, Mapping):
        raise AgentError(
            f"machine.migrate returned {type(migrated).__name__}, not a persisted snapshot object.",
            code="migration-failed",
        )
    try:
        restored = machine.restore_snapshot(strip_agent_meta(migrated))
    except Exception as error:
        raise AgentError(
            f"The migrated snapshot does not restore on machine {machine.id!r} version "
            f"{machine.version!r}: {type(error).__name__}: {error}. migrate must return a snapshot "
            "of the new machine's shape (value naming its states, context its keys).",
            code="migration-failed",
        ) from error
    persisted = machine.get_persisted_snapshot(restored)
    migrated_from: dict[str, Any] = {"machineId": from_id, "version": from_version, "logIndex": len(old_entries)}
    if log_id is not None:
        migrated_from["logId"] = log_id
    segment_metadata = dict(metadata or {})
    segment_metadata["migratedFrom"] = migrated_from
    return [init_entry(machine, snapshot=persisted, metadata=segment_metadata, now=now, id=id)]
