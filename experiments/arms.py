"""Arms: anything that produces one candidate per item.

  baseline:<policy>   a scripted policy (reference, shortest-cheapest, do-nothing)
  gold                the reference plan, checked against SCORED, QUALIFIED, 100/100
  mutation:<name>     a named mutation of the gold candidate, checked against its
                      expected outcome; `mutations` expands to every engine mutation
  files:<dir>         a folder of candidate files, <dir>/<FAMILY>/seed-<N>.json or
                      <dir>/<W1..W5>.json; a missing file is a MISSING row, an
                      unreadable one is graded (MALFORMED)
  attempts:<dir>      model attempts (runs/attempts/<id>/record.json): the batches
                      the desk accepted, graded afresh
  practitioners:<dir> practitioner attempts (runs/practitioners/<id>/record.json): the
                      study session's batches, graded afresh (arm_practitioners.py)
  mock-worker         the launcher's free mock worker, run per item through the
                      host controller in a local sandbox

`NAME=SPEC` names an arm (`mine=files:./candidates`). Engine arms (baseline,
gold, mutation) are produced inside the work unit, wherever it runs; the
others are produced on the host and handed to it as candidates.
"""

import hashlib
import json
import os
import tempfile

import engine
from engine._baselines import POLICIES

from .arm_practitioners import PractitionerIndex
from .errors import ExperimentError

ENGINE_KINDS = ("policy", "gold", "mutation")
# Folder arms beyond files: and attempts:, each an index of candidates by fixture_sha256.
FOLDER_ARMS = {"practitioners": PractitionerIndex}
NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-")


def _named(name, spec):
    if not name or set(name) - NAME_CHARS:
        raise ExperimentError(f"--arm {name}: an arm name is letters, digits, '_', '.', ':' or '-'")
    return dict(spec, name=name)


def parse_arm(text) -> list:
    """One --arm value -> [arm spec] (`mutations` gives several)."""
    name, sep, spec = text.partition("=")
    if not sep:
        name, spec = None, text
    kind, _, arg = spec.partition(":")
    if kind == "baseline":
        if arg not in POLICIES:
            raise ExperimentError(f"--arm {text}: expected baseline:<{'|'.join(POLICIES)}>")
        return [_named(name or spec, {"kind": "policy", "policy": arg})]
    if spec == "gold":
        return [_named(name or "gold", {"kind": "gold"})]
    if spec == "mutations":
        return [_named(m, {"kind": "mutation", "mutation": m}) for m in engine.MUTATIONS]
    if kind == "mutation":
        if arg not in engine.MUTATIONS:
            raise ExperimentError(f"--arm {text}: expected mutation:<one of {', '.join(engine.MUTATIONS)}>")
        return [_named(name or arg, {"kind": "mutation", "mutation": arg})]
    if kind in ("files", "attempts", *FOLDER_ARMS):
        if not arg or not os.path.isdir(arg):
            raise ExperimentError(f"--arm {text}: {arg or '(nothing)'} is not a folder")
        return [_named(name or f"{kind}:{os.path.basename(os.path.normpath(arg))}", {"kind": kind, "path": arg})]
    if spec == "mock-worker":
        return [_named(name or "mock-worker", {"kind": "mock-worker"})]
    raise ExperimentError(f"--arm {text}: expected baseline:<policy>, gold, mutation:<name>, mutations, "
                          f"files:<dir>, attempts:<dir>, practitioners:<dir> or mock-worker")


def parse_arms(values) -> list:
    arms = [a for v in values for a in parse_arm(v)]
    names = [a["name"] for a in arms]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ExperimentError(f"--arm: {dup[0]} is given twice")
    if not arms:
        raise ExperimentError("--arm: give at least one arm")
    return arms


def public(arm) -> dict:
    """What the sweep manifest records about an arm (no host paths for engine arms)."""
    return {k: v for k, v in arm.items() if k not in ("candidates",)}


# -- host producers ------------------------------------------------------------------

def _file_for(root, item_id):
    return os.path.join(root, *item_id.split("/")) + ".json"


