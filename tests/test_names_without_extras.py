"""Every public name imports from `agent_explorer` on an install without the optional extras.

The README installs `'.[lab]'`: no psycopg. An external check importing docs/api.md's names exactly as written
(`from agent_explorer import (..., PostgresEventLogStore, ...)`), or `from agent_explorer import *`, got an
ImportError there and lost every other name with it. Found by installing the wheel into a fresh venv as the
README says. The name now imports; its first use raises `missing-dependency` naming the extra to install.

Run in a fresh interpreter with a meta-path hook that refuses the extra's modules, as a venv without them would.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

BLOCK = """
import sys

class NoExtra:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, NoExtra())
"""

PROBE = """
import json
import agent_explorer
from agent_explorer import *  # every name of __all__, as a star import takes them
from agent_explorer import {name}
from agent_explorer import AgentError

report = {{"hasattr": hasattr(agent_explorer, {name!r}), "all": sorted(set(agent_explorer.__all__) - set(globals()))}}
for label, use in (("call", lambda: {name}("postgresql://h/db")), ("attribute", lambda: {name}.from_store)):
    try:
        use()
        report[label] = None
    except AgentError as error:
        report[label] = [error.code, str(error)]
print(json.dumps(report))
"""


@pytest.mark.parametrize(("name", "blocked"), [
    ("PostgresEventLogStore", ("psycopg", "psycopg_pool", "psycopg_binary", "psycopg_c")),
    ("Explorer", ("anywidget", "ipywidgets", "traitlets", "graphviz", "pandas")),
])
def test_a_name_needing_a_missing_extra_imports_and_says_what_to_install_on_use(name: str,
                                                                                 blocked: tuple[str, ...]) -> None:
    code = BLOCK.format(blocked=blocked) + PROBE.format(name=name)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["hasattr"] is True and report["all"] == []
    extra = "postgres" if name == "PostgresEventLogStore" else "lab"
    for label in ("call", "attribute"):
        code_, message = report[label]
        assert code_ == "missing-dependency"
        assert f"pip install 'agent-explorer[{extra}]'" in message and f"agent_explorer.{name}" in message


def test_with_the_extra_the_real_class_is_exported() -> None:
    from agent_explorer import PostgresEventLogStore
    from agent_explorer.stores.postgres import PostgresEventLogStore as Real

    assert PostgresEventLogStore is Real
