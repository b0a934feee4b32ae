"""Hostile records: a corpus of payloads that try every trick a page could
fall for, and publications with a payload in every string field of every
record kind a page renders.

`PAYLOADS` are the tricks: attribute breakouts, closing tags, `</script>`,
`javascript:` URLs, Markdown, attr_list and HTML injection, `<style>`, meta
refresh, `<base>`, unicode tricks (RLO, zero-width, bidi isolates, controls,
line separators) and lone surrogates. Every active payload sets
`window.__pwned` or loads from evil.example, so a page that runs or loads one
is caught either way.

`publication(src, dst)` copies a published runs/ folder and adds, for payload
i, a run `hostile-pNN` (record content and volatile, its index entry, its
receipts and trace files), an attempt `hostile-aNN` (record content and
volatile, transcript) and, once an Inspect attempt is published, its copy
`inspect-<model>-<world>-<i as 8 hex>` (transcript and the values it keeps as
logged; every other field is held to the importer's checks), every string leaf set to payload i except the
structural fields a site must refuse to take from a record (ids, file paths,
the hashes that seal the chain). `STRUCTURAL` lists those; a test puts the
payloads there too and expects a one-line refusal. Lone surrogates cannot be
hashed as UTF-8, so hashed content gets the payload without them (a test
checks that content holding one is refused); every other file carries them.

`write(runs_dir)` is the one hostile attempt the main test site carries.
"""

import hashlib
import json
import shutil
from pathlib import Path

import engine
from builders.run_index import entry_hash, genesis

SENTINEL = "__pwned"
PAYLOADS = [
    'x"><script>window.__pwned="dq"</script>',
    "x'><script>window.__pwned='sq'</script>",
    "<script>window.__pwned = 'script';</script>",
    "</script><script>window.__pwned='endscript'</script><!--",
    "<img src=x onerror=\"window.__pwned='img'\">",
    "<svg onload=\"window.__pwned='svg'\"><circle r=1 /></svg>",
    "</code></pre></td></tr></table></div></details></section></article><script>window.__pwned='breakout'</script>",
    "javascript:window.__pwned='jsurl'",
    "[click me](javascript:window.__pwned='mdlink') **bold** _em_ `code` ~~strike~~",
    "![pixel](https://evil.example/pixel.png) <https://evil.example/autolink> https://evil.example/bare",
    '<iframe src="https://evil.example/frame"></iframe><object data="https://evil.example/obj"></object>',
    '<style>body{display:none}</style><link rel=stylesheet href="https://evil.example/x.css">',
    '<meta http-equiv="refresh" content="0;url=https://evil.example/refresh">',
    '<a href="javascript:window.__pwned=\'anchor\'">link</a> <base href="https://evil.example/">',
    "text {: onclick=\"window.__pwned='attrlist'\" } {#evil .evil} {: .md-button }",
    "line one\n\n<script>window.__pwned='blank'</script>\n\n# heading\n\n    indented code\n\n!!! note \"admonition\"\n    body",
    "{{ config }} {% raw %} ${x} <!-- comment --> &lt;already-escaped&gt; &amp; &#60;script&#62;",
    "\u202e100/100 QUALIFIED\u202c gnp.exe",
    "QUA\u200bLIFIED\u200d\u2060\ufeff (zero width)",
    "\u2066isolate\u2069 \u202aLRE\u202c \u202bRLE\u202c \u200fRLM \u200eLRM \u061cALM",
    "controls \x00 \x07 \x1b[31mred\x1b[0m \x7f \x85 \u2028 \u2029 end",
    "lone \ud800 high and \udfff low surrogates",
    '" onmouseover="window.__pwned=\'attr\'" data-x="',
    '<form action="https://evil.example/post"><input name=q autofocus onfocus="window.__pwned=\'focus\'"></form>',
    "%3Cscript%3Ewindow.__pwned='urlenc'%3C/script%3E \\u003cscript\\u003e",
    "| a | b |\n|---|---|\n| <script>window.__pwned='table'</script> | c |",
]

