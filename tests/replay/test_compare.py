"""compare_machines: the first index where two machines fold one log differently, and why."""

from __future__ import annotations

from typing import Any

from agent_explorer.engine import assign, setup
from agent_explorer.eventlog.diff import compare_machines

from .machines import agent_machine, conversation, record


def test_identical_machines_agree_on_every_entry(machine: Any, log: list[dict[str, Any]]) -> None:
    comparison = compare_machines(machine, agent_machine(), log)
    assert comparison.same and comparison.index is None and comparison.diff == []
    assert comparison.compared == len(log)
    assert comparison.snapshot_a == comparison.snapshot_b
    assert "agree on all 35 entries" in str(comparison)


def test_a_changed_initial_context_parts_at_index_zero(machine: Any, log: list[dict[str, Any]]) -> None:
    counting = setup().create_machine({
        "id": "agent", "initial": "idle", "context": {"count": 0},
        "states": {"idle": {}},
    })
    comparison = compare_machines(machine, counting, log)
    assert comparison.index == 0
    assert comparison.transitions_a == comparison.transitions_b == []
    kinds = {change.path: change.kind for change in comparison.diff}
    assert kinds[("context", "count")] == "added"
    assert kinds[("context", "history")] == "removed"


def test_a_changed_action_shows_the_context_path_and_both_transitions() -> None:
    old = agent_machine()
    log = record(old, conversation(3), input={"question": "q"})
    # Today's code also counts rejections: the first REJECT (entry 9) is where they part.
    new = agent_machine().provide(actions={
        "recordReject": assign(lambda c, e, p: {"history": [*c["history"], "reject"][-20:], "rejections": 1}),
    })
    comparison = compare_machines(old, new, log)
    assert comparison.index == 9
    assert comparison.event == {"type": "REJECT"}
    assert [(c.path, c.kind, c.after) for c in comparison.diff] == [(("context", "rejections"), "added", 1)]
    reject = old.definition["states"]["deciding"]["on"]["REJECT"][0]["id"]
    assert comparison.transitions_a == comparison.transitions_b == [reject]
    assert comparison.trace_a and comparison.trace_a[0]["event"] == {"type": "REJECT"}
    assert "entry 9" in str(comparison) and "/context/rejections" in str(comparison)
