"""No message a person reads says "1 entries" or "next 0 entries": a count written straight before a plural noun
goes through `agent_explorer.plural.plural` (Python) or `plural` in js/src/dom.js (the widget)."""

from __future__ import annotations

import re
from pathlib import Path

from agent_explorer.plural import plural

ROOT = Path(__file__).resolve().parents[1]
NOUNS = ("entries|hashes|divergences|threads|calls|runs|hits|rows|records|transitions|states|branches|tokens|"
         "effects|forks|indices|steps|events|matches|results|appends|requests|pages|lines|models")
# `{count} entries` in an f-string, `${count} entries` in a template literal.
PY_COUNT = re.compile(r"\{[^{}]*\}\s+(" + NOUNS + r")\b")
JS_COUNT = re.compile(r"\$\{[^{}]*\}\)?\s+(" + NOUNS + r")\b")
# What a person reads: the widget, the command line, the verification and comparison summaries.
SCANNED = [
    *sorted((ROOT / "agent_explorer" / "explorer").rglob("*.py")),
    *sorted((ROOT / "agent_explorer" / "cli").rglob("*.py")),
    ROOT / "agent_explorer" / "eventlog" / "verification.py",
    ROOT / "agent_explorer" / "eventlog" / "diff.py",
    *sorted((ROOT / "js" / "src").glob("*.js")),
]
# Counts that are never 1, each with why.
NEVER_ONE = {
    ("agent_explorer/explorer/export.py", "indices"),  # only said above the export's cap of frames per file
    ("agent_explorer/eventlog/diff.py", "entries"),  # "agree on all N entries": the one-entry case is worded apart
    ("js/src/coverage.js", "transitions"),  # "0/1 transitions taken": a fraction, read as "of the transitions"
}


def test_plural_agrees_with_its_count() -> None:
    assert [plural(n, "entry", "entries") for n in (0, 1, 2)] == ["0 entries", "1 entry", "2 entries"]
    assert plural(1_000, "hit", thousands=True) == "1,000 hits"
    assert plural(1, "hash", "hashes") == "1 hash"


def test_no_count_is_written_straight_before_a_plural_noun() -> None:
    found = []
    for path in SCANNED:
        name = path.relative_to(ROOT).as_posix()
        pattern = JS_COUNT if path.suffix == ".js" else PY_COUNT
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            stripped = line.strip()
            if stripped.startswith(("#", "//", "*", "/*")) or (path.suffix == ".py" and "f\"" not in line
                                                              and "f'" not in line):
                continue
            for match in pattern.finditer(line):
                if (name, match.group(1)) not in NEVER_ONE:
                    found.append(f"{name}:{number}: {stripped[:120]}")
    assert len(SCANNED) > 40
    assert not found, "counts before a plural noun (use plural()):\n" + "\n".join(found)


def test_the_recording_side_says_nothing_of_a_next_zero_entries() -> None:
    from agent_explorer import read_log
    from agent_explorer.explorer.recording import RecordingView
    from agent_explorer.samples import support_agent

    log = read_log(ROOT / "sample_logs" / "support_clean.jsonl")
    view = RecordingView(support_agent, log, None)
    # Whatever the recording journaled after it, no index reads "in the next 0 entries" (the last one used to).
    reasons = [view.at(i).reason for i in range(len(log))]
    assert not any(re.search(r"\b[01] entries", reason) for reason in reasons), reasons
    assert "after this entry" in view.at(len(log) - 1).reason
