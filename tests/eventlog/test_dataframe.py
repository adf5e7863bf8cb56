"""log_to_pandas: the log as a DataFrame, with the replayed state beside it, checked against the Timeline."""

from __future__ import annotations

import copy
from pathlib import Path

import pandas as pd
import pytest

from agent_explorer import Explorer, Timeline, log_to_pandas, read_log, verify_log
from agent_explorer.engine.values import value_text
from agent_explorer.samples import inbox_agent, planner_agent, research_agent, support_agent

LOGS = Path(__file__).parents[2] / "sample_logs"
SAMPLES = [
    ("support_clean", support_agent),
    ("support_divergent", support_agent),
    ("support_crashed", support_agent),
    ("research_race", research_agent),
    ("planner_trip", planner_agent),
]


@pytest.mark.parametrize(("name", "machine"), SAMPLES, ids=[n for n, _ in SAMPLES])
def test_columns_types_and_the_state_columns_equal_the_timeline(name: str, machine: object) -> None:
    entries = list(read_log(LOGS / f"{name}.jsonl"))
    frame = log_to_pandas(entries, machine)
    assert list(frame.index) == [e["index"] for e in entries] and frame.index.name == "index"
    for column in ("id", "recordedAt", "type", "causationId", "requestId", "model", "stateHash",
                   "state", "status", "tags", "verified", "divergent"):
        assert column in frame.columns, column
    assert isinstance(frame["recordedAt"].dtype, pd.DatetimeTZDtype) and str(frame["recordedAt"].dt.tz) == "UTC"
    assert frame["recordedAt"].iloc[0] == pd.Timestamp(entries[0]["recordedAt"])
    usage = [e for e in entries if e["event"]["type"] == "@agent.usage"]
    for key in ("inputTokens", "outputTokens", "totalTokens"):
        assert frame[key].dtype == "Int64" and int(frame[key].sum()) == sum(e["event"]["usage"][key] for e in usage)
    assert frame.loc[frame["type"] == "@agent.usage", "requestId"].tolist() == [e["event"]["requestId"] for e in usage]
    timeline = Timeline(machine, entries)
    for i in range(len(entries)):
        snapshot = timeline.state_at(i)
        row = frame.iloc[i]
        assert (row["state"], row["status"], row["tags"]) == (
            value_text(snapshot.value), snapshot.status, tuple(sorted(snapshot.tags))
        ), i
    report = verify_log(machine, entries)
    assert frame.index[frame["divergent"]].tolist() == report.divergent_indices
    assert frame["verified"].sum() == report.checked - len([d for d in report.divergences if d.kind == "state"])


def test_without_a_machine_only_the_entries_columns() -> None:
    entries = list(read_log(LOGS / "support_clean.jsonl"))
    frame = log_to_pandas(entries)
    assert "state" not in frame.columns and len(frame) == len(entries)
    assert frame.loc[0, "type"] == "@agent.init" and frame.loc[3, "model"] == entries[3]["event"]["model"]


def test_an_unhashed_entry_is_not_verified_and_an_edited_one_is_divergent() -> None:
    entries = copy.deepcopy(list(read_log(LOGS / "support_clean.jsonl")))
    del entries[4]["verification"]
    entries[8]["event"]["approver"] = "someone else"
    frame = log_to_pandas(entries, support_agent)
    assert pd.isna(frame.loc[4, "verified"]) and not frame.loc[4, "divergent"]
    assert frame.loc[8, "verified"] is False or frame.loc[8, "verified"] == False  # noqa: E712 - pandas NA-aware bool
    assert frame.loc[8, "divergent"]


def test_the_explorers_frame_reuses_its_verification() -> None:
    entries = list(read_log(LOGS / "support_divergent.jsonl"))
    ex = Explorer(support_agent, entries)
    assert ex.to_pandas().equals(log_to_pandas(entries, support_agent))


def test_the_long_sample_run_in_one_fold() -> None:
    entries = list(read_log(LOGS / "inbox_long.jsonl"))[:5_000]
    frame = log_to_pandas(entries, inbox_agent, verify=False)
    assert len(frame) == 5_000 and frame["verified"].isna().all() and not frame["divergent"].any()
