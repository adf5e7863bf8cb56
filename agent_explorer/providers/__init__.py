"""Executors for real model providers, over their official SDKs: `OpenAIExecutors`, `AnthropicExecutors`.

Install the SDK with the extra (`pip install 'agent-explorer[openai]'` / `[anthropic]`) and pass its
async client in; this package never imports an SDK itself, so `import agent_explorer` stays light.
It sits above the runtime (it implements the runtime's executor protocol) and below the explorer.
"""

from __future__ import annotations

from ..errors import ProviderError
from .anthropic_messages import AnthropicExecutors
from .common import idempotency_key, tool_name_for
from .openai_chat import OpenAIExecutors

__all__ = ["AnthropicExecutors", "OpenAIExecutors", "ProviderError", "idempotency_key", "tool_name_for"]
