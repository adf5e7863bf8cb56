"""`open_store(url)`: one string names a store, for the CLI, notebooks and config files.

    memory:                                    a fresh, empty in-memory store
    sqlite:///relative/path.db                 SQLite file (SQLAlchemy style: three slashes = relative,
    sqlite:////absolute/path.db                four = absolute); ?synchronous=NORMAL&busy_timeout=5&table=x&mode=ro
                                               (&immutable=1: read-only, creating no -wal/-shm, no lock)
    postgresql://user@host:5432/db             PostgreSQL (also postgres://); ?schema=x&table=y&max_size=n are
                                               ours, every other query parameter goes to libpq unchanged

`store_url(store)` is the inverse, for a store that must be reopened elsewhere (a fleet's worker processes).
This module only parses and constructs; it never opens a connection (stores connect on first use).
"""

from __future__ import annotations

import os
import re
import sys
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from ..errors import AgentError
from .base import EventLogStore
from .memory import create_in_memory_event_log_store
from .sqlite import SqliteEventLogStore

__all__ = ["open_store", "redact_url", "require_sqlite_file", "sqlite_path", "store_url", "without_mode"]

_FORMS = "memory:, sqlite:///relative.db, sqlite:////absolute.db, postgresql://user@host/db"


def _bad(url: str, problem: str) -> AgentError:
    shown = redact_url(url)
    return AgentError(f"store URL {shown!r}: {problem} (forms: {_FORMS})", code="invalid-argument", url=shown)


def open_store(url: str, **options: Any) -> EventLogStore:
    """The store `url` names; `options` are passed to the store's constructor and win over the URL's."""
    if not isinstance(url, str):
        raise AgentError(f"a store URL must be a str, got {type(url).__name__}", code="invalid-argument")
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme == "memory":
        if url.split(":", 1)[1].strip("/"):
            raise _bad(url, "memory: takes no path")
        return create_in_memory_event_log_store()
    if scheme == "sqlite":
        return _open_sqlite(url, options)
    if scheme in ("postgresql", "postgres"):
        return _open_postgres(url, options)
    raise _bad(url, f"unknown scheme {scheme!r}" if scheme else "no scheme")


def store_url(store: EventLogStore) -> str | None:
    """A URL `open_store` reopens `store` from (the same data, in another process); None for a memory store.

    Only what locates the data travels (file path or DSN, schema, table, read-only mode); tuning a worker
    does not need (pool sizes, timeouts) stays behind. A PostgreSQL store opened from a `key=value` DSN
    has no URL form: that is an error, not a guess.
    """
    if isinstance(store, SqliteEventLogStore):
        query: dict[str, str] = {}
        if store.table != "agent_event_log":
            query["table"] = store.table
        if store.read_only:
            query["mode"] = "ro"
        if store.immutable:
            query["immutable"] = "1"
        path = os.path.abspath(store.path)
        return f"sqlite:///{quote(path)}" + (f"?{urlencode(query)}" if query else "")
    postgres = _postgres_class()
    if postgres is not None and isinstance(store, postgres):
        dsn: str = store.dsn
        parts = urlsplit(dsn)
        if parts.scheme.lower() not in ("postgresql", "postgres"):
            raise AgentError(
                f"{store!r} was opened from a key=value DSN, which has no URL form; open it from a "
                "postgresql:// URL so it can be reopened elsewhere",
                code="invalid-argument",
            )
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        if store.schema != "agent_explorer":
            pairs.append(("schema", store.schema))
        if store.table != "agent_event_log":
            pairs.append(("table", store.table))
        return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(pairs), ""))
    return None


def redact_url(url: str) -> str:
    """`url` without its password, for reports, logs and every message the CLI prints (the URL itself still
    carries it to workers). Both places libpq takes one are masked: `user:secret@host` and `?password=secret`.
    A URL too malformed to parse is masked by its text, so an error about a bad URL never shows its password.
    Text with no `://` may be libpq's keyword form (`host=db password=secret`), pasted where a URL belongs: its
    `password=` value is masked too."""
    if "://" not in url:
        return _KEYWORD_PASSWORD.sub(r"\1***", url)
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unclosed IPv6 bracket
        return _USERINFO_PASSWORD.sub(r"\1***@", _QUERY_PASSWORD.sub(r"\1***", url))
    netloc, query = parts.netloc, parts.query
    if parts.password is not None:
        netloc = f"{parts.username or ''}:***@{netloc.rpartition('@')[2]}"
    if _QUERY_PASSWORD.search(query):
        query = _QUERY_PASSWORD.sub(r"\1***", query)
    if (netloc, query) == (parts.netloc, parts.query):
        return url  # untouched, so sqlite:////abs/path keeps its four slashes
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


