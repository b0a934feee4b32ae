"""Re-deriving a published real-model attempt from its own decision cache.

A local-model attempt (provider llama-cpp) carries the answers it used in
cache.jsonl, hashed in its record. `rederive` replays it the way anyone can
-- a cache-only `execute --sampler cache --replay-of`, with a throwaway claim
and project, in a scratch folder, no model loaded -- and requires what the
record claims: every answered call served from the cache (zero cost), the
same requests answered with the same text in the same order, and the same
receipts head. The record itself is verified first (hashes, receipts,
ledger). `make verify` runs it over runs/attempts/ (`fundbook-launch
rederive`).
"""

import json
import os
import tempfile

from ._errors import InputError
from .inspect._kind import is_inspect_record
from ._verify import verify_attempt

PROVIDERS = ("llama-cpp",)  # every published attempt of these must re-derive (and openai-compatible on this host)


def _local_server(path) -> bool:
    """An openai-compatible attempt against a server on this host (`local_server: 1`): it carries its answers."""
    with open(path, encoding="utf-8") as fh:
        return (json.load(fh)["content"].get("sampling") or {}).get("local_server") == 1


def _answers(transcript_path):
    with open(transcript_path, encoding="utf-8") as fh:
        steps = json.load(fh)["steps"]
    return [
        (s["call"].get("request_sha256"), s["text"])
        for s in steps
        if s.get("role") == "model" and isinstance(s.get("call"), dict)
    ]


def rederive(record_path) -> dict:
    """Replay one attempt from its cache.jsonl; returns what was compared, or raises InputError naming the first
    difference."""
    from . import _providers
    from ._attempt import execute
    from ._claims import Grant, authorise
    from ._controller import Limits
    from ._prices import load_prices
    from ._provider import SamplerOptions
    from ._spec import AttemptSpec, Places, Sources, Task

    found = verify_attempt(record_path)
    c = found["record"]["content"]
    base = os.path.dirname(os.path.abspath(record_path))
    cache = (c.get("outputs") or {}).get("cache")
    if cache is None:
        cost = c.get("cost") or {}
        answered = cost.get("calls", 0) - len(cost.get("unresolved_calls") or [])
        accepted = [p for p in c.get("proposals") or [] if isinstance(p, dict) and p.get("outcome") == "accepted"]
        if c["termination"]["status"] == "incomplete_execution" and answered == 0 and not accepted:
            # recovered after its host died before any call was answered: no model answer to re-derive (its
            # receipts and ledger are reconciled by verify_attempt above)
            return {
                "attempt_id": c["attempt_id"],
                "answers": 0,
                "receipts_head": c["receipts_head"],
                "status": c["termination"]["status"],
                "nothing": True,
            }
        raise InputError(f"{record_path}: content.outputs.cache: no cache.jsonl, so the attempt cannot be re-derived")
    lim = c["limits"]
    limits = Limits(lim["worker_seconds"], lim["call_deadline_s"], lim["max_tokens_per_call"], lim["max_calls"])
    sampling = {k: v for k, v in c["sampling"].items() if k != "max_tokens_per_call"}
    task = c["task"]
    with tempfile.TemporaryDirectory(prefix="fundbook-rederive-") as scratch:
        state, claim = os.path.join(scratch, "state"), os.path.join(scratch, "claim.json")
        authorise(
            claim,
            task["family"],
            task["split"],
            c["model"]["id"],
            0,
            10**9,
            1,
            grant=Grant(state=state, local=True, project=os.path.join(scratch, "project")),
        )
        out = os.path.join(scratch, "replay")
        sampler = _providers.sampler(
            "cache",
            SamplerOptions(
                cache_path=os.path.join(base, cache["path"]),
                call_deadline_s=lim["call_deadline_s"],
                replay_sampling=sampling,
            ),
        )
        replay = execute(
            AttemptSpec(
                claim=claim,
                out=out,
                task=Task(task["family"], task["seed"], task["split"], task["horizon"]),
                model=c["model"]["id"],
                sampler=sampler,
                sandbox=_providers.sandbox("local"),
                prices=load_prices(),
                limits=limits,
                sources=Sources(replay=base),
                places=Places(state, os.path.join(scratch, "project")),
            )
        )
        r = replay["content"]
        recorded, replayed = (
            _answers(os.path.join(base, c["transcript"]["path"])),
            _answers(os.path.join(out, "transcript.json")),
        )
    where = f"{record_path}: re-derived from {cache['path']}"
    if r["termination"]["status"] != c["termination"]["status"] and not (
        c["termination"]["status"] != "completed" and r["termination"]["limit"] == "cache_miss"
    ):
        raise InputError(
            f"{where}: the replay ended {r['termination']['status']} ({r['termination']['reason']}), the "
            f"record {c['termination']['status']}"
        )
    if r["cost"]["cache_hits"] != r["cost"]["calls"] or r["cost"]["micro_usd"] != 0:
        raise InputError(f"{where}: {r['cost']['cache_hits']} of {r['cost']['calls']} calls from the cache")
    if replayed != recorded:
        first = next(
            (i for i, (a, b) in enumerate(zip(recorded, replayed)) if a != b), min(len(recorded), len(replayed))
        )
        raise InputError(
            f"{where}: model answer {first + 1} differs (its request or its text), or the replay has "
            f"{len(replayed)} answered calls where the record has {len(recorded)}"
        )
    if r["receipts_head"] != c["receipts_head"]:
        raise InputError(
            f"{where}: the replay's receipts head {r['receipts_head']} is not the record's {c['receipts_head']}"
        )
    return {
        "attempt_id": c["attempt_id"],
        "answers": len(replayed),
        "receipts_head": r["receipts_head"],
        "status": c["termination"]["status"],
    }


def rederive_all(attempts_dir) -> list:
    """Every attempt of a re-derivable provider under `attempts_dir` (sorted by folder), re-derived."""
    out = []
    if not os.path.isdir(attempts_dir):
        raise InputError(f"--attempts {attempts_dir}: no such folder")
    for name in sorted(os.listdir(attempts_dir)):
        path = os.path.join(attempts_dir, name, "record.json")
        if not os.path.isfile(path):
            continue
        if is_inspect_record(path):  # no sampler cache to re-derive from: `fundbook inspect verify` re-imports it
            continue
        try:
            with open(path, encoding="utf-8") as fh:
                provider = json.load(fh)["content"]["model"]["provider"]
        except (OSError, ValueError, KeyError, TypeError):
            provider = None  # verify_attempt names what is wrong with it
            verify_attempt(path)
        if provider in PROVIDERS or (provider == "openai-compatible" and _local_server(path)):
            out.append(rederive(path))
    return out
