"""The event table, the search panel, the composer and the state panel as a person reads them, in a real JupyterLab
through headless Chromium; and the static export's search compared with Python's `search_log`, query by query.

One notebook: the recorded support run (`support`) and a 5,001-entry run (`long`). Screenshots land in tmp_path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import Lab, NotebookPage, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SAMPLES = Path(__file__).parents[2] / "sample_logs"
SETUP = f"""\
from agent_explorer import read_log
from agent_explorer.explorer import Explorer
from agent_explorer.samples import support_agent
support = Explorer(support_agent, read_log({str(SAMPLES / "support_clean.jsonl")!r}))
support"""
LONG = """\
from sample_run import long_events, make_machine, record
machine = make_machine()
long = Explorer(machine, record(machine, long_events(5000)))
long"""
TIMER = "xstate.after.approvalTimeout.support.awaitingApproval"


@pytest.fixture(scope="module")
def nb(notebook_page: NotebookPage, lab: Lab) -> Iterator[NotebookPage]:
    write_notebook(lab.root / "reading.ipynb", [SETUP, LONG])
    notebook_page.open("reading.ipynb", widgets=2)
    yield notebook_page
    assert notebook_page.dialogs == [], f"a dialog fired: {notebook_page.dialogs}"


def expect_at(root: Any, index: int) -> None:
    from playwright.sync_api import expect

    expect(root.get_by_test_id("position")).to_have_text(re.compile(rf"^index {index:,} / "), timeout=15_000)
    root.page.wait_for_function(
        "([root, i]) => root.querySelector('[data-testid=state-head]') && "
        "root.querySelector('tr.ae-row.current')?.dataset.index === String(i)",
        arg=[root.element_handle(), index],
        timeout=15_000,
    )


def go(nb: NotebookPage, name: str, index: int) -> None:
    assert nb.kernel(f"{name}.index = {index}") == ""


def first_row(root: Any) -> int:
    return int(str(root.locator("tr.ae-row").first.get_attribute("data-index")))


def clipped(locator: Any) -> list[str]:
    """Texts of the cells whose content overflows what they show."""
    return list(locator.evaluate_all("cells => cells.filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent)"))


# -- the event table ------------------------------------------------------------------------------------------


def test_table_cells_show_their_whole_text_and_say_the_rest_on_hover(nb: NotebookPage, tmp_path: Path) -> None:
    root = nb.widget(0)
    root.scroll_into_view_if_needed()
    types = root.locator("tr.ae-row td.ae-type")
    assert types.count() == 12
    # the type is never clipped: long xstate.done.actor.* types wrap after their dots; the title is the whole type
    assert clipped(types) == []
    assert types.evaluate_all("cells => cells.every(c => c.title === c.textContent)")
    row1 = root.locator('tr.ae-row[data-index="1"]')
    assert row1.locator("td.ae-type").text_content() == "xstate.done.actor.lookupOrder"
    # recorded: month-day and time (the run spans days in other logs), the whole ISO timestamp on hover
    recorded = row1.locator("td.ae-time")
    assert re.fullmatch(r"03-02 09:00:00", str(recorded.text_content()))
    assert recorded.get_attribute("title") == "2026-03-02T09:00:00.850Z"
    assert root.locator('tr.ae-row[data-index="8"] td.ae-time').text_content() == "03-02 09:20:06"
    assert clipped(root.locator("tr.ae-row td.ae-time")) == []
    # causation: whole request ids (chooseAction#1 fits), the title holds it too
    cause = root.locator('tr.ae-row[data-index="6"] td.ae-cause')
    assert cause.text_content() == "chooseAction#1" and cause.get_attribute("title") == "chooseAction#1"
    assert clipped(root.locator("tr.ae-row td.ae-cause")) == []
    assert "hover" in str(root.locator("th", has_text="recorded").get_attribute("title"))
    root.get_by_test_id("events").screenshot(path=str(tmp_path / "table.png"))


def test_an_empty_filter_says_so_and_clearing_it_keeps_the_cursors_page(nb: NotebookPage, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    root = nb.widget(1)
    root.scroll_into_view_if_needed()
    go(nb, "long", 2_500)
    expect_at(root, 2_500)
    assert first_row(root) == 2_500
    box = root.get_by_role("searchbox", name="Search event payloads")
    box.fill("no entry has this")
    empty = root.get_by_test_id("table-empty")
    expect(empty).to_have_text(re.compile("no entries match text “no entry has this”"), timeout=10_000)
    assert root.locator("tr.ae-row").count() == 0
    root.get_by_test_id("events").screenshot(path=str(tmp_path / "empty-filter.png"))
    root.get_by_test_id("table-clear").click()
    expect(root.locator("tr.ae-row")).to_have_count(100, timeout=10_000)
    assert first_row(root) == 2_500 and box.input_value() == ""  # the cursor's page, not page 0
    # a type filter set and then cleared from the menu: the cursor's page too
    select = root.locator("select[aria-label='Filter by event type']")
    select.select_option("TICK")
    expect(root.locator("tr.ae-row td.ae-type", has_text="NOTE")).to_have_count(0, timeout=10_000)
    assert nb.kernel("print(long.table['offset'] > 0)").strip() == "True"  # the TICKs around the cursor
    select.select_option("")
    root.page.wait_for_function(
        "el => el.querySelector('tr.ae-row')?.dataset.index === '2500'", arg=root.element_handle(), timeout=10_000
    )
    expect_at(root, 2_500)


def test_the_last_page_of_a_long_log_is_full(nb: NotebookPage, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    root = nb.widget(1)
    root.scroll_into_view_if_needed()
    root.get_by_test_id("position").click()
    nb.page.keyboard.press("End")
    expect_at(root, 5_000)
    rows = root.locator("tr.ae-row")
    expect(rows).to_have_count(100)
    assert first_row(root) == 4_901 and rows.last.get_attribute("data-index") == "5000"
    assert root.locator(".ae-page-label").text_content() == "rows 4,902–5,001 of 5,001"
    assert root.locator("button[title='Next page']").is_disabled()
    root.locator("button[title='Previous page']").click()  # back on a page boundary
    root.page.wait_for_function(
        "el => el.querySelector('tr.ae-row')?.dataset.index === '4800'", arg=root.element_handle(), timeout=10_000
    )
    root.get_by_test_id("events").screenshot(path=str(tmp_path / "last-page.png"))


# -- the search panel -----------------------------------------------------------------------------------------


def test_many_hits_show_a_tall_list_with_its_count_and_paging_in_view(nb: NotebookPage, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    root = nb.widget(1)
    panel = root.get_by_test_id("search")
    panel.scroll_into_view_if_needed()
    root.get_by_test_id("search-text").fill("TICK")
    root.get_by_test_id("search-text").press("Enter")
    summary = root.get_by_test_id("search-summary")
    expect(summary).to_have_text(re.compile(r"^1–50 of [\d,]+ hits$"), timeout=30_000)
    total = int(re.sub(r"\D", "", str(summary.text_content()).split(" of ")[1]))
    assert total > 1_000
    hits = root.get_by_test_id("search-hits")
    visible = hits.evaluate(
        """list => { const box = list.getBoundingClientRect();
                     return [...list.children].filter(li => { const r = li.getBoundingClientRect();
                       return r.top >= box.top - 1 && r.bottom <= box.bottom + 1; }).length; }"""
    )
    assert visible >= 12, f"only {visible} hit rows in view"
    # scrolled to its end, the list keeps the count and the paging buttons in view (they are outside it)
    hits.evaluate("list => { list.scrollTop = list.scrollHeight; }")
    for part in (summary, root.get_by_role("button", name="Next hits")):
        assert part.is_visible()
        top = float(part.evaluate("el => el.getBoundingClientRect().top"))
        assert top <= float(hits.evaluate("el => el.getBoundingClientRect().top"))
    root.get_by_role("button", name="Next hits").click()
    expect(summary).to_have_text(re.compile(r"^51–100 of "), timeout=10_000)
    assert hits.evaluate("el => el.scrollTop") == 0  # the next page opens at its first hit
    panel.screenshot(path=str(tmp_path / "many-hits.png"))


def test_search_inputs_fit_their_placeholders_and_the_regex_toggle_is_labelled(nb: NotebookPage) -> None:
    root = nb.widget(0)
    fit = """el => { const cs = getComputedStyle(el); const ctx = document.createElement("canvas").getContext("2d");
                     ctx.font = `${cs.fontStyle} ${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
                     const room = el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
                     return [ctx.measureText(el.placeholder).width, room, el.placeholder, el.title]; }"""
    for test_id in ("search-text", "search-path"):
        box = root.get_by_test_id(test_id)
        box.fill("")
        width, room, placeholder, title = box.evaluate(fit)
        assert placeholder and width <= room, f"{test_id}: {placeholder!r} needs {width}px, has {room}px"
        assert title, f"{test_id} has no tooltip"
    assert "e.g." in str(root.get_by_test_id("search-path").get_attribute("title"))
    label = root.get_by_test_id("search-regex-label")
    assert label.text_content() == "regex" and "regular expression" in str(label.get_attribute("title"))
    label.click()
    assert root.get_by_test_id("search-regex").is_checked()
    label.click()


# -- the composer and the state panel -------------------------------------------------------------------------


def test_a_decision_in_flight_is_completed_by_the_events_it_chooses(nb: NotebookPage, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    root = nb.widget(0)
    root.scroll_into_view_if_needed()
    go(nb, "support", 4)  # deciding: the chooseAction decision is in flight
    expect_at(root, 4)
    root.get_by_test_id("composer-toggle").click()
    choices = root.get_by_test_id("composer-choices")
    decision = root.get_by_test_id("composer-decision")
    expect(decision).to_contain_text("chooseAction#1", timeout=10_000)
    # no completion event for the decision (the composer would refuse it); the events it may choose instead
    assert choices.locator('button[data-type="xstate.done.actor.chooseAction"]').count() == 0
    assert sorted(decision.locator("button").evaluate_all("bs => bs.map(b => b.dataset.type)")) == [
        "ESCALATE", "OFFER_REFUND", "SEND_REPLY"]
    decision.locator('button[data-type="OFFER_REFUND"]').click()
    check = root.get_by_test_id("composer-check")
    expect(check).to_contain_text("deciding → awaitingApproval", timeout=10_000)
    root.get_by_test_id("composer").screenshot(path=str(tmp_path / "decision.png"))
    root.get_by_test_id("composer-toggle").click()


def test_after_send_the_form_starts_over_and_shows_what_was_sent(nb: NotebookPage, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    root = nb.widget(0)
    go(nb, "support", 7)
    expect_at(root, 7)
    root.get_by_test_id("composer-toggle").click()
    choices = root.get_by_test_id("composer-choices")
    timer = choices.locator(f'button[data-type="{TIMER}"]')
    expect(timer).to_have_attribute("title", "fire the timer (after 4 h, armed at 6)", timeout=10_000)
    choices.locator('button[data-type="REJECT"]').click()
    root.locator('input[data-field="approver"]').fill("sam.k")
    root.locator('input[data-field="reason"]').fill("too expensive")
    check = root.get_by_test_id("composer-check")
    expect(check).to_contain_text("awaitingApproval → drafting", timeout=10_000)
    root.get_by_test_id("composer-send").click()
    expect_at(root, 8)
    sent = root.get_by_test_id("composer-sent")
    expect(sent).to_contain_text("now viewing fork-1, index 8")
    expect(root.get_by_test_id("composer-sent-event")).to_have_text(
        '{"type":"REJECT","approver":"sam.k","reason":"too expensive"}'
    )
    # ready for the next event at the new index: nothing chosen, no red fields, no schema error
    expect(root.get_by_test_id("composer-empty")).to_have_text("choose the next event to send at index 8")
    assert root.locator(".ae-compose-form .invalid, [data-testid=composer-check]").count() == 0
    assert choices.locator("button[aria-pressed=true]").count() == 0
    nb.page.wait_for_timeout(600)  # a late dry run of the sent form would have redrawn it by now
    assert root.locator(".ae-compose-form .invalid").count() == 0
    root.get_by_test_id("composer").screenshot(path=str(tmp_path / "after-send.png"))
    root.get_by_test_id("composer-toggle").click()
    assert nb.kernel("support.checkout(None, index=7); print(support.line.name)").strip() == "recording"
    expect_at(root, 7)


def test_durations_read_as_durations(nb: NotebookPage) -> None:
    from playwright.sync_api import expect

    root = nb.widget(0)
    go(nb, "support", 7)
    expect_at(root, 7)
    expect(root.get_by_test_id("timers").locator(".ae-chip")).to_have_text("4 h")
    expect(root.get_by_test_id("effects")).to_contain_text(f"{TIMER}#1 · fires after 4 h")
    assert "14400000" not in str(root.get_by_test_id("state").text_content())


def test_the_payload_stays_open_or_closed_and_the_value_stays_in_view(nb: NotebookPage, tmp_path: Path) -> None:
    root = nb.widget(0)
    go(nb, "support", 3)
    expect_at(root, 3)
    details = root.locator(".ae-event-json")
    assert details.evaluate("d => d.open") is False
    details.locator("summary").click()
    go(nb, "support", 4)
    expect_at(root, 4)
    assert root.locator(".ae-event-json").evaluate("d => d.open") is True  # kept open across the step
    assert "xstate.done.actor.draft" in str(root.get_by_test_id("event-json").text_content())
    root.locator(".ae-event-json summary").click()
    go(nb, "support", 5)
    expect_at(root, 5)
    assert root.locator(".ae-event-json").evaluate("d => d.open") is False  # and closed
    # scroll the state panel to its end (the context), then step: the value and the event stay in view
    body = root.locator(".ae-state-body")
    body.evaluate("el => { el.scrollTop = el.scrollHeight; }")
    assert float(body.evaluate("el => el.scrollTop")) > 100
    root.get_by_test_id("position").click()
    nb.page.keyboard.press("ArrowRight")
    expect_at(root, 6)
    inside = """([body, el]) => { const b = body.getBoundingClientRect(), r = el.getBoundingClientRect();
                                  return r.top >= b.top - 1 && r.bottom <= b.bottom + 1 && r.height > 0; }"""
    for test_id in ("state-value", "event-type"):
        target = root.get_by_test_id(test_id)
        assert nb.page.evaluate(inside, [body.element_handle(), target.element_handle()]), f"{test_id} scrolled away"
    assert root.get_by_test_id("state-value").text_content() == "awaitingApproval"
    # nothing drawn over it: the pinned value is what the browser finds at its own position
    hit = nb.page.evaluate(
        """el => { const r = el.getBoundingClientRect(); const at = document.elementFromPoint(r.left + 4, r.top + r.height / 2);
                   return el.contains(at); }""",
        root.get_by_test_id("state-value").element_handle(),
    )
    assert hit
    # and nothing of the scrolled context shows above it: the body's top edge is the pinned block's
    top = nb.page.evaluate(
        """([body, head]) => { const b = body.getBoundingClientRect();
                               return head.contains(document.elementFromPoint(b.left + 20, b.top + 2)); }""",
        [body.element_handle(), root.get_by_test_id("state-head").element_handle()],
    )
    assert top
    root.get_by_test_id("state").screenshot(path=str(tmp_path / "state-scrolled.png"))


# -- the static export's search is the notebook's -------------------------------------------------------------

UNICODE_EVENTS: list[dict[str, Any]] = [
    {"type": "NOTE", "text": "café crème at the Straße with ΑΣ and σοφία 🚀 launch"},
    {"type": "NOTE", "text": "İstanbul ısı Iğdır KELVIN K ſ long s"},
    {"type": "NOTE", "text": "x" * 150 + "🚀🚀🚀 needle here " + "y" * 200 + " end"},
    {"type": "NOTE", "text": '日本語テキスト and tab\there\nnew line "quoted" back\\slash \u0001 ctl'},
    {"type": "TICK", "n": 1, "f": 1.0, "big": 1e20, "small": 1e-05, "neg": -0.0, "pi": 3.14, "huge": 2**70,
     "t": True, "fa": False, "nu": None},
    {"type": "TICK", "nested": {"2": "b", "1": "a", "z": [1, [2, {"q": "deep"}]], "": "empty key", "a.b": "dotted"}},
    {"type": "NOTE", "text": ""},
    {"type": "START"},
    {"type": "NOTE", "text": "abc@example.com refund-42 #17"},
    {"type": "DONE", "text": "done"},
]
TEXT_QUERIES = [
    "refund", "REFUND", "#1", "T-1042", "lookupOrder", "null", "true", "false", "1", "0.", "e+", "1e", "e-0", ".", "a",
    "café", "CAFÉ", "straße", "STRASSE", "σ", "Σ", "ς", "i", "İ", "ı", "I", "🚀", "日本", "k", "ſ", '"', "\\", "\n",
    "tab\there", ":", '":"', "{", "needle", "NEEDLE", "end", "  refund  ", "approver", "sam.k", "#",
]
REGEX_QUERIES = [
    r"^[A-Z_]+$", r"\d+", r"\d{3,}", r"\bref", r"\w+@\w+", r"\s", r"\S+$", r"^$", r"\B", r"(?i)CAF[EÉ]", r"(a|b)\1",
    r"(?P<x>.)(?P=x)", r".", r"(?s).\n", r"(?m)^\w", r"$", r"x$", r"[^a-z0-9 ]", r"[\W\d]", r"[^\S ]", r"[]x]",
    r"a{,2}b", r"{", r"x{}", r"(?<=#)\d", r"(?<!-)\d{2}", r"(?x) r e f u n d  # a comment", r"\x41", r"[i]", r"[h-j]",
    r"(?-i:R)efund", r"(?i:[a-z]+)", r"(?i)ı", r"[^i]+", r"\bcafé\b", r"(?m)$", r"\Z", r"\A.", r"[\s\S]{3}$",
    r"(a)(?<=\1)", r"\012", r"[\0]", r"(?x)[ ]", r"a{1,2", r"\u00e9", r"\U0001F680", r"[\U0001F680]", r"🚀+", r".🚀",
    r"(?<=🚀)\s", r"[^\W\d_]+", r"(?s)needle.*end", r"needle.*end", r"(?i)ΣΟΦΊΑ", r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?",
    r"[a-]", r"[-a]", r"[a\-z]", r"\-", r"a|", r"()", r"(?#x)", r"x*?y", r"(?<=ab|cd)x", r"(?i)(?m)^T", r"\$",
    r"#\d+$", r"[#]\d", r"#\d+", "",
    # rejected by Python: rejected here too
    "(", r"a**", r"(?<=a+)b", r"(?<=a|bc)x", r"\z", "*", r"[z-a]", r"\1(a)", r"a{3,2}", r"a(?i)b", r"(?<n>x)",
]
PATH_QUERIES: list[dict[str, Any]] = [
    {"text": "refund", "path": "event.output"}, {"text": "e", "path": "event.type"},
    {"text": ".", "regex": True, "path": "context.*"}, {"text": "a", "path": "$.context.ticket.subject"},
    {"text": "1", "path": "context.items[*].qty"}, {"text": "x", "path": "context.items[0]"},
    {"text": "e", "path": "*.type"}, {"text": "b", "path": "event.nested.2"}, {"text": "deep", "path": "event.nested.z[1][1].q"},
    {"text": "2", "path": "event.nested.z[*][0]"}, {"text": "refund", "path": "  event.text  "}, {"text": "a", "path": "$"},
    {"text": "o", "path": "context.notes[*]"}, {"text": "x", "path": "event.[0]"}, {"text": "x", "path": "a..b"},
    {"text": "x", "path": "context.[0"},
]
OTHER_QUERIES: list[dict[str, Any]] = [
    {"text": "refund", "case": True}, {"text": "Refund", "case": True}, {"text": "σ", "case": True},
    {"text": "T", "scope": "events"}, {"text": "T", "scope": "context"}, {"text": "i", "regex": True, "case": True},
]
UNSUPPORTED = [r"(?>a)", r"a*+", r"\N{EM DASH}", r"(a)?(?(1)b|c)", r"(?a)\w"]
TABLE_FILTERS = [("", "refund"), ("", "REFUND  "), ("", "type"), ("@agent.usage", ""), ("@agent.usage", "large"),
                 ("", "é"), ("", '":"'), ("", "\\n"), ("", "1e+20"), ("", "2"), ("NOTE", "needle"), ("", "İ")]


def all_queries() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"text": t} for t in TEXT_QUERIES]
    out += [{"text": t, "regex": True} for t in REGEX_QUERIES]
    out += PATH_QUERIES + OTHER_QUERIES
    return [{"regex": False, "path": "", "scope": "both", "case": False, "type": "", **q} for q in out]


def python_results(ex: Any, query: dict[str, Any], start: int, stop: int) -> dict[str, Any]:
    """What the notebook finds, restricted to the exported window [start, stop] (a hit running across the
    window's edge is cut at it, as a search starting at `start` sees it)."""
    from agent_explorer.errors import AgentError
    from agent_explorer.explorer.search import SearchQuery, fold_contexts, search_log

    q = SearchQuery(query["text"], query["regex"], query["path"] or None, query["scope"], query["case"],
                    query["type"] or None)
    try:
        hits = search_log(ex.entries, q, fold_contexts(ex.machine, ex.entries))
    except AgentError as error:
        return {"error": error.message, "code": error.code}
    out = []
    for hit in hits:
        if hit.until < start or hit.index > stop:
            continue
        row = hit.to_json()
        row["index"], row["until"] = max(row["index"], start), min(row["until"], stop)
        out.append(row)
    out.sort(key=lambda row: (row["index"], row["where"] != "event"))
    return {"hits": out}


def page_results(page: Any, queries: list[dict[str, Any]], filters: list[tuple[str, str]]) -> dict[str, Any]:
    """The static page's own search and table filter, run in Chromium on the page's exported data."""
    return dict(page.evaluate(
        """async ({queries, filters}) => {
            const read = (id) => JSON.parse(document.getElementById(id).textContent);
            const data = read("ae-data");
            const source = document.getElementById("ae-bundle");
            const code = source.type === "application/json" ? read("ae-bundle") : source.textContent;
            const widget = await import(URL.createObjectURL(new Blob([code], { type: "text/javascript" })));
            return {
              hits: queries.map((q) => { const r = widget.staticSearchResults(data, q);
                                         return r.page.error ? { error: r.page.error } : { hits: r.all }; }),
              tables: filters.map(([type, text]) => widget.staticTableMatches(data, type, text)),
            };
        }""",
        {"queries": queries, "filters": filters},
    ))


def exports() -> Iterator[tuple[str, Any, int, int]]:
    import sys

    from agent_explorer import read_log
    from agent_explorer.cli.machines import resolve_machine
    from agent_explorer.explorer import Explorer

    sys.path.insert(0, str(Path(__file__).parents[1] / "explorer"))
    from sample_run import long_events, make_machine, record

    for name in ("support_clean", "support_divergent", "support_whatif", "support_ignored", "support_crashed",
                 "support_bridge_v2", "research_race", "planner_trip"):
        entries = read_log(SAMPLES / f"{name}.jsonl")
        ex = Explorer(resolve_machine(entries, None), entries, check_version=False)
        yield name, ex, 0, len(entries) - 1
        if name == "support_whatif":
            yield f"{name}[3..12]", ex, 3, 12
    machine = make_machine()
    yield "unicode-and-numbers", Explorer(machine, record(machine, UNICODE_EVENTS)), 0, len(UNICODE_EVENTS)
    yield "long[100..180]", Explorer(machine, record(machine, long_events(600))), 100, 180


def test_the_static_export_searches_exactly_as_python_does(browser: Any, tmp_path: Path) -> None:
    from agent_explorer.explorer.table import EventTable

    queries = all_queries()
    compared = 0
    for name, ex, start, stop in exports():
        target = tmp_path / f"{name}.html"
        ex.to_html(target, start=start, stop=stop)
        context = browser.new_context()
        try:
            page = context.new_page()
            page.goto(target.as_uri())
            page.wait_for_selector('.ae-root[data-ready="true"]', timeout=30_000)
            got = page_results(page, queries + [{**queries[0], "text": t, "regex": True} for t in UNSUPPORTED],
                               TABLE_FILTERS)
        finally:
            context.close()
        for query, found in zip(queries, got["hits"], strict=False):
            want = python_results(ex, query, start, stop)
            where = f"{name}: {query}"
            if "error" in want:
                assert "error" in found, f"{where}: Python refuses it ({want['error']}), the page found {found}"
                if want["code"] != "invalid-search-pattern":
                    assert found["error"] == want["error"], where  # path and scope errors read the same
                else:
                    assert "is not a valid regular expression" in found["error"], where
            else:
                assert found == want, where
            compared += 1
        for pattern, found in zip(UNSUPPORTED, got["hits"][len(queries):], strict=True):
            assert "cannot run" in found.get("error", ""), f"{name}: {pattern!r} gave {found}"
        table = EventTable(ex.entries)
        for (type_filter, text), found in zip(TABLE_FILTERS, got["tables"], strict=True):
            matches = table.matches(type_filter or None, text or None)
            want_rows = [i for i in (range(len(ex.entries)) if matches is None else matches) if start <= i <= stop]
            assert found == want_rows, f"{name}: table filter {type_filter!r} {text!r}"
    assert compared > 1_000


def test_the_static_pages_search_panel_draws_the_notebooks_hits(browser: Any, tmp_path: Path) -> None:
    from agent_explorer import read_log
    from agent_explorer.explorer import Explorer
    from agent_explorer.samples import support_agent

    ex = Explorer(support_agent, read_log(SAMPLES / "support_clean.jsonl"))
    target = tmp_path / "support.html"
    ex.to_html(target)
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    try:
        page = context.new_page()
        page.goto(target.as_uri())
        page.wait_for_selector('.ae-root[data-ready="true"]', timeout=30_000)
        root = page.locator(".ae-root")
        # Nothing on a static page can compose (no kernel appends a branch): no composer, no "Compose" button.
        assert root.get_by_test_id("composer").count() == 0 and root.get_by_test_id("composer-toggle").count() == 0
        assert root.get_by_test_id("search").count() == 1  # the panels that work on exported data are there
        for text, regex, path in (("refund", False, ""), ("^[A-Z_]+$", True, "event.type")):
            if root.get_by_test_id("search-regex").is_checked() != regex:
                root.get_by_test_id("search-regex").click()
            root.get_by_test_id("search-path").fill(path)
            root.get_by_test_id("search-text").fill(text)
            root.get_by_test_id("search-text").press("Enter")
            hits = ex.search(text, regex=regex, path=path or None)
            page.wait_for_function(
                "([el, n]) => el.querySelector('[data-testid=search-summary]').textContent === `1–${n} of ${n} hits`",
                arg=[root.element_handle(), len(hits)],
                timeout=10_000,
            )
            drawn = root.get_by_test_id("search-hits").locator("li").evaluate_all(
                "lis => lis.map(li => [li.querySelector('.ae-hit-path').textContent, li.querySelector('.ae-hit-text').textContent])"
            )
            assert drawn == [[hit.path, hit.text] for hit in hits]
            assert all(text for _, text in drawn)  # every hit has its snippet
        root.get_by_test_id("search").screenshot(path=str(tmp_path / "static-search.png"))
    finally:
        context.close()
