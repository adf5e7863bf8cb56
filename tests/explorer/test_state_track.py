"""The state track (explorer/track.py, panels/track.py): the active states of every index of the line on view,
recorded by the line's one fold, so the browser lights a slider move without a kernel round trip (issue 23).

Each test decodes the track as the browser does and compares every index with what the Timeline itself says
there (a frame's `active` ids from the persisted value), on real engine folds."""

from __future__ import annotations

import sys
from array import array
from typing import Any

import pytest
from sample_run import long_events, record
from watch_chart import watch_machine, watch_run

from agent_explorer.eventlog.configurations import MAX_CONFIGURATIONS, ConfigurationTrack
from agent_explorer.eventlog.timeline import Timeline
from agent_explorer.explorer import Explorer
from agent_explorer.explorer.branches import open_line
from agent_explorer.explorer.statechart import active_state_ids
from agent_explorer.explorer.track import state_track


def decoded(track: Any) -> list[list[str]]:
    """Per index, the configuration the track says (as js/src/state-track.js reads it: little-endian)."""
    codes = bytes(track["codes"])
    numbers: Any = codes if track["width"] == 1 else array("H", codes)
    if track["width"] == 2 and sys.byteorder == "big":
        numbers.byteswap()
    assert len(numbers) == track["length"]
    return [track["configurations"][n] for n in numbers]


def active_at(timeline: Timeline, definition: Any, index: int) -> list[str]:
    return active_state_ids(definition, timeline.persisted_at(index).get("value"))


def test_the_track_is_every_index_configuration_on_a_sample_log(machine: Any) -> None:
    entries = record(machine, long_events(300))
    timeline = open_line(machine, entries)
    track = state_track("recording", timeline, machine.definition)
    assert track is not None and track["line"] == "recording" and track["width"] == 1
    check = Timeline(machine, entries)  # a second fold, to check against
    assert decoded(track) == [active_at(check, machine.definition, i) for i in range(len(entries))]
    # few distinct configurations (the chart's states), each listed once
    assert len(track["configurations"]) == len({tuple(c) for c in track["configurations"]}) < 10


def test_parallel_regions_are_tracked_as_frames_draw_them() -> None:
    watch = watch_machine()
    entries = watch_run(watch, 400)
    ex = Explorer(watch, entries)
    track = ex.state_track
    assert track["length"] == len(entries)
    per_index = decoded(track)
    for i in range(0, len(entries), 7):
        assert per_index[i] == ex.frame_at(i)["active"], i


def test_a_background_fold_records_the_track_as_it_goes_and_says_when_it_is_done(machine: Any) -> None:
    entries = record(machine, long_events(5_000))
    timeline = open_line(machine, entries, lazy=True)
    built: list[int] = []
    timeline.on_built(built.append)
    half = state_track("recording", timeline, machine.definition)
    assert half is not None and half["length"] == 1  # the init entry only: nothing folded yet
    timeline.build(2_000)
    assert built == []  # not the end yet
    timeline.build()
    assert built == [len(entries)]
    track = state_track("recording", timeline, machine.definition)
    assert track is not None
    check = Timeline(machine, entries)
    assert decoded(track) == [active_at(check, machine.definition, i) for i in range(len(entries))]


def test_a_branch_line_has_the_parents_prefix_and_its_own_entries(machine: Any) -> None:
    entries = record(machine, long_events(40))
    ex = Explorer(machine, entries)
    branch = ex.fork(at=12)
    branch.append({"type": "START"})
    branch.append({"type": "DONE", "text": "what if"})
    ex.checkout(branch)
    track = ex.state_track
    assert track["line"] == branch.name and track["length"] == len(branch.entries) == 14
    per_index = decoded(track)
    assert per_index == [active_at(branch.timeline, machine.definition, i) for i in range(14)]
    assert per_index[13] == ex.frame_at(13)["active"]
    ex.checkout(None)  # back to the recording: its own track again
    assert ex.state_track["line"] == "recording" and ex.state_track["length"] == len(entries)


def test_a_long_log_opens_without_a_track_and_gets_it_when_the_background_fold_lands(machine: Any) -> None:
    entries = record(machine, long_events(3_000))
    ex = Explorer(machine, entries, verify="background")
    ex.wait_verified(60)
    track = ex.state_track
    assert track["length"] == len(entries)
    assert decoded(track)[-1] == ex.frame_at(len(entries) - 1)["active"]


def test_the_branch_on_view_growing_resends_its_short_track(machine: Any) -> None:
    entries = record(machine, long_events(30))
    ex = Explorer(machine, entries)
    branch = ex.fork(at=10)
    branch.append({"type": "START"})
    ex.checkout(branch)
    assert ex.state_track["length"] == 11
    # a growth of the line on view is re-sent (the track is short)
    branch.append({"type": "TICK"})
    assert ex.state_track["length"] == 12
    assert decoded(ex.state_track)[11] == active_at(branch.timeline, machine.definition, 11)


def test_the_track_widens_past_256_configurations_and_stops_past_its_cap() -> None:
    class Value:  # a snapshot of an engine without interned nodes: told apart by its value
        def __init__(self, value: Any) -> None:
            self.value = value

    track = ConfigurationTrack()
    for n in range(300):
        track.add(Value({"n": str(n)}))
    track.add(Value({"n": "3"}))
    read = track.read()
    assert read is not None and read.width == 2 and len(read.codes) == 2 * 301
    numbers = array("H", read.codes)
    if sys.byteorder == "big":
        numbers.byteswap()
    assert list(numbers) == [*range(300), 3]
    assert track.copy_until(10).read() == (read.snapshots, bytes(read.codes[:20]), 2)
    for n in range(300, MAX_CONFIGURATIONS + 1):
        track.add(Value(n))
    assert track.overflowed and track.read() is None


def test_a_long_track_is_resent_only_when_the_line_grew_by_an_eighth(machine: Any,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_explorer.explorer.panels import track as panel

    monkeypatch.setattr(panel, "SMALL_TRACK", 10)  # what counts as long: 10 indices, so 40 is long
    entries = record(machine, long_events(60))
    ex = Explorer(machine, entries)
    branch = ex.fork(at=40)
    ex.checkout(branch)
    assert ex.state_track["length"] == 40
    for _ in range(4):  # 4 < 40 / 8: the browser keeps the track it has (the new indices come as frames)
        branch.append({"type": "NOTE", "text": "more"})
    assert ex.state_track["length"] == 40
    branch.append({"type": "START"})  # 5 = 40 / 8: re-sent, all of it
    assert ex.state_track["length"] == 45
    assert decoded(ex.state_track)[44] == active_at(branch.timeline, machine.definition, 44)
