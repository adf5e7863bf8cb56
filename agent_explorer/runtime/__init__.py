"""The agent runtime: agent machines, run_agent, parse_agent_event, and the step path's effects.

Sits above engine/, eventlog/ and stores/; imports nothing from explorer/ (servers stay light).
"""

from __future__ import annotations

from .agent_setup import (
    DecisionLogic,
    PlanLogic,
    TextLogic,
    create_decision_logic,
    create_plan_logic,
    create_text_logic,
    setup_agent,
)
from .decisions import PLAN_DONE_EVENT_TYPE, resolve_decision
from .effects import AgentEffect, get_agent_effects
from .execute import execute_agent_request
from .executors import AgentExecutors, AgentRequest, ScriptedModel
from .parse import parse_agent_event
from .run import RunResult, run_agent

__all__ = [
    "PLAN_DONE_EVENT_TYPE",
    "AgentEffect",
    "AgentExecutors",
    "AgentRequest",
    "DecisionLogic",
    "PlanLogic",
    "RunResult",
    "ScriptedModel",
    "TextLogic",
    "create_decision_logic",
    "create_plan_logic",
    "create_text_logic",
    "execute_agent_request",
    "get_agent_effects",
    "parse_agent_event",
    "resolve_decision",
    "run_agent",
    "setup_agent",
]
