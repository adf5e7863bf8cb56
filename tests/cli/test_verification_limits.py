"""What `verify` does not prove, as docs/verification.md states it: each edit listed there still verifies, and
each edit it says is caught is caught. If the state hash ever starts covering more, these tests say the page is
out of date (the claims are checked on the shipped support log, through the console entry point)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from agent_explorer import read_log
from agent_explorer.cli import main


@pytest.fixture
def clean(sample_logs: Path) -> list[dict[str, Any]]:
    return read_log(sample_logs / "support_clean.jsonl")


def verify(entries: list[dict[str, Any]], path: Path, capsys: Any) -> tuple[int, str]:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    code = main(["verify", str(path), "--no-progress"])
    out, err = capsys.readouterr()
    return code, out + err


def usage_positions(entries: list[dict[str, Any]]) -> list[int]:
    return [i for i, e in enumerate(entries) if e["event"]["type"] == "@agent.usage"]


def test_edited_token_counts_still_verify(clean: list[dict[str, Any]], tmp_path: Path, capsys: Any) -> None:
    edited = copy.deepcopy(clean)
    for i in usage_positions(edited):
        edited[i]["event"]["usage"] = {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}
        edited[i]["event"]["model"] = "someone-else/cheap"
    code, out = verify(edited, tmp_path / "tokens.jsonl", capsys)
    assert code == 0 and out.startswith("ok: 12 entries")


def test_a_deleted_usage_entry_with_the_rest_renumbered_still_verifies(clean: list[dict[str, Any]], tmp_path: Path,
                                                                       capsys: Any) -> None:
    edited = copy.deepcopy(clean)
    del edited[usage_positions(edited)[0]]
    for index, entry in enumerate(edited):
        entry["index"] = index
    code, out = verify(edited, tmp_path / "deleted.jsonl", capsys)
    assert code == 0 and out.startswith("ok: 11 entries")


def test_entry_metadata_is_not_covered(clean: list[dict[str, Any]], tmp_path: Path, capsys: Any) -> None:
    edited = copy.deepcopy(clean)
    edited[3]["recordedAt"] = "2020-01-01T00:00:00.000Z"
    edited[3]["id"] = "forged-id"
    code, out = verify(edited, tmp_path / "meta.jsonl", capsys)
    assert code == 0 and out.startswith("ok: 12 entries")


def test_a_cut_end_verifies_and_only_reads_as_unfinished(clean: list[dict[str, Any]], tmp_path: Path,
                                                         capsys: Any) -> None:
    code, out = verify(copy.deepcopy(clean[:5]), tmp_path / "cut.jsonl", capsys)
    assert code == 0 and out.startswith("ok: 5 entries") and "the run is not finished" in out


def test_what_the_page_says_is_caught_is_caught(clean: list[dict[str, Any]], tmp_path: Path, capsys: Any) -> None:
    payload = copy.deepcopy(clean)
    payload[1]["event"]["output"]["orderId"] = "B-0000"  # state-changing payload edit
    code, out = verify(payload, tmp_path / "payload.jsonl", capsys)
    assert code == 1 and "divergence at index 1" in out
    hashed = copy.deepcopy(clean)
    hashed[4]["verification"]["stateHash"] = "0" * 64
    code, out = verify(hashed, tmp_path / "hash.jsonl", capsys)
    assert code == 1 and "divergence at index 4" in out
    dropped = copy.deepcopy(clean)
    del dropped[4]  # a dropped middle entry, not renumbered
    code, out = verify(dropped, tmp_path / "dropped.jsonl", capsys)
    assert code == 2 and "index gap: expected index 4, found 5" in out