# Fields a page takes structure from, not text: the site refuses a hostile
# value there (SiteInputError) rather than render it. Paths are JSON paths.
STRUCTURAL = {
    "run record": ["schema", "content_sha256", "content.run_id", "content.outputs.*.path"],
    "index": [
        "schema",
        "head.*",
        "entries.*.run_id",
        "entries.*.record",
        "entries.*.content_sha256",
        "entries.*.file_sha256",
        "entries.*.prev_hash",
        "entries.*.hash",
    ],
    "attempt record": ["schema", "content_sha256", "content.attempt_id", "content.transcript.sha256"],
}
# An Inspect attempt (builders/inspect_records.py) takes everything but the log's own data from checks: its hostile
# copies carry a payload in every transcript string (steps' texts, models, tools, errors, call ids and arguments)
# and in the values the record keeps as logged (task arguments, generate config, limit), the rest as imported.
INSPECT_STRUCTURAL = ["schema", "attempt_id", "steps.*.role"]
BASE_RUN = "adversarial-W3-M4_fully_hedged_tail"
BASE_ATTEMPT = "mock-FUND_01-seed-1"


def has_surrogate(text: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def hashable(payload: str) -> str:
    """The payload as hashed content can hold it (lone surrogates are not UTF-8)."""
    return "".join(c for c in payload if not 0xD800 <= ord(c) <= 0xDFFF)


def _matches(path, patterns):
    for pattern in patterns:
        parts = pattern.split(".")
        if len(parts) == len(path) and all(p == "*" or p == str(q) for p, q in zip(parts, path)):
            return True
    return False


def poison(value, payload, skip=(), path=()):
    """`value` with every string leaf (not the keys) replaced by `payload`, except paths in `skip`."""
    if isinstance(value, dict):
        return {k: poison(v, payload, skip, path + (k,)) for k, v in value.items()}
    if isinstance(value, list):
        return [poison(v, payload, skip, path + (i,)) for i, v in enumerate(value)]
    if isinstance(value, str) and not _matches(path, skip):
        return payload
    return value


def string_paths(value, skip=(), path=()):
    """Every path of a string leaf (for counting what a corpus covers)."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in string_paths(v, skip, path + (k,))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in string_paths(v, skip, path + (i,))]
    return [path] if isinstance(value, str) and not _matches(path, skip) else []


def _dump(path: Path, doc) -> str:
    """ASCII JSON (lone surrogates stay escapes), returning the file's sha256."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = (json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=True) + "\n").encode("ascii")
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def _hostile_run(src: Path, dst: Path, i: int, payload: str):
    """Write hostile-pNN's record, receipts and trace; return its index entry fields."""
    rid = f"hostile-p{i:02d}"
    base = json.loads((src / f"{BASE_RUN}.json").read_text())
    content = poison(base["content"], hashable(payload), ["run_id", "outputs.*.path"])
    content["run_id"] = rid
    for key, folder in (("receipts", "receipts"), ("trace", "traces"), ("input", "inputs")):
        original = json.loads((src / folder / f"{BASE_RUN}.json").read_text())
        _dump(dst / folder / f"{rid}.json", poison(original, payload))
        content["outputs"][key]["path"] = f"runs/{folder}/{rid}.json"  # a path: structural
    record = {
        "schema": base["schema"],
        "content": content,
        "content_sha256": engine.content_sha256(content),
        "volatile": poison(base["volatile"], payload),
    }
    file_sha = _dump(dst / f"{rid}.json", record)
    chained = hashable(payload)  # index entries are hashed into the chain
    return {
        "run_id": rid,
        "kind": chained,
        "fixture_id": chained,
        "fixture_sha256": chained,
        "record": f"runs/{rid}.json",
        "content_sha256": record["content_sha256"],
        "file_sha256": file_sha,
    }


def _hostile_attempt(src: Path, dst: Path, i: int, payload: str):
    aid = f"hostile-a{i:02d}"
    folder = dst / "attempts" / aid
    base = json.loads((src / "attempts" / BASE_ATTEMPT / "record.json").read_text())
    transcript = poison(json.loads((src / "attempts" / BASE_ATTEMPT / "transcript.json").read_text()), payload)
    transcript_sha = _dump(folder / "transcript.json", transcript)
    content = poison(base["content"], hashable(payload), ["attempt_id", "transcript.sha256"])
    content["attempt_id"] = aid
    content["transcript"]["sha256"] = transcript_sha  # a hash the site checks: structural
    record = {
        "schema": base["schema"],
        "content": content,
        "content_sha256": engine.content_sha256(content),
        "volatile": poison(base["volatile"], payload),
    }
    _dump(folder / "record.json", record)


def inspect_base(src: Path):
    """The published Inspect attempt's folder under src/attempts/ (None before one is imported)."""
    found = (
        sorted(p for p in (src / "attempts").glob("inspect-*") if (p / "record.json").is_file())
        if (src / "attempts").is_dir()
        else []
    )
    return found[0] if found else None


def inspect_id(base_id: str, i: int) -> str:
    """hostile copy i of an Inspect attempt: the same model and world, its own 8-hex suffix."""
    return f"{base_id.rsplit('-', 1)[0]}-{i:08x}"


def _hostile_inspect(base: Path, dst: Path, i: int, payload: str):
    """An Inspect attempt as the import writes it (pretty UTF-8 files, the kept log beside them), payload i in
    every transcript string and every value the record keeps as logged. The import writes UTF-8, so the payload
    is the hashable one (a lone surrogate is refused: tests/builders/test_inspect_records.py)."""
    from builders.inspect_records import pretty

    aid = inspect_id(base.name, i)
    if aid == base.name:
        return
    folder = dst / "attempts" / aid
    folder.mkdir(parents=True)
    text = hashable(payload)
    transcript = poison(json.loads((base / "transcript.json").read_text()), text, INSPECT_STRUCTURAL)
    transcript["attempt_id"] = aid
    receipts = json.loads((base / "receipts.json").read_text())
    receipts["run_id"] = aid
    record = json.loads((base / "record.json").read_text())
    c = record["content"]
    c["attempt_id"] = aid
    ins = c["inspect"]
    ins["eval_id"] = f"hostile{i:08x}"  # one (eval, sample, epoch) is published once (builders/inspect_records.py)
    ins["task_args"] = {**poison(ins["task_args"], text, ["protocol"]), "note": text}
    ins["generate_config"] = {"system_message": text}
    ins["limit"] = poison(ins["limit"] or {"type": "message"}, text)
    for name, doc in (("transcript.json", transcript), ("receipts.json", receipts)):
        (folder / name).write_bytes(pretty(doc))
    c["transcript"]["sha256"] = hashlib.sha256((folder / "transcript.json").read_bytes()).hexdigest()
    c["outputs"]["receipts"]["sha256"] = hashlib.sha256((folder / "receipts.json").read_bytes()).hexdigest()
    record["content_sha256"] = engine.content_sha256(c)
    (folder / "record.json").write_bytes(pretty(record))
    log = c["inspect"]["log"]["path"]
    shutil.copyfile(base / log, folder / log)


def reseal_index(index: dict) -> dict:
    """Re-chain every entry and the head (what a forger who rewrites the index does)."""
    prev = genesis(index.get("schema"), index.get("engine"))
    for entry in index["entries"]:
        entry["prev_hash"] = prev
        entry["hash"] = entry_hash(entry)
        prev = entry["hash"]
    index["head"] = {"size": len(index["entries"]), "hash": prev}
    return index


def publication(src: Path, dst: Path, payloads=PAYLOADS) -> Path:
    """A runs/ folder: the published one from `src` plus hostile-pNN runs and hostile-aNN attempts."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".*"))
    index = json.loads((dst / "index.json").read_text())
    rows = [e for e in index["entries"] if e["run_id"] == BASE_RUN]
    base = inspect_base(src)
    for i, payload in enumerate(payloads):
        rows.append(_hostile_run(src, dst, i, payload))
        _hostile_attempt(src, dst, i, payload)
        if base is not None:
            _hostile_inspect(base, dst, i, payload)
    # Only the base run stays beside the hostile ones: a small site, quick to build.
    for entry in index["entries"]:
        if entry["run_id"] != BASE_RUN:
            (dst / entry["record"].split("/", 1)[1]).unlink()
    index["entries"] = sorted(rows, key=lambda e: e["run_id"])
    index["engine"] = poison(index.get("engine") or {}, PAYLOADS[0])
    index["volatile"] = {
        "built": PAYLOADS[1],
        "durations_ms": {e["run_id"]: 5 for e in index["entries"]},
        "note": PAYLOADS[-1],
    }
    _dump(dst / "index.json", reseal_index(index))
    for name in ("register.parquet", "days.parquet"):  # the site makes its own from the records
        (dst / name).unlink(missing_ok=True)
    return dst


# ---- the one hostile attempt of the main test site ----

ATTEMPT_ID = "test-hostile-01"
LONG_OUTPUT = (
    "\n".join(f"line {i}: " + ("x" * 40) for i in range(1, 201))
    + "\nTHE LAST LINE <script>window.__pwned='tail'</script>"
)


def transcript() -> dict:
    return {
        "attempt_id": ATTEMPT_ID,
        "steps": [
            {
                "index": 0,
                "role": "model",
                "text": PAYLOADS[2] + "\n\n" + PAYLOADS[8],
                "tool_calls": [
                    {
                        "name": "packet",
                        "arguments": {"day": 1, "note": PAYLOADS[4]},
                        "output": PAYLOADS[6],
                        "exit_code": 0,
                    }
                ],
            },
            {
                "index": 1,
                "role": "tool",
                "text": PAYLOADS[10],
                "tool_calls": [
                    {
                        "name": "project<script>",
                        "arguments": "--day 1 " + PAYLOADS[2],
                        "output": LONG_OUTPUT,
                        "exit_code": 1,
                    }
                ],
            },
            {"index": 2, "role": "evaluator", "text": PAYLOADS[16], "tool_calls": []},
        ],
        "summary": "Final: " + PAYLOADS[4] + " " + PAYLOADS[8],
    }


def write(runs_dir: Path) -> Path:
    folder = runs_dir / "attempts" / ATTEMPT_ID
    folder.mkdir(parents=True, exist_ok=True)
    data = json.dumps(transcript(), indent=2, ensure_ascii=False).encode()
    (folder / "transcript.json").write_bytes(data)
    content = {
        "attempt_id": ATTEMPT_ID,
        "label": "mock",
        "note": "Test fixture. " + PAYLOADS[4],
        "model": {"id": "mock-sampler<script>", "provider": "mock"},
        "sampling": {"temperature_milli": 0},
        "code": {"commit": "0" * 40, "dirty": False},
        "packages": {},
        "task": {"version": 1, "family": "FUND_01", "seed": 1, "split": "practice"},
        "information_boundary": "packet only",
        "claim": {"id": "claim-test", "scope": "test", "cap_micro_usd": 0, "sha256": "2" * 64, "consumed_at_step": 0},
        "ledger": {"entries": [], "head": {"size": 0, "hash": "3" * 64}},
        "termination": {
            "status": "failed",
            "reason": "worker time limit " + PAYLOADS[0],
            "limit": "time",
            "worker_exit_code": 124,
        },
        "proposals": [],
        "receipts_head": {"size": 0, "hash": "4" * 64},
        "result": None,
        "accepted_actions": 0,
        "settled_days": 0,
        "cost": {"micro_usd": 1234, "tokens_in": 10, "tokens_out": 5, "unresolved_micro_usd": 50},
        "transcript": {
            "path": f"runs/attempts/{ATTEMPT_ID}/transcript.json",
            "sha256": hashlib.sha256(data).hexdigest(),
        },
    }
    record = {
        "schema": "fundbook.attempt/1",
        "content": content,
        "content_sha256": engine.content_sha256(content),
        "volatile": {"started": "2026-11-28T10:00:00Z", "finished": "2026-11-28T10:20:00Z", "duration_ms": 1200000},
    }
    (folder / "record.json").write_text(json.dumps(record, indent=2, ensure_ascii=False), encoding="utf-8")
    return folder


# ---- practitioner records (runs/practitioners/<id>/), made as the import makes them ----


def practitioner_record(runs_dir: Path, bundle_dir, finalize=False) -> Path:
    """A practitioner record folder written by the importer's own writer (builders/practitioners/_record.py) from
    a study-mode submission re-executed on the host engine (the same session API the bundle runs: equal heads)."""
    from engine import _session
    from builders.practitioners._record import files
    from tests.desk.practitioners import engine_block, submission

    doc = submission(bundle_dir, days=3, finalize=finalize)
    run = _session._rebuild(doc["source"], doc["moves"])
    state = _session._state(run)
    result = _session.finalize_and_grade(run) if finalize else None
    execution = {"state": state, "result": result, "receipts": run.receipts}
    volatile = {
        "imported": "2026-12-01T10:00:00.000Z",
        "duration_ms": 1200,
        "host": "test host, node v22",
        "pyodide_load_ms": 900,
    }
    attempt, blobs = files(doc, execution, engine_block(bundle_dir), volatile)
    folder = runs_dir / "practitioners" / attempt
    folder.mkdir(parents=True)
    for name, data in blobs.items():
        (folder / name).write_bytes(data)
    return folder


def leaf_paths(value, path=()):
    """Every path of a leaf (string, number, boolean, null) and of every empty container."""
    if isinstance(value, dict) and value:
        return [p for k, v in value.items() for p in leaf_paths(v, path + (k,))]
    if isinstance(value, list) and value:
        return [p for i, v in enumerate(value) for p in leaf_paths(v, path + (i,))]
    return [path]


def set_path(doc, path, value):
    node = doc
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
