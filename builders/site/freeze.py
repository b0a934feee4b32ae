"""The paid study's freeze, its deviations and the project's spend, for the
Attempts page: read from runs/attempts/ (freeze.json, deviations.json,
project-ledger.jsonl, written by `fundbook-launch`), checked (the freeze's
content hash, the deviations' freeze, the ledger's hash chain) and rendered
as one self-contained section. Absent files are said to be absent; a file that
does not check out is a one-line SiteInputError.
"""

import json
from pathlib import Path

from engine import content_sha256

from . import fmt
from .records import SiteInputError

FREEZE_SCHEMA = "fundbook.freeze/1"
DEVIATIONS_SCHEMA = "fundbook.deviations/1"
LEDGER_GENESIS = {"schema": "fundbook.project-ledger/1"}


def _json(path: Path, label):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise SiteInputError(f"{label}: expected UTF-8 JSON ({exc})") from None


def load(runs_dir: Path) -> dict:
    folder = runs_dir / "attempts"
    out = {"freeze": None, "deviations": [], "ledger": None}
    path = folder / "freeze.json"
    if path.is_file():
        doc = _json(path, "runs/attempts/freeze.json")
        if not isinstance(doc, dict) or doc.get("schema") != FREEZE_SCHEMA or not isinstance(doc.get("content"), dict):
            raise SiteInputError(f"runs/attempts/freeze.json: field `schema` expected {FREEZE_SCHEMA!r}")
        if content_sha256(doc["content"]) != doc.get("content_sha256"):
            raise SiteInputError("runs/attempts/freeze.json: field `content_sha256` does not match its content")
        out["freeze"] = doc
        dev_path = folder / "deviations.json"
        if dev_path.is_file():
            dev = _json(dev_path, "runs/attempts/deviations.json")
            if (
                not isinstance(dev, dict)
                or dev.get("schema") != DEVIATIONS_SCHEMA
                or dev.get("freeze_sha256") != doc["content_sha256"]
                or not isinstance(dev.get("entries"), list)
            ):
                raise SiteInputError(
                    "runs/attempts/deviations.json: field `freeze_sha256` expected the freeze's content_sha256"
                )
            out["deviations"] = dev["entries"]
    path = folder / "project-ledger.jsonl"
    if path.is_file():
        out["ledger"] = _ledger(path)
    return out


def _ledger(path: Path) -> dict:
    prev, claims, settled = content_sha256(LEDGER_GENESIS), {}, {}
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        try:
            entry = json.loads(line)
            body = {k: v for k, v in entry.items() if k != "hash"}
        except (ValueError, AttributeError):
            raise SiteInputError(f"runs/attempts/project-ledger.jsonl: line {i + 1}: expected JSON") from None
        if body.get("seq") != i or body.get("prev_hash") != prev or content_sha256(body) != entry.get("hash"):
            raise SiteInputError(f"runs/attempts/project-ledger.jsonl: line {i + 1}: the hash chain is broken")
        prev = entry["hash"]
        (claims if entry.get("kind") == "claim" else settled)[entry.get("claim_id")] = entry
    totals = {"claims": len(claims), "open": sorted(set(claims) - set(settled)), "head": prev}
    for key in (
        "charged_micro_usd",
        "unresolved_micro_usd",
        "sandbox_charged_micro_usd",
        "sandbox_unresolved_micro_usd",
    ):
        totals[key] = sum(s.get(key, 0) for s in settled.values())
    totals["reserved_micro_usd"] = sum(claims[c].get("reserve_micro_usd", 0) for c in totals["open"])
    return totals


def section(env, runs_dir: Path) -> str:
    found = load(runs_dir)
    doc = found["freeze"]
    view = None
    if doc is not None:
        c = doc["content"]
        caps = c.get("caps") or {}
        view = {
            "sha": fmt.short(doc["content_sha256"]),
            "frozen_at": doc.get("frozen_at", ""),
            "models": ", ".join(c.get("models") or []),
            "provider": c.get("provider", ""),
            "families": ", ".join(c.get("families") or []),
            "split": c.get("split", ""),
            "seeds": ", ".join(str(s) for s in c.get("seeds") or []),
            "config_hash": fmt.short(c.get("config_hash")),
            "commit": fmt.short((c.get("code") or {}).get("commit")),
            "prompt": f"{(c.get('prompt') or {}).get('version', '?')} ({fmt.short((c.get('prompt') or {}).get('sha256'))})",
            "bundle": fmt.short((c.get("engine") or {}).get("bundle_sha256")),
            "claim_cap": fmt.usd(caps.get("claim_micro_usd")),
            "claim_sandbox_cap": fmt.usd(caps.get("claim_sandbox_micro_usd")),
            "project_cap": fmt.usd(caps.get("project_micro_usd")),
            "project_sandbox_cap": fmt.usd(caps.get("project_sandbox_micro_usd")),
            "policy": c.get("intervention_policy", ""),
        }
    deviations = [
        {
            "date": str(d.get("date", "")),
            "field": str(d.get("field", "")),
            "original": json.dumps(d.get("original"), sort_keys=True),
            "effective": json.dumps(d.get("effective"), sort_keys=True),
            "reason": str(d.get("reason", "")),
        }
        for d in found["deviations"]
    ]
    ledger = found["ledger"]
    spend = None
    if ledger is not None:
        spend = {k: fmt.usd(v) if k.endswith("micro_usd") else v for k, v in ledger.items()}
        spend["open"] = len(ledger["open"])
        spend["head"] = fmt.short(ledger["head"])
    return env.get_template("freeze.md.j2").render(freeze=view, deviations=deviations, spend=spend)
