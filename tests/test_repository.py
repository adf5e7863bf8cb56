"""What the repository itself promises: generated data is generated, not committed, and nothing big is tracked."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agent_explorer.samples.generate import GENERATED_FILES
from agent_explorer.samples.shipped import GOLDEN_FILES, NOTEBOOKS

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 5 * 1024 * 1024


def _tracked() -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    return [name for name in out.stdout.decode("utf-8").split("\0") if name]


def test_no_tracked_file_is_over_5_mb() -> None:
    sizes = {name: (ROOT / name).stat().st_size for name in _tracked() if (ROOT / name).is_file()}
    assert sizes, "git ls-files listed nothing"
    big = {name: size for name, size in sizes.items() if size > LIMIT}
    assert not big, f"tracked files over 5 MB (generate them instead): {big}"


def test_the_committed_sample_logs_are_the_shipped_ones_and_the_generated_ones_are_ignored() -> None:
    tracked = _tracked()
    committed = sorted(Path(n).name for n in tracked if n.startswith("sample_logs/"))
    assert committed == sorted(GOLDEN_FILES)
    assert all((ROOT / "sample_logs" / n).stat().st_size < 100 * 1024 for n in committed)
    assert sorted(Path(n).name for n in tracked if n.startswith("notebooks/")) == sorted(NOTEBOOKS)
    for name in GENERATED_FILES:
        ignored = subprocess.run(["git", "check-ignore", "-q", f"sample_logs/{name}"], cwd=ROOT)
        assert ignored.returncode == 0, f"sample_logs/{name} is not git-ignored"
