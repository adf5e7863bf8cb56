"""The widget's wire protocol is typed once (explorer/protocol.py) and checked on both sides.

Python: every synced traitlet is in the protocol and owned by exactly one panel; every message kind is answered by
exactly one panel. JavaScript: `tsc --checkJs` checks js/src against the declaration file the protocol renders,
and fails when a field the front end reads is renamed on the Python side.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_explorer.explorer import Explorer
from agent_explorer.explorer.panels.base import Panel
from agent_explorer.explorer.protocol import MESSAGES, TRAITS, typescript

JS = Path(__file__).resolve().parents[2] / "js"


def test_every_synced_traitlet_is_in_the_protocol_and_owned_by_one_panel(machine: Any, entries: Any) -> None:
    ex = Explorer(machine, entries)
    synced = {name for name in ex.trait_names(sync=True) if not name.startswith("_")}
    synced -= {"layout", "tabbable", "tooltip", "comm", "keys", "log"}  # ipywidgets' own plumbing
    assert synced == set(TRAITS)
    owners: dict[str, list[str]] = {}
    for panel in ex._panels:
        for name in type(panel).TRAITS:
            owners.setdefault(name, []).append(type(panel).__name__)
    assert {name: len(found) for name, found in owners.items()} == dict.fromkeys(TRAITS, 1), owners


def test_every_message_kind_has_one_handler(machine: Any, entries: Any) -> None:
    ex = Explorer(machine, entries)
    assert set(ex._handlers) == set(MESSAGES)
    assert all(isinstance(panel, Panel) for panel in ex._panels)


def test_a_panel_cannot_write_a_traitlet_it_does_not_own(machine: Any, entries: Any) -> None:
    ex = Explorer(machine, entries)
    with pytest.raises(AttributeError, match="does not own"):
        ex._table.traits.set("frame", {})


def test_the_typescript_rendering_is_deterministic_and_complete() -> None:
    text = typescript()
    assert text == typescript()
    for name in ("interface Frame ", "interface TablePage ", "interface Traits ", "type Message ", "interface Model "):
        assert name in text
    assert "  valueText?: string;" in text and "  index: number;" in text


def _tsc(src: Path) -> subprocess.CompletedProcess[str]:
    tsc = JS / "node_modules" / ".bin" / "tsc"
    if not tsc.exists():
        pytest.skip("js/node_modules is not installed (npm ci in js/)")
    return subprocess.run([str(tsc), "-p", str(src.parent)], capture_output=True, text=True, timeout=300)


@pytest.mark.node
def test_the_front_end_type_checks_against_the_protocol(tmp_path: Path) -> None:
    copy = tmp_path / "js"
    shutil.copytree(JS / "src", copy / "src")
    shutil.copy(JS / "tsconfig.json", copy / "tsconfig.json")
    (copy / "src" / "protocol.d.ts").write_text(typescript(), encoding="utf-8")
    (copy / "node_modules").symlink_to(JS / "node_modules")
    ok = _tsc(copy / "src")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    # The check is real: rename a field the state panel reads and the front end no longer type-checks.
    renamed = typescript().replace("  valueText?: string;", "  valueLabel?: string;")
    (copy / "src" / "protocol.d.ts").write_text(renamed, encoding="utf-8")
    broken = _tsc(copy / "src")
    assert broken.returncode != 0 and "valueText" in broken.stdout, broken.stdout


def test_the_run_lists_traitlets_are_its_protocol(tmp_path: Path) -> None:
    import asyncio

    from agent_explorer import Runs, SqliteEventLogStore, read_log
    from agent_explorer.explorer.protocol import RUNS_MESSAGES, RUNS_TRAITS
    from agent_explorer.samples import support_agent

    async def make() -> None:
        store = SqliteEventLogStore(tmp_path / "one.db")
        try:
            logs = Path(__file__).resolve().parents[2] / "sample_logs"
            await store.append(thread_id="t", expected_index=0, entries=list(read_log(logs / "support_clean.jsonl")))
        finally:
            await store.aclose()

    asyncio.run(make())
    runs = Runs(f"sqlite:///{tmp_path / 'one.db'}", support_agent)
    try:
        synced = {name for name in runs.trait_names(sync=True) if not name.startswith("_")}
        synced -= {"layout", "tabbable", "tooltip", "comm", "keys", "log"}
        assert synced == set(RUNS_TRAITS)
        assert set(RUNS_MESSAGES) == {"runs-page", "runs-sort", "runs-filter", "runs-select"}
        text = typescript()
        for name in ("interface RunsTraits ", "type RunsMessage ", "interface RunsModel ", "interface RunRow "):
            assert name in text
    finally:
        runs.close()


@pytest.mark.node
def test_the_run_list_front_end_type_checks_against_its_protocol(tmp_path: Path) -> None:
    copy = tmp_path / "js"
    shutil.copytree(JS / "src", copy / "src")
    shutil.copy(JS / "tsconfig.json", copy / "tsconfig.json")
    (copy / "node_modules").symlink_to(JS / "node_modules")
    # Rename a field the run list reads: runs.js no longer type-checks.
    renamed = typescript().replace("  threadId: string;\n  entries: number;", "  thread: string;\n  entries: number;")
    assert renamed != typescript()
    (copy / "src" / "protocol.d.ts").write_text(renamed, encoding="utf-8")
    broken = _tsc(copy / "src")
    assert broken.returncode != 0 and "runs.js" in broken.stdout and "threadId" in broken.stdout, broken.stdout


# -- incoming messages are checked once, where they arrive ---------------------------------------------------


def _replies(ex: Explorer, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    sent: list[Any] = []
    monkeypatch.setattr(ex, "send", lambda content, buffers=None: sent.append(content))
    return sent


@pytest.mark.parametrize(("content", "about", "says"), [
    ({"kind": "table", "offset": "x", "limit": 100, "type": "", "text": ""}, "table", "offset"),
    ({"kind": "table", "offset": 0, "limit": True}, "table", "limit"),  # a bool is no page size
    ({"kind": "search-page"}, "search-page", "offset: Field required"),
    ({"kind": "checkout", "branch": 3}, "checkout", "branch"),
    ({"kind": "compose-send", "event": "APPROVE"}, "compose-send", "event"),
    ({"kind": "live-drawn", "seq": "7"}, "live-drawn", "seq"),
    ({"kind": "no-such-kind"}, "no-such-kind", "unknown widget message kind"),
    ({"offset": 3}, None, "unknown widget message kind"),
    (["table"], None, "JSON object"),
])
def test_a_message_that_does_not_fit_its_shape_is_answered_with_an_error(
    machine: Any, entries: Any, monkeypatch: pytest.MonkeyPatch, content: Any, about: str | None, says: str
) -> None:
    ex = Explorer(machine, entries, page_size=4)
    replies = _replies(ex, monkeypatch)
    table, search = ex.table, ex.search_results
    ex._on_message(ex, content, [])  # used to raise ValueError / TypeError / KeyError inside a panel
    assert len(replies) == 1
    reply = replies[0]
    assert reply["kind"] == "error" and reply["about"] == about and reply["code"] == "invalid-widget-message"
    assert says in reply["message"]
    assert ex.table == table and ex.search_results == search  # nothing was half-done


def test_a_message_that_fits_is_answered_by_its_panel_and_gets_no_error(
    machine: Any, entries: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    ex = Explorer(machine, entries, page_size=4)
    replies = _replies(ex, monkeypatch)
    ex._on_message(ex, {"kind": "table", "offset": 4, "limit": 4, "type": "", "text": ""}, [])
    ex._on_message(ex, {"kind": "search", "text": "TICK"}, [])  # the fields with a default may be left out
    assert replies == []
    assert ex.table["offset"] == 4 and ex.search_results["total"] >= 1


# -- payloads are typed at the Python end too -------------------------------------------------------------------

GOOD = '''
from agent_explorer.explorer.panels.base import Traits
from agent_explorer.explorer.protocol import SearchResults
from agent_explorer.explorer.table import EventTable


def publish(traits: Traits, table: EventTable, query: SearchResults) -> None:
    page = table.page(0, 10)
    page["marks"] = [1, 2]
    traits.set("table", page)
    traits.set("search_results", query)
    traits.set("length", 3)
'''

BAD = '''
from agent_explorer.explorer.panels.base import Traits
from agent_explorer.explorer.table import EventTable


def publish(traits: Traits, table: EventTable) -> None:
    page = table.page(0, 10)
    page["offset"] = "0"  # line 8: a field of the wrong type
    traits.set("table", {"offset": 0, "limit": 10})  # line 9: a page without its rows
    traits.set("length", "3")  # line 10: a count as text
    traits.set("frame", page)  # line 11: a payload on the wrong traitlet
'''


def test_a_payload_of_the_wrong_shape_fails_mypy(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    (tmp_path / "good.py").write_text(GOOD, encoding="utf-8")
    (tmp_path / "bad.py").write_text(BAD, encoding="utf-8")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--cache-dir", str(tmp_path / "cache"),
         "--config-file", str(root / "pyproject.toml"), str(tmp_path / "good.py"), str(tmp_path / "bad.py")],
        capture_output=True, text=True, cwd=root, timeout=600,
    )
    errors = [line for line in out.stdout.splitlines() if ": error:" in line]
    assert not [line for line in errors if "good.py" in line], out.stdout  # the well-typed writes pass
    lines = {int(line.split(":")[1]) for line in errors if "bad.py" in line}
    assert lines == {8, 9, 10, 11}, out.stdout + out.stderr
