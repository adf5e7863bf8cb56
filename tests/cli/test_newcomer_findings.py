"""What a newcomer met running every documented verb from the installed wheel, and attacking it (issue 21).

Each test fails on the code before its fix; the CLI runs in-process (`main`) against real files and the real
PostgreSQL server.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from agent_explorer.cli import main


def run(argv: list[str], capsys: Any) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> bool:
    return err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.postgres
def test_a_server_refusal_keeps_its_own_words(capsys: Any) -> None:
    """The server's reply starts "FATAL:"; the message lower-cased its first letter into "fATAL:"."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from pg_server import pg_dsn

    dsn = pg_dsn()
    sep = "&" if "?" in dsn else "?"
    code, out, err = run(["verify", f"{dsn}{sep}options=-cno_such_setting%3D1#t"], capsys)
    assert code == 2 and out == "" and one_line(err), err
    assert "cannot connect to PostgreSQL at host" in err and "FATAL:" in err and "fATAL" not in err, err


SECRET = "s3cret-Pa55"
CONNINFO = f"host=127.0.0.1 port=1 user=app password={SECRET}"


@pytest.mark.parametrize("argv", [
    ["verify", f"{CONNINFO}#t"],
    ["verify", f"{CONNINFO}#t", "--json"],
    ["show", f"{CONNINFO}#t"],
    ["html", f"{CONNINFO}#t", "-o", "out.html"],
    ["export", f"{CONNINFO}#t", "out.jsonl"],
    ["fork", f"{CONNINFO}#t", "out.jsonl", "--at", "1"],
    ["open", f"{CONNINFO}#t", "--no-browser"],
    ["threads", "--store", CONNINFO],
    ["verify", CONNINFO, "--all-threads"],
    ["verify", f"dbname=app password='{SECRET} x'#t"],
])
def test_a_libpq_keyword_string_pasted_as_log_or_store_never_prints_its_password(
        argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    """`host=… password=…` is libpq's other way to name a server. Given where a LOG or STORE_URL belongs, the CLI
    said "no such log file: host=… password=s3cret" (or quoted it as a bad store URL), password and all."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(argv, capsys)
    assert code == 2 and out == "" and one_line(err), err
    assert SECRET not in err and "password=***" in err, err
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_a_missing_log_reads_as_a_libpq_string_when_it_is_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: Any) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = run(["verify", f"{CONNINFO}#t"], capsys)
    assert code == 2 and "[invalid-argument]" in err and "postgresql://user@host:port/db#thread" in err, err
    code, _, err = run(["verify", "missing.jsonl"], capsys)
    assert code == 2 and "[file-not-found]" in err and "missing.jsonl" in err, err


def test_open_serves_jupyterlab_without_the_news_toast(sample_logs: Path, tmp_path: Path) -> None:
    """JupyterLab's "Would you like to get notified about official Jupyter news?" toast sat over the explorer's
    bottom-right corner (its search bar) in a 1400x1100 window. The real server `open` starts must say, in the
    page config it serves, that news is off."""
    import json
    import os
    import re
    import shutil
    import signal
    import socket
    import subprocess
    import time
    import urllib.request

    pytest.importorskip("jupyterlab")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    shutil.copy(sample_logs / "support_clean.jsonl", tmp_path / "run.jsonl")
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_explorer.cli", "open", "run.jsonl", "--no-browser", "--port", str(port)],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        assert process.stdout is not None
        url = ""
        deadline = time.monotonic() + 120
        while not url and time.monotonic() < deadline:
            line = process.stdout.readline()
            assert line, "open exited before printing its URL"
            found = re.search(r"http://127\.0\.0\.1:\d+/lab/tree/\S+", line)
            url = found.group(0) if found else ""
        page = ""
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(url, timeout=5) as response:
                    page = response.read().decode()
                break
            except OSError:
                time.sleep(0.5)
        config = re.search(r'<script id="jupyter-config-data" type="application/json">(.*?)</script>', page, re.S)
        assert config, page[:500]
        assert json.loads(config.group(1))["news"] == {"disabled": True}
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()


def _one_thread_store(sample_logs: Path, path: Path) -> str:
    import asyncio

    from agent_explorer import SqliteEventLogStore, read_log

    async def build() -> None:
        store = SqliteEventLogStore(path)
        try:
            await store.append(thread_id="t", expected_index=0, entries=read_log(sample_logs / "support_clean.jsonl"))
        finally:
            await store.aclose()

    asyncio.run(build())
    return f"sqlite:///{path}"


def test_junit_refuses_a_link_and_never_writes_through_one(sample_logs: Path, tmp_path: Path, capsys: Any) -> None:
    """`verify --all-threads --junit LINK` wrote the report through the link: a file the link pointed at was
    replaced by JUnit XML, and a dangling link created its target. Refused now, before any work, as `html -o` is."""
    url = _one_thread_store(sample_logs, tmp_path / "runs.db")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    (tmp_path / "to-victim.xml").symlink_to(victim)
    (tmp_path / "dangling.xml").symlink_to(tmp_path / "elsewhere.xml")
    gate = ["verify", url, "--all-threads", "--machine", "agent_explorer.samples:support_agent", "--no-progress"]
    for link in ("to-victim.xml", "dangling.xml"):
        code, out, err = run([*gate, "--junit", str(tmp_path / link)], capsys)
        assert code == 2 and out == "" and one_line(err) and "symbolic link" in err, err
    assert victim.read_text(encoding="utf-8") == "precious"
    assert not (tmp_path / "elsewhere.xml").exists()


def test_junit_replaces_an_old_report_whole(sample_logs: Path, tmp_path: Path, capsys: Any) -> None:
    """A CI re-run replaces last run's report; it is renamed into place (a reader never sees half a file)."""
    url = _one_thread_store(sample_logs, tmp_path / "runs.db")
    report = tmp_path / "verify.xml"
    report.write_text("old", encoding="utf-8")
    inode = report.stat().st_ino
    code, out, err = run(["verify", url, "--all-threads", "--machine", "agent_explorer.samples:support_agent",
                          "--no-progress", "--junit", str(report)], capsys)
    assert code == 0, err
    assert report.read_text(encoding="utf-8").startswith("<?xml") and 'tests="1"' in report.read_text("utf-8")
    assert report.stat().st_ino != inode  # a new file renamed over the old one, not rewritten in place
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_open_notebook_takes_the_name_the_readme_uses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README names the sample notebooks without `.ipynb` (`03_postmortem`); `open --notebook 03_postmortem`
    was refused with "no sample notebook '03_postmortem'"."""
    import agent_explorer.samples.generate as generate
    from agent_explorer.cli.open import write_sample_workspace
    from agent_explorer.errors import AgentError

    monkeypatch.setattr(generate, "LONG_RUN_TICKETS", 3)  # the full long run is the session fixture's job
    root, notebook = write_sample_workspace(tmp_path, "03_postmortem")
    assert str(notebook) == "notebooks/03_postmortem.ipynb" and (root / notebook).is_file()
    for wrong in ("03_postmortem.py", "../notebooks/03_postmortem", "03"):
        with pytest.raises(AgentError):
            write_sample_workspace(tmp_path, wrong)


@pytest.mark.parametrize("port", ["99999", "-1", "0"])
def test_open_refuses_a_port_bind_cannot_take_before_writing_anything(port: str, sample_logs: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: Any) -> None:
    """`open LOG --port 99999` wrote the notebook, then bind() raised OverflowError: a traceback, exit 1."""
    import shutil

    pytest.importorskip("jupyterlab")
    monkeypatch.chdir(tmp_path)
    shutil.copy(sample_logs / "support_clean.jsonl", tmp_path / "run.jsonl")
    code, out, err = run(["open", "run.jsonl", "--port", port, "--no-browser"], capsys)
    assert code == 2 and out == "" and one_line(err) and "--port must be a TCP port" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.jsonl"]


@pytest.mark.parametrize("address", ["bogus", "", "tcp://[::1"])
def test_a_scheduler_address_dask_cannot_parse_is_one_line(address: str, sample_logs: Path, tmp_path: Path,
                                                           capsys: Any) -> None:
    """`verify --all-threads --scheduler bogus`: Dask's ValueError ("missing port number") was a 50-line
    traceback with exit 1, the code that means "a thread diverges"."""
    pytest.importorskip("distributed")
    url = _one_thread_store(sample_logs, tmp_path / "runs.db")
    code, out, err = run(["verify", url, "--all-threads", "--machine", "agent_explorer.samples:support_agent",
                          "--no-progress", "--scheduler", address], capsys)
    assert code == 2 and out == "" and one_line(err) and "cannot reach the Dask scheduler" in err, err