_USERINFO_PASSWORD = re.compile(r"(//[^/?#@:]*:)[^/?#]*@")
_QUERY_PASSWORD = re.compile(r"((?:^|[?&])password=)[^&#]*", re.IGNORECASE)
_KEYWORD_PASSWORD = re.compile(r"((?:^|\s)password\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s#]*)", re.IGNORECASE)


def without_mode(url: str) -> str:
    """`url` without the `mode=ro` a reader opened it in: how reports name the store the user gave."""
    # Only the query is rebuilt: urlunsplit would fold sqlite:////abs/path into sqlite://abs/path.
    head, sep, query = url.partition("?")
    if not sep:
        return url
    query, hash_, fragment = query.partition("#")
    pairs = [(key, value) for key, value in parse_qsl(query, keep_blank_values=True) if key != "mode"]
    return head + (f"?{urlencode(pairs)}" if pairs else "") + hash_ + fragment


def require_sqlite_file(url: str) -> None:
    """Reading must never create an empty database where a path was mistyped: a `sqlite:` URL's file must exist."""
    if url.lower().startswith("sqlite:"):
        path = sqlite_path(url)
        if not os.path.exists(path):
            raise AgentError(f"no such SQLite store: {path}", code="file-not-found")


def _postgres_class() -> Any:
    module = sys.modules.get("agent_explorer.stores.postgres")  # a PostgreSQL store exists only if imported
    return getattr(module, "PostgresEventLogStore", None) if module is not None else None


def sqlite_path(url: str) -> str:
    """The file path a `sqlite:` URL names: sqlite:///a.db -> "a.db"; sqlite:////tmp/a.db -> "/tmp/a.db"."""
    parts = urlsplit(url)
    if parts.netloc:
        raise _bad(url, f"a SQLite URL has no host (got {parts.netloc!r}); write sqlite:///{parts.netloc}{parts.path}")
    if not parts.path.startswith("/") or parts.path == "/":
        raise _bad(url, "no file path")
    return unquote(parts.path[1:])


def _open_sqlite(url: str, options: dict[str, Any]) -> EventLogStore:

    path = sqlite_path(url)
    parts = urlsplit(url)
    kwargs: dict[str, Any] = {}
    for key, value in parse_qsl(parts.query, keep_blank_values=True, strict_parsing=bool(parts.query)):
        if key == "synchronous":
            kwargs["synchronous"] = value
        elif key == "busy_timeout":
            kwargs["busy_timeout"] = _number(url, key, value, float)
        elif key == "table":
            kwargs["table"] = value
        elif key == "mode" and value in ("ro", "rw"):
            kwargs["read_only"] = value == "ro"
        elif key == "immutable" and value in ("0", "1"):
            kwargs["immutable"] = value == "1"
        else:
            raise _bad(url, f"unknown SQLite option {key}={value!r} (synchronous, busy_timeout, table, mode=ro, "
                            "immutable=1)")
    kwargs.update(options)
    return SqliteEventLogStore(path, **kwargs)


def _open_postgres(url: str, options: dict[str, Any]) -> EventLogStore:
    try:
        from .postgres import PostgresEventLogStore
    except ImportError as error:  # the driver is the [postgres] extra; a plain install has none
        if (error.name or "").partition(".")[0] not in ("psycopg", "psycopg_pool"):
            raise
        raise AgentError(
            f"a PostgreSQL store needs the [postgres] extra (the psycopg driver, which is not installed: {error.name}): "
            "pip install 'agent-explorer[postgres]'",
            code="missing-dependency",
        ) from error

    parts = urlsplit(url)
    kwargs: dict[str, Any] = {}
    rest: list[tuple[str, str]] = []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key in ("schema", "table"):
            kwargs[key] = value
        elif key in ("min_size", "max_size"):
            kwargs[key] = _number(url, key, value, int)
        else:
            rest.append((key, value))
    kwargs.update(options)
    dsn = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(rest), parts.fragment))
    return PostgresEventLogStore(dsn, **kwargs)


def _number(url: str, key: str, value: str, kind: type) -> Any:
    try:
        return kind(value)
    except ValueError:
        raise _bad(url, f"option {key}={value!r} is not a number") from None
