"""Random machines, folded by the engine and by XState 5.33.3 in Node, compared at every step.

Complements the hand-written differential twins: a seeded generator builds JSON configs (nested
compound/parallel/final/history states, guarded/targetless/reentering transitions, wildcards,
`always`, `after`, invoke, raise/spawn/stop/send/cancel/emit/log/assign actions) whose names come
from one vocabulary implemented identically here and in benchmarks/node/fuzz_oracle.mjs. Every
persisted snapshot and action list must be JSON-equal; where XState throws, the engine must too.
`benchmarks/fuzz_engine.py` runs the same check over many more seeds.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agent_explorer.engine import (
    and_,
    assign,
    cancel,
    emit,
    enqueue_actions,
    from_promise,
    initial_transition,
    log,
    not_,
    or_,
    raise_,
    send_to,
    setup,
    spawn_child,
    state_in,
    stop_child,
    transition,
)

ROOT = Path(__file__).resolve().parents[2]
ORACLE = ROOT / "benchmarks" / "node" / "fuzz_oracle.mjs"
NODE_MODULES = ROOT / "tests" / "node" / "node_modules"

pytestmark = pytest.mark.node

ACTIONS = ["inc", "dbl", "push", "raiseA", "raiseB", "emitX", "logIt", "custom", "delayed", "cancelD",
           "spawnW", "stopW", "sendW", "enq"]
GUARDS: list[Any] = [None, None, "even", {"type": "big", "params": {"min": 2}}, "flag", "evenAndBig", "oddOrFlag",
                     "inS1"]
EVENTS = ["A", "B", "C", "D", "x.y", "x.z"]
DESCRIPTORS = ["A", "B", "C", "D", "x.y", "x.*", "*"]


async def _task(input: Any = None) -> Any:
    return 1


def implementations() -> Any:
    """The Python side of the shared vocabulary (see fuzz_oracle.mjs)."""
    return setup(
        actors={"w": from_promise(_task)},
        guards={
            "even": lambda c, e, p: c["n"] % 2 == 0,
            "big": lambda c, e, p: c["n"] > ((p or {}).get("min", 3)),
            "flag": lambda c, e, p: e.get("flag") is True,
            "evenAndBig": and_(["even", {"type": "big", "params": {"min": 2}}]),
            "oddOrFlag": or_([not_("even"), "flag"]),
            "inS1": state_in("#m.s1"),
        },
        actions={
            "inc": assign({"n": lambda c, e, p: c["n"] + 1}),
            "dbl": assign(lambda c, e, p: {"n": (c["n"] * 2) % 97}),
            "push": assign({"seen": lambda c, e, p: (c["seen"] + [e["type"]])[-5:]}),
            "raiseA": raise_({"type": "A"}),
            "raiseB": raise_({"type": "B", "flag": True}),
            "emitX": emit(lambda c, e, p: {"type": "X", "n": c["n"]}),
            "logIt": log(lambda c, e, p: c["n"], "n"),
            "custom": lambda c, e, p: None,
            "delayed": raise_({"type": "C"}, delay=100, id="d1"),
            "cancelD": cancel("d1"),
            "spawnW": spawn_child("w", id="w1", input=lambda c, e, p: {"n": c["n"]}),
            "stopW": stop_child("w1"),
            "sendW": send_to("w1", {"type": "PING"}),
            "enq": enqueue_actions(
                lambda q, p: q.enqueue("inc") if q.check("even") else q.enqueue.raise_({"type": "D"})
            ),
        },
    )


class _Gen:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.count = 0
        self.nodes: list[tuple[str, dict[str, Any], str]] = []  # (id, config, kind)
        self.invokes: list[str] = []
        self.afters: list[str] = []

    def key(self) -> str:
        self.count += 1
        return f"s{self.count}"

    def actions(self, most: int = 2) -> list[str]:
        return self.rng.sample(ACTIONS, self.rng.randint(0, most))

    def state(self, sid: str, depth: int, allow_final: bool) -> dict[str, Any]:
        rng = self.rng
        roll = rng.random()
        config: dict[str, Any] = {}
        if depth < 3 and roll < 0.3:
            kind = "compound"
        elif depth < 3 and roll < 0.42:
            kind = "parallel"
        elif allow_final and roll < 0.52:
            kind = "final"
        else:
            kind = "atomic"
        if kind in ("compound", "parallel"):
            states: dict[str, Any] = {}
            for _ in range(rng.randint(2 if kind == "parallel" else 1, 3)):
                k = self.key()
                states[k] = self.state(f"{sid}.{k}", depth + 1, allow_final=kind == "compound")
            if rng.random() < 0.3:
                k = self.key()
                hist: dict[str, Any] = {"type": "history", "history": rng.choice(["shallow", "deep"])}
                if kind == "compound" and rng.random() < 0.5:
                    hist["target"] = rng.choice([c for c in states])
                states[k] = hist
                self.nodes.append((f"{sid}.{k}", hist, "history"))
            config["states"] = states
            if kind == "parallel":
                config["type"] = "parallel"
            else:
                config["initial"] = next(iter(states))
            if rng.random() < 0.3:
                config["onDone"] = {"actions": self.actions(1)}
        elif kind == "final":
            config["type"] = "final"
            if rng.random() < 0.5:
                config["output"] = {"from": sid} if rng.random() < 0.5 else "OUTPUT_FN"
        if rng.random() < 0.4:
            config["entry"] = self.actions()
        if rng.random() < 0.3:
            config["exit"] = self.actions()
        if rng.random() < 0.3:
            config["tags"] = [rng.choice(["t1", "t2"])]
        if kind != "final" and rng.random() < 0.15:
            config["after"] = {"100": {}}
            self.afters.append(f"xstate.after.100.{sid}")
        if kind != "final" and rng.random() < 0.2:
            iid = f"i{len(self.invokes)}"
            self.invokes.append(iid)
            config["invoke"] = {"id": iid, "src": "w", "input": {"k": iid}, "onDone": {}, "onError": {}}
        self.nodes.append((sid, config, kind))
        return config

    def transition(self, targets: list[str], source: str = "m") -> dict[str, Any]:
        rng = self.rng
        t: dict[str, Any] = {}
        if rng.random() < 0.75:
            target = rng.choice(targets)
            parent, _, key = target.rpartition(".")
            source_parent = source.rpartition(".")[0]
            if parent == source and rng.random() < 0.6:
                t["target"] = "." + key  # child of the source
            elif parent == source_parent and source != "m" and rng.random() < 0.6:
                t["target"] = key  # sibling
            else:
                t["target"] = "#" + target
        guard = rng.choice(GUARDS)
        if guard is not None:
            t["guard"] = guard
        acts = self.actions()
        if acts:
            t["actions"] = acts
        if rng.random() < 0.2:
            t["reenter"] = True
        return t

    def machine(self) -> dict[str, Any]:
        rng = self.rng
        root: dict[str, Any] = {"id": "m", "context": {"n": 0, "seen": []}, "options": {"maxIterations": 100}}
        states: dict[str, Any] = {}
        for _ in range(rng.randint(2, 4)):
            k = self.key()
            states[k] = self.state(f"m.{k}", 1, allow_final=True)
        root["states"] = states
        if rng.random() < 0.2:
            root["type"] = "parallel"
        elif rng.random() < 0.3:
            root["initial"] = {"target": next(iter(states)), "actions": self.actions()}
        else:
            root["initial"] = next(iter(states))
        if rng.random() < 0.5:
            root["output"] = {"done": True} if rng.random() < 0.5 else "OUTPUT_FN"
        targets = [sid for sid, _, _ in self.nodes]
        plain = [(sid, cfg) for sid, cfg, kind in self.nodes if kind != "history"] + [("m", root)]
        for sid, cfg in plain:
            if rng.random() < 0.6:
                on: dict[str, Any] = {}
                for _ in range(rng.randint(1, 3)):
                    d = rng.choice(DESCRIPTORS)
                    on.setdefault(d, []).append(self.transition(targets, sid))
                cfg["on"] = on
            if "after" in cfg:
                cfg["after"]["100"] = self.transition(targets, sid)
            if "invoke" in cfg:
                cfg["invoke"]["onDone"] = self.transition(targets, sid)
                cfg["invoke"]["onError"] = self.transition(targets, sid)
            if rng.random() < 0.08 and sid != "m":
                cfg["always"] = {"target": "#" + rng.choice(targets), "guard": "even", "actions": ["inc"]}
            elif rng.random() < 0.04 and sid != "m":  # may loop: both sides must then hit maxIterations
                cfg["always"] = [self.transition(targets, sid) for _ in range(rng.randint(1, 2))]
            if rng.random() < 0.05 and cfg.get("on"):
                # several targets at once (into parallel regions, or conflicting: XState decides)
                first = next(iter(cfg["on"].values()))[0]
                first["target"] = ["#" + t for t in rng.sample(targets, min(2, len(targets)))]
        for sid, cfg in plain:  # targets of the root must not be relative; all are #ids here
            for ts in (cfg.get("on") or {}).values():
                for t in ts:
                    if "target" in t and t["target"] == "#m":
                        t.pop("target")
        return root

    def events(self, count: int) -> list[dict[str, Any]]:
        rng = self.rng
        out: list[dict[str, Any]] = []
        for _ in range(count):
            roll = rng.random()
            if roll < 0.12 and self.invokes:
                iid = rng.choice(self.invokes)
                if rng.random() < 0.6:
                    out.append({"type": f"xstate.done.actor.{iid}", "output": {"v": rng.randint(0, 9)}, "actorId": iid})
                else:
                    out.append({"type": f"xstate.error.actor.{iid}", "error": {"why": "x"}, "actorId": iid})
            elif roll < 0.2 and self.afters:
                out.append({"type": rng.choice(self.afters)})
            elif roll < 0.25:
                out.append({"type": "xstate.done.actor.w1", "output": 1})
            elif roll < 0.32:
                out.append({"type": "B", "flag": True})
            else:
                out.append({"type": rng.choice(EVENTS)})
        return out


def with_functions(node: Any) -> Any:
    """Replace the generator's function markers by the Python twins of fuzz_oracle.mjs's functions."""
    if isinstance(node, list):
        return [with_functions(v) for v in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "context" and value == "FROM_INPUT":
            out[key] = lambda input: {"n": (input or {}).get("n", 0), "seen": []}
        elif key == "output" and value == "OUTPUT_FN":
            out[key] = lambda c, e, p: {"n": c["n"], "ev": e["type"], "out": e.get("output")}
        else:
            out[key] = with_functions(value)
    return out


def make_cases(seeds: range, events: int = 12) -> list[dict[str, Any]]:
    """One case per seed; every third case restores from the persisted JSON after each step."""
    cases = []
    for seed in seeds:
        gen = _Gen(seed)
        config = gen.machine()
        machine_input = None
        if seed % 4 == 1:
            config["context"] = "FROM_INPUT"
            machine_input = {"n": seed % 7}
        cases.append({"seed": seed, "config": config, "input": machine_input, "events": gen.events(events),
                      "restore": seed % 3 == 2})
    return cases


def run_oracle(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    node = shutil.which("node")
    assert node is not None
    proc = subprocess.run([node, str(ORACLE)], input=json.dumps({"cases": cases}), capture_output=True,
                          text=True, timeout=600, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"fuzz oracle failed: {proc.stderr[-3000:]}")
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def _norm_action(action: Any) -> dict[str, Any]:
    return {"type": action.type, "params": json.loads(json.dumps(action.params))}


def compare_case(case: dict[str, Any], expected: dict[str, Any]) -> list[str]:
    """Fold one case through the engine; return human-readable differences (empty: identical)."""
    seed = case["seed"]
    if "buildError" in expected:
        return [f"seed {seed}: XState rejected the generated config: {expected['buildError']}"]
    machine = implementations().create_machine(with_functions(case["config"]))
    if "initialThrew" in expected:
        try:
            initial_transition(machine, input=case["input"])
        except Exception:  # noqa: BLE001 - XState threw as well
            return []
        return [f"seed {seed}: XState's initialTransition threw {expected['initialThrew']!r}, the engine did not"]
    snapshot, actions = initial_transition(machine, input=case["input"])
    problems: list[str] = []
    steps = expected["steps"]
    for index, step in enumerate(steps):
        if index > 0:
            event = case["events"][index - 1]
            try:
                next_snapshot, actions = transition(machine, snapshot, event)
            except Exception as error:  # noqa: BLE001
                if "threw" in step:
                    continue
                return problems + [f"seed {seed} step {index} {event}: engine raised {error!r}, XState did not"]
            if "threw" in step:
                return problems + [f"seed {seed} step {index} {event}: XState threw {step['threw']!r}, engine did not"]
            snapshot = next_snapshot
        persisted = json.loads(json.dumps(machine.get_persisted_snapshot(snapshot)))
        if case.get("restore") and index > 0:
            snapshot = machine.restore_snapshot(json.loads(json.dumps(persisted)))
        if persisted != step["persisted"]:
            problems.append(f"seed {seed} step {index}: persisted differs\n  xstate={json.dumps(step['persisted'], sort_keys=True)}\n  python={json.dumps(persisted, sort_keys=True)}")
            break
        got = [_norm_action(a) for a in actions]
        if got != step["actions"]:
            problems.append(f"seed {seed} step {index}: actions differ\n  xstate={json.dumps(step['actions'])}\n  python={json.dumps(got)}")
            break
    return problems


def _oracle_available() -> bool:
    return shutil.which("node") is not None and (NODE_MODULES / "xstate" / "package.json").is_file()


def test_random_machines_match_xstate() -> None:
    if not _oracle_available():
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("node or tests/node/node_modules missing in CI", pytrace=False)
        pytest.skip("node or tests/node/node_modules missing")
    cases = make_cases(range(300))
    results = run_oracle(cases)
    problems = [p for case, expected in zip(cases, results) for p in compare_case(case, expected)]
    assert not problems, f"{len(problems)} case(s) differ from XState:\n" + "\n".join(problems[:5])
