"""Static export: one self-contained HTML file showing an explorer (chart, log window, state at each index).

The file inlines the widget's own bundle and CSS and the precomputed data (traitlets, one frame per index of
the chosen range, the table rows of that range); the bundle's static model shim (js/src/static.js) answers
the front end's `model.get/set/on/send` from that data, so the page is the widget itself, not a second UI.
No server, no network. Never writes anywhere but `path`; never executes machine actions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import AgentError
from ..eventlog.files import write_bytes_atomically
from .bundle import STATIC_DIR
from .search import SearchQuery, search_page
from .search_data import search_corpus

if TYPE_CHECKING:
    from .widget import Explorer

__all__ = ["MAX_STATIC_FRAMES", "export_html", "export_window", "static_payload"]

# Frames embedded by default: a frame is ~1-2 kB of JSON, so 2,000 keep the file at a few MB beyond the bundle.
MAX_STATIC_FRAMES = 2_000
# Every synced traitlet travels (panels added later come along) except these: the per-index ones the shim
# serves from the frames and rows, the bundle itself, and ipywidgets' layout plumbing.
_NOT_EXPORTED = frozenset({"index", "frame", "table", "layout", "tabbable", "tooltip"})


def _window(
    ex: Explorer, start: int | None, stop: int | None
) -> tuple[int, int, str | None]:
    """[start, stop] inclusive, and the note shown when it is not the whole log."""
    n = len(ex)
    if start is None and stop is None:
        if n <= MAX_STATIC_FRAMES:
            return 0, n - 1, None
        half = MAX_STATIC_FRAMES // 2
        start = max(0, min(ex.index - half, n - MAX_STATIC_FRAMES))
        stop = start + MAX_STATIC_FRAMES - 1
    else:
        start = 0 if start is None else start
        stop = n - 1 if stop is None else stop
    if not (0 <= start <= stop < n):
        raise AgentError(
            f"to_html needs 0 <= start <= stop < {n} (the log's length), got start={start}, stop={stop}",
            code="invalid-export-range",
        )
    if stop - start + 1 > 10 * MAX_STATIC_FRAMES:
        raise AgentError(
            f"to_html embeds one frame per index; {stop - start + 1} indices is too many for one file "
            f"(at most {10 * MAX_STATIC_FRAMES}): choose a narrower start/stop",
            code="invalid-export-range",
        )
    if start == 0 and stop == n - 1:
        return start, stop, None
    return (
        start,
        stop,
        (
            f"Static export of indices {start:,}–{stop:,} of a {n:,}-entry log: the slider, the search and "
            "the filters stay inside this window. Open the log in a notebook for the rest."
        ),
    )


def export_window(ex: Explorer, start: int | None = None, stop: int | None = None) -> tuple[int, int]:
    """The indices [start, stop] that `to_html(path, start, stop)` writes (a window of a long log by default)."""
    first, last, _note = _window(ex, start, stop)
    return first, last


def static_payload(
    ex: Explorer, start: int | None = None, stop: int | None = None
) -> dict[str, Any]:
    """The data the static model shim serves: traitlet values, frames and table rows of [start, stop]."""
    start, stop, note = _window(ex, start, stop)
    # The page has no kernel to ask: coverage and the usage ledger go in computed (cheap next to the frames).
    if not ex.coverage_data:
        ex.coverage_counts()  # not ex.coverage(): its DataFrame (and the pandas import) would be thrown away
    if not ex.usage_ledger:
        ex.usage()
    frames = [ex.frame_at(i) for i in range(start, stop + 1)]
    rows = [ex.table_row(i) for i in range(start, stop + 1)]
    traits = {
        name: getattr(ex, name)
        for name in sorted(ex.trait_names(sync=True))
        if not name.startswith("_") and name not in _NOT_EXPORTED
    }
    # The last search, restricted to the window, travels whole: the page pages through it without Python.
    hits = [h for h in ex.search_hits if h.until >= start and h.index <= stop][:5_000]
    if traits.get("search_results", {}).get("query"):
        saved = traits["search_results"]["query"]
        query = SearchQuery(
            saved["text"],
            saved["regex"],
            saved["path"] or None,
            saved["scope"],
            saved["case"],
            saved["type"] or None,
        )
        traits["search_results"] = search_page(hits, query)
    index = min(max(ex.index, start), stop)
    return {
        "version": 1,
        "start": start,
        "stop": stop,
        "index": index,
        "note": note,
        "traits": traits,
        "frames": frames,
        "rows": rows,
        "pageSize": 100,
        "searchHits": [h.to_json() for h in hits],
        # What the page's own search and table filter read (js/src/pysearch.js): the window's events and contexts.
        "search": search_corpus(ex.machine, ex.entries[: stop + 1], start, stop),
    }


def _script_json(value: Any) -> str:
    """JSON safe inside a <script> element: no `</script>`, no `<!--`, no U+2028/9 surprises."""
    text = json.dumps(
        value, ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False
    )
    return (
        text.replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="agent_explorer to_html">
<title>{title}</title>
<style>
body {{ margin: 0; padding: 16px; font: 13px system-ui, sans-serif; background: #fff; color: #1f2328; }}
/* The widget styles itself with JupyterLab's theme variables; outside JupyterLab this page supplies them, so
   the export follows the reader's light or dark preference. */
@media (prefers-color-scheme: dark) {{
  body {{ background: #111; color: #e0e0e0;
    --jp-layout-color0: #111; --jp-layout-color1: #1b1b1b; --jp-layout-color2: #2a2a2a;
    --jp-ui-font-color0: #ececec; --jp-ui-font-color1: #d0d0d0; --jp-ui-font-color2: #9e9e9e;
    --jp-border-color1: #5a5a5a; --jp-border-color2: #383838; --jp-brand-color1: #4f9dff;
    --jp-success-color1: #5cb85c; --jp-error-color1: #f0625f; --jp-warn-color1: #ffa94d;
    --jp-mirror-editor-string-color: #e3a07a; --jp-mirror-editor-number-color: #a7d49b;
    --jp-mirror-editor-keyword-color: #79b8ff; }}
}}
#ae-static-note {{ margin: 0 0 8px; padding: 6px 10px; border-radius: 6px; background: rgba(127,127,127,.12); }}
</style>
<style>{css}</style>
</head>
<body>
<p id="ae-static-note" data-testid="static-note"></p>
<div id="ae-static"></div>
<script type="application/json" id="ae-data">{data}</script>
<script type="{bundle_type}" id="ae-bundle">{bundle}</script>
<script type="module">
const read = (id) => JSON.parse(document.getElementById(id).textContent);
const data = read("ae-data");
const source = document.getElementById("ae-bundle");
const code = source.type === "application/json" ? read("ae-bundle") : source.textContent;
const url = URL.createObjectURL(new Blob([code], {{ type: "text/javascript" }}));
const widget = await import(url);
const note = document.getElementById("ae-static-note");
note.textContent = data.note || ("Static export of a " + data.traits.length + "-entry log: every index is here; " +
  "search and filters run here as in the notebook; forking and other logs need the notebook.");
widget.renderStatic(data, document.getElementById("ae-static"));
</script>
</body>
</html>
"""


