"""Public names whose module needs an optional extra, and what they are when the extra is not installed.

docs/api.md promises that every public name imports from `agent_explorer`. A README install (`[lab]`) has no
psycopg, so `from agent_explorer import PostgresEventLogStore` (or `from agent_explorer import *`, which takes
every name of `__all__`) raised ImportError at import time and took every other name down with it. Instead the
name is a stand-in class: importing it, `hasattr` and `isinstance` work, and the first use (a call, or a class
attribute such as `Explorer.from_store`) raises `AgentError` with code `missing-dependency` naming the extra to
install, the same words the CLI prints for a `postgresql://` URL.
"""

from __future__ import annotations

from typing import Any, NoReturn

from .errors import AgentError

__all__ = ["missing_extra_stand_in"]


def _raise_missing(name: str, extra: str, missing: str) -> NoReturn:
    raise AgentError(
        f"agent_explorer.{name} needs the [{extra}] extra: pip install 'agent-explorer[{extra}]' ({missing})",
        code="missing-dependency",
    )


class _MissingExtra(type):
    """The stand-in's metaclass: calling the class or reading a class attribute says which extra to install."""

    _ae_name: str
    _ae_extra: str
    _ae_missing: str

    def __call__(cls, *args: Any, **kwargs: Any) -> NoReturn:
        _raise_missing(cls._ae_name, cls._ae_extra, cls._ae_missing)

    def __getattr__(cls, attribute: str) -> NoReturn:
        if attribute.startswith("__"):
            raise AttributeError(attribute)  # keep copy, pickle and introspection protocols ordinary
        _raise_missing(cls._ae_name, cls._ae_extra, cls._ae_missing)


def missing_extra_stand_in(name: str, extra: str, error: ImportError) -> type:
    """A class named `name` that raises `missing-dependency` on first use (see the module docstring)."""
    return _MissingExtra(name, (), {
        "__module__": "agent_explorer",
        "__doc__": f"Not available: agent_explorer.{name} needs pip install 'agent-explorer[{extra}]'.",
        "_ae_name": name,
        "_ae_extra": extra,
        "_ae_missing": str(error),  # the import that failed, as Python said it
    })
