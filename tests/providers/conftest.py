"""Fixtures of the provider tests: a real HTTP server on 127.0.0.1 per test, the real SDK clients pointed at it
(`base_url`, few retries, short timeouts), a real SQLite store, and one `Provider` per API under test."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from agent_explorer.stores import SqliteEventLogStore

from .server import ProviderServer, Reply, json_reply, sse_reply

OPENAI_KEY = "sk-test-SECRET-0123456789abcdef"
ANTHROPIC_KEY = "sk-ant-test-SECRET-0123456789abcdef"


@dataclass(frozen=True)
class Provider:
    """One API under test: where its calls go, its key, and how to build its executors."""

    name: str  # "openai" | "anthropic": also the fixtures' folder
    path: str
    key: str

    def executors(self, server: ProviderServer, *, max_retries: int = 2, timeout: float = 5.0, **defaults: Any) -> Any:
        if self.name == "openai":
            import openai

            from agent_explorer.providers import OpenAIExecutors

            client: Any = openai.AsyncOpenAI(
                base_url=server.base_url + "/v1", api_key=self.key, max_retries=max_retries, timeout=timeout
            )
            server.clients.append(client)
            return OpenAIExecutors(client, "default-model", **defaults)
        import anthropic

        from agent_explorer.providers import AnthropicExecutors

        client = anthropic.AsyncAnthropic(base_url=server.base_url, api_key=self.key, max_retries=max_retries, timeout=timeout)
        server.clients.append(client)
        return AnthropicExecutors(client, "default-model", **defaults)

    def json(self, name: str, status: int = 200, **headers: str) -> Reply:
        return json_reply(f"{self.name}/{name}", status, **headers)

    def sse(self, name: str) -> Reply:
        return sse_reply(f"{self.name}/{name}")

    def on(self, server: ProviderServer, name: str, needle: str, *replies: Reply) -> None:
        server.on_text(name, self.path, needle, *replies)


PROVIDERS = {
    "openai": Provider("openai", "/v1/chat/completions", OPENAI_KEY),
    "anthropic": Provider("anthropic", "/v1/messages", ANTHROPIC_KEY),
}


@pytest.fixture(params=sorted(PROVIDERS))
def provider(request: pytest.FixtureRequest) -> Provider:
    return PROVIDERS[request.param]


@pytest.fixture
async def server() -> AsyncIterator[ProviderServer]:
    with ProviderServer() as running:
        try:
            yield running
        finally:
            for client in running.clients:
                await client.close()


@pytest.fixture
async def sqlite(tmp_path: Any) -> AsyncIterator[SqliteEventLogStore]:
    store = SqliteEventLogStore(str(tmp_path / "runs.db"))
    try:
        yield store
    finally:
        await store.aclose()


def assert_no_secret(entries: list[dict[str, Any]], provider: Provider) -> None:
    """Neither the key nor any part of it long enough to matter appears anywhere in the log's text."""
    text = json.dumps(entries)
    assert provider.key not in text
    assert "SECRET" not in text
    assert "Bearer" not in text


def usage_entries(entries: list[dict[str, Any]]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (e["event"]["requestId"], e["event"]["model"], e["event"]["usage"])
        for e in entries
        if e["event"]["type"] == "@agent.usage"
    ]
