"""Fixtures of the differential suite: the XState oracle, run once per session in one Node process.

Job: find the scenario twins, run every JS twin through XState's pure API in a single `node`
process, hand the record to the tests. It never judges the engine (the tests do) and never
spawns Node per scenario or per step (Node start-up alone is ~100 ms).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .generated_machines import generate_case

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
NODE_DIR = REPO / "tests" / "node"
XSTATE_DIR = NODE_DIR / "xstate"
JS_SCENARIOS = XSTATE_DIR / "scenarios"
PY_SCENARIOS = HERE / "scenarios"
RUNNER = XSTATE_DIR / "run.mjs"
INVALID_CONFIGS = XSTATE_DIR / "invalid_configs.json"
PINNED_XSTATE = "5.33.3"

# Generated (fuzz) cases: random plain-JSON machines both sides load (generated_machines.py).
# More with AGENT_EXPLORER_DIFF_CASES=400 (and another AGENT_EXPLORER_DIFF_SEED) when hunting.
GENERATED_SEED = int(os.environ.get("AGENT_EXPLORER_DIFF_SEED", "20261130"))
GENERATED_COUNT = int(os.environ.get("AGENT_EXPLORER_DIFF_CASES", "80"))
# Generated cases kept for what they found, frozen as JSON (the generator may change): each
# file is {name, note, config, input, events, can, matches}; the note says why it is kept.
KEPT_CASES = HERE / "kept_cases"


def generated_names() -> list[str]:
    kept = sorted(p.stem for p in KEPT_CASES.glob("*.json"))
    return [*kept, *(f"g{GENERATED_SEED}-{i:03d}" for i in range(GENERATED_COUNT))]


def scenario_names() -> list[str]:
    """Every scenario that has a JS or a Python twin (a missing twin is a failing test, not a gap)."""
    js = {p.stem for p in JS_SCENARIOS.glob("*.mjs")}
    py = {p.stem for p in PY_SCENARIOS.glob("*.py") if not p.stem.startswith("_")}
    return sorted(js | py)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "scenario" in metafunc.fixturenames:
        names = scenario_names()
        metafunc.parametrize("scenario", names, ids=names)
    if "invalid_config" in metafunc.fixturenames:
        names = sorted(json.loads(INVALID_CONFIGS.read_text(encoding="utf-8")))
        metafunc.parametrize("invalid_config", names, ids=names)
    if "generated" in metafunc.fixturenames:
        names = generated_names()
        metafunc.parametrize("generated", names, ids=names)


@pytest.fixture(scope="session")
def generated_cases() -> dict[str, dict[str, Any]]:
    """The generated cases by name: {name, config, input, events, can, matches}."""
    cases = {}
    for path in sorted(KEPT_CASES.glob("*.json")):
        cases[path.stem] = {
            **json.loads(path.read_text(encoding="utf-8")),
            "name": path.stem,
        }
    for i in range(GENERATED_COUNT):
        case = generate_case(GENERATED_SEED, i)
        cases[case["name"]] = case
    return cases


def _unavailable(reason: str) -> None:
    """Skip locally, but in CI a missing oracle is a broken build, never a silent pass."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"differential oracle unavailable in CI: {reason}", pytrace=False)
    pytest.skip(f"differential oracle unavailable: {reason}")


@pytest.fixture(scope="session")
def xstate_oracle(
    generated_cases: dict[str, dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """Run all JS scenarios and generated cases through XState once, in one Node process.

    Returns {"xstate": version, "scenarios": {name: record}, "generated": {name: record}}.
    """
    node = shutil.which("node")
    if node is None:
        _unavailable("`node` is not on PATH (install Node 20+)")
    if not (NODE_DIR / "node_modules" / "xstate" / "package.json").is_file():
        _unavailable(f"{NODE_DIR}/node_modules is missing: run `npm ci` in {NODE_DIR}")
    names = sorted(p.stem for p in JS_SCENARIOS.glob("*.mjs"))
    cases_file = tmp_path_factory.mktemp("differential") / "generated_cases.json"
    cases_file.write_text(json.dumps(list(generated_cases.values())), encoding="utf-8")
    proc = subprocess.run(
        [
            str(node),
            str(RUNNER),
            "--cases",
            str(cases_file),
            "--invalid",
            str(INVALID_CONFIGS),
            *names,
        ],
        cwd=XSTATE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if proc.returncode != 0:
        pytest.fail(
            f"XState runner {RUNNER} exited {proc.returncode}:\n{proc.stderr[-4000:]}",
            pytrace=False,
        )
    record: dict[str, Any] = json.loads(proc.stdout)
    if record.get("xstate") != PINNED_XSTATE:
        pytest.fail(
            f"the oracle must be xstate {PINNED_XSTATE} (tests/node/package.json), "
            f"found {record.get('xstate')}: run `npm ci` in {NODE_DIR}",
            pytrace=False,
        )
    return record
