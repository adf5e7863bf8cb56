"""Owed effects and pending timers at any index, and forking, on the 100,001-entry sample run.

Measures, in one run on `sample_logs/inbox_long.jsonl`:
- the line's one fold carrying the effect ledger (a Timeline with `ledger=EffectLedger.start_from`: snapshot
  checkpoints every K, ledger checkpoints every min(K, 64)) against the old derivation (`get_agent_effects`
  over the whole prefix, what frames did before) at random indices, each asked cold (nothing cached near it);
- that fold's time and peak memory over the loaded log, beside a Timeline without the ledger;
- a fork at index 90,000 that shares the parent's Timeline checkpoints, against `fork_event_log` + a new
  Timeline (the naive way).

    .venv/bin/python benchmarks/pending.py [--picks 12]
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import time
from pathlib import Path
from typing import Any

from agent_explorer import Timeline, fork_event_log, read_log, verify_log
from agent_explorer.engine import initial_transition, transition
from agent_explorer.explorer.branches import Branch
from agent_explorer.explorer.pending import pending_at
from agent_explorer.runtime import get_agent_effects
from agent_explorer.runtime.effects import EffectLedger
from agent_explorer.samples import ensure_samples, inbox_agent

SAMPLE_LOGS = Path(__file__).resolve().parents[1] / "sample_logs"
LOG = SAMPLE_LOGS / "inbox_long.jsonl"


def refold_effects(timeline: Timeline, log: list[dict[str, Any]], index: int) -> list[Any]:
    """The old derivation (the explorer's frames did this before the pending index): `get_agent_effects` over
    the snapshot, the actions of entry `index`'s transition and the whole journal prefix."""
    machine, event = timeline.machine, log[index]["event"]
    actions: Any = []
    if index == 0:
        if event.get("snapshot") is None:
            _, actions = initial_transition(machine, input=event.get("input"))
    elif event.get("type") != "@agent.usage":
        _, actions = transition(machine, timeline.state_at(index - 1), event)
    return list(get_agent_effects(machine, timeline.state_at(index), list(actions), history=log[: index + 1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--picks", type=int, default=12, help="random indices to time")
    args = parser.parse_args()

    ensure_samples(SAMPLE_LOGS)  # the long run is generated on first use, not committed
    log = list(read_log(LOG))
    started = time.perf_counter()
    timeline = Timeline(inbox_agent, log)
    print(f"{len(log):,} entries; Timeline build {time.perf_counter() - started:.1f} s")

    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    line = Timeline(inbox_agent, log, ledger=EffectLedger.start_from)
    built = time.perf_counter() - started
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base_rss) / 1024
    print(f"the line's one fold with the ledger: {built:.1f} s, +{grown:.0f} MB peak RSS over the loaded log")

    rng = random.Random(5)
    picks = [rng.randrange(len(log)) for _ in range(args.picks)]
    checkpointed = []
    for i in picks:
        line._cache.clear()  # cold: the answer comes from the checkpoints, not the cursor's cache
        started = time.perf_counter()
        pending_at(line.point_at(i, traced=False))
        checkpointed.append(time.perf_counter() - started)
    refold = []
    for i in picks:
        started = time.perf_counter()
        refold_effects(timeline, log, i)
        refold.append(time.perf_counter() - started)
    print(
        f"owed effects at a random index: checkpointed median {statistics.median(checkpointed) * 1e3:.2f} ms "
        f"(max {max(checkpointed) * 1e3:.2f} ms); refold of the prefix median {statistics.median(refold) * 1e3:.0f} ms "
        f"(max {max(refold) * 1e3:.0f} ms); ratio {statistics.median(refold) / statistics.median(checkpointed):.0f}x"
    )

    root = Branch.of_run(inbox_agent, line)
    started = time.perf_counter()
    root.fork(90_000)
    shared = time.perf_counter() - started
    started = time.perf_counter()
    Timeline(inbox_agent, fork_event_log(log, 90_000))
    naive = time.perf_counter() - started
    print(f"fork at 90,000: shared checkpoints {shared * 1e3:.1f} ms; fork_event_log + new Timeline "
          f"{naive * 1e3:.0f} ms; ratio {naive / shared:.0f}x")

    # A verifying line (the explorer's recording) also hands its fork the verification so far: the counts
    # start at the checkpoint below the cut. Baseline: verifying the prefix afresh.
    verifying = Timeline(inbox_agent, log, verify=True)
    started = time.perf_counter()
    counted = verifying.fork(90_000).verification
    shared = time.perf_counter() - started
    started = time.perf_counter()
    fresh = verify_log(inbox_agent, log[:90_000])
    naive = time.perf_counter() - started
    assert (counted.entries, counted.checked, counted.unverified) == (fresh.entries, fresh.checked, fresh.unverified)
    print(f"fork at 90,000 of a verifying Timeline: {shared * 1e3:.1f} ms; verify_log of the prefix "
          f"{naive * 1e3:.0f} ms; ratio {naive / shared:.0f}x")


if __name__ == "__main__":
    main()
