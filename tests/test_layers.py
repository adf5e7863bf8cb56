"""The layering of DESIGN.md holds at import time: a server install needs no Jupyter, pandas, graphviz or Dask."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("anywidget", "ipywidgets", "traitlets", "pandas", "graphviz", "psycopg", "jupyterlab", "dask", "distributed")


def test_importing_the_package_pulls_in_no_notebook_or_database_library() -> None:
    code = (
        "import sys, agent_explorer, agent_explorer.steps\n"
        f"loaded = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print(','.join(loaded))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"importing agent_explorer loaded {out.stdout.strip()}"


LAYERS = ["canonical", "engine", "eventlog", "stores", "fleet", "runtime", "explorer"]
PACKAGE = Path(__file__).resolve().parents[1] / "agent_explorer"


def imported_layers(path: Path) -> set[str]:
    """The agent_explorer layers a module imports, at any depth of its code (lazy imports count too)."""
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: len(module.split(".")) - node.level]
                names = [".".join([*base, node.module or ""]).rstrip(".")]
            else:
                names = [node.module or ""]
        for name in names:
            parts = name.split(".")
            if parts[0] == "agent_explorer" and len(parts) > 1 and parts[1] in LAYERS:
                found.add(parts[1])
    return found


@pytest.mark.parametrize("layer", LAYERS)
def test_imports_point_down_only(layer: str) -> None:
    allowed = set(LAYERS[: LAYERS.index(layer) + 1])
    offenders = {
        str(path.relative_to(PACKAGE)): sorted(imported_layers(path) - allowed)
        for path in sorted((PACKAGE / layer).rglob("*.py"))
        if imported_layers(path) - allowed
    }
    assert not offenders, f"{layer}/ imports layers above it: {offenders}"


def test_explorer_and_postgres_load_lazily_with_a_clear_error_when_missing() -> None:
    code = (
        "import builtins, sys\n"
        "real = builtins.__import__\n"
        "def fake(name, *a, **k):\n"
        "    if name.split('.')[0] in ('anywidget',):\n"
        "        raise ImportError('No module named ' + repr(name))\n"
        "    return real(name, *a, **k)\n"
        "builtins.__import__ = fake\n"
        "import agent_explorer\n"
        "try:\n"
        "    agent_explorer.Explorer\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'agent-explorer[lab]'" in out.stdout


def test_log_is_the_action_creator_in_a_fresh_interpreter() -> None:
    # The event-log layer is `agent_explorer.eventlog`; `log` is XState's log action creator only.
    code = (
        "from agent_explorer import log\n"
        "action = log('hello')\n"
        "print(callable(log), type(action).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[0] == "True", out.stdout + out.stderr
