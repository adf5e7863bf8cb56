"""The README's command-line block runs exactly as written (from a folder that has the repository's sample_logs/).

Each line is run by bash with this venv's `agent-explorer` on PATH; its exit code must be the one its comment names
(`# exit 1`), else 0. `open` lines start a server and are left to tests/cli/test_open.py and the browser tests;
`--follow` lines follow a live run and are left to tests/cli/test_follow.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def readme_block(heading: str, number: int = 0) -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.S)
    return [line for line in blocks[number].splitlines() if line.strip()]


def test_the_command_line_block_runs_as_written(sample_logs: Path, tmp_path: Path) -> None:
    (tmp_path / "sample_logs").symlink_to(sample_logs)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    ran = []
    for line in readme_block("Command line"):
        if line.startswith("agent-explorer open") or " --follow" in line:
            continue
        expected = int(m.group(1)) if (m := re.search(r"# exit (\d)", line)) else 0
        done = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=300)
        assert done.returncode == expected, f"{line}\n{done.stdout}\n{done.stderr}"
        ran.append(line.split()[1])
    assert ran == ["samples", "verify", "show", "threads", "export", "import", "fork", "verify", "html"]
    assert (tmp_path / "verify.xml").read_text().startswith("<?xml")  # the fleet line wrote its JUnit report
    assert (tmp_path / "clean.html").stat().st_size > 100_000 and (tmp_path / "runs.db").exists()


def test_the_readme_says_how_to_build_the_wheel_and_the_installed_package_test_builds_it_so() -> None:
    """The wheel the README tells users to install is built by the README's own command, the one
    tests/browser/test_installed_package.py runs before it installs the wheel into a fresh venv."""
    lines = readme_block("Install it in your own project", 1)
    build = next(line for line in lines if " wheel " in line).split("#")[0].split()
    assert build == ["python3", "-m", "pip", "wheel", ".", "--no-deps", "-w", "dist"]
    installed = (ROOT / "tests" / "browser" / "test_installed_package.py").read_text(encoding="utf-8")
    assert '"-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(ROOT)' in installed
    assert any(line.split()[-1].startswith("'dist/agent_explorer-") or "dist/agent_explorer-" in line
               for line in lines if "pip install" in line)
