"""`make verify`: rebuild the runs from the bundle and compare with the
committed runs/index.json head; on a difference, name the first differing
record and field."""

import json
import os

from .._errors import BuildError
from .._files import rel
from ._index import check_chain
from ._stage import build_runs

from engine import first_difference as _first_difference


def first_difference(a, b, path="content"):
    """The engine's first-difference walk, rooted at a record's content."""
    return _first_difference(a, b, path)


def _value(doc, path):
    import re
    node = doc
    for part in re.findall(r"\.([^.\[\s]+)|\[(\d+)\]", path.split(" ")[0][len("content"):]):
        key, idx = part
        try:
            node = node[int(idx)] if idx else node[key]
        except (KeyError, IndexError, TypeError):
            return "(absent)"
    return json.dumps(node, sort_keys=True)[:120]


def _load(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError) as exc:
        raise BuildError(f"{rel(path)}: unreadable ({exc})")


def _check_files(directory, index):
    """Each committed record file against the index, and its content against its hash."""
    import engine
    for entry in index["entries"]:
        path = os.path.join(directory, f"{entry['run_id']}.json")
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError:
            raise BuildError(f"{rel(path)}: missing (listed in the committed index)")
        if engine.sha256_hex(data) != entry["file_sha256"]:
            raise BuildError(f"{rel(path)}: sha256 expected {entry['file_sha256']} (committed index), "
                             f"actual {engine.sha256_hex(data)}")
        doc = json.loads(data)
        if engine.content_sha256(doc["content"]) != entry["content_sha256"]:
            raise BuildError(f"{rel(path)}: content sha256 expected {entry['content_sha256']} (committed index), "
                             f"actual {engine.content_sha256(doc['content'])}")


def compare(committed_dir, rebuilt_dir) -> str:
    committed = _load(os.path.join(committed_dir, "index.json"))
    rebuilt = _load(os.path.join(rebuilt_dir, "index.json"))
    label = rel(os.path.join(committed_dir, "index.json"))
    broken = check_chain(committed)
    if broken:
        raise BuildError(f"{label}: the hash chain breaks at {broken}")
    _check_files(committed_dir, committed)
    if committed["head"] == rebuilt["head"]:
        return f"verify: {rebuilt['head']['size']} records match the committed index head {committed['head']['hash']}"
    if committed["engine"] != rebuilt["engine"]:
        prefix = (f"engine bundle sha256 expected {committed['engine']['bundle_sha256']} (committed), "
                  f"actual {rebuilt['engine']['bundle_sha256']} (rebuilt); ")
    else:
        prefix = ""
    old = {e["run_id"]: e for e in committed["entries"]}
    new = {e["run_id"]: e for e in rebuilt["entries"]}
    for rid in sorted(set(old) | set(new)):
        if rid not in old or rid not in new:
            where = "committed" if rid in old else "rebuilt"
            raise BuildError(f"{prefix}runs/{rid}.json: only in the {where} index "
                             f"(head expected {committed['head']['hash']}, actual {rebuilt['head']['hash']})")
        if old[rid]["content_sha256"] != new[rid]["content_sha256"]:
            a = _load(os.path.join(committed_dir, f"{rid}.json"))["content"]
            b = _load(os.path.join(rebuilt_dir, f"{rid}.json"))["content"]
            field = first_difference(a, b) or "content (same fields, different hash)"
            raise BuildError(f"{prefix}runs/{rid}.json: first difference at {field}: committed {_value(a, field)}, "
                             f"rebuilt {_value(b, field)} (content_sha256 expected {old[rid]['content_sha256']}, "
                             f"actual {new[rid]['content_sha256']})")
    raise BuildError(f"{prefix}{label}: head expected {committed['head']['hash']}, actual {rebuilt['head']['hash']} "
                     f"(entries agree; the index itself differs)")


def verify_runs(bundle_dir, committed_dir, scratch_out) -> str:
    if not os.path.isfile(os.path.join(committed_dir, "index.json")):
        raise BuildError(f"{rel(os.path.join(committed_dir, 'index.json'))}: missing (run `make build-runs` and commit runs/)")
    build_runs(bundle_dir, scratch_out, parity=True, progress=False)
    return compare(committed_dir, scratch_out)
