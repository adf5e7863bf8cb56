"""A real HTTP server on 127.0.0.1 that answers like a model provider, from recorded response fixtures.

Each rule matches a request (by path and a predicate on its JSON body) and answers with its replies in
order, the last one repeating: a JSON body, a server-sent-event stream (sent chunk by chunk), an error
status with headers such as `retry-after-ms`, or a body that is not JSON. Every request is recorded with
its headers and body so tests can assert on what the SDK really sent.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def fixture_json(name: str) -> Any:
    return json.loads(fixture(name))


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    sse: bool = False
    delay: float = 0.0  # seconds to stall before answering (a client timeout test)


def json_reply(name: str, status: int = 200, delay: float = 0.0, **headers: str) -> Reply:
    """A JSON body; `headers` with dashes are spelled with underscores (`retry_after_ms="20"`)."""
    return Reply(status, fixture(name), headers={k.replace("_", "-"): v for k, v in headers.items()}, delay=delay)


def sse_reply(name: str) -> Reply:
    return Reply(200, fixture(name), content_type="text/event-stream", sse=True)


def raw_reply(body: bytes, status: int = 200, content_type: str = "application/json") -> Reply:
    return Reply(status, body, content_type=content_type)


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes

    def text(self) -> str:
        """Every message content of the request joined (what the predicates match on)."""
        return json.dumps(self.body)


@dataclass
class Rule:
    name: str
    path: str
    match: Callable[[Recorded], bool]
    replies: list[Reply]
    served: int = 0


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that timed out hung up on a stalled reply: expected in the timeout test.
        return None


class ProviderServer:
    """`with ProviderServer() as server:` serves on `server.base_url` until the block ends."""

    def __init__(self) -> None:
        self.rules: list[Rule] = []
        self.requests: list[Recorded] = []
        self.clients: list[Any] = []  # SDK clients pointed here, closed when the test ends
        self._lock = threading.Lock()
        self._httpd: _QuietServer | None = None
        self._thread: threading.Thread | None = None

    # -- scripting ----------------------------------------------------------------------------------

    def on(self, name: str, path: str, match: Callable[[Recorded], bool], *replies: Reply) -> None:
        self.rules.append(Rule(name, path, match, list(replies)))

    def on_text(self, name: str, path: str, needle: str, *replies: Reply) -> None:
        self.on(name, path, lambda r: needle in r.text(), *replies)

    def requests_for(self, needle: str) -> list[Recorded]:
        return [r for r in self.requests if needle in r.text()]

    # -- serving ------------------------------------------------------------------------------------

    def _answer(self, recorded: Recorded) -> tuple[Reply, str | None]:
        with self._lock:
            self.requests.append(recorded)
            for rule in self.rules:
                if rule.path == recorded.path and rule.match(recorded):
                    reply = rule.replies[min(rule.served, len(rule.replies) - 1)]
                    rule.served += 1
                    return reply, rule.name
        body = json.dumps({"error": {"type": "not_found", "message": f"no rule for {recorded.path}"}}).encode()
        return Reply(404, body), None

    def __enter__(self) -> ProviderServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return None

            def do_GET(self) -> None:
                self.do_POST()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = None
                recorded = Recorded(
                    self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body, raw
                )
                reply, _ = server._answer(recorded)
                if reply.delay:
                    time.sleep(reply.delay)
                self.send_response(reply.status)
                self.send_header("Content-Type", reply.content_type)
                self.send_header("x-request-id", f"req_{len(server.requests)}")
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                if reply.sse:
                    # Sent as HTTP chunks, one event per chunk, the way a provider streams.
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for event in reply.body.split(b"\n\n"):
                        if not event.strip():
                            continue
                        data = event.strip(b"\n") + b"\n\n"
                        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                else:
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                self.wfile.flush()

        self._httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="provider-server", daemon=True)
        self._thread.start()
        return self

    @property
    def base_url(self) -> str:
        assert self._httpd is not None
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def __exit__(self, *exc: Any) -> None:
        assert self._httpd is not None and self._thread is not None
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
