"""Notebook 05 records through `OpenAIExecutors` when an OpenAI-compatible server answers its probe: here the
real HTTP server of these tests stands in for Ollama, so the notebook's provider branch runs in CI too (the
notebook suite runs its ScriptedModel fallback)."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from .server import ProviderServer, json_reply, sse_reply

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "05_record_your_own_agent.ipynb"
PATH = "/v1/chat/completions"


@pytest.mark.slow
def test_notebook_05_records_through_a_local_openai_compatible_server(
    server: ProviderServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.on("models", "/v1/models", lambda r: True, json_reply("openai/models.json"))
    server.on_text("classify", PATH, "Label the support ticket", json_reply("openai/support_classify.json"))
    server.on_text("reply", PATH, "Write a two-sentence reply", sse_reply("openai/triage_reply.sse"))
    server.on_text("decide", PATH, "Close the ticket if", json_reply("openai/helpdesk_escalate.json"))
    monkeypatch.setenv("AGENT_EXPLORER_OPENAI_BASE_URL", server.base_url + "/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRET-notebook-0123456789")

    notebook = nbformat.read(NOTEBOOK, as_version=4)  # type: ignore[no-untyped-call]
    NotebookClient(notebook, kernel_name="python3", timeout=120, resources={"metadata": {"path": str(NOTEBOOK.parent)}}).execute()
    outputs = [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    text = "\n".join(str(o.get("text", "")) + json.dumps(o.get("data", {})) for o in outputs)
    assert not [o for o in outputs if o.output_type == "error"]
    assert f"recording with llama-test:1b at {server.base_url}/v1" in text
    assert "done in state escalated" in text
    assert "verified 8 entries" in text
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs)

    calls = [r for r in server.requests if r.path == PATH]
    assert len(calls) == 3
    assert [r.body["model"] for r in calls] == ["llama-test:1b"] * 3
    assert all(r.headers["idempotency-key"].endswith(("classify#1", "reply#1", "decide#1")) for r in calls)
    assert calls[0].body["temperature"] == 0 and calls[0].body["max_tokens"] == 8
    assert "SECRET" not in text
