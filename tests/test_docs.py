"""The repository's documents stand alone: every `docs/...` reference resolves, and nothing points outside.

Code, tests, notebooks, the front end and the docs cite `docs/<file>` (optionally with a section: `§4`, a quoted
heading, or `#anchor`); each cited file and section must exist. Nothing may cite the design documents this
package was first written from, which are not in the repository. Relative links in every markdown file resolve.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"

SCANNED = ("agent_explorer", "tests", "benchmarks", "js", "notebooks", "docs", "scripts", ".ci", "sample_logs")
ROOT_FILES = ("README.md", "pyproject.toml")
SKIPPED_DIRS = {
    ".git", ".venv", "node_modules", "__pycache__", "static", ".ipynb_checkpoints", ".pytest_cache",
    ".mypy_cache", ".ruff_cache", "build", "dist",
}
SKIPPED_FILES = {"package-lock.json"}
TEXT_SUFFIXES = {
    ".py", ".md", ".ipynb", ".js", ".mjs", ".cjs", ".css", ".json", ".toml", ".sh", ".txt", ".cfg", ".ini",
    ".yml", ".yaml",
}
EXTENSIONLESS_DIRS = {"scripts", ".ci"}  # shell scripts without a suffix

# `docs/<path>`, not as part of a longer path or URL (".../site/docs/x" is someone else's docs).
DOCS_REF = re.compile(r"(?<![\w./-])docs/[\w./#-]*[\w/]")
SECTION_NUMBER = re.compile(r"\s*§\s*(\d+)")
SECTION_NAMES = re.compile(r'\s*\(?((?:"[^"\n]+"(?:\s*,\s*)?)+)')
# Documents that are not in this repository. Spelled so that this file does not match itself.
OUTSIDE = [
    (re.compile(r"\bseeds" + "/"), "the seeds/ folder"),
    (re.compile(r"\bshared" + "/"), "the shared/ folder"),
    (re.compile(r"\b(?:API|DESIGN|STYLE)" + r"\.md\b"), "a bare API/DESIGN/STYLE .md file"),
    (re.compile(r"\bthe seeds\b|\bseeds'", re.IGNORECASE), "the seeds (the upstream design documents)"),
]
MD_LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*(```|~~~)")
INLINE_CODE = re.compile(r"`[^`\n]*`")


def repository_text_files() -> Iterator[Path]:
    """Every text file of the repository this test guards (sources, tests, docs, notebooks, scripts)."""
    for name in ROOT_FILES:
        if (ROOT / name).is_file():
            yield ROOT / name
    for top in SCANNED:
        base = ROOT / top
        if not base.exists():
            continue
        for path in sorted(base.rglob("*")):
            relative = path.relative_to(ROOT)
            if not path.is_file() or SKIPPED_DIRS.intersection(relative.parts[:-1]) or path.name in SKIPPED_FILES:
                continue
            if path.suffix in TEXT_SUFFIXES or (not path.suffix and relative.parts[0] in EXTENSIONLESS_DIRS):
                yield path


def slug(heading: str) -> str:
    """A heading's anchor as GitHub renders it: lowercase, punctuation dropped, spaces as hyphens."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def markdown_lines(text: str) -> Iterator[tuple[int, str]]:
    """(line number, line) outside fenced code blocks."""
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def headings(path: Path) -> list[str]:
    return [
        line.lstrip("#").strip()
        for _, line in markdown_lines(path.read_text(encoding="utf-8"))
        if re.match(r"#{1,6} ", line)
    ]


