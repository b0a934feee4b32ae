"""A local stand-in for an OpenAI-compatible server (POST /v1/chat/completions, the OpenAI wire format), so the
`inspect eval` commands the README gives run as written, in a subprocess, with no network and no model.

It plays the desk's do-nothing policy: with tools offered (protocol tool) it answers the first turn without a
tool call, which ends the sample; without tools (protocol text) it reads the open checkpoint's packet from the
conversation and answers {"batch": <do-nothing batch>} until the run is closed. It records every request."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from engine import policy_batch
from launchers.worker import protocol


def _text(content):
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def _open_packet(messages):
    """The packet of the checkpoint the model is asked about (None once the run is closed)."""
    packet = None
    for m in messages:
        text = _text(m.get("content"))
        if m.get("role") == "user" and text.startswith(protocol.CHECKPOINT_MARK):
            packet = protocol.packet_from_prompt(text)
        elif m.get("role") == "user" and text.startswith("TOOL RESULT submit_batch: "):
            reply = json.loads(text.split(": ", 1)[1])
            if reply.get("accepted"):
                packet = protocol.packet_from_prompt(reply["next"]) if reply.get("next") else None
    return packet


def answer(body) -> str:
    if body.get("tools"):
        return "I stop here."
    packet = _open_packet(body.get("messages") or [])
    if packet is None:
        return "The run is closed."
    return json.dumps({"batch": policy_batch("do-nothing", packet)}, sort_keys=True)


class StandIn:
    def __init__(self):
        self.requests = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                outer.requests.append(
                    {"path": self.path, "model": body.get("model"), "authorization": self.headers.get("Authorization")}
                )
                if not self.path.endswith("/chat/completions"):
                    self.send_response(404)
                    self.end_headers()
                    return
                reply = {
                    "id": f"chatcmpl-{len(outer.requests)}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model"),
                    "choices": [
                        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": answer(body)}}
                    ],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                }
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        return False
