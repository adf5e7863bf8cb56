"""The step path (docs/semantics/step-path.md, docs/api.md §4): drive an agent machine one external input at a time.

Re-exports the pure moves a durable host needs (initial_transition / transition, init_entry,
get_agent_effects, execute_agent_request, resolve_decision, to_done_event / to_error_event) and
adds `replay(machine, entries)`: the snapshot plus the effects still owed, for crash recovery (the
package's one replay: the log layer's fold with the runtime's effect ledger).
Nothing here journals on its own; the host owns the loop and the journal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .engine import initial_transition, transition
from .eventlog.entries import create_replay_entry, init_entry
from .eventlog.replay import ReplayResult, VerifyMode
from .eventlog.replay import replay as _fold_log
from .runtime.decisions import PLAN_DONE_EVENT_TYPE, resolve_decision
from .runtime.effects import AgentEffect, get_agent_effects, is_entry, owed_effects
from .runtime.effects import to_done_event as _done_for_site
from .runtime.effects import to_error_event as _error_for_site
from .runtime.execute import execute_agent_request, perform_effect
from .runtime.executors import AgentRequest

__all__ = [
    "PLAN_DONE_EVENT_TYPE",
    "AgentEffect",
    "AgentRequest",
    "ReplayResult",
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


def replay(machine: Any, entries: Iterable[Mapping[str, Any]], verify: VerifyMode = True) -> ReplayResult:
    """Fold a journal (log entries, or bare events starting with the init event, as in the host loop)
    purely: `.snapshot`, and `.effects`, every effect still owed at the frontier: a child with no
    journaled completion (including the owed branches of a partly completed fan-out), a timer not yet
    fired, a plan in flight. No execute effects: those ran once when they were surfaced and are never
    replayed. This is the package's `replay` (`agent_explorer.replay`): the log layer's fold with the
    runtime's effect ledger."""
    items = entries if isinstance(entries, list) else list(entries)
    if items and not is_entry(items[0]):  # bare events carry no machine version to check
        wrapped = [{"event": item} for item in items]
        return _fold_log(machine, wrapped, verify, owed=lambda m, _: owed_effects(m, items), check_version=False)
    return _fold_log(machine, items, verify, owed=owed_effects)
