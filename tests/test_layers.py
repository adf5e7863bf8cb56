"""The layering of docs/design.md holds at import time: a server install needs no Jupyter, pandas, graphviz or Dask."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = (
    "anywidget", "ipywidgets", "traitlets", "pandas", "graphviz", "psycopg", "jupyterlab", "openai", "anthropic",
    "dask", "distributed",
)


def test_importing_the_package_pulls_in_no_notebook_or_database_library() -> None:
    code = (
        "import sys, agent_explorer, agent_explorer.steps\n"
        f"loaded = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print(','.join(loaded))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"importing agent_explorer loaded {out.stdout.strip()}"


LAYERS = ["canonical", "engine", "eventlog", "stores", "fleet", "runtime", "providers", "explorer"]
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


def test_the_providers_import_no_sdk_until_a_client_is_handed_in() -> None:
    # The executors duck-type the client: importing them, even without the extras installed, loads no SDK.
    code = (
        "import builtins, sys\n"
        "real = builtins.__import__\n"
        "def fake(name, *a, **k):\n"
        "    if name.split('.')[0] in ('openai', 'anthropic'):\n"
        "        raise ImportError('No module named ' + repr(name))\n"
        "    return real(name, *a, **k)\n"
        "builtins.__import__ = fake\n"
        "from agent_explorer.providers import OpenAIExecutors, AnthropicExecutors\n"
        "print([m for m in ('openai', 'anthropic') if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


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
        "from agent_explorer import Explorer\n"  # the name imports (docs/api.md); its use says what to install
        "try:\n"
        "    Explorer(None, [])\n"
        "except agent_explorer.AgentError as e:\n"
        "    print(e.code, e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.startswith("missing-dependency ") and "pip install 'agent-explorer[lab]'" in out.stdout


def test_log_is_the_action_creator_in_a_fresh_interpreter() -> None:
    # The event-log layer is `agent_explorer.eventlog`; `log` is XState's log action creator only.
    code = (
        "from agent_explorer import log\n"
        "action = log('hello')\n"
        "print(callable(log), type(action).__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split()[0] == "True", out.stdout + out.stderr


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _type_checking_only(tree: ast.AST) -> set[int]:
    """Ids of the nodes inside `if TYPE_CHECKING:` blocks (annotations only: never imported at run time)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else None
            if name == "TYPE_CHECKING":
                for child in node.body:
                    skipped.update(id(n) for n in ast.walk(child))
    return skipped


def _imports(module: str) -> list[tuple[str, ast.ImportFrom | ast.Import, bool]]:
    """(imported module, the statement, whether it is inside a function) for every package-internal import that
    runs at run time, top level and inside functions alike."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = _type_checking_only(tree)
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside.update(id(n) for n in ast.walk(node))
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        targets: list[str] = []
        if isinstance(node, ast.ImportFrom):
            base = ".".join(package[: len(package) - node.level + 1]) if node.level else ""
            target = ".".join(p for p in (base, node.module or "") if p) if node.level else node.module or ""
            targets = [f"{target}.{a.name}" if f"{target}.{a.name}" in MODULES else target for a in node.names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        found += [(t, node, id(node) in inside) for t in targets if t in MODULES and t != module]
    return found  # type: ignore[return-value]


def test_no_import_cycles_counting_imports_inside_functions() -> None:
    """A cycle hidden in a function-level import is still a cycle (it only fails later, on first call)."""
    graph = {module: {target for target, _, _ in _imports(module)} for module in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in graph:
        if module not in index:
            visit(module)
    assert not cycles, f"import cycles: {cycles}"


# The only function-level imports of the package's own modules: each defers a module that needs an optional
# extra, so a light install imports without it.
LAZY_FOR_AN_EXTRA = {
    ("agent_explorer.stores.urls", "agent_explorer.stores.postgres"),  # [postgres]: psycopg
    ("agent_explorer.explorer.panels.chart", "agent_explorer.explorer.graph"),  # [lab]: graphviz's DOT writer
}


def test_lazy_imports_only_defer_optional_extras() -> None:
    lazy = {
        (module, target)
        for module in MODULES
        if not module.startswith("agent_explorer.cli")  # the command line defers its verbs' imports for start-up
        for target, _, inside in _imports(module)
        if inside
    }
    assert lazy <= LAZY_FOR_AN_EXTRA, f"function-level imports that serve no optional extra: {sorted(lazy - LAZY_FOR_AN_EXTRA)}"


# The packages of the [lab] extra that only drawing needs. Blocked below, every module outside NEEDS_LAB must
# still import: analysis (search, usage, coverage, branches, table...) runs on a server without Jupyter.
LAB_ONLY = ("jupyterlab", "anywidget", "ipywidgets", "traitlets", "graphviz", "IPython")
# The two widgets (the explorer and the run list: anywidget classes) and the DOT writer (graphviz).
NEEDS_LAB = {"agent_explorer.explorer.widget", "agent_explorer.explorer.runs", "agent_explorer.explorer.graph"}

_BLOCK_LAB = (
    "import importlib, importlib.abc, sys\n"
    "class Block(importlib.abc.MetaPathFinder):\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    f"        if name.split('.')[0] in {LAB_ONLY!r}:\n"
    "            raise ImportError('blocked: ' + name)\n"
    "        return None\n"
    "sys.meta_path.insert(0, Block())\n"
)


def _importable_modules() -> list[str]:
    """Every module of the package, from the files on disk (a new module is covered without editing a list)."""
    return sorted(name for name in MODULES if not name.endswith("__main__"))


def test_every_module_but_the_widget_imports_without_jupyter_anywidget_or_graphviz() -> None:
    modules = _importable_modules()
    code = _BLOCK_LAB + (
        "import json, agent_explorer\n"
        "failed = {}\n"
        f"for name in {modules!r}:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except ImportError as error:\n"
        "        failed[name] = str(error)\n"
        f"leaked = [m for m in {LAB_ONLY!r} if m in sys.modules]\n"
        "print(json.dumps({'failed': failed, 'leaked': leaked}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    unexpected = {name: error for name, error in result["failed"].items() if name not in NEEDS_LAB}
    assert not unexpected, f"modules that need the [lab] extra only because of where they live: {unexpected}"
    # The exceptions are real (a module that stops needing the extra leaves the list), and the block worked.
    assert set(result["failed"]) == NEEDS_LAB, result["failed"]
    assert result["leaked"] == []
    assert len(modules) > 50


def test_the_explorer_package_and_its_analysis_import_without_the_lab_extra() -> None:
    code = _BLOCK_LAB + (
        "import agent_explorer, agent_explorer.explorer\n"
        "from agent_explorer.explorer import Branch\n"
        "from agent_explorer.explorer.usage import UsageLedger\n"
        "from agent_explorer.explorer.coverage import Coverage\n"
        "try:\n"
        "    agent_explorer.Explorer(None, [])  # the name imports (a stand-in); its first use names the extra\n"
        "except agent_explorer.AgentError as error:\n"
        "    print('top:', error.code, error)\n"
        "try:\n"
        "    agent_explorer.explorer.Explorer\n"
        "except ImportError as error:\n"
        "    print('explorer:', error)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    top, explorer = out.stdout.strip().splitlines()
    assert top.startswith("top: missing-dependency") and "pip install 'agent-explorer[lab]'" in top
    assert explorer.startswith("explorer:") and "blocked:" in explorer
