"""A local stand-in for the three HTTP APIs the launcher's samplers speak, so `fundbook-launch execute --sampler
openai|anthropic|openai-compatible` runs end to end with no network and no model (tests/launchers/test_api_e2e.py,
test_readme_providers.py, and `make bench-providers`).

Standard library `http.server` on 127.0.0.1 with an ephemeral port (xdist-safe), speaking each provider's
documented wire format as the pinned SDKs read it:
- OpenAI Responses API: `POST /v1/responses` -> a `response` object (output message with `output_text`, `usage`
  with `input_tokens`, `input_tokens_details.cached_tokens`, `output_tokens`); the SDK's base URL is
  `OPENAI_BASE_URL` = `http://127.0.0.1:PORT/v1`;
- Anthropic Messages API: `POST /v1/messages` -> a `message` (text content block, `stop_reason`, `usage` with
  `input_tokens`, `cache_read_input_tokens`, `cache_creation_input_tokens`, `output_tokens`); base URL
  `ANTHROPIC_BASE_URL` = `http://127.0.0.1:PORT`;
- OpenAI-compatible: `POST /v1/chat/completions` -> a `chat.completion`;
- the free preflight of each: `GET /v1/models/{id}` (any id), `GET /v1/models` (the list `models`).

It plays the desk: `play(family, seed, horizon)` fixes the world, and each answer is the reference policy's batch
for the day the request's desk view names (the compact prompt's view, launchers/worker/prompt.py), as the answer
grammar writes it (action ids a1, a2, ..., no note); a day it has no plan for gets the truthful no-action batch.
Usage is the prompt's UTF-8 bytes over four and the answer's bytes over three, or the fixed `usage` a test
names (e.g. what `budget` plans a call at), never above what the call could use (the prompt's bytes, the call's
max tokens). Every request is recorded (path, model, key header)."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import engine
from launchers import _desk
from launchers.worker import prompt


def reference_plan(family, seed, horizon) -> dict:
    """{day: the reference policy's batch}, as the grammar writes a batch, over the world played to its end."""
    run = engine.Run(_desk.world(family, seed, horizon))
    plan = {}
    while run.open_day is not None:
        packet = run.packet()
        batch = engine.policy_batch("reference", packet)
        actions = [
            {**{k: v for k, v in a.items() if k != "note"}, "id": f"a{i + 1}"} for i, a in enumerate(batch["actions"])
        ]
        plan[packet["day"]] = {"day": packet["day"], "actions": actions, "report": batch["report"]}
        run.submit(batch)
    return plan


def _conversation(path, body):
    """The conversation a request carries (system first), whichever API it came through."""
    if path.endswith("/responses"):
        return [
            {
                "role": m["role"],
                "content": m["content"]
                if isinstance(m["content"], str)
                else "".join(p.get("text", "") for p in m["content"]),
            }
            for m in body.get("input") or []
        ]
    if path.endswith("/messages"):
        system = (
            "".join(b.get("text", "") for b in body.get("system") or [])
            if isinstance(body.get("system"), list)
            else body.get("system") or ""
        )
        return [{"role": "system", "content": system}] + list(body.get("messages") or [])
    return list(body.get("messages") or [])


class StandIn:
    def __init__(self, models=("stand-in-model", "my-model"), usage=None):
        self.models = list(models)  # what `GET /v1/models` lists (the OpenAI-compatible preflight)
        self.usage = usage  # (tokens in, tokens out) every call reports, within what it could use
        self.requests = []
        self.plan = {}
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the real APIs: the SDK's connection pool reuses it

            def log_message(self, *args):
                pass

            def _send(self, status, obj):
                data = json.dumps(obj).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                outer._note("GET", self.path, None, self.headers)
                if self.path.rstrip("/").endswith("/v1/models"):  # the OpenAI-compatible preflight lists them
                    return self._send(
                        200,
                        {
                            "object": "list",
                            "data": [
                                {"id": m, "object": "model", "created": 1, "owned_by": "stand-in"} for m in outer.models
                            ],
                        },
                    )
                if "/models/" not in self.path:
                    return self._send(404, {"type": "error", "error": {"type": "not_found_error", "message": "no"}})
                model = self.path.rsplit("/", 1)[1]
                self._send(
                    200,
                    {
                        "id": model,
                        "object": "model",
                        "type": "model",
                        "created": 1,
                        "owned_by": "stand-in",
                        "display_name": model,
                        "created_at": "2026-01-01T00:00:00Z",
                    },
                )

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                outer._note("POST", self.path, body, self.headers)
                made = outer.answer(self.path, body)
                if made is None:
                    return self._send(404, {"type": "error", "error": {"type": "not_found_error", "message": "no"}})
                self._send(200, made)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.root = f"http://127.0.0.1:{self.port}"  # ANTHROPIC_BASE_URL
        self.base_url = f"{self.root}/v1"  # OPENAI_BASE_URL, --base-url
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def play(self, family, seed, horizon=20):
        """Answer with the reference policy's batches of this world."""
        self.plan = reference_plan(family, seed, horizon)
        return self

    def _note(self, method, path, body, headers):
        with self._lock:
            self.requests.append(
                {
                    "method": method,
                    "path": path,
                    "model": (body or {}).get("model"),
                    "authorization": headers.get("Authorization"),
                    "x-api-key": headers.get("x-api-key"),
                }
            )

    def batch_text(self, conversation) -> str:
        view = prompt.view_in(conversation) or {}
        day = view.get("day")
        batch = self.plan.get(day) or {"day": day, "actions": [], "report": view.get("report_if_no_action")}
        return json.dumps(batch, separators=(",", ":"))

    def answer(self, path, body):
        conversation = _conversation(path, body)
        text = self.batch_text(conversation)
        size = sum(len(str(m.get("content", "")).encode("utf-8")) for m in conversation)
        limit = body.get("max_output_tokens") or body.get("max_tokens") or body.get("max_completion_tokens") or 10**6
        tokens_in, tokens_out = self.usage or (max(1, size // 4), len(text.encode("utf-8")) // 3 + 1)
        tokens_in, tokens_out = min(tokens_in, size), min(tokens_out, int(limit))  # never more than a call could use
        model = body.get("model")
        if path.endswith("/v1/responses"):
            return {
                "id": f"resp_{len(self.requests)}",
                "object": "response",
                "created_at": 1,
                "model": model,
                "status": "completed",
                "incomplete_details": None,
                "output": [
                    {
                        "type": "message",
                        "id": "msg_1",
                        "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": text, "annotations": []}],
                    }
                ],
                "usage": {
                    "input_tokens": tokens_in,
                    "input_tokens_details": {"cached_tokens": 0},
                    "output_tokens": tokens_out,
                    "output_tokens_details": {"reasoning_tokens": 0},
                    "total_tokens": tokens_in + tokens_out,
                },
                "parallel_tool_calls": False,
                "tool_choice": "auto",
                "tools": [],
            }
        if path.endswith("/v1/messages"):
            return {
                "id": f"msg_{len(self.requests)}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {
                    "input_tokens": tokens_in,
                    "cache_read_input_tokens": 0,
                    "cache_creation_input_tokens": 0,
                    "output_tokens": tokens_out,
                },
            }
        if path.endswith("/v1/chat/completions"):
            return {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "created": 1,
                "model": model,
                "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
                "usage": {
                    "prompt_tokens": tokens_in,
                    "completion_tokens": tokens_out,
                    "total_tokens": tokens_in + tokens_out,
                },
            }
        return None

    def generations(self):
        return [r for r in self.requests if r["method"] == "POST"]

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        return False
