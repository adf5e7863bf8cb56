"""`verify --follow` and `show --follow` as a user runs them: a subprocess following a thread that another
process (a real writer) appends to, in a SQLite file and in PostgreSQL; divergences printed as they land,
the exit when the run ends, Ctrl-C."""

from __future__ import annotations

import asyncio
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
GUARD = 120.0  # seconds: a hung process fails the test instead of hanging the suite (not a speed goal)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


class Lines:
    """A subprocess's stdout, read line by line on a thread so the test can wait for a given line."""

    def __init__(self, proc: subprocess.Popen[str], stream: str = "stdout") -> None:
        self.proc = proc
        self.seen: list[str] = []
        self._stream = getattr(proc, stream)
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self._stream is not None
        for line in self._stream:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, predicate: Any, what: str) -> str:
        deadline = time.monotonic() + GUARD
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"no line {what} in {self.seen!r}"
            try:
                line = self._queue.get(timeout=left)
            except queue.Empty:
                continue
            assert line is not None, f"the process ended (exit {self.proc.wait()}) before a line {what}: {self.seen!r}"
            self.seen.append(line)
            if predicate(line):
                return line

    def rest(self) -> list[str]:
        self.proc.wait(GUARD)
        while True:
            line = self._queue.get(timeout=GUARD)
            if line is None:
                return self.seen
            self.seen.append(line)


def cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "agent_explorer.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=_env())


def writer(url: str, thread: str, events: int, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, str(HERE / "_follow_writer.py"), url, thread, str(events), *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())


