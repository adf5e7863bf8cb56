"""A count with its noun agreeing ("1 entry", "2 entries"), for every message a person reads.

One helper so no summary says "1 entries" or "verified 1 of 1 entries": tests/test_plurals.py scans the
package's f-strings for a count written straight before a plural noun.
"""

from __future__ import annotations

__all__ = ["plural"]


def plural(count: float, one: str, many: str | None = None, *, thousands: bool = False) -> str:
    """`plural(1, "entry", "entries")` -> "1 entry"; `plural(2, "hit")` -> "2 hits"; `thousands=True` writes
    1,000 (as the widget does)."""
    number = f"{count:,}" if thousands else str(count)
    return f"{number} {one if count == 1 else many or one + 's'}"
