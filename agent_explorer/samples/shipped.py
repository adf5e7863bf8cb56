"""Where the shipped notebooks and small sample logs are: inside the installed wheel, or in a checkout.

The wheel force-includes `notebooks/*.ipynb` and the committed `sample_logs/` files under
`agent_explorer/samples/shipped/` (pyproject.toml); a checkout (an editable install) reads them from the
repository's `notebooks/` and `sample_logs/`. This module only finds files; it never writes.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import AgentError

__all__ = [
    "GOLDEN_FILES",
    "NOTEBOOKS",
    "checkout_root",
    "shipped_notebooks_dir",
    "shipped_sample_logs_dir",
    "user_home",
]

PACKAGE_DIR = Path(__file__).resolve().parent
BUNDLED = PACKAGE_DIR / "shipped"

#: The sample logs that are committed and shipped (each under 100 KB), and the notes that go with them.
GOLDEN_FILES = (
    "support_clean.jsonl",
    "support_crashed.jsonl",
    "support_divergent.jsonl",
    "support_bridge_v1.jsonl",
    "support_bridge_v2.jsonl",
    "support_whatif.jsonl",
    "support_ignored.jsonl",
    "research_race.jsonl",
    "planner_trip.jsonl",
    "README.md",
    "inbox_long.sha256",
)
NOTEBOOKS = (
    "01_explore_a_run.ipynb",
    "02_teaching_replay.ipynb",
    "03_postmortem.ipynb",
    "04_what_if.ipynb",
    "05_record_your_own_agent.ipynb",
    "06_follow_a_live_run.ipynb",
    "07_triage_a_store.ipynb",
)


def checkout_root() -> Path | None:
    """The repository this package runs from (an editable install), or None for an installed wheel."""
    root = PACKAGE_DIR.parents[1]
    markers = (root / "pyproject.toml", root / "notebooks", root / "sample_logs", root / "agent_explorer")
    return root if all(m.exists() for m in markers) else None


def _shipped(name: str) -> Path:
    if (BUNDLED / name).is_dir():
        return BUNDLED / name
    root = checkout_root()
    if root is not None:
        return root / name
    raise AgentError(
        f"this installation of agent_explorer has no {name}/ (looked in {BUNDLED} and beside the package); "
        "reinstall it: pip install --force-reinstall 'agent-explorer[lab]'",
        code="file-not-found",
    )


def shipped_sample_logs_dir() -> Path:
    """The folder holding the committed sample logs (`GOLDEN_FILES`)."""
    return _shipped("sample_logs")


def shipped_notebooks_dir() -> Path:
    """The folder holding the sample notebooks (`NOTEBOOKS`)."""
    return _shipped("notebooks")


def user_home() -> Path:
    """The per-user folder an installed package writes its samples to (`notebooks/`, `sample_logs/`)."""
    import platformdirs

    return Path(platformdirs.user_data_dir("agent-explorer", appauthor=False))
