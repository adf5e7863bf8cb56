"""Both sides of a divergence: what the recording did beside what today's machine does.

With the recording machine (`compare_with`) the recording's side is its own fold; without it, it is inferred
from what the recording journaled next. Both are checked against the real recorder on the sample divergence.
"""

from __future__ import annotations

from pathlib import Path

from agent_explorer import Explorer, read_log, verify_log
from agent_explorer.explorer.recording import RecordingView
from agent_explorer.samples import support_agent, support_agent_old_policy

LOGS = Path(__file__).parents[2] / "sample_logs"


def divergent_log() -> list[dict]:
    return list(read_log(LOGS / "support_divergent.jsonl"))


def test_the_recorders_side_reproduces_the_recorded_hashes() -> None:
    entries = divergent_log()
    view = RecordingView(support_agent, entries, support_agent_old_policy)
    for index in verify_log(support_agent, entries).divergent_indices:
        side = view.at(index)
        assert side.source == "recorder" and side.reproduces is True, index
    assert view.at(6).value_text == "awaitingApproval" and "support.awaitingApproval" in view.at(6).active


def test_without_the_recorder_the_states_are_inferred_from_what_it_journaled_next() -> None:
    entries = divergent_log()
    inferred = RecordingView(support_agent, entries)
    recorder = RecordingView(support_agent, entries, support_agent_old_policy)
    divergent = verify_log(support_agent, entries).divergent_indices
    assert divergent == [6, 7, 8, 9, 10, 11]
    # E.g. entry 9's completion of issueRefund names `refunding` at 8; the recorder agrees wherever there is evidence.
    for index in divergent[:-2]:
        guess, truth = inferred.at(index), recorder.at(index)
        assert guess.source == "inferred" and guess.active and not guess.candidates
        assert guess.active == truth.active, index
    assert inferred.at(8).active == ["support", "support.refunding"]
    assert "issueRefund" in inferred.at(8).reason and "refunding" in inferred.at(8).reason
    # The last entry has nothing after it: the view says so instead of guessing.
    last = inferred.at(11)
    assert last.active == [] and "compare_with" in last.reason


def test_frames_at_divergent_indices_carry_the_recordings_side() -> None:
    entries = divergent_log()
    ex = Explorer(support_agent, entries, compare_with=support_agent_old_policy)
    ex.index = 5
    assert "recording" not in ex.frame  # not divergent: one side only
    ex.index = 6
    side = ex.frame["recording"]
    assert side["source"] == "recorder" and side["valueText"] == "awaitingApproval" and side["reproduces"] is True
    assert ex.frame["valueText"] == "deciding"  # the replay's side
    machines = ex.verification["machines"]
    # In the notebook's direction (compare_machines(recorder, today)): before is the recording's value.
    assert machines["index"] == 6 and machines["diff"][0]["before"] == "awaitingApproval"
    assert machines["diff"][0]["after"] == "deciding" and machines["before"].startswith("recording")
    plain = Explorer(support_agent, entries)
    plain.index = 8
    assert plain.frame["recording"]["source"] == "inferred"
    assert plain.frame["recording"]["active"][-1] == "support.refunding"
    # A branch's own entries are what-ifs: its frames show one side.
    branch = plain.fork(at=7)
    plain.checkout(branch)
    assert "recording" not in plain.frame