def export_html(
    ex: Explorer, path: str | Path, start: int | None = None, stop: int | None = None
) -> Path:
    """Write the self-contained HTML file; returns its path. Needs the built bundle (static/widget.js)."""
    bundle_path, css_path = STATIC_DIR / "widget.js", STATIC_DIR / "widget.css"
    if not bundle_path.exists():
        raise AgentError(
            f"to_html needs the widget's built front end at {bundle_path}; run `npm ci && npm run "
            "build` in js/ (or reinstall the package)",
            code="missing-bundle",
        )
    payload = static_payload(ex, start, stop)
    info = payload["traits"].get("info") or {}
    title = f"{info.get('machineId', 'run')} · agent_explorer"
    html = _PAGE.format(
        title=_text(title),
        css=css_path.read_text(encoding="utf-8").replace("</", "<\\/")
        if css_path.exists()
        else "",
        data=_script_json(payload),
        **_bundle_element(bundle_path.read_text(encoding="utf-8")),
    )
    out = Path(path)
    # Whole or not at all (a browser or a web server may be reading the old page), and never through a link:
    # the rename replaces the name itself.
    write_bytes_atomically(out, html.encode("utf-8"))
    return out


def _bundle_element(code: str) -> dict[str, str]:
    """Our own bundle goes in as it is (inert `text/plain`, half the size of JSON-escaping it) unless it holds
    a sequence that could end or re-open a script element; then it is JSON like the data."""
    lowered = code.lower()
    if "</script" in lowered or "<script" in lowered:
        return {"bundle_type": "application/json", "bundle": _script_json(code)}
    return {"bundle_type": "text/plain", "bundle": code}


def _text(value: str) -> str:
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
