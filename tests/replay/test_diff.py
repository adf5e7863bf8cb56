"""diff_snapshots: what changed between two persisted snapshots, path by path."""

from __future__ import annotations

from agent_explorer.eventlog.diff import Change, diff_snapshots, json_equal


def persisted(value: object = "idle", **context: object) -> dict[str, object]:
    return {"status": "active", "value": value, "historyValue": {}, "context": dict(context), "children": {}}


def test_equal_snapshots_have_no_changes() -> None:
    assert diff_snapshots(persisted(count=1), persisted(count=1)) == []


def test_state_value_change_is_one_change_at_value() -> None:
    assert diff_snapshots(persisted("idle"), persisted("thinking")) == [
        Change(("value",), "idle", "thinking", "changed")
    ]


def test_nested_value_change_names_the_region() -> None:
    a = persisted({"left": "on", "right": "off"})
    b = persisted({"left": "on", "right": "on"})
    (change,) = diff_snapshots(a, b)
    assert change.path == ("value", "right")
    assert change.pointer == "/value/right"
    assert (change.before, change.after, change.kind) == ("off", "on", "changed")


def test_atomic_to_compound_value_is_a_changed_leaf() -> None:
    (change,) = diff_snapshots(persisted("idle"), persisted({"busy": "a"}))
    assert change == Change(("value",), "idle", {"busy": "a"}, "changed")


def test_context_paths_added_removed_changed_in_document_order() -> None:
    a = persisted(count=1, gone=True, nested={"x": 1, "y": [1, 2]})
    b = persisted(count=2, nested={"x": 1, "y": [1, 3, 4]}, fresh="yes")
    changes = diff_snapshots(a, b)
    assert [(c.path, c.kind) for c in changes] == [
        (("context", "count"), "changed"),
        (("context", "gone"), "removed"),
        (("context", "nested", "y", 1), "changed"),
        (("context", "nested", "y", 2), "added"),
        (("context", "fresh"), "added"),
    ]
    removed = changes[1]
    assert removed.before is True and removed.after is None
    added = changes[3]
    assert added.before is None and added.after == 4


def test_removed_subtree_is_one_change_not_one_per_leaf() -> None:
    a = persisted(profile={"name": "ada", "tags": ["x", "y"]})
    b = persisted()
    assert diff_snapshots(a, b) == [
        Change(("context", "profile"), {"name": "ada", "tags": ["x", "y"]}, None, "removed")
    ]


def test_children_added_and_status_changed() -> None:
    child = {"snapshot": {"status": "active", "input": {"q": 1}}, "src": "draft", "syncSnapshot": False}
    a = {**persisted(), "children": {}}
    b = {**persisted(), "children": {"draft": child}, "status": "done", "output": {"ok": True}}
    changes = diff_snapshots(a, b)
    assert [(c.pointer, c.kind) for c in changes] == [
        ("/status", "changed"),
        ("/children/draft", "added"),
        ("/output", "added"),
    ]


def test_bool_is_not_a_number_but_integral_float_equals_int() -> None:
    # JSON (and the JCS hash) tells true from 1, but prints 1.0 and 1 identically.
    assert [c.path for c in diff_snapshots(persisted(flag=True), persisted(flag=1))] == [("context", "flag")]
    assert diff_snapshots(persisted(n=1), persisted(n=1.0)) == []
    assert not json_equal({"a": [True]}, {"a": [1]})
    assert json_equal({"a": [1.0, None]}, {"a": [1, None]})


def test_pointer_escapes_slash_and_tilde() -> None:
    (change,) = diff_snapshots(persisted(**{"a/b~c": 1}), persisted(**{"a/b~c": 2}))
    assert change.pointer == "/context/a~1b~0c"
    assert change.section == "context"


def test_inputs_are_not_mutated() -> None:
    a = persisted(items=[1, 2, 3])
    b = persisted(items=[1])
    before_a, before_b = repr(a), repr(b)
    diff_snapshots(a, b)
    assert (repr(a), repr(b)) == (before_a, before_b)
