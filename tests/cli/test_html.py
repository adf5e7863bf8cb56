"""`agent-explorer html LOG -o FILE`: the static export from the shell, checked in the file it writes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agent_explorer.cli import main

pytest.importorskip("anywidget")


def payload(path: Path) -> dict[str, Any]:
    found = re.search(r'<script type="application/json" id="ae-data">(.*?)</script>', path.read_text(encoding="utf-8"), re.S)
    assert found, "no embedded data"
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_html_writes_one_self_contained_file_of_the_whole_log(sample_logs: Path, tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "postmortem.html"
    assert main(["html", str(sample_logs / "support_divergent.jsonl"), "-o", str(out)]) == 0
    assert capsys.readouterr().out.startswith(f"wrote {out}: 12 entries of ")
    data = payload(out)
    assert (data["start"], data["stop"], len(data["frames"])) == (0, 11, 12)
    assert data["traits"]["info"]["machineId"] == "support"
    html = out.read_text(encoding="utf-8")
    assert 'id="ae-bundle"' in html and "<link" not in html and "src=\"http" not in html


def test_html_exports_the_window_asked_for(sample_logs: Path, tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "window.html"
    assert main(["html", str(sample_logs / "support_clean.jsonl"), "-o", str(out), "--start", "2", "--stop", "5"]) == 0
    assert "indices 2–5 of 12 entries" in capsys.readouterr().out  # says the page holds a window, not "12 entries"
    data = payload(out)
    assert (data["start"], data["stop"], len(data["frames"]), len(data["rows"])) == (2, 5, 4, 4)
    assert data["note"]


def test_html_never_overwrites_without_force_and_a_bad_window_is_one_line(sample_logs: Path, tmp_path: Path,
                                                                          capsys: Any) -> None:
    out = tmp_path / "kept.html"
    out.write_text("mine")
    log = str(sample_logs / "support_clean.jsonl")
    assert main(["html", log, "-o", str(out)]) == 2
    assert "--force" in capsys.readouterr().err and out.read_text() == "mine"
    assert main(["html", log, "-o", str(out), "--force"]) == 0
    assert payload(out)["stop"] == 11
    assert main(["html", log, "-o", str(tmp_path / "bad.html"), "--start", "9", "--stop", "3"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "start" in err and not (tmp_path / "bad.html").exists()
