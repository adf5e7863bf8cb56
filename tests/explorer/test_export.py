"""Static export, Python side: one self-contained file, data that round-trips, untrusted text kept inert."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from sample_run import XSS, long_events, record

from agent_explorer.errors import AgentError
from agent_explorer.explorer import Explorer, export
from agent_explorer.explorer.export import static_payload

SCRIPT_BREAK = "</script><script>window.pwned = 1</script><!--"


def embedded(html: str, element_id: str) -> Any:
    match = re.search(
        rf'<script type="application/json" id="{element_id}">(.*?)</script>',
        html,
        re.DOTALL,
    )
    assert match is not None, element_id
    return json.loads(match.group(1))


def test_one_file_with_bundle_css_and_a_frame_per_index(
    machine: Any, entries: list[dict[str, Any]], tmp_path: Path
) -> None:
    ex = Explorer(machine, entries)
    path = ex.to_html(tmp_path / "run.html")
    html = path.read_text(encoding="utf-8")
    # Self-contained: no external scripts, styles or fetches.
    assert not re.search(r"<(script|link|img|iframe)[^>]+(src|href)=", html)
    assert (
        html.count("<script") == 3
    )  # the data, the bundle (both JSON, inert) and the loader
    data = embedded(html, "ae-data")
    assert (data["start"], data["stop"], data["note"]) == (0, 8, None)
    assert [f["index"] for f in data["frames"]] == list(range(9))
    assert data["frames"][5] == ex.frame_at(5)
    assert [r["index"] for r in data["rows"]] == list(range(9))
    assert (
        data["traits"]["graph"]["dot"] == ex.graph["dot"]
        and data["traits"]["coverage_data"]["runs"] == 1
    )
    assert data["traits"]["usage_ledger"]["records"] == 2
    raw = re.search(
        r'<script type="text/plain" id="ae-bundle">(.*?)</script>', html, re.DOTALL
    )
    assert raw is not None  # our bundle holds no script tag: it goes in verbatim
    bundle = raw.group(1)
    assert (
        "renderStatic" in bundle
        and bundle
        == (Path(export.__file__).parent / "static" / "widget.js").read_text()
    )


def test_untrusted_payloads_cannot_close_the_script_element(
    machine: Any, entries: list[dict[str, Any]], tmp_path: Path
) -> None:
    log = record(
        machine, [{"type": "NOTE", "text": SCRIPT_BREAK}, {"type": "NOTE", "text": XSS}]
    )
    html = Explorer(machine, log).to_html(tmp_path / "x.html").read_text()
    assert SCRIPT_BREAK not in html and "<img src=x" not in html
    assert html.count("</script>") == 3
    assert SCRIPT_BREAK in json.dumps(
        embedded(html, "ae-data"), ensure_ascii=False
    ).replace("\\/", "/")


def test_big_logs_get_a_bounded_window_around_the_cursor_with_a_note(
    machine: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(export, "MAX_STATIC_FRAMES", 50)
    ex = Explorer(machine, record(machine, long_events(300)))
    ex.index = 200
    data = static_payload(ex)
    assert (data["start"], data["stop"], data["index"]) == (175, 224, 200)
    assert "175–224 of a 301-entry log" in data["note"] and len(data["frames"]) == 50
    chosen = static_payload(ex, start=10, stop=19)
    assert [f["index"] for f in chosen["frames"]] == list(range(10, 20)) and chosen[
        "index"
    ] == 19
    with pytest.raises(AgentError) as caught:
        static_payload(ex, start=5, stop=400)
    assert caught.value.code == "invalid-export-range" and "301" in caught.value.message


def test_missing_bundle_is_a_clear_error(
    machine: Any,
    entries: list[dict[str, Any]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agent_explorer.explorer import export

    monkeypatch.setattr(export, "STATIC_DIR", tmp_path / "nowhere")
    with pytest.raises(AgentError) as caught:
        Explorer(machine, entries).to_html(tmp_path / "x.html")
    assert caught.value.code == "missing-bundle" and "npm" in caught.value.message


def test_the_last_search_travels_whole_within_the_window(machine: Any) -> None:
    ex = Explorer(machine, record(machine, long_events(300)))
    everywhere = ex.search("hello")
    data = static_payload(ex, start=10, stop=100)
    inside = [h for h in everywhere if h.until >= 10 and h.index <= 100]
    assert [h["index"] for h in data["searchHits"]] == [h.index for h in inside]
    assert data["traits"]["search_results"]["total"] == len(inside) < len(everywhere)
    assert data["traits"]["search_results"]["query"]["text"] == "hello"


def test_a_bundle_holding_a_script_tag_would_be_embedded_as_json() -> None:
    element = export._bundle_element('const s = "</script><script>x()</script>";')
    assert (
        element["bundle_type"] == "application/json"
        and "</script" not in element["bundle"]
    )
    assert json.loads(element["bundle"]) == 'const s = "</script><script>x()</script>";'
