"""The front end's type check stays strict: js/tsconfig.json turns `strict` on and switches no flag of its family
off, no source opts out of the check, few explicit `any` types are written, and the library it checks against is no
newer than the bundle's target.

Round 3 set `strict: true` with `noImplicitAny: false` beside it (about 300 untyped parameters): strict in name only.
These checks keep that from coming back; the `node` one asks TypeScript itself which flags `strict` implies.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

JS = Path(__file__).resolve().parents[2] / "js"

# What `strict: true` turns on in the TypeScript js/package.json pins (5.9), checked against tsc itself below.
STRICT_FAMILY = frozenset({
    "alwaysStrict",
    "noImplicitAny",
    "noImplicitThis",
    "strictBindCallApply",
    "strictBuiltinIteratorReturn",
    "strictFunctionTypes",
    "strictNullChecks",
    "strictPropertyInitialization",
    "useUnknownInCatchVariables",
})

# The explicit `any` types js/src may write, by file, each with its reason in a comment beside it. Type a new one
# for real instead; where that cannot be done, add it here and say why there.
ALLOWED_ANY = {
    "pysearch.js": 1,  # TreeList: search_data.py's tagged lists hold a tag, texts and child nodes by position
    "track.js": 1,  # a layer's build(marks): each layer's marks have their own shape, and build is contravariant
}

OPT_OUT = re.compile(r"@ts-(nocheck|ignore|expect-error)\b")
ANY_IN_TYPE = re.compile(r"\{[^{}]*\bany\b")  # `any` inside a JSDoc type expression {...}


def _config() -> dict[str, Any]:
    return json.loads((JS / "tsconfig.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def strictness_problems(config: dict[str, Any]) -> list[str]:
    """What makes a tsconfig less than strict for this front end, in words (empty when it is strict)."""
    options = config.get("compilerOptions", {})
    problems = [f"{name} is not true" for name in ("strict", "checkJs") if options.get(name) is not True]
    problems += [f"{name} is switched off" for name in sorted(STRICT_FAMILY) if options.get(name) is False]
    if "src/**/*.js" not in config.get("include", []) or config.get("exclude") or "files" in config:
        problems.append("not every js/src/**/*.js is included")
    return problems


def _es_year(lib: str) -> int | None:
    """The ECMAScript year of a `lib` entry ("ES2020", "es2022.array", "ESNext" -> a year past any); None for DOM."""
    match = re.fullmatch(r"es(\d{4}|next)(\..+)?", lib.lower())
    if match is None:
        return None
    return 9999 if match.group(1) == "next" else int(match.group(1))


def libraries_past_target(libs: list[str], build_source: str) -> list[str]:
    """The `lib` entries newer than the oldest ES year build.mjs targets: a method they declare type-checks, and
    esbuild (which lowers syntax, never polyfills methods) ships it to browsers that lack it."""
    targets = [int(year) for year in re.findall(r'"es(\d{4})"', " ".join(re.findall(r"target:\s*\[([^\]]*)\]", build_source)))]
    assert targets, "build.mjs names no es20xx target"
    return [lib for lib in libs if (_es_year(lib) or 0) > min(targets)]


def test_the_front_end_type_check_is_strict() -> None:
    assert strictness_problems(_config()) == []


@pytest.mark.parametrize("flag", sorted(STRICT_FAMILY))
def test_switching_off_one_strict_family_flag_is_caught(flag: str) -> None:
    config = _config()
    config["compilerOptions"][flag] = False  # the round-3 shape: strict on, one of its flags off beside it
    assert strictness_problems(config) == [f"{flag} is switched off"]


def test_strict_off_or_a_narrowed_include_is_caught() -> None:
    config = _config()
    config["compilerOptions"]["strict"] = False
    config["exclude"] = ["src/pysearch.js"]
    assert strictness_problems(config) == ["strict is not true", "not every js/src/**/*.js is included"]


def test_no_front_end_source_opts_out_of_the_check() -> None:
    files = sorted((JS / "src").glob("*.js"))
    assert files, "js/src is empty"
    offenders = [
        f"{path.name}:{number}: {line.strip()}"
        for path in files
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if OPT_OUT.search(line)
    ]
    assert offenders == []


def test_explicit_any_types_are_only_the_allowed_few() -> None:
    found: dict[str, int] = {}
    for path in sorted((JS / "src").glob("*.js")):
        count = sum(len(ANY_IN_TYPE.findall(line)) for line in path.read_text(encoding="utf-8").splitlines())
        if count:
            found[path.name] = count
    assert found == ALLOWED_ANY, "type these for real (or add them to ALLOWED_ANY with the reason)"
    # The pattern finds what it is meant to find, and leaves prose alone.
    assert ANY_IN_TYPE.findall("/** @param {any} x @returns {Array<any>} */") == ["{any", "{Array<any"]
    assert not ANY_IN_TYPE.findall("// any other resize leaves the user's scroll alone {x}")


def test_the_checked_library_is_no_newer_than_the_bundle_target() -> None:
    build = (JS / "build.mjs").read_text(encoding="utf-8")
    assert libraries_past_target(_config()["compilerOptions"]["lib"], build) == []
    # The check is real: ES2022's library (Array.prototype.at) against the ES2020 bundle is caught.
    assert libraries_past_target(["ES2022", "DOM"], 'target: ["es2020"],') == ["ES2022"]
    assert libraries_past_target(["ESNext"], 'target: ["es2020"],') == ["ESNext"]


def _shown_options(tsc: Path, directory: Path) -> dict[str, Any]:
    shown = subprocess.run([str(tsc), "-p", str(directory), "--showConfig"], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    return json.loads(shown.stdout)["compilerOptions"]  # type: ignore[no-any-return]


@pytest.mark.node
def test_the_strict_family_is_what_typescript_says_and_all_of_it_is_on(tmp_path: Path) -> None:
    tsc = JS / "node_modules" / ".bin" / "tsc"
    if not tsc.exists():
        pytest.skip("js/node_modules is not installed (npm ci in js/)")
    (tmp_path / "a.js").write_text("export const a = 1;\n", encoding="utf-8")

    def implied(options: dict[str, Any]) -> dict[str, Any]:
        (tmp_path / "tsconfig.json").write_text(json.dumps({"compilerOptions": options, "files": ["a.js"]}), encoding="utf-8")
        return _shown_options(tsc, tmp_path)

    base = {"allowJs": True, "checkJs": True, "noEmit": True}
    with_strict = implied({**base, "strict": True})
    without = implied(base)
    # tsc --showConfig lists the flags `strict` implies: they are the family this file checks for.
    assert {name for name, value in with_strict.items() if value is True and name not in without} - {"strict"} == STRICT_FAMILY
    effective = _shown_options(tsc, JS)
    assert {name: effective.get(name) for name in STRICT_FAMILY} == dict.fromkeys(STRICT_FAMILY, True)
