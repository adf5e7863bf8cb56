"""The engine equals XState v5: every scenario twin, every step, compared with XState's own record.

Each scenario is one machine written twice (tests/node/xstate/scenarios/<name>.mjs and
scenarios/<name>.py here). The JS twin also holds the input, the events and the `can` / `matches`
probes; XState runs it once per session (conftest) and this module folds the same events through
agent_explorer's engine, comparing persisted snapshot, status, value, output, error, tags, the
returned actions, `can` and `matches` at each step. This module never edits an expectation: XState
is the truth, a difference is an engine bug (or a twin that is not a faithful translation).
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
PY_SCENARIOS = HERE / "scenarios"

Record = dict[str, Any]


# --------------------------------------------------------------------------- loading the twins


def load_twin(name: str) -> ModuleType:
    """Import scenarios/<name>.py by path (scenario modules are data, not a package)."""
    path = PY_SCENARIOS / f"{name}.py"
    if not path.is_file():
        pytest.fail(
            f"scenario {name!r}: the Python twin {path} is missing", pytrace=False
        )
    spec = importlib.util.spec_from_file_location(
        f"_differential_scenario_{name}", path
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def oracle_for(xstate_oracle: Record, name: str, group: str = "scenarios") -> Record:
    found = xstate_oracle[group].get(name)
    if found is None:
        pytest.fail(
            f"scenario {name!r}: the JS twin tests/node/xstate/scenarios/{name}.mjs is missing"
        )
    if "loadError" in found:
        pytest.fail(
            f"scenario {name!r}: the JS twin failed under XState:\n{found['loadError']}"
        )
    return found


# --------------------------------------------------------------------------- normalising Python


def to_json(value: Any, where: str = "$") -> Any:
    """A strict JSON copy of `value` (what a log or a hash sees); non-JSON values name their path."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise TypeError(f"{where}: {value!r} is not JSON")
        return value
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise TypeError(f"{where}: key {key!r} is not a string")
            out[key] = to_json(item, f"{where}.{key}")
        return out
    if isinstance(value, (list, tuple)):
        return [to_json(item, f"{where}[{i}]") for i, item in enumerate(value)]
    raise TypeError(f"{where}: {type(value).__name__} {value!r} is not JSON")


def _field(params: Any, key: str) -> Any:
    if params is None:
        return None
    if isinstance(params, dict):
        return params.get(key)
    return getattr(params, key, None)


def _ref_id(ref: Any) -> Any:
    """An actor reference as its id: a string already, a dict with id/actorRef, or an object."""
    if ref is None or isinstance(ref, str):
        return ref
    if isinstance(ref, dict):
        return ref["id"] if "id" in ref else _ref_id(ref.get("actorRef"))
    return getattr(ref, "id", None)


def norm_action(action: Any) -> Record:
    """Mirror of run.mjs normAction: the same fields, null when unset."""
    kind = action.type
    p = action.params
    if kind == "xstate.raise":
        params = {
            "event": _field(p, "event"),
            "id": _field(p, "id"),
            "delay": _field(p, "delay"),
        }
    elif kind == "xstate.cancel":
        send_id = _field(p, "sendId")
        params = {"id": send_id if send_id is not None else _field(p, "id")}
    elif kind == "xstate.spawnChild":
        src = _field(p, "src")
        params = {
            "id": _field(p, "id"),
            "src": src if isinstance(src, str) else "(logic)",
            "input": _field(p, "input"),
        }
    elif kind == "xstate.stopChild":
        params = {"id": _ref_id(p)}
    elif kind == "xstate.sendTo":
        params = {
            "to": _ref_id(_field(p, "to")),
            "event": _field(p, "event"),
            "delay": _field(p, "delay"),
            "id": _field(p, "id"),
        }
    elif kind == "xstate.emit":
        params = {"event": _field(p, "event")}
    elif kind == "xstate.log":
        params = {"value": _field(p, "value"), "label": _field(p, "label")}
    else:
        params = p
    return {"type": kind, "params": to_json(params, f"action {kind}.params")}


def norm_error(error: Any) -> Any:
    if error is None:
        return None
    if isinstance(error, BaseException):
        return {"message": str(error)}
    return to_json(error, "error")


def same_error_message(js: Any, py: Any) -> Any:
    """The engine may add detail after XState's own message (`Unable to send ... 'gen'` + `: why`);
    an error whose message starts with XState's (final period aside) counts as the same error.
    Errors thrown by implementations keep their exact message on both sides."""
    if (
        isinstance(js, dict)
        and isinstance(py, dict)
        and set(js) == set(py) == {"message"}
        and isinstance(py["message"], str)
        and py["message"].startswith(js["message"].rstrip("."))
    ):
        return js
    return py


