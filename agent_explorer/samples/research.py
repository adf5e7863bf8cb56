"""The research agent: one question, fanned out to parallel branches whose completions race.

Scenario: a user asks a research question. A capable model outlines it into three sub-questions; the agent then
*spawns* three investigator branches at once (text requests, `branch0..branch2`), all in flight together. They
finish in whatever order the providers answer, and each completion is journaled as it arrives: the recorded
order *is* the serialization, so replay folds them in that order and never re-races
(docs/semantics/event-log.md "Concurrency is serialization"). The context keeps `arrivals`, the order the branches
landed in, so you can see the race in the explorer. When all three have reported (or one failed), a final request
synthesizes the answer. A 90-second deadline (`after`) moves on with whatever arrived if a branch hangs.

Context is JSON only; transitions are pure: the outline is split into sub-questions by a pure assign.
"""

from __future__ import annotations

from typing import Any

from ..engine import assign, spawn_child
from ..runtime import create_text_logic, setup_agent

__all__ = ["BRANCHES", "BRANCH_MODEL", "RESEARCH_MODEL", "research_agent", "sub_questions"]

RESEARCH_MODEL = "scripted/large"
BRANCH_MODEL = "scripted/small"
BRANCHES = ("branch0", "branch1", "branch2")
DEADLINE_MS = 90_000


def sub_questions(outline: str) -> list[str]:
    """The outline's first three non-empty lines, list markers stripped (pure: the same text, the same list)."""
    lines = [line.strip().lstrip("-*0123456789. ").strip() for line in outline.splitlines()]
    return [line for line in lines if line][: len(BRANCHES)]


def _outline_prompt(context: dict[str, Any], event: Any) -> str:
    return f"Split this research question into three sub-questions, one per line:\n{context['question']}"


def _branch_input(n: int) -> Any:
    def build(context: dict[str, Any], event: Any, params: Any) -> dict[str, Any]:
        topic = context["subQuestions"][n]
        return {"prompt": f"Investigate: {topic} (for the question: {context['question']})", "topic": topic}

    return build


def _synthesis_prompt(context: dict[str, Any], event: Any) -> str:
    findings = "\n".join(f"- {branch}: {context['findings'][branch]}" for branch in context["arrivals"])
    return f"Answer the question '{context['question']}' from these findings:\n{findings}"


def _landed(outcome: str) -> Any:
    def update(context: dict[str, Any], event: dict[str, Any], params: Any) -> dict[str, Any]:
        branch = event["type"].rsplit(".", 1)[-1]
        found = event["output"]["text"] if outcome == "done" else f"(failed: {event['error'].get('message')})"
        return {
            "findings": {**context["findings"], branch: found},
            "arrivals": [*context["arrivals"], branch],
        }

    return update


def _all_landed(context: dict[str, Any], event: Any, params: Any) -> bool:
    return len(context["arrivals"]) == len(BRANCHES)


_agent = setup_agent(
    actors={
        "outline": create_text_logic(prompt=_outline_prompt, model=RESEARCH_MODEL),
        "investigate": create_text_logic(model=BRANCH_MODEL),  # the prompt comes in the spawn's input
        "synthesize": create_text_logic(prompt=_synthesis_prompt, model=RESEARCH_MODEL),
    },
    guards={"allBranchesLanded": _all_landed},
)

_on_branches: dict[str, Any] = {}
for _branch in BRANCHES:
    _on_branches[f"xstate.done.actor.{_branch}"] = {"actions": assign(_landed("done"))}
    _on_branches[f"xstate.error.actor.{_branch}"] = {"actions": assign(_landed("error"))}

research_agent = _agent.create_machine(
    {
        "id": "research",
        "version": "1",
        "description": "Outlines a question, investigates three sub-questions in parallel, synthesizes.",
        "context": lambda input: {
            "question": (input or {}).get("question", ""),
            "subQuestions": [],
            "findings": {},
            "arrivals": [],
            "answer": None,
        },
        "initial": "outlining",
        "states": {
            "outlining": {
                "invoke": {
                    "src": "outline",
                    "id": "outline",
                    "onDone": {
                        "target": "investigating",
                        "actions": assign({"subQuestions": lambda c, e, p: sub_questions(e["output"]["text"])}),
                    },
                }
            },
            "investigating": {
                "description": "Three spawned branches in flight at once; completions land in arrival order.",
                "entry": [spawn_child("investigate", id=b, input=_branch_input(n)) for n, b in enumerate(BRANCHES)],
                "on": _on_branches,
                "always": {"target": "synthesizing", "guard": "allBranchesLanded"},
                "after": {DEADLINE_MS: "synthesizing"},
            },
            "synthesizing": {
                "invoke": {
                    "src": "synthesize",
                    "id": "synthesize",
                    "onDone": {"target": "answered", "actions": assign({"answer": lambda c, e, p: e["output"]["text"]})},
                }
            },
            "answered": {"type": "final"},
        },
        "output": lambda c, e, p: {"answer": c["answer"], "arrivals": c["arrivals"]},
    }
)
