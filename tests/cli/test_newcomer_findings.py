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