def py_record(
    machine: Any, snapshot: Any, actions: list[Any], oracle: Record
) -> Record:
    """The same record run.mjs prints, built from the Python engine's snapshot and actions."""
    return {
        "persisted": to_json(machine.get_persisted_snapshot(snapshot), "persisted"),
        "status": snapshot.status,
        "value": to_json(snapshot.value, "value"),
        "output": to_json(snapshot.output, "output"),
        "error": norm_error(snapshot.error),
        "tags": sorted(snapshot.tags),
        "actions": [norm_action(a) for a in actions],
        "can": [snapshot.can(event) for event in oracle["can"]],
        "matches": [snapshot.matches(value) for value in oracle["matches"]],
    }


# --------------------------------------------------------------------------- comparing


def _same(a: Any, b: Any) -> bool:
    """JSON equality that keeps true apart from 1 (Python's == does not)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def json_diff(js: Any, py: Any, path: str = "") -> list[str]:
    """Compact differences, one line per leaf: `path: xstate=... python=...`."""
    if _same(js, py):
        return []
    if isinstance(js, dict) and isinstance(py, dict):
        lines: list[str] = []
        for key in sorted(set(js) | set(py)):
            sub = f"{path}.{key}" if path else key
            if key not in py:
                lines.append(f"{sub}: xstate={_short(js[key])} python=<missing>")
            elif key not in js:
                lines.append(f"{sub}: xstate=<missing> python={_short(py[key])}")
            else:
                lines.extend(json_diff(js[key], py[key], sub))
        return lines
    if isinstance(js, list) and isinstance(py, list) and len(js) == len(py):
        lines = []
        for i, (x, y) in enumerate(zip(js, py, strict=True)):
            lines.extend(json_diff(x, y, f"{path}[{i}]"))
        return lines
    return [f"{path or '$'}: xstate={_short(js)} python={_short(py)}"]


def _short(value: Any, limit: int = 400) -> str:
    text = json.dumps(value, separators=(",", ":"), sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def mismatch(name: str, index: int, event: Any, lines: list[str]) -> str:
    shown = lines[:40] + (
        [f"... and {len(lines) - 40} more"] if len(lines) > 40 else []
    )
    what = "initial_transition" if event is None else f"event {_short(event)}"
    return (
        f"scenario {name!r}, step {index} ({what}): {len(lines)} difference(s) from XState\n  "
        + "\n  ".join(shown)
    )


# --------------------------------------------------------------------------- folding


def fold(
    name: str,
    oracle: Record,
    on_step: Callable[[int, Any, Record, Any, Any, list[Any]], None],
    machine: Any = None,
) -> None:
    """Fold the oracle's events through the Python twin, calling on_step for each XState step."""
    from agent_explorer.engine import initial_transition, transition

    if machine is None:
        machine = load_twin(name).build()
    steps = oracle["steps"]
    if "initialThrew" in oracle:
        with pytest.raises(Exception):  # noqa: B017 - XState threw; any exception mirrors it
            initial_transition(machine, input=oracle["input"])
        return
    try:
        snapshot, actions = initial_transition(machine, input=oracle["input"])
    except Exception as error:  # noqa: BLE001 - reported with the scenario and step
        pytest.fail(
            f"scenario {name!r}, step 0 (initial_transition): engine raised {error!r}"
        )
    on_step(0, None, steps[0], machine, snapshot, actions)
    for index, step in enumerate(steps[1:], start=1):
        event = step["event"]
        if "threw" in step:
            # XState threw; so must the engine. The caller keeps its previous snapshot.
            raised = False
            try:
                transition(machine, snapshot, event)
            except Exception:  # noqa: BLE001 - any exception mirrors XState's throw
                raised = True
            if not raised:
                pytest.fail(
                    f"scenario {name!r}, step {index} (event {_short(event)}): XState's transition "
                    f"raised ({step['threw']!r}) but the engine returned normally",
                    pytrace=False,
                )
            continue
        try:
            snapshot, actions = transition(machine, snapshot, event)
        except Exception as error:  # noqa: BLE001
            pytest.fail(
                f"scenario {name!r}, step {index} (event {_short(event)}): engine raised "
                f"{error!r}; XState returned status {step['status']!r} value {_short(step['value'])}"
            )
        on_step(index, event, step, machine, snapshot, actions)


@pytest.mark.node
def test_steps_match_xstate(scenario: str, xstate_oracle: Record) -> None:
    """Persisted snapshot, status, value, output, error, tags, actions, can, matches: per step."""
    check_steps(scenario, oracle_for(xstate_oracle, scenario))