def _read_candidate(path):
    """(candidate or None when missing, sha256 of the bytes or None)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        return None, None
    except OSError as exc:
        raise ExperimentError(f"{path}: cannot read ({exc.strerror})")
    try:
        candidate = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        candidate = "<not JSON>"  # graded as MALFORMED: the row stays
    return candidate, hashlib.sha256(data).hexdigest()


def _attempt_batches(record):
    c = record.get("content") or {}
    return [p["batch"] for p in c.get("proposals") or [] if p.get("outcome") == "accepted"]


class AttemptIndex:
    """Model attempts under a folder, by the fixture they answer."""

    def __init__(self, root):
        self.by_fixture = {}
        for name in sorted(os.listdir(root)):
            path = os.path.join(root, name, "record.json")
            if not os.path.isfile(path):
                continue
            with open(path, "rb") as fh:
                data = fh.read()
            try:
                record = json.loads(data)
                task = record["content"]["task"]
            except (ValueError, KeyError, TypeError):
                raise ExperimentError(f"{path}: not an attempt record (content.task expected)")
            if task["fixture_sha256"] in self.by_fixture:
                raise ExperimentError(f"{path}: a second attempt for {task['instance_id']} (one per item)")
            candidate = {"format": 1, "fixture_sha256": task["fixture_sha256"], "instance_id": task["instance_id"],
                         "label": record["content"].get("attempt_id"), "batches": _attempt_batches(record)}
            self.by_fixture[task["fixture_sha256"]] = (candidate, hashlib.sha256(data).hexdigest())


def mock_worker_candidate(instance):
    """(candidate, usage) from one free mock attempt through the launcher's controller."""
    from launchers._controller import Controller, Limits
    from launchers._journal import Journal
    from launchers._ledger import Ledger
    from launchers._sampler_mock import MockSampler
    from launchers._sandbox_local import LocalSandbox
    free = {"input_micro_usd_per_mtok": 0, "output_micro_usd_per_mtok": 0}
    from engine._commitment import public_salt
    with tempfile.TemporaryDirectory(prefix="fundbook-mock-arm-") as tmp:
        ledger = Ledger(engine.content_sha256({"arm": "mock-worker"}), 0, 10**9, free)
        desk = os.path.join(tmp, "desk.sqlite")
        # a practice world is public: the public salt keeps the worker's packets, and so its rows, reproducible
        engine.History(desk).init(instance, instance["horizon"], public_salt(engine.fixture_sha256(instance)))
        controller = Controller(instance, MockSampler(), LocalSandbox(), ledger, Limits(),
                                desk, Journal(os.path.join(tmp, "journal.jsonl")))
        controller.run()
        batches = [p["batch"] for p in controller.proposals if p.get("outcome") == "accepted"]
        totals = ledger.totals()
    candidate = {"format": 1, "fixture_sha256": engine.fixture_sha256(instance), "instance_id": instance["instance_id"],
                 "label": "mock-worker", "batches": batches}
    return candidate, {"calls": controller.calls, "tokens_in": totals["tokens_in"],
                       "tokens_out": totals["tokens_out"], "micro_usd": totals["charged_micro_usd"]}


class Producer:
    """Candidates of host arms for items; records the sha256 of every input it read."""

    def __init__(self, arms):
        self.arms = arms
        self.attempts = {a["name"]: AttemptIndex(a["path"]) for a in arms if a["kind"] == "attempts"}
        self.attempts.update({a["name"]: FOLDER_ARMS[a["kind"]](a["path"]) for a in arms if a["kind"] in FOLDER_ARMS})
        self.inputs = {a["name"]: {} for a in arms if a["kind"] not in ENGINE_KINDS}
        self.usage = {}

    def task_arm(self, arm, row):
        """The arm as the work unit takes it, for the item of manifest `row`."""
        kind = arm["kind"]
        if kind in ENGINE_KINDS:
            return {k: arm[k] for k in ("name", "kind", "policy", "mutation") if k in arm}
        if kind == "files":
            candidate, sha = _read_candidate(_file_for(arm["path"], row["item_id"]))
        elif kind == "attempts" or kind in FOLDER_ARMS:
            candidate, sha = self.attempts[arm["name"]].by_fixture.get(row["fixture_sha256"], (None, None))
        else:  # mock-worker
            from . import work
            candidate, usage = mock_worker_candidate(work.instance_for(row_item(row)))
            sha = engine.content_sha256(candidate)
            self.usage.setdefault(arm["name"], {})[row["item_id"]] = usage
        self.inputs[arm["name"]][row["item_id"]] = sha
        return {"name": arm["name"], "kind": "candidate", "candidate": candidate}


def row_item(row):
    from .items import item_of
    return item_of(row)


def inputs_digest(inputs) -> str:
    """One sha256 over the per-item input hashes of a host arm (None = no input)."""
    return engine.content_sha256(sorted([k, v] for k, v in inputs.items()))
