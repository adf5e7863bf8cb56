"""`FleetReport`: what verifying every thread of a store found, as text, JSON, a DataFrame and JUnit XML.

One small row per thread, in thread order (a JUnit file has one test case per thread); equal runs give
equal reports whatever executor ran them (timings are kept apart and never compared). Log text (thread
ids, event types, messages) is untrusted: XML output escapes it and drops what XML 1.0 cannot hold.
Imports pandas only in `to_pandas()`; never reads or writes a store.
"""

from __future__ import annotations

import re
import socket
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from ..eventlog.files import atomic_file
from ..eventlog.report_text import hash_coverage

__all__ = ["FleetDivergence", "FleetError", "FleetReport", "ThreadOutcome"]

Outcome = Literal["ok", "divergent", "error", "skipped"]


@dataclass(frozen=True, slots=True)
class ThreadOutcome:
    """One thread's result, as a worker sends it back (small and picklable)."""

    thread_id: str
    outcome: Outcome
    entries: int = 0
    checked: int = 0
    unverified: int = 0
    divergences: int = 0
    index: int | None = None
    kind: str | None = None
    event_type: str | None = None
    event_id: str | None = None
    message: str = ""
    machine_id: str | None = None
    run_state: str | None = None


@dataclass(frozen=True, slots=True)
class FleetDivergence:
    """The first divergence of one thread: where (`index`), what (`kind`, `event_type`), and how many in all."""

    thread_id: str
    index: int
    kind: str
    event_type: str | None
    event_id: str | None = None
    message: str = ""
    count: int = 1


@dataclass(frozen=True, slots=True)
class FleetError:
    """A thread that could not be read or folded, and why."""

    thread_id: str
    message: str