def seed(url: str, thread: str, **options: Any) -> None:
    """The run's init entry, so the store (and the SQLite file) exists before the follower starts."""
    sys.path.insert(0, str(HERE))
    try:
        from follow_machines import counter

        from agent_explorer import init_entry, open_store
    finally:
        sys.path.remove(str(HERE))

    async def run() -> None:
        store = open_store(url, **options)
        await store.append(thread_id=thread, expected_index=0,
                           entries=[init_entry(counter, input=None, metadata={"machineRef": "follow_machines:counter"})])
        await store.aclose()

    asyncio.run(run())


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, list[str]]]:
    """(URL as the CLI takes it, extra writer arguments)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'runs.db'}", []
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from stores.conftest import drop_schema, pg_dsn

    dsn = pg_dsn()
    assert dsn is not None
    schema = f"t_{uuid.uuid4().hex[:12]}"
    sep = "&" if "?" in dsn else "?"
    yield f"{dsn}{sep}schema={schema}", []
    asyncio.run(drop_schema(dsn, schema))


def run_writer(url: str, thread: str, events: int, *extra: str) -> None:
    done = subprocess.run([sys.executable, str(HERE / "_follow_writer.py"), url, thread, str(events), *extra],
                          capture_output=True, text=True, env=_env(), timeout=GUARD)
    assert done.returncode == 0, done.stderr


def _stop(*procs: subprocess.Popen[str]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


def test_verify_follow_prints_a_divergence_as_it_lands_and_exits_1_when_the_run_ends(store_url: tuple[str, list[str]], tmp_path: Path) -> None:
    url, _ = store_url
    seed(url, "t")
    go = tmp_path / "go"
    follower = cli("verify", f"{url}#t", "--follow", "--machine", "follow_machines:counter")
    host = writer(url, "t", 30, "--tamper", "12", "--pause-at", "12", "--go", str(go))
    try:
        out = Lines(follower)
        line = out.wait_for(lambda text: "divergence at index" in text, "naming the divergent index")
        assert line.startswith("divergence at index 12: event INC"), line
        # Printed while the run is still going: the writer waits for us before appending the rest.
        assert follower.poll() is None and host.poll() is None
        go.write_text("go")
        lines = out.rest()
        assert follower.returncode == 1, (lines, follower.stderr.read() if follower.stderr else "")
        assert host.wait(GUARD) == 0
        assert [text for text in lines if "divergence at index" in text] == [line]  # later entries verify again
        assert lines[-1] == (f"diverged: 1 divergent entry; 32 entries of {url}#t checked (32 hashes compared, "
                             "0 without a hash); the run ended (status done)"), lines[-1]
    finally:
        _stop(follower, host)


def test_verify_follow_exits_0_when_a_clean_run_reaches_its_final_state(store_url: tuple[str, list[str]], tmp_path: Path) -> None:
    url, _ = store_url
    seed(url, "t")
    go = tmp_path / "go"
    follower = cli("verify", f"{url}#t", "--follow", "--machine", "follow_machines:counter", "--json")
    host = writer(url, "t", 40, "--pause-at", "20", "--go", str(go))
    try:
        out = Lines(follower)
        assert host.stdout is not None
        for text in host.stdout:  # the host is part-way (paused at index 20)...
            if text.startswith("APPENDED 21"):
                break
        assert follower.poll() is None, "the follower exited before the run ended"  # ...and we still follow
        go.write_text("go")
        lines = out.rest()
        assert follower.returncode == 0, (lines, follower.stderr.read() if follower.stderr else "")
        import json

        report = json.loads(lines[-1])
        assert report | {"log": None} == {"log": None, "ok": True, "entries": 42, "checked": 42, "unverified": 0, "status": "done",
                                          "interrupted": False, "firstDivergence": None, "divergenceCount": 0, "divergences": []}
    finally:
        _stop(follower, host)


def test_verify_follow_on_ctrl_c_says_what_it_checked(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    seed(url, "t")
    run_writer(url, "t", 10, "--no-stop")  # a run left active (waiting for a human, say)
    follower = cli("verify", f"{url}#t", "--follow", "--machine", "follow_machines:counter")
    try:
        Lines(follower, "stderr").wait_for(lambda text: "caught up" in text, "saying it caught up")
        follower.send_signal(signal.SIGINT)
        lines = Lines(follower).rest()
        assert follower.returncode == 130, lines
        assert lines == [f"interrupted: 11 entries of {url}#t checked (11 hashes compared, 0 without a hash); "
                         "no divergence; the run is still active"], lines
    finally:
        _stop(follower)


def test_verify_follow_on_ctrl_c_after_a_divergence_exits_1(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.db'}"
    seed(url, "t")
    run_writer(url, "t", 6, "--no-stop", "--tamper", "3")
    follower = cli("verify", f"{url}#t", "--follow", "--machine", "follow_machines:counter")
    try:
        out = Lines(follower)
        assert out.wait_for(lambda text: "divergence at index" in text, "naming index 3").startswith("divergence at index 3:")
        Lines(follower, "stderr").wait_for(lambda text: "caught up" in text, "saying it caught up")
        follower.send_signal(signal.SIGINT)
        lines = out.rest()
        assert follower.returncode == 1, lines
        assert lines[-1] == (f"interrupted: 7 entries of {url}#t checked (7 hashes compared, 0 without a hash); "
                             "1 divergent entry; the run is still active"), lines[-1]
    finally:
        _stop(follower)


def test_show_follow_tails_the_table(store_url: tuple[str, list[str]], tmp_path: Path) -> None:
    url, _ = store_url
    seed(url, "t")
    run_writer(url, "t", 8, "--no-stop")  # 9 entries before we look
    follower = cli("show", f"{url}#t", "--follow", "--limit", "3")
    try:
        out = Lines(follower)
        out.wait_for(lambda text: text.split()[:1] == ["8"], "for the last stored entry")
        run_writer(url, "t", 12)  # resumes at 9: INC x4 then STOP
        out.wait_for(lambda text: "STOP" in text, "for the STOP appended live")
        follower.send_signal(signal.SIGINT)
        lines = out.rest()
        assert follower.returncode == 0, lines
        rows = [text.split()[0] for text in lines if text[:7].strip().isdigit()]
        assert rows == [str(i) for i in range(6, 14)], lines  # the last 3 stored, then every new one
        assert lines[0].split() == ["index", "recorded", "at", "event", "type", "detail"]
        assert lines[1] == "(… 6 earlier matching entries not shown)"
        assert lines[-1] == "(8 shown of 14 entries; stopped following)"
    finally:
        _stop(follower)


def test_follow_needs_a_store_thread(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text("")
    for verb in ("verify", "show"):
        done = subprocess.run([sys.executable, "-m", "agent_explorer.cli", verb, str(path), "--follow"],
                              capture_output=True, text=True, env=_env(), timeout=GUARD)
        assert done.returncode == 2
        assert done.stderr.strip().startswith("agent-explorer: error [invalid-argument]: --follow follows a thread in a store")
    done = subprocess.run([sys.executable, "-m", "agent_explorer.cli", "verify", f"sqlite:///{tmp_path / 'missing.db'}#t", "--follow"],
                          capture_output=True, text=True, env=_env(), timeout=GUARD)
    assert done.returncode == 2 and "no such SQLite store" in done.stderr
    assert not (tmp_path / "missing.db").exists()
