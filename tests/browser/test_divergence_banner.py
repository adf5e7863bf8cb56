"""The divergence banner in headless Chromium never shows two equal hash prefixes for two different hashes.

A recorded hash edited after its 20th character used to read "recorded 7ec686d62b ≠ replayed 7ec686d62b". The page
is `agent-explorer html`'s static export opened from file:// (no JupyterLab needed); the banner must show both
hashes up to the first character where they differ.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_explorer import read_log
from agent_explorer.cli import main

from .conftest import browser_page

pytestmark = [pytest.mark.browser]


def test_the_banner_shows_the_hashes_up_to_where_they_differ(browser: Any, sample_logs: Path, tmp_path: Path,
                                                             capsys: Any) -> None:
    """On the session's browser (a second Playwright in the same process cannot start while it runs)."""
    from playwright.sync_api import expect

    entries = read_log(sample_logs / "support_clean.jsonl")
    true_hash = entries[4]["verification"]["stateHash"]
    forged = true_hash[:20] + ("0" if true_hash[20] != "0" else "1") + true_hash[21:]
    entries[4]["verification"]["stateHash"] = forged
    log = tmp_path / "forged.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    out = tmp_path / "forged.html"
    assert main(["html", str(log), "-o", str(out)]) == 0
    capsys.readouterr()
    with browser_page(browser) as page:
        page.goto(out.as_uri())
        hashes = page.get_by_test_id("divergence").locator(".ae-banner-hashes")
        expect(hashes).to_be_visible(timeout=30_000)
        text = str(hashes.text_content())
    assert text.startswith(f"recorded {forged[:21]} ≠ replayed {true_hash[:21]} · "), text
    assert forged[:21] != true_hash[:21]