@dataclass
class FleetReport:
    """The result of `verify_store`.

    `ok`: no thread diverged and none failed (skipped threads do not count against it).
    `threads_checked`: threads folded through the machine (ok + divergent); `entries_checked`: their
    entries; `hashes_checked` / `unverified`: of those, entries compared with a recorded hash and entries
    without one. `divergent`: the first divergence of each divergent thread; `errors`: threads that could
    not be read or folded; `skipped`: threads recorded by another machine id (not checked).
    `unfinished`: checked threads whose machine is still active at their last entry.
    """

    store: str
    machine_id: str
    machine_version: str
    outcomes: list[ThreadOutcome] = field(default_factory=list)
    seconds: float = field(default=0.0, compare=False)

    @classmethod
    def from_outcomes(
        cls, store: str, machine_id: str, machine_version: str, outcomes: Iterable[ThreadOutcome], seconds: float = 0.0
    ) -> FleetReport:
        return cls(store, machine_id, machine_version, list(outcomes), seconds)

    # --- the figures --------------------------------------------------------------------------------

    @property
    def ok(self) -> bool:
        return not any(o.outcome in ("divergent", "error") for o in self.outcomes)

    @property
    def threads_checked(self) -> int:
        return sum(1 for o in self.outcomes if o.outcome in ("ok", "divergent"))

    @property
    def entries_checked(self) -> int:
        return sum(o.entries for o in self.outcomes if o.outcome in ("ok", "divergent"))

    @property
    def hashes_checked(self) -> int:
        return sum(o.checked for o in self.outcomes if o.outcome in ("ok", "divergent"))

    @property
    def unverified(self) -> int:
        return sum(o.unverified for o in self.outcomes if o.outcome in ("ok", "divergent"))

    @property
    def skipped(self) -> int:
        return sum(1 for o in self.outcomes if o.outcome == "skipped")

    @property
    def skipped_threads(self) -> list[ThreadOutcome]:
        return [o for o in self.outcomes if o.outcome == "skipped"]

    @property
    def unfinished(self) -> list[ThreadOutcome]:
        return [o for o in self.outcomes if o.outcome in ("ok", "divergent") and o.run_state]

    @property
    def divergent(self) -> list[FleetDivergence]:
        return [
            FleetDivergence(o.thread_id, o.index if o.index is not None else -1, o.kind or "state", o.event_type,
                            o.event_id, o.message, o.divergences)
            for o in self.outcomes
            if o.outcome == "divergent"
        ]

    @property
    def errors(self) -> list[FleetError]:
        return [FleetError(o.thread_id, o.message) for o in self.outcomes if o.outcome == "error"]

    # --- views --------------------------------------------------------------------------------------

    def __str__(self) -> str:
        return "\n".join([self.summary(), *self.problem_lines()])

    def problem_lines(self) -> list[str]:
        """One line per divergent thread, then one per thread that could not be verified."""
        return [
            f"thread {d.thread_id}: divergence at index {d.index}: event {d.event_type} (id {d.event_id}), "
            f"kind {d.kind}" + (f"; {d.count} divergent entries in all" if d.count > 1 else "")
            for d in self.divergent
        ] + [f"thread {e.thread_id}: could not verify: {e.message}" for e in self.errors]

    def summary(self) -> str:
        """One line: verdict, what was checked (the words `agent-explorer verify` uses), what was not."""
        n_div, n_err = sum(1 for o in self.outcomes if o.outcome == "divergent"), len(self.errors)
        verdict = "ok" if self.ok else "diverges"
        if self.ok and self.threads_checked == 0:
            verdict = "nothing verified"
        parts = [
            f"{verdict}: {_plural(self.threads_checked, 'thread')} of {self.store} checked against machine "
            f"{self.machine_id} version {self.machine_version} "
            f"({hash_coverage(self.entries_checked, self.hashes_checked, self.unverified)})",
            f"{n_div:,} divergent",
            f"{n_err:,} could not be verified",
            f"{self.skipped:,} skipped (recorded by another machine)",
        ]
        unfinished = len(self.unfinished)
        if unfinished:
            parts.append(f"{_plural(unfinished, 'run')} not finished (the machine is still active at the last entry)")
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (`json.dumps` it): the figures, then each divergent, failed and skipped thread."""
        return {
            "ok": self.ok,
            "store": self.store,
            "machine": {"id": self.machine_id, "version": self.machine_version},
            "threadsChecked": self.threads_checked,
            "entriesChecked": self.entries_checked,
            "checked": self.hashes_checked,
            "unverified": self.unverified,
            "skipped": self.skipped,
            "divergent": [
                {"threadId": d.thread_id, "index": d.index, "kind": d.kind, "eventType": d.event_type,
                 "eventId": d.event_id, "count": d.count, "message": d.message}
                for d in self.divergent
            ],
            "errors": [{"threadId": e.thread_id, "message": e.message} for e in self.errors],
            "skippedThreads": [{"threadId": o.thread_id, "machineId": o.machine_id} for o in self.skipped_threads],
            "unfinished": [{"threadId": o.thread_id, "state": o.run_state} for o in self.unfinished],
        }

    def to_pandas(self) -> Any:
        """A DataFrame, one row per thread in thread order (outcome, counts, first divergence, message)."""
        import pandas as pd  # lazy: a server install has no pandas

        columns = ["thread_id", "outcome", "entries", "checked", "unverified", "divergences", "index", "kind",
                   "event_type", "event_id", "message", "machine_id", "run_state"]
        rows = [[getattr(o, name) for name in columns] for o in self.outcomes]
        frame = pd.DataFrame(rows, columns=columns)
        frame["index"] = frame["index"].astype("Int64")
        return frame

    def to_junit(self, path: str | Path) -> Path:
        """Write JUnit XML: one test case per thread; a divergence is a `<failure>`, an error an `<error>`,
        a thread of another machine `<skipped/>`. Returns the path written."""
        suite_name = f"agent-explorer verify {self.machine_id} v{self.machine_version}"
        failures = sum(1 for o in self.outcomes if o.outcome == "divergent")
        errors = sum(1 for o in self.outcomes if o.outcome == "error")
        time_text = f"{self.seconds:.3f}"
        root = ET.Element("testsuites", {
            "name": _xml_text(suite_name), "tests": str(len(self.outcomes)), "failures": str(failures),
            "errors": str(errors), "time": time_text,
        })
        suite = ET.SubElement(root, "testsuite", {
            "name": _xml_text(suite_name), "tests": str(len(self.outcomes)), "failures": str(failures),
            "errors": str(errors), "skipped": str(self.skipped), "time": time_text,
            "timestamp": datetime.now(UTC).replace(microsecond=0).isoformat(),
            "hostname": _xml_text(socket.gethostname()),
        })
        properties = ET.SubElement(suite, "properties")
        for name, value in (("store", self.store), ("machine.id", self.machine_id),
                            ("machine.version", self.machine_version)):
            ET.SubElement(properties, "property", {"name": name, "value": _xml_text(value)})
        classname = _xml_text(f"{self.store}")
        for o in self.outcomes:
            case = ET.SubElement(suite, "testcase", {"classname": classname, "name": _xml_text(o.thread_id)})
            if o.outcome == "divergent":
                failure = ET.SubElement(case, "failure", {
                    "type": _xml_text(o.kind or "state"),
                    "message": _xml_text(f"divergence at index {o.index}: event {o.event_type}, kind {o.kind}"),
                })
                failure.text = _xml_text(
                    f"{o.message}\n{o.divergences} divergent entries in this thread; "
                    f"{hash_coverage(o.entries, o.checked, o.unverified)}"
                )
            elif o.outcome == "error":
                error = ET.SubElement(case, "error", {"type": "could-not-verify", "message": _xml_text(o.message)})
                error.text = _xml_text(o.message)
            elif o.outcome == "skipped":
                ET.SubElement(case, "skipped", {
                    "message": _xml_text(f"recorded by machine {o.machine_id!r}, not {self.machine_id!r}"),
                })
            else:
                out = ET.SubElement(case, "system-out")
                out.text = _xml_text(hash_coverage(o.entries, o.checked, o.unverified)
                                     + (f"; {o.run_state}" if o.run_state else ""))
        target = Path(path)
        # Whole or not at all, and renamed into place: a CI re-run replaces the old report, and a link at `path`
        # is replaced itself, never written through into the file it points at.
        with atomic_file(target) as file:
            ET.ElementTree(root).write(file, encoding="utf-8", xml_declaration=True)
        return target


def _plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


# Characters XML 1.0 cannot carry at all (not even escaped): C0 controls but tab/LF/CR, lone surrogates,
# U+FFFE/U+FFFF. Log text may hold them; they are shown as \xNN / \uNNNN instead.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml_text(text: Any) -> str:
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}",
                        str(text))
