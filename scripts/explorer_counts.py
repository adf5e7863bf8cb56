"""The explorer's wiring, counted at a git commit (issue 23's before/after note): `python scripts/explorer_counts.py
bcbd04b HEAD`. Lines of `class Explorer`; the callbacks its constructor hands to panels (a lambda, a bound method
of the widget or of a panel, given to a panel's constructor or to a panel's listener registration) and the panels
it hands to other panels; the locks constructed in explorer/. Reads the commit's files with `git show`; changes
nothing.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys

LISTENERS = ("_panel", "on_moved", "on_line", "start_background")  # the calls that took callbacks at bcbd04b


def show(ref: str, path: str) -> str:
    return subprocess.run(["git", "show", f"{ref}:{path}"], capture_output=True, text=True, check=True).stdout


def counts(ref: str) -> str:
    files = subprocess.run(["git", "ls-tree", "-r", "--name-only", ref, "agent_explorer/explorer"],
                           capture_output=True, text=True, check=True).stdout.split()
    tree = ast.parse(show(ref, "agent_explorer/explorer/widget.py"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Explorer")
    methods = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    init = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")

    def is_callback(value: ast.expr) -> bool:
        if isinstance(value, ast.Lambda):
            return True
        if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id == "self":
            return value.attr in methods
        return isinstance(value, ast.Attribute) and isinstance(value.value, ast.Attribute)  # self._panel.method

    callbacks = panels = 0
    for call in ast.walk(init):
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in LISTENERS:
            values = [k.value for k in call.keywords] + call.args[1 if call.func.attr == "_panel" else 0:]
            callbacks += sum(map(is_callback, values))
            panels += sum(1 for v in values if isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name)
                          and v.value.id == "self" and v.attr in ("_lineage", "_cursor", "_table"))
    locks = {p.removeprefix("agent_explorer/explorer/"): len(re.findall(r"threading\.R?Lock\(\)", show(ref, p)))
             for p in files if p.endswith(".py")}
    return (f"{ref}: class Explorer {cls.end_lineno - cls.lineno + 1} lines; {callbacks} callbacks and {panels} "
            f"panels handed to panels; {sum(locks.values())} locks constructed in explorer/ "
            f"({', '.join(p for p, n in locks.items() if n)})")


if __name__ == "__main__":
    for ref in sys.argv[1:] or ["HEAD"]:
        print(counts(ref))
