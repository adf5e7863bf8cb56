"""Hypothesis strategies for the agent machine's event sequences.

`runs()` draws like a host: mostly events the current state handles (so runs reach every state
and loop), and one time in eight any event at all: stale completions for a child that is not
running, approvals while thinking, events after the run is done. Replay must treat each exactly
as the live fold did.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from agent_explorer.engine import initial_transition, transition

from .machines import (
    APPROVE,
    CANCEL,
    REJECT,
    STOP,
    TIMEOUT,
    agent_machine,
    ask,
    draft_failed,
    drafted,
    looked_up,
    lookup_failed,
    usage,
)

_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
_value = st.one_of(st.integers(-5, 5), st.none(), st.lists(st.booleans(), max_size=2), _text)

_by_state: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "idle": st.one_of(st.builds(ask, _text), st.builds(ask, _text), st.builds(usage, st.integers(5, 99)),
                     st.builds(ask, _text), st.builds(ask, _text), st.just(STOP)),
    "thinking": st.one_of(
        st.builds(drafted, _text), st.builds(drafted, _text), st.builds(draft_failed, _text),
        st.just(CANCEL), st.builds(usage, st.integers(5, 99)),
    ),
    "deciding": st.sampled_from([APPROVE, APPROVE, REJECT, TIMEOUT]),
    "acting": st.one_of(st.builds(looked_up, _value), st.builds(looked_up, _value), st.builds(lookup_failed, _text)),
}
anything = st.one_of(*_by_state.values())

_MACHINE = agent_machine()


@st.composite
def runs(draw: st.DrawFn, max_size: int = 60) -> list[dict[str, Any]]:
    snapshot, _ = initial_transition(_MACHINE, input=None)
    length = draw(st.integers(0, max_size))
    drawn: list[dict[str, Any]] = []
    after_end = 0
    for _ in range(length):
        if snapshot.status != "active":
            after_end += 1  # a couple of events after the run ended, then stop
            if after_end > 2:
                break
        relevant = _by_state.get(snapshot.value) if isinstance(snapshot.value, str) else None
        wild = draw(st.integers(0, 7)) == 0
        event = draw(anything if wild or relevant is None else relevant)
        drawn.append(event)
        if event["type"] != "@agent.usage":
            snapshot, _ = transition(_MACHINE, snapshot, event)
    return drawn


events = runs()


@st.composite
def long_runs(draw: st.DrawFn, min_size: int = 40, max_size: int = 110) -> list[dict[str, Any]]:
    """Runs longer than a batch of the verifying fold (32): drawn as `runs` draws, except that the run is never
    stopped, so it goes on for `min_size` to `max_size` events."""
    snapshot, _ = initial_transition(_MACHINE, input=None)
    drawn: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(min_size, max_size))):
        relevant = _by_state.get(snapshot.value) if isinstance(snapshot.value, str) else None
        wild = draw(st.integers(0, 7)) == 0
        event = draw((anything if wild or relevant is None else relevant).filter(lambda e: e["type"] != STOP["type"]))
        drawn.append(event)
        if event["type"] != "@agent.usage":
            snapshot, _ = transition(_MACHINE, snapshot, event)
    return drawn
