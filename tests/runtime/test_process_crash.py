"""A real crash: a host process is SIGKILLed mid-run with a request in flight; a new process
resumes the SQLite thread, re-executes only the unrecorded request, and ends where an
uninterrupted run ends."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from agent_explorer.eventlog.replay import replay
from agent_explorer.runtime import run_agent

from .machines import FULL_INPUT, full_machine, full_model

TESTS_DIR = Path(__file__).resolve().parents[1]

HOST = textwrap.dedent(
    """
    import asyncio, sys
    sys.path.insert(0, sys.argv[2])
    from runtime.machines import FULL_INPUT, full_machine, full_model
    from agent_explorer.runtime import run_agent
    from agent_explorer.stores import SqliteEventLogStore

    async def main():
        model = full_model(latency={"b0": 60.0})  # b0 hangs: it is in flight when the host dies
        store = SqliteEventLogStore(sys.argv[1])
        await run_agent(full_machine, input=FULL_INPUT, store=store, thread_id="t", executors=model,
                        timers="run", time_scale=0.001)

    asyncio.run(main())
    """
)


@pytest.mark.slow
async def test_a_killed_host_resumes_in_a_new_process_without_re_running_recorded_calls(tmp_path: Path) -> None:
    from agent_explorer.stores import SqliteEventLogStore

    path = str(tmp_path / "crash.db")
    host = await asyncio.create_subprocess_exec(
        sys.executable, "-c", HOST, path, str(TESTS_DIR), stderr=asyncio.subprocess.PIPE
    )
    store = SqliteEventLogStore(path)
    try:
        # Wait until both fast branches are durable (b0 is still being "generated"), then kill.
        deadline = time.monotonic() + 60
        while True:
            entries: list[dict[str, Any]] = await store.read("t") if os.path.exists(path) else []
            branches = {e["event"]["type"] for e in entries if e["event"]["type"].startswith("xstate.done.actor.b")}
            if {"xstate.done.actor.b1", "xstate.done.actor.b2"} <= branches:
                break
            if host.returncode is not None:
                raise AssertionError((await host.stderr.read()).decode() if host.stderr else "the host exited")
            assert time.monotonic() < deadline, "the host never reached the fan-out"
            await asyncio.sleep(0.05)
        host.send_signal(signal.SIGKILL)
        assert await asyncio.wait_for(host.wait(), 30) == -signal.SIGKILL

        cut = await store.read("t")
        assert "xstate.done.actor.b0" not in {e["event"]["type"] for e in cut}
        model = full_model()
        resumed = await run_agent(full_machine, store=store, thread_id="t", executors=model, timers="run", time_scale=0.001)
        reference = await run_agent(full_machine, input=FULL_INPUT, executors=full_model(), timers="run", time_scale=0.001)

        assert resumed.status == "done" and resumed.output == reference.output
        assert [c.request_id for c in model.calls] == ["b0#1"]  # only the request that was in flight
        assert model.calls[0].call_key == f"{cut[0]['metadata']['executionId']}:b0#1"
        assert resumed.events[: len(cut)] == cut
        replay(full_machine, await store.read("t"), verify="strict")
    finally:
        if host.returncode is None:
            host.kill()
            await asyncio.wait_for(host.wait(), 30)
        await store.aclose()
