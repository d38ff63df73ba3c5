"""A small OpenAI-compatible chat-completions server on 127.0.0.1, for tests of a user's own model server.

It speaks the wire protocol litellm's ``openai/<name>`` provider uses (``POST /v1/chat/completions``,
``GET /v1/models``), so the harness runs its real call path against it. What it answers is a
function of the request (``reply``); it records every request, and notices when a client hangs up
before its answer is ready (what a real server does to stop generating an abandoned request).
``text_only`` plays a chat template that takes string content only, as llama.cpp serves a text model:
a message whose content is a list of parts (text or images) fails with its HTTP 500.
"""

from __future__ import annotations

import json
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# A reply: the answer text, or (HTTP status, error message) for an error the server returns.
Reply = str | tuple[int, str]
# What llama.cpp's server answers when its Jinja chat template meets a list of content parts.
TEXT_ONLY_ERROR = 'can only concatenate str (not "list") to str'
GRADER_SYSTEM = "You are a careful, impartial grader."  # the evaluator judge's system prompt


@dataclass
class Request:
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def system(self) -> str:
        first = (self.body.get("messages") or [{}])[0]
        return str(first.get("content")) if first.get("role") == "system" else ""

    @property
    def is_judge(self) -> bool:
        return self.system.startswith(GRADER_SYSTEM)


@dataclass
class ModelServer:
    """``reply(request) -> Reply``, after ``delay_s`` (seconds, or a function of the request); records
    ``requests`` and ``hung_up``."""

    reply: Callable[[Request], Reply]
    delay_s: float | Callable[[Request], float] = 0.0
    requests: list[Request] = field(default_factory=list)
    hung_up: list[Request] = field(default_factory=list)  # clients that left before their answer
    api_key: str | None = None  # when set, other keys get 401 as a hosted API would
    port: int = 0  # 0: any free port
    text_only: bool = False  # content lists get llama.cpp's HTTP 500 (a text-only chat template)

    def __post_init__(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format, *args):  # noqa: A002 - http.server's signature
                pass

            def do_GET(self) -> None:
                self._json(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                request = Request(body, {k.lower(): v for k, v in self.headers.items()})
                server.requests.append(request)
                sent = request.headers.get("authorization", "").removeprefix("Bearer ")
                if server.api_key is not None and sent != server.api_key:
                    self._json(401, _error(f"Incorrect API key provided: {sent}.", "invalid_api_key"))
                    return
                if server.text_only and any(isinstance(m.get("content"), list) for m in body.get("messages", [])):
                    self._json(500, {"error": {"code": 500, "message": TEXT_ONLY_ERROR, "type": "server_error"}})
                    return
                delay = server.delay_s(request) if callable(server.delay_s) else server.delay_s
                if not self._wait(delay):
                    server.hung_up.append(request)
                    return
                answer = server.reply(request)
                if isinstance(answer, tuple):
                    self._json(answer[0], _error(answer[1], "invalid_request_error"))
                    return
                self._json(200, _completion(body, answer))

            def _wait(self, seconds: float) -> bool:
                """Sleep ``seconds``; False as soon as the client closes its connection."""
                deadline = time.monotonic() + seconds
                while time.monotonic() < deadline:
                    ready, _, _ = select.select([self.connection], [], [], 0.05)
                    if ready and not self.connection.recv(1, socket.MSG_PEEK):
                        return False
                return True

            def _json(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _completion(body: dict, text: str) -> dict:
    prompt = sum(len(str(m.get("content", ""))) for m in body.get("messages", [])) // 4
    completion = max(1, len(text) // 4)
    choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
    if body.get("logprobs"):  # as vLLM with return_token_ids: each piece with its logprob, and the ids
        pieces = text.split(" ")
        choice["logprobs"] = {
            "content": [
                {"token": p, "logprob": -0.25 * (i + 1), "bytes": None, "top_logprobs": []}
                for i, p in enumerate(pieces)
            ]
        }
        choice["token_ids"] = [1000 + i for i in range(len(pieces))]
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [choice],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }


def _error(message: str, code: str) -> dict:
    return {"error": {"message": message, "type": code, "param": None, "code": code}}
