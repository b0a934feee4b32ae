"""A model attempt whose transcript tries every trick a page could fall for:
script tags, event-handler attributes, Markdown and HTML injection, a closing
tag meant to escape its container, a javascript: link. The site must show all
of it as text."""

import hashlib
import json
from pathlib import Path

import engine

ATTEMPT_ID = "test-hostile-01"
PAYLOADS = [
    "<script>window.__pwned = 'script';</script>",
    "<img src=x onerror=\"window.__pwned = 'img'\">",
    "</div></section><script>window.__pwned = 'breakout'</script>",
    "[click me](javascript:window.__pwned='link') and **bold** and <b>raw bold</b>",
    "<iframe src=\"https://evil.example/\"></iframe> ![x](https://evil.example/pixel.png)",
    "{{ config }} {% raw %} &lt;already-escaped&gt; &amp; <!-- comment -->",
]
LONG_OUTPUT = "\n".join(f"line {i}: " + ("x" * 40) for i in range(1, 201)) + "\nTHE LAST LINE <script>window.__pwned='tail'</script>"


def transcript() -> dict:
    return {
        "attempt_id": ATTEMPT_ID,
        "steps": [
            {"index": 0, "role": "model", "text": PAYLOADS[0] + "\n\n" + PAYLOADS[3], "tool_calls": [
                {"name": "packet", "arguments": {"day": 1, "note": PAYLOADS[1]}, "output": PAYLOADS[2],
                 "exit_code": 0}]},
            {"index": 1, "role": "tool", "text": PAYLOADS[4], "tool_calls": [
                {"name": "project<script>", "arguments": "--day 1 " + PAYLOADS[0], "output": LONG_OUTPUT,
                 "exit_code": 1}]},
            {"index": 2, "role": "evaluator", "text": PAYLOADS[5], "tool_calls": []},
        ],
        "summary": "Final: " + PAYLOADS[1] + " " + PAYLOADS[3],
    }


def write(runs_dir: Path) -> Path:
    folder = runs_dir / "attempts" / ATTEMPT_ID
    folder.mkdir(parents=True, exist_ok=True)
    data = json.dumps(transcript(), indent=2, ensure_ascii=False).encode()
    (folder / "transcript.json").write_bytes(data)
    content = {
        "attempt_id": ATTEMPT_ID, "label": "mock", "note": "Test fixture. " + PAYLOADS[1],
        "model": {"id": "mock-sampler<script>", "provider": "mock"},
        "sampling": {"temperature_milli": 0}, "code": {"commit": "0" * 40, "dirty": False}, "packages": {},
        "task": {"version": 1, "family": "FUND_01", "seed": 1, "split": "practice"},
        "information_boundary": "packet only",
        "claim": {"id": "claim-test", "scope": "test", "cap_micro_usd": 0, "sha256": "2" * 64,
                  "consumed_at_step": 0},
        "ledger": {"entries": [], "head": {"size": 0, "hash": "3" * 64}},
        "termination": {"status": "failed", "reason": "worker time limit " + PAYLOADS[0], "limit": "time",
                        "worker_exit_code": 124},
        "proposals": [], "receipts_head": {"size": 0, "hash": "4" * 64}, "result": None,
        "accepted_actions": 0, "settled_days": 0,
        "cost": {"micro_usd": 1234, "tokens_in": 10, "tokens_out": 5, "unresolved_micro_usd": 50},
        "transcript": {"path": f"runs/attempts/{ATTEMPT_ID}/transcript.json",
                       "sha256": hashlib.sha256(data).hexdigest()},
    }
    record = {"schema": "fundbook.attempt/1", "content": content, "content_sha256": engine.content_sha256(content),
              "volatile": {"started": "2026-11-28T10:00:00Z", "finished": "2026-11-28T10:20:00Z",
                           "duration_ms": 1200000}}
    (folder / "record.json").write_text(json.dumps(record, indent=2, ensure_ascii=False), encoding="utf-8")
    return folder
