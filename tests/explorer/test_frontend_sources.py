"""Static guards on the front-end sources: untrusted data must never reach an HTML parser."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).parents[2] / "js" / "src"
SINKS = re.compile(
    r"\b(innerHTML|outerHTML|insertAdjacentHTML|document\.write|createContextualFragment|eval)\b"
)


def test_no_html_sinks_in_the_widget_sources() -> None:
    offenders = []
    files = sorted(SRC.glob("*.js"))
    assert files, "js/src is empty"
    for path in files:
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            code = line.split("//", 1)[0]
            if SINKS.search(code):
                offenders.append(f"{path.name}:{number}: {line.strip()}")
    assert offenders == []
