"""Harness of the differential suite: load a twin, fold it, compare with XState's record.

Job: turn the engine's snapshots and actions into the same JSON record tests/node/xstate/run.mjs
prints for XState, fold an oracle's events through a machine, and report the first difference by
scenario, step, event and path. It never edits an expectation and never runs Node (conftest does).
"""

from __future__ import annotations

import importlib.util
import json
import math
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
PY_SCENARIOS = HERE / "scenarios"
STAGES = ["createMachine", "initialTransition", "transition"]

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
    """XState's record of one scenario (group "scenarios") or generated case ("generated")."""
    found = xstate_oracle[group].get(name)
    if found is None and group == "generated":
        pytest.fail(f"generated case {name!r} is missing from the oracle's output")
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


# --------------------------------------------------------------------------- folding and checking


def fold(
    name: str,
    oracle: Record,
    on_step: Callable[[int, Any, Record, Any, Any, list[Any]], None],
    machine: Any = None,
) -> None:
    """Fold the oracle's events through the machine (the twin by default), calling on_step per step."""
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


def check_hashes(scenario: str, oracle: Record, machine: Any = None) -> None:
    try:
        from agent_explorer.canonical.jcs import state_hash
    except ImportError:
        pytest.skip(
            "agent_explorer.canonical.jcs.state_hash does not exist yet (log engineer)"
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


def engine_rejection_stage(machine: Any) -> str | None:
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