def check_steps(scenario: str, oracle: Record, machine: Any = None) -> None:
    def check(
        index: int, event: Any, step: Record, machine: Any, snapshot: Any, actions: Any
    ) -> None:
        skip = ("event", "hash", "restored", "restoredThrew")
        expected = {key: value for key, value in step.items() if key not in skip}
        try:
            got = py_record(machine, snapshot, actions, oracle)
        except TypeError as error:
            pytest.fail(
                mismatch(scenario, index, event, [f"not JSON: {error}"]), pytrace=False
            )
        got["error"] = same_error_message(expected["error"], got["error"])
        lines = json_diff(expected, got)
        if lines:
            pytest.fail(mismatch(scenario, index, event, lines), pytrace=False)

    fold(scenario, oracle, check, machine)


@pytest.mark.node
def test_state_hashes_match_xstate(scenario: str, xstate_oracle: Record) -> None:
    """state_hash of the engine's persisted snapshot == SHA-256(canonicalize(XState's)) per step."""
    check_hashes(scenario, oracle_for(xstate_oracle, scenario))


def check_hashes(scenario: str, oracle: Record, machine: Any = None) -> None:
    try:
        from agent_explorer.log.hashing import state_hash
    except ImportError:
        pytest.skip(
            "agent_explorer.log.hashing.state_hash does not exist yet (log engineer)"
        )

    def check(
        index: int, event: Any, step: Record, machine: Any, snapshot: Any, actions: Any
    ) -> None:
        # The hash function itself must agree with canonicalize on XState's own JSON first.
        assert state_hash(step["persisted"]) == step["hash"], mismatch(
            scenario,
            index,
            event,
            ["state_hash(XState's persisted JSON) != JS sha256(canonicalize)"],
        )
        got = state_hash(machine.get_persisted_snapshot(snapshot))
        if got != step["hash"]:
            lines = json_diff(
                step["persisted"], to_json(machine.get_persisted_snapshot(snapshot))
            )
            pytest.fail(
                mismatch(
                    scenario,
                    index,
                    event,
                    [f"hash xstate={step['hash']} python={got}", *lines],
                ),
                pytrace=False,
            )

    fold(scenario, oracle, check, machine)


@pytest.mark.node
def test_restore_xstate_persisted_then_step(
    scenario: str, xstate_oracle: Record
) -> None:
    """restore_snapshot(XState's persisted JSON at step i) + event i+1 == XState's step i+1.

    This holds the engine's reading of XState's persisted form (not only its writing): a log
    recorded by XState in JS must resume in Python. `error` is compared through the persisted
    form only, since a JS Error persists as {} and comes back without its message.
    """
    check_restore(
        scenario, oracle_for(xstate_oracle, scenario), load_twin(scenario).build()
    )


def check_restore(scenario: str, oracle: Record, machine: Any) -> None:
    from agent_explorer.engine import transition

    steps = oracle["steps"]
    for index in range(1, len(steps)):
        before, step = steps[index - 1], steps[index]
        if "threw" in before:
            continue  # no new snapshot was made at that step; its predecessor is tested instead
        # XState restored from the same JSON (createActor(machine, {snapshot})) is the truth
        # here; run.mjs reports it only where it differs from the continuous run.
        expected_step = step.get("restored", step)
        restored = machine.restore_snapshot(before["persisted"])
        event = step["event"]
        if "restoredThrew" in step or ("threw" in step and "restored" not in step):
            with pytest.raises(Exception):  # noqa: B017 - XState raised on this event
                transition(machine, restored, event)
            continue
        snapshot, actions = transition(machine, restored, event)
        skip = ("event", "hash", "error", "restored", "restoredThrew")
        expected = {k: v for k, v in expected_step.items() if k not in skip}
        got = py_record(machine, snapshot, actions, oracle)
        del got["error"]
        lines = json_diff(expected, got)
        if lines:
            pytest.fail(
                mismatch(
                    scenario,
                    index,
                    event,
                    [f"(restored from XState's step {index - 1})", *lines],
                ),
                pytrace=False,
            )


@pytest.mark.node
def test_generated_machine_matches_xstate(
    generated: str, generated_cases: dict[str, Record], xstate_oracle: Record
) -> None:
    """A random plain-JSON machine (generated_machines.py), loaded by both sides: steps, hashes
    and restore-from-XState all agree. The case's config and events are in the failure text."""
    case = generated_cases[generated]
    oracle = oracle_for(xstate_oracle, generated, group="generated")
    module = _generated_module()
    try:
        check_steps(generated, oracle, module.build_machine(case["config"]))
        check_hashes(generated, oracle, module.build_machine(case["config"]))
        check_restore(generated, oracle, module.build_machine(case["config"]))
    except pytest.fail.Exception as failure:
        pytest.fail(
            f"{failure}\nconfig: {json.dumps(case['config'])}\nevents: {json.dumps(case['events'])}",
            pytrace=False,
        )


