"""Sample agent machines, recorded into `sample_logs/` by `python -m agent_explorer.samples.regenerate`.

`support_agent` (a support ticket: tools, two models, a decision, human approval, an escalation timer),
`research_agent` (parallel spawned branches that race), `planner_agent` (a model-made plan), `inbox_agent`
(the long triage loop), plus `support_agent_v2` (version bridge) and `support_agent_old_policy` (the machine the
divergent log was recorded with). Importing this package builds the machines; it runs and writes nothing.
`ensure_samples()` writes the sample logs that are generated rather than shipped (`agent-explorer samples`), and
`sample_machine(ref)` imports a log's machineRef only when it names one of these machines.
"""

from __future__ import annotations

from .generate import ensure_samples
from .inbox import inbox_agent
from .planner import planner_agent
from .prices import SAMPLE_PRICES
from .research import research_agent
from .support import support_agent, support_agent_old_policy, support_agent_v2
from .trusted import sample_machine

__all__ = [
    "SAMPLE_PRICES",
    "ensure_samples",
    "inbox_agent",
    "planner_agent",
    "research_agent",
    "sample_machine",
    "support_agent",
    "support_agent_old_policy",
    "support_agent_v2",
]
