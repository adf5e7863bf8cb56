"""Canonical JSON: the strict-JSON check and RFC 8785 (JCS) hashing every layer agrees on.

The bottom of the stack beside `errors`: the engine hashes its definition into `machine.version` with
it, the log stamps `verification.stateHash` with it. Pure: no I/O, imports nothing of agent_explorer but
`errors`.
"""

from __future__ import annotations

from .jcs import canonical_json, canonical_json_bytes, state_hash
from .strict import assert_json_serializable

__all__ = ["assert_json_serializable", "canonical_json", "canonical_json_bytes", "state_hash"]
