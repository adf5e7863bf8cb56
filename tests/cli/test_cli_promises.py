"""The CLI keeps its promises on hostile or unusual input (issue 21, part C), as a user meets it.

A FIFO as LOG, a ref naming a non-machine, `html -o` over a link, a password in a store URL, a PostgreSQL URL
without the driver or the server, a store of several machines, an empty log, a URL as LOG, a long fleet reason.
Real files, real SQLite stores, the real PostgreSQL server, the console script in a subprocess where it matters
(a hang, a missing module). Each test fails on the code before these fixes (commit 39f9214).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from filled_stores import sqlite_store_of as make_store

from agent_explorer import read_log
from agent_explorer.cli import main
from agent_explorer.stores.urls import redact_url

SECRET = "s3cret-Pa55"
HANG_GUARD = 60  # seconds: a verb that waits on a FIFO would hit this instead of returning


def cli(*args: str, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The console script's entry point in a fresh interpreter (`python -m agent_explorer.cli`)."""
    done = subprocess.run([sys.executable, "-m", "agent_explorer.cli", *args], input=stdin, capture_output=True,
                          timeout=HANG_GUARD, cwd=cwd)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def run(argv: list[str], capsys: Any) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> bool:
    return err.count("\n") == 1 and "Traceback" not in err


def entries_of(sample_logs: Path, name: str) -> list[dict[str, Any]]:
    return read_log(sample_logs / name)


# --- 7. a FIFO (or any non-regular file) as LOG --------------------------------------------------------------


def test_a_fifo_log_is_refused_at_once_instead_of_waiting_for_a_writer(sample_logs: Path, tmp_path: Path) -> None:
    fifo = tmp_path / "f.jsonl"
    os.mkfifo(fifo)
    html = str(tmp_path / "out.html")
    for argv in (["verify", str(fifo)], ["show", str(fifo)], ["html", str(fifo), "-o", html],
                 ["import", str(fifo), f"sqlite:///{tmp_path / 'runs.db'}#t"], ["fork", str(fifo), "x.jsonl", "--at", "1"]):
        started = time.monotonic()
        done = cli(*argv, cwd=tmp_path)  # on the old code: TimeoutExpired, the verb waits for a writer forever
        assert done.returncode == 2 and one_line(done.stderr), (argv, done.stderr)
        assert "named pipe (FIFO)" in done.stderr and "not a log file" in done.stderr
        assert time.monotonic() - started < 30
    assert not Path(html).exists() and not (tmp_path / "x.jsonl").exists()


def test_a_fifo_named_as_a_sqlite_store_is_refused_at_once(tmp_path: Path) -> None:
    """`sqlite:///a-fifo#t`: SQLite would open the pipe and block on its first read (the store's open checks it)."""
    fifo = tmp_path / "runs.db"
    os.mkfifo(fifo)
    url = f"sqlite:///{fifo}"
    machine = "--machine=agent_explorer.samples:support_agent"
    for argv in (["verify", f"{url}#t", machine], ["show", f"{url}#t"], ["threads", "--store", url],
                 ["runs", url, machine, "--no-progress"], ["verify", url, "--all-threads", machine, "--no-progress"]):
        done = cli(*argv, cwd=tmp_path)  # before: TimeoutExpired for verify, show and threads
        assert done.returncode == 2 and one_line(done.stderr), (argv, done.stderr)
        assert "named pipe (FIFO)" in done.stderr, (argv, done.stderr)


def test_a_directory_as_log_is_one_line(sample_logs: Path, capsys: Any) -> None:
    code, _, err = run(["show", str(sample_logs)], capsys)
    assert code == 2 and one_line(err) and "is a directory, not a log file" in err