def _generated_module() -> ModuleType:
    path = HERE / "generated_machines.py"
    spec = importlib.util.spec_from_file_location(
        "_differential_generated_machines_t", path
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


STAGES = ["createMachine", "initialTransition", "transition"]


@pytest.mark.node
def test_invalid_config_rejected_no_later_than_xstate(
    invalid_config: str, xstate_oracle: Record
) -> None:
    """A plain-JSON config XState rejects (tests/node/xstate/invalid_configs.json) is rejected by
    the engine too, at create_machine with MachineConfigError naming the state, or at the latest
    at the stage where XState rejects it (the engine validates up front; XState partly lazily)."""
    from agent_explorer.engine import setup
    from agent_explorer.errors import MachineConfigError

    configs = json.loads(
        (HERE.parents[1] / "node" / "xstate" / "invalid_configs.json").read_text(
            "utf-8"
        )
    )
    config = configs[invalid_config]
    rejected = xstate_oracle["invalid"][invalid_config]
    assert rejected is not None, (
        f"{invalid_config}: XState accepts this config; it does not belong here"
    )
    try:
        machine = setup().create_machine(config)
    except MachineConfigError as error:
        assert error.code == "invalid-machine-config"
        assert getattr(error, "path", None), (
            f"{invalid_config}: the error names no path: {error}"
        )
        return
    stage = _engine_rejection_stage(machine)
    if stage is None:
        pytest.fail(
            f"{invalid_config}: XState rejects this config at {rejected['stage']} "
            f"({rejected['message']!r}); the engine accepted it and ran a transition",
            pytrace=False,
        )
    assert STAGES.index(stage) <= STAGES.index(rejected["stage"]), (
        f"{invalid_config}: XState rejects at {rejected['stage']}, the engine only at {stage}"
    )


def _engine_rejection_stage(machine: Any) -> str | None:
    """Where the engine rejects a machine it built: its first transition (event GO), or the
    initial transition (raising, or an error snapshot as XState's initialTransition gives)."""
    from agent_explorer.engine import initial_transition, transition

    try:
        snapshot, _ = initial_transition(machine)
    except Exception:  # noqa: BLE001
        return "initialTransition"
    if snapshot.status == "error":
        return "initialTransition"
    try:
        transition(machine, snapshot, {"type": "GO"})
    except Exception:  # noqa: BLE001
        return "transition"
    return None


# --------------------------------------------------------------------------- the harness itself


def test_json_diff_names_paths_and_keeps_booleans_apart_from_numbers() -> None:
    js = {
        "value": {"a": "x"},
        "context": {"n": 1, "ok": True, "list": [1, 2]},
        "only_js": 0,
    }
    py = {
        "value": {"a": "y"},
        "context": {"n": 1.0, "ok": 1, "list": [1, 2, 3]},
        "only_py": 0,
    }
    assert json_diff(js, py) == [
        "context.list: xstate=[1,2] python=[1,2,3]",
        "context.ok: xstate=true python=1",
        "only_js: xstate=0 python=<missing>",
        "only_py: xstate=<missing> python=0",
        'value.a: xstate="x" python="y"',
    ]
    assert (
        json_diff({"n": 2}, {"n": 2.0}) == []
    )  # the same JSON number; hashes check the spelling


def test_to_json_rejects_what_a_log_could_not_hold() -> None:
    with pytest.raises(TypeError, match=r"persisted\.context\.when"):
        to_json({"context": {"when": object()}}, "persisted")
    with pytest.raises(TypeError, match="nan"):
        to_json(float("nan"))


def _run_without_node(ci: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PATH"] = str(HERE / "no-such-dir")  # `node` cannot be found
    if ci is not None:
        env["CI"] = ci
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-rs",
            f"{Path(__file__)}::test_steps_match_xstate[atomic_basic]",
        ],
        cwd=HERE.parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_missing_node_skips_locally_but_fails_in_ci() -> None:
    local = _run_without_node(None)
    assert local.returncode == 0 and "1 skipped" in local.stdout, local.stdout[-2000:]
    assert "`node` is not on PATH" in local.stdout
    ci = _run_without_node("true")
    assert ci.returncode != 0, ci.stdout[-2000:]
    assert "differential oracle unavailable in CI" in ci.stdout, ci.stdout[-2000:]
