"""Where the widget's built front end lives (static/widget.js + widget.css, bundled from js/ at install time),
and what the widget loads when it was not built. Reads files only."""

from __future__ import annotations

from pathlib import Path

__all__ = ["STATIC_DIR", "css", "esm", "runs_esm"]

STATIC_DIR = Path(__file__).parent / "static"

def _missing(name: str) -> str:
    """What a widget shows when its bundle was not built: which file is missing and how to build it."""
    return f"""
export default {{ render({{ el }}) {{
  const p = document.createElement("pre");
  p.textContent = "agent_explorer: the widget's front end is not built (agent_explorer/explorer/static/{name}).\\n" +
    "Reinstall the package (pip install -e .) or run `npm ci && npm run build` in js/.";
  el.appendChild(p);
}} }};
"""


def _bundle(name: str) -> Path | str:
    bundle = STATIC_DIR / name
    return bundle if bundle.exists() else _missing(name)


def esm() -> Path | str:
    return _bundle("widget.js")


def runs_esm() -> Path | str:
    """The run list's front end (js/src/runs.js): a bundle of its own, without the chart's Graphviz."""
    return _bundle("runs.js")


def css() -> Path | str:
    sheet = STATIC_DIR / "widget.css"
    return sheet if sheet.exists() else ""
