"""The engine equals XState v5: every scenario twin, every step, compared with XState's own record.

Each scenario is one machine written twice (tests/node/xstate/scenarios/<name>.mjs and
scenarios/<name>.py here); generated cases are random plain-JSON machines both sides load
(generated_machines.py). XState runs everything once per session (conftest); these tests fold the
same events through agent_explorer's engine and compare persisted snapshot, state hash, status,
value, output, error, tags, the returned actions, `can` and `matches` at each step, and resuming
from XState's persisted JSON. XState is the truth: a difference is an engine bug (or a twin that
is not a faithful translation).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .generated_machines import build_machine
from .harness import (
    HERE,
    STAGES,
    Record,
    check_hashes,
    check_restore,
    check_steps,
    engine_rejection_stage,
    json_diff,
    load_twin,
    oracle_for,
    to_json,
)


def test_steps_match_xstate(scenario: str, xstate_oracle: Record) -> None:
    """Persisted snapshot, status, value, output, error, tags, actions, can, matches: per step."""
    check_steps(scenario, oracle_for(xstate_oracle, scenario))


def test_state_hashes_match_xstate(scenario: str, xstate_oracle: Record) -> None:
    """state_hash of the engine's persisted snapshot == SHA-256(canonicalize(XState's)) per step."""
    check_hashes(scenario, oracle_for(xstate_oracle, scenario))


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


def test_generated_machine_matches_xstate(
    generated: str, generated_cases: dict[str, Record], xstate_oracle: Record
) -> None:
    """A random plain-JSON machine (generated_machines.py), loaded by both sides: steps, hashes
    and restore-from-XState all agree. The case's config and events are in the failure text."""
    case = generated_cases[generated]
    oracle = oracle_for(xstate_oracle, generated, group="generated")
    try:
        check_steps(generated, oracle, build_machine(case["config"]))
        check_hashes(generated, oracle, build_machine(case["config"]))
        check_restore(generated, oracle, build_machine(case["config"]))
    except pytest.fail.Exception as failure:
        pytest.fail(
            f"{failure}\nconfig: {json.dumps(case['config'])}\nevents: {json.dumps(case['events'])}",
            pytrace=False,
        )


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
    stage = engine_rejection_stage(machine)
    if stage is None:
        pytest.fail(
            f"{invalid_config}: XState rejects this config at {rejected['stage']} "
            f"({rejected['message']!r}); the engine accepted it and ran a transition",
            pytrace=False,
        )
    assert STAGES.index(stage) <= STAGES.index(rejected["stage"]), (
        f"{invalid_config}: XState rejects at {rejected['stage']}, the engine only at {stage}"
    )


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
