"""The step path (docs/semantics/step-path.md, docs/api.md §4): drive an agent machine one external input at a time.

Re-exports the pure moves a durable host needs (initial_transition / transition, init_entry,
get_agent_effects, execute_agent_request, resolve_decision, to_done_event / to_error_event) and
adds `replay(machine, entries)`: the snapshot plus the effects still owed, for crash recovery.
Nothing here journals on its own; the host owns the loop and the journal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from .engine import initial_transition, transition
from .eventlog.entries import create_replay_entry, init_entry
from .runtime.decisions import PLAN_DONE_EVENT_TYPE, resolve_decision
from .runtime.effects import AgentEffect, fold_ledger, get_agent_effects
from .runtime.effects import to_done_event as _done_for_site
from .runtime.effects import to_error_event as _error_for_site
from .runtime.execute import execute_agent_request, perform_effect
from .runtime.executors import AgentRequest

__all__ = [
    "PLAN_DONE_EVENT_TYPE",
    "AgentEffect",
    "AgentRequest",
    "StepReplay",
    "create_replay_entry",
    "execute_agent_request",
    "get_agent_effects",
    "init_entry",
    "initial_transition",
    "perform_effect",
    "replay",
    "resolve_decision",
    "to_done_event",
    "to_error_event",
    "transition",
]


def to_done_event(effect: AgentEffect | str, output: Any) -> dict[str, Any]:
    """`xstate.done.actor.<id>` for an effect (or an actor id) with `output` inline."""
    site = effect.site if isinstance(effect, AgentEffect) else effect
    return _done_for_site(str(site), output)


def to_error_event(effect: AgentEffect | str, error: Any) -> dict[str, Any]:
    """`xstate.error.actor.<id>` with `error` normalised to `{name, message, cause?}`."""
    site = effect.site if isinstance(effect, AgentEffect) else effect
    return _error_for_site(str(site), error)


class StepReplay(NamedTuple):
    """`snapshot` after folding, and `effects` still owed at the frontier (no execute effects:
    those ran once when they were surfaced and are never replayed)."""

    snapshot: Any
    effects: list[AgentEffect]


def replay(machine: Any, entries: Sequence[Mapping[str, Any]]) -> StepReplay:
    """Fold a journal (entries, or bare events starting with the init event) purely and return
    the snapshot plus every effect still owed: a child with no journaled completion (including
    the owed branches of a partly completed fan-out), a timer not yet fired, a plan in flight."""
    snapshot, _, ledger, _ = fold_ledger(machine, entries)  # fold_ledger takes its own copy
    return StepReplay(snapshot, ledger.owed())
