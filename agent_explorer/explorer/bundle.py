"""Where the widget's built front end lives (static/widget.js + widget.css, bundled from js/ at install time),
and what the widget loads when it was not built. Reads files only."""

from __future__ import annotations

from pathlib import Path

__all__ = ["STATIC_DIR", "css", "esm", "runs_esm"]

STATIC_DIR = Path(__file__).parent / "static"

_MISSING_BUNDLE = """
export default { render({ el }) {
  const p = document.createElement("pre");
  p.textContent = "agent_explorer: the widget's front end is not built (agent_explorer/explorer/static/widget.js).\\n" +
    "Reinstall the package (pip install -e .) or run `npm ci && npm run build` in js/.";
  el.appendChild(p);
} };
"""


def esm() -> Path | str:
    bundle = STATIC_DIR / "widget.js"
    return bundle if bundle.exists() else _MISSING_BUNDLE


def runs_esm() -> Path | str:
    """The run list's front end (js/src/runs.js): a bundle of its own, without the chart's Graphviz."""
    bundle = STATIC_DIR / "runs.js"
    return bundle if bundle.exists() else _MISSING_BUNDLE


def css() -> Path | str:
    sheet = STATIC_DIR / "widget.css"
    return sheet if sheet.exists() else ""