def anchors(path: Path) -> set[str]:
    """Every anchor a heading of `path` makes, duplicates numbered as GitHub numbers them."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for heading in headings(path):
        base = slug(heading)
        count = seen.get(base, 0)
        found.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return found


def _heading_named(path: Path, name: str) -> bool:
    wanted = name.replace("`", "").strip().lower()
    return any(heading.replace("`", "").strip().lower() == wanted for heading in headings(path))


def docs_reference_problems(text: str, where: str, root: Path = ROOT) -> list[str]:
    """What is wrong with the `docs/...` references in `text`: missing files, sections or anchors."""
    problems: list[str] = []
    for match in DOCS_REF.finditer(text):
        reference = match.group(0).rstrip(".")
        target_text, _, anchor = reference.partition("#")
        target = root / target_text
        if not target.exists():
            problems.append(f"{where}: {reference} does not exist")
            continue
        rest = text[match.end():]
        if anchor and target.suffix == ".md" and anchor not in anchors(target):
            problems.append(f"{where}: {reference}: no heading makes the anchor #{anchor}")
        if target.suffix != ".md":
            continue
        number = SECTION_NUMBER.match(rest)
        if number and not any(re.match(rf"{number.group(1)}\.\s", h) for h in headings(target)):
            problems.append(f"{where}: {target_text} has no section {number.group(1)}")
        names = SECTION_NAMES.match(rest)
        if names:
            for name in re.findall(r'"([^"\n]+)"', names.group(1)):
                if not _heading_named(target, name):
                    problems.append(f'{where}: {target_text} has no heading "{name}"')
    return problems


def outside_reference_problems(text: str, where: str) -> list[str]:
    problems = []
    for number, line in enumerate(text.splitlines(), start=1):
        for pattern, what in OUTSIDE:
            found = pattern.search(line)
            if found:
                problems.append(f"{where}:{number}: cites {what} ({found.group(0)!r}), which is not in this repository")
    return problems


def link_problems(path: Path, text: str, root: Path = ROOT) -> list[str]:
    """Relative markdown links in `text` (the content of `path`) that do not resolve."""
    problems = []
    for number, line in markdown_lines(text):
        for match in MD_LINK.finditer(INLINE_CODE.sub("", line)):
            link = match.group(1)
            if re.match(r"[a-z][a-z0-9+.-]*:", link, re.IGNORECASE):  # http:, https:, mailto:, ...
                continue
            target_text, _, anchor = link.partition("#")
            target = (path.parent / target_text).resolve() if target_text else path
            where = f"{path.relative_to(root)}:{number}"
            if not target.exists():
                problems.append(f"{where}: link {link} does not resolve")
            elif anchor and target.suffix == ".md" and anchor not in anchors(target):
                problems.append(f"{where}: link {link}: no heading makes the anchor #{anchor}")
    return problems


# -- the checks ------------------------------------------------------------------------------------------------


def test_the_docs_folder_holds_the_design_the_contract_and_the_semantics() -> None:
    expected = ["README.md", "design.md", "api.md"] + [
        f"semantics/{name}.md" for name in ("event-log", "entries", "replay", "stores", "runtime", "step-path")
    ]
    missing = [name for name in expected if not (DOCS / name).is_file()]
    assert not missing, f"docs/ is missing {missing}"


def test_the_docs_index_links_every_page() -> None:
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    linked = {(DOCS / link.partition("#")[0]).resolve() for link in MD_LINK.findall(index)}
    pages = {path.resolve() for path in DOCS.rglob("*.md") if path.name != "README.md" or path.parent != DOCS}
    unlinked = sorted(str(page.relative_to(ROOT)) for page in pages - linked)
    assert not unlinked, f"docs/README.md does not link {unlinked}"


def test_every_docs_reference_resolves_to_a_file_and_section_that_exist() -> None:
    problems = []
    for path in repository_text_files():
        if path == Path(__file__).resolve():
            continue  # this file's samples below are broken on purpose
        problems += docs_reference_problems(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert not problems, "\n".join(problems)


def test_nothing_cites_documents_outside_the_repository() -> None:
    problems = []
    for path in repository_text_files():
        if path == Path(__file__).resolve():
            continue  # this file names the patterns it forbids, in its docstrings
        problems += outside_reference_problems(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert not problems, "\n".join(problems)


def test_relative_markdown_links_resolve() -> None:
    problems = []
    for path in repository_text_files():
        if path.suffix == ".md":
            problems += link_problems(path, path.read_text(encoding="utf-8"))
    assert not problems, "\n".join(problems)


# -- the checker finds what it should (so the checks above can fail) -------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see docs/nowhere.md", "docs/nowhere.md does not exist"),
        ("see docs/api.md §99 for it", "docs/api.md has no section 99"),
        ('see docs/semantics/step-path.md "No such heading"', 'has no heading "No such heading"'),
        ('docs/semantics/replay.md "Fold rules", "Nope"', 'has no heading "Nope"'),
        ("docs/semantics/replay.md#no-such-anchor", "no heading makes the anchor #no-such-anchor"),
    ],
    ids=["missing-file", "missing-section-number", "missing-heading", "second-heading-missing", "missing-anchor"],
)
def test_the_reference_check_reports_what_is_broken(text: str, expected: str) -> None:
    problems = docs_reference_problems(text, "sample")
    assert any(expected in problem for problem in problems), problems


def test_the_reference_check_accepts_what_exists() -> None:
    text = (
        'docs/api.md §4; docs/semantics/replay.md "Fold rules", "Verify modes"; '
        "docs/semantics/step-path.md#plans; see docs/semantics/."
    )
    assert docs_reference_problems(text, "sample") == []


@pytest.mark.parametrize(
    "text",
    ["(shared/" + "seeds/001)", "per API" + ".md §2", "the layering of DESIGN" + ".md", "as the see" + "ds say"],
    ids=["seeds-folder", "api-md", "design-md", "prose"],
)
def test_the_outside_check_reports_each_form(text: str) -> None:
    assert outside_reference_problems(text, "sample"), text


def test_the_link_check_reports_broken_links_and_anchors(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    (tmp_path / "other.md").write_text("# Other\n\n## A section\n", encoding="utf-8")
    text = (
        "[ok](other.md#a-section) [gone](missing.md) [bad anchor](other.md#nope) [web](https://example.com)\n"
        "```\n[in code](nowhere.md)\n```\n"
    )
    page.write_text(text, encoding="utf-8")
    problems = link_problems(page, text, root=tmp_path)
    assert len(problems) == 2, problems
    assert "missing.md does not resolve" in problems[0] and "#nope" in problems[1]


# -- js/README.md's protocol tables against explorer/protocol.py and the panels ----------------------------------


def _markdown_table(text: str, header: str) -> dict[str, list[str]]:
    """Rows of the table whose header row starts with `| header |`: first cell (unquoted) -> the other cells."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {header} |"))
    rows: dict[str, list[str]] = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        rows[cells[0].strip("`")] = cells[1:]
    return rows


