"""A log recorded by XState itself (Node) replays and verifies here, hash for hash.

`node/record_agent_log.mjs` is the JS twin of the shared agent machine: XState 5.33.3's pure API
folds the events and `canonicalize` + SHA-256 hash each persisted snapshot, as a JavaScript host
would. One Node process per log; skipped locally without Node, a failure in CI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent_explorer.errors import AgentReplayDivergenceError
from agent_explorer.eventlog.replay import replay
from agent_explorer.eventlog.timeline import Timeline
from agent_explorer.eventlog.verification import verify_log

from .machines import (
    APPROVE,
    CANCEL,
    REJECT,
    STOP,
    TIMEOUT,
    agent_machine,
    ask,
    conversation,
    draft_failed,
    drafted,
    looked_up,
    lookup_failed,
    record,
    usage,
)

pytestmark = pytest.mark.node

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "node" / "record_agent_log.mjs"
NODE_MODULES = HERE.parent / "node" / "node_modules"

# Every path of the chart, plus what a host can throw at it: stale completions, approvals while
# thinking, errors, a timeout, usage records, events after the final state.
VARIED = [
    ask("first"), usage(20), APPROVE, drafted("a"), REJECT, drafted("b"), TIMEOUT,
    ask("second"), draft_failed("boom"), looked_up("stale"), ask("third"), CANCEL, ask("fourth"),
    drafted("c"), APPROVE, lookup_failed("no rows"), ask("fifth"), drafted("ünïcödé draft"),
    APPROVE, looked_up({"rows": [1, 2, 3], "ratio": 0.1, "big": 1e21, "tiny": 1e-7, "text": "é😀\u2028"}),
    STOP, ask("after done"), usage(3),
]


def recorded_by_xstate(events: list[dict[str, Any]], *, clock: float = 0.0) -> list[dict[str, Any]]:
    node = shutil.which("node")
    if node is None or not (NODE_MODULES / "xstate").is_dir():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("node or tests/node/node_modules missing in CI", pytrace=False)
        pytest.skip("node (with tests/node/node_modules) is not available")
    done = subprocess.run(
        [node, str(SCRIPT)],
        input=json.dumps({"input": {"question": "hello"}, "events": events}),
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "AGENT_CLOCK": str(clock)},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.mark.parametrize("events", [conversation(6), VARIED], ids=["conversation", "varied"])
def test_an_xstate_recorded_log_verifies_hash_for_hash(events: list[dict[str, Any]]) -> None:
    machine = agent_machine(version="1")
    from_js = recorded_by_xstate(events)
    assert len(from_js) == len(events) + 1
    result = replay(machine, from_js, verify="strict")
    assert result.checked == len(from_js)
    assert verify_log(machine, from_js, strict=True).ok
    from_python = record(machine, events, input={"question": "hello"})
    assert [e["verification"] for e in from_js] == [e["verification"] for e in from_python]
    timeline = Timeline(machine, from_js, checkpoint_every=4)
    assert all(timeline.verify_at(i, strict=True) is None for i in range(len(from_js)))


def test_the_clock_hazard_across_languages() -> None:
    # Recorded by XState while its clock allowed the approval; replayed here when it does not.
    from_js = recorded_by_xstate(conversation(2), clock=500)
    assert verify_log(agent_machine(version="1", clock=lambda: 500.0), from_js).ok
    with pytest.raises(AgentReplayDivergenceError) as caught:
        replay(agent_machine(version="1", clock=lambda: 5_000.0), from_js)
    assert (caught.value.index, caught.value.kind, caught.value.event_id) == (4, "state", "js4")
