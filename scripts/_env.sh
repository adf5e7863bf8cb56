# Shared set-up for scripts/explore and scripts/test: one virtualenv at .venv with the package installed
# editable (the install builds the widget's JavaScript bundle from js/ via hatch-jupyter-builder).
# Sourced, not executed. Idempotent: a second run only re-installs when pyproject.toml or js/ changed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
PY="${PYTHON:-python3}"

need() { command -v "$1" >/dev/null 2>&1 || { echo "error: '$1' is required ($2)" >&2; exit 1; }; }

ensure_venv() {
  local extras="$1"
  need "$PY" "Python 3.11 or newer"
  "$PY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
    || { echo "error: Python 3.11+ is required (found $("$PY" --version 2>&1))" >&2; exit 1; }
  need node "Node.js 20+ builds the widget's front end"
  need npm "npm installs the pinned front-end packages"
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
  # Re-install (and so rebuild the widget bundle) when an input of the install changed since the last one.
  local stamp="$VENV/.installed-$extras"
  local digest
  digest="$(cat "$ROOT/pyproject.toml" "$ROOT"/js/package*.json "$ROOT"/js/build.mjs 2>/dev/null \
    | cat - <(find "$ROOT/js/src" -type f -print0 2>/dev/null | sort -z | xargs -0 cat 2>/dev/null) \
    | sha256sum | cut -c1-16)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ] || [ ! -f "$ROOT/agent_explorer/explorer/static/widget.js" ]; then
    echo "==> installing agent-explorer[$extras] into .venv (first run takes a few minutes)"
    "$VENV/bin/python" -m pip install --quiet --upgrade pip
    "$VENV/bin/python" -m pip install --quiet -e "$ROOT[$extras]"
    echo "$digest" > "$stamp"
  fi
}