def _documented_type(cell: str) -> str:
    return cell.split(" (", 1)[0].strip()


def _protocol_type(tp: object) -> str:
    """How js/README.md names a payload type: its TypedDicts, else its TypeScript (as src/protocol.d.ts has it)."""
    import types
    import typing

    from typing_extensions import is_typeddict

    from agent_explorer.explorer.protocol import _ts

    args = typing.get_args(tp) if typing.get_origin(tp) in (typing.Union, types.UnionType) else (tp,)
    named = [a.__name__ for a in args if isinstance(a, type) and is_typeddict(a)]
    if named:
        return ", ".join(f"`{name}`" for name in named)
    text = re.sub(r"\bnumber \| number\b", "number", _ts(tp, set()))
    return text if text == "number" else f"`{text}`"


def test_the_protocol_tables_of_js_readme_match_protocol_py_and_the_panels() -> None:
    pytest.importorskip("anywidget")
    from agent_explorer import read_log
    from agent_explorer.explorer import Explorer
    from agent_explorer.explorer.protocol import MESSAGES, TRAITS
    from agent_explorer.samples import support_agent

    text = (ROOT / "js" / "README.md").read_text(encoding="utf-8")
    traits = _markdown_table(text, "traitlet")
    messages = _markdown_table(text, "message")
    assert list(traits) == list(TRAITS), "js/README.md's traitlets differ from protocol.TRAITS"
    assert list(messages) == list(MESSAGES), "js/README.md's messages differ from protocol.MESSAGES"
    for name, (kind, _owner) in traits.items():
        assert _documented_type(kind) == _protocol_type(TRAITS[name]), name
    for name, (shape, _owner) in messages.items():
        assert _documented_type(shape) == _protocol_type(MESSAGES[name]), name
    # Who writes each traitlet and who answers each message, read off a real explorer's panels.
    ex = Explorer(support_agent, read_log(ROOT / "sample_logs" / "support_clean.jsonl"))
    writers = {trait: type(panel).__name__ for panel in ex._panels for trait in panel.TRAITS}
    assert {name: row[1].strip("`") for name, row in traits.items()} == writers
    answering = {kind: handler.__qualname__.split(".")[0] for kind, handler in ex._handlers.items()}
    assert {name: row[1].strip("`") for name, row in messages.items()} == answering


def test_the_protocol_table_check_sees_a_wrong_row() -> None:
    table = "| traitlet | type | written by |\n| --- | --- | --- |\n| `index` | `Frame` | `CursorPanel` |\n"
    rows = _markdown_table(table, "traitlet")
    assert rows == {"index": ["`Frame`", "`CursorPanel`"]}
    assert _documented_type(rows["index"][0]) != _protocol_type(int)