def test_a_log_piped_in_as_dash_or_dev_stdin_is_read(sample_logs: Path, tmp_path: Path) -> None:
    """The pipe the user means still works (on the old code `-` was a missing file and /dev/stdin 'not seekable')."""
    clean = (sample_logs / "support_clean.jsonl").read_bytes()
    for name in ("-", "/dev/stdin"):
        done = cli("verify", name, stdin=clean, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith(f"ok: 12 entries of {name} against machine support version 1")
    divergent = cli("verify", "-", stdin=(sample_logs / "support_divergent.jsonl").read_bytes(), cwd=tmp_path)
    assert divergent.returncode == 1 and "divergence at index 6" in divergent.stdout
    array = json.dumps(entries_of(sample_logs, "support_clean.jsonl")).encode()  # a JSON-array log through a pipe
    shown = cli("show", "-", "--limit", "3", stdin=array, cwd=tmp_path)
    assert shown.returncode == 0 and shown.stdout.rstrip().endswith("(3 shown of 12 entries)")


# --- 8. a ref that names something other than a machine ------------------------------------------------------

NOT_MACHINES = ["agent_explorer.samples.support:support_agent.__class__", "agent_explorer.samples.support:support_agent.config"]


@pytest.mark.parametrize("ref", NOT_MACHINES, ids=["class", "dict"])
def test_a_ref_to_a_non_machine_is_one_line_from_the_flag_and_from_the_log(sample_logs: Path, tmp_path: Path,
                                                                           capsys: Any, ref: str) -> None:
    log = str(sample_logs / "support_clean.jsonl")
    code, out, err = run(["verify", log, "--machine", ref], capsys)
    assert code == 2 and out == "" and one_line(err)
    assert "is not a machine" in err and "[machine-not-found]" in err
    entries = entries_of(sample_logs, "support_clean.jsonl")
    entries[0]["metadata"]["machineRef"] = ref  # sample-prefixed: imported without asking, so it must be checked
    named = tmp_path / "named.jsonl"
    named.write_text("".join(json.dumps(e) + "\n" for e in entries))
    for argv in (["verify", str(named)], ["html", str(named), "-o", str(tmp_path / "x.html")]):
        code, _, err = run(argv, capsys)
        assert code == 2 and one_line(err) and "is not a machine" in err, (argv, err)


# --- 12. html -o: links, atomic replace ----------------------------------------------------------------------


def test_html_refuses_a_dangling_link_and_never_writes_through_one(sample_logs: Path, tmp_path: Path,
                                                                   capsys: Any) -> None:
    pytest.importorskip("anywidget")
    log = str(sample_logs / "support_clean.jsonl")
    dangling = tmp_path / "page.html"
    dangling.symlink_to(tmp_path / "elsewhere.html")
    code, _, err = run(["html", log, "-o", str(dangling)], capsys)
    assert code == 2 and one_line(err) and "symbolic link" in err
    assert not (tmp_path / "elsewhere.html").exists()  # the old code created the link's target
    victim = tmp_path / "notes.txt"
    victim.write_text("the user's own notes")
    link = tmp_path / "report.html"
    link.symlink_to(victim)
    code, _, err = run(["html", log, "-o", str(link), "--force"], capsys)
    assert code == 2 and one_line(err) and "symbolic link" in err
    assert victim.read_text() == "the user's own notes" and link.is_symlink()


def test_html_force_replaces_the_file_whole_by_rename(sample_logs: Path, tmp_path: Path, capsys: Any) -> None:
    pytest.importorskip("anywidget")
    out = tmp_path / "page.html"
    out.write_text("old page")
    reader = out.open("rb")  # a reader holding the old page keeps reading the old page, whole
    try:
        before = os.stat(out).st_ino
        code, _, _ = run(["html", str(sample_logs / "support_clean.jsonl"), "-o", str(out), "--force"], capsys)
        assert code == 0
        assert os.stat(out).st_ino != before  # a new file renamed into place, not the old one truncated
        assert reader.read() == b"old page"
    finally:
        reader.close()
    assert out.read_text(encoding="utf-8").startswith("<!doctype html>") or "<html" in out.read_text(encoding="utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.html"]  # no temporary file left behind


# --- 13. a password in a store URL is never printed ----------------------------------------------------------


def test_redact_url_masks_both_places_libpq_takes_a_password() -> None:
    assert redact_url(f"postgresql://agent:{SECRET}@db:5432/app?sslmode=require#t") == \
        "postgresql://agent:***@db:5432/app?sslmode=require#t"
    assert redact_url(f"postgresql://agent@db/app?sslmode=require&password={SECRET}") == \
        "postgresql://agent@db/app?sslmode=require&password=***"
    assert SECRET not in redact_url(f"postgresql://agent:{SECRET}@[::1/app")  # unparseable, still masked
    assert redact_url("sqlite:////abs/runs.db") == "sqlite:////abs/runs.db"


@pytest.fixture
def pg_with_password() -> Iterator[str]:
    """The test server's URL with a password in it (the test cluster trusts local connections, so any password
    is accepted) and a schema of this test's own, dropped afterwards."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from pg_server import pg_dsn
    from stores.conftest import drop_schema

    dsn = pg_dsn()
    scheme, _, rest = dsn.partition("://")
    userinfo, at, host = rest.rpartition("@")
    assert at and ":" not in userinfo, "the test DSN is expected to carry a user and no password"
    schema = f"t_{uuid.uuid4().hex[:12]}"
    sep = "&" if "?" in host else "?"
    yield f"{scheme}://{userinfo}:{SECRET}@{host}{sep}schema={schema}"
    asyncio.run(drop_schema(dsn, schema))


@pytest.mark.postgres
def test_single_log_verbs_never_print_the_password(pg_with_password: str, sample_logs: Path, tmp_path: Path,
                                                   capsys: Any) -> None:
    url = pg_with_password
    log = str(sample_logs / "support_clean.jsonl")
    outputs = []
    code, out, err = run(["import", log, f"{url}#t"], capsys)
    assert code == 0 and "copied 12 entries" in out
    outputs.append(out + err)
    code, out, err = run(["verify", f"{url}#t"], capsys)
    assert code == 0 and out.startswith("ok: 12 entries of postgresql://")
    outputs.append(out + err)
    code, out, err = run(["verify", f"{url}#t", "--json"], capsys)
    assert code == 0 and json.loads(out)["log"].startswith("postgresql://")
    outputs.append(out + err)
    pytest.importorskip("anywidget")
    code, out, err = run(["html", f"{url}#t", "-o", str(tmp_path / "t.html")], capsys)
    assert code == 0 and out.startswith("wrote ")
    outputs.append(out + err)
    for argv in (["import", log, f"{url}#t"], ["verify", f"{url}#missing"], ["show", url],
                 ["verify", f"{url}#t", "--all-threads"]):  # the error lines too
        code, out, err = run(argv, capsys)
        assert code == 2 and one_line(err), (argv, err)
        outputs.append(out + err)
    for text in outputs:
        assert SECRET not in text and ":***@" in text, text


# --- 15. PostgreSQL without the driver, or without a server --------------------------------------------------

BLOCK_PSYCOPG = """
import sys

class NoPsycopg:
    '''An install without the [postgres] extra: psycopg and psycopg_pool cannot be imported.'''
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("psycopg", "psycopg_pool", "psycopg_binary", "psycopg_c"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, NoPsycopg())
from agent_explorer.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_postgres_url_without_the_extra_says_which_extra_to_install(tmp_path: Path) -> None:
    for argv in (["verify", "postgresql://agent@127.0.0.1:1/app#t"], ["threads", "--store", "postgres://h/app"]):
        done = subprocess.run([sys.executable, "-c", BLOCK_PSYCOPG, *argv], capture_output=True, text=True,
                              timeout=HANG_GUARD, cwd=tmp_path)
        assert done.returncode == 2 and one_line(done.stderr), done.stderr
        assert "pip install 'agent-explorer[postgres]'" in done.stderr and "[missing-dependency]" in done.stderr


def test_an_unreachable_server_is_reported_fast_with_host_and_port(capsys: Any,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENT_EXPLORER_DB_TIMEOUT", raising=False)  # the CLI's default: 10 s
    started = time.monotonic()
    code, _, err = run(["verify", f"postgresql://agent:{SECRET}@127.0.0.1:1/none#t"], capsys)
    elapsed = time.monotonic() - started
    assert code == 2 and one_line(err)
    assert "cannot connect to PostgreSQL at host 127.0.0.1, port 1: connection refused" in err
    assert SECRET not in err and "pool initialization incomplete" not in err
    assert elapsed < 5, f"took {elapsed:.1f}s (the pool alone waits the whole timeout)"


# --- 16. a store of several machines without --machine -------------------------------------------------------


@pytest.fixture
def mixed_store(sample_logs: Path, tmp_path: Path) -> str:
    """Three support threads (one recorded by version 2), a planner and a research run: sample machines, which
    need no consent, so the old code silently took the first thread's machine."""
    return make_store(tmp_path / "mixed.db", {
        "a-planner": entries_of(sample_logs, "planner_trip.jsonl"),
        "b-support": entries_of(sample_logs, "support_clean.jsonl"),
        "c-support": entries_of(sample_logs, "support_ignored.jsonl"),
        "d-research": entries_of(sample_logs, "research_race.jsonl"),
        "e-support-v2": entries_of(sample_logs, "support_bridge_v2.jsonl"),
    })


def test_all_threads_without_machine_refuses_a_store_of_several_machines(mixed_store: str, capsys: Any) -> None:
    code, out, err = run(["verify", mixed_store, "--all-threads"], capsys)
    assert code == 2 and out == "" and one_line(err)  # the old code checked the planner thread alone: exit 0
    assert "recorded by 3 machines: 'support' (3 threads, machineRef agent_explorer.samples.support:support_agent), " \
           "'planner' (1 thread, machineRef agent_explorer.samples.planner:planner_agent), 'research' (1 thread" in err
    assert "--machine" in err


def test_all_threads_of_one_machine_still_needs_no_flag(sample_logs: Path, tmp_path: Path, capsys: Any) -> None:
    url = make_store(tmp_path / "one.db", {"x": entries_of(sample_logs, "support_clean.jsonl"),
                                           "y": entries_of(sample_logs, "support_ignored.jsonl")})
    code, out, _ = run(["verify", url, "--all-threads"], capsys)
    assert code == 0 and out.startswith(f"ok: 2 threads of {url} checked against machine support version 1 ")
    assert "; 0 skipped (recorded by another machine)" in out


def test_a_thread_whose_head_cannot_be_read_stays_an_error_row(sample_logs: Path, tmp_path: Path,
                                                                capsys: Any) -> None:
    """The machine scan skips a row written outside the package; the verification reports it, as before."""
    import sqlite3

    path = tmp_path / "hurt.db"
    url = make_store(path, {"x": entries_of(sample_logs, "support_clean.jsonl")})
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO agent_event_log (thread_id, idx, id, body) VALUES ('bad', 0, 'b0', 'not json')")
    conn.close()
    code, out, err = run(["verify", url, "--all-threads"], capsys)
    assert code == 1 and "Traceback" not in err
    assert out.startswith(f"diverges: 1 thread of {url} checked against machine support version 1 ")
    assert "; 1 could not be verified;" in out and "thread bad: could not verify: " in out


def test_with_machine_the_summary_counts_the_threads_of_other_machines(mixed_store: str, capsys: Any) -> None:
    code, out, _ = run(["verify", mixed_store, "--all-threads", "--machine", "agent_explorer.samples:support_agent"],
                       capsys)
    lines = out.splitlines()
    assert code == 1 and "2 skipped (recorded by another machine)" in lines[0]
    # 19: a "could not verify" reason is printed whole, never cut mid-sentence.
    reason = next(line for line in lines if line.startswith("thread e-support-v2: could not verify: "))
    assert len(reason) > 300 and reason.endswith("bridge_version(machine, old_entries, old_snapshot).")
    assert "…" not in reason


# --- 19. show on an empty log, a URL as LOG ------------------------------------------------------------------


def test_show_on_an_empty_log_exits_2_as_verify_does(tmp_path: Path, capsys: Any) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    for verb in ("show", "verify"):
        code, out, err = run([verb, str(empty)], capsys)
        assert code == 2 and out == "" and one_line(err) and "is an empty log" in err and "[empty-log]" in err


@pytest.mark.parametrize("verb", ["show", "verify", "html"])
def test_a_url_as_log_is_named_as_a_url_not_a_missing_file(verb: str, tmp_path: Path, capsys: Any) -> None:
    extra = ["-o", str(tmp_path / "x.html")] if verb == "html" else []
    code, _, err = run([verb, "https://example.com/runs/t1.jsonl", *extra], capsys)
    assert code == 2 and one_line(err)
    assert "https://example.com/runs/t1.jsonl: https:// URLs are not supported as logs" in err
    assert "no such log file" not in err and "https:/example" not in err


# --- what verification does not prove ------------------------------------------------------------------------


def test_verify_help_says_what_a_pass_does_not_prove(capsys: Any) -> None:
    with pytest.raises(SystemExit):
        main(["verify", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "What a pass does not prove: the hash covers the machine's state only" in text
    assert "@agent.usage" in text and "cut off the end" in text and "docs/verification.md" in text
    assert (Path(__file__).resolve().parents[2] / "docs" / "verification.md").exists()
