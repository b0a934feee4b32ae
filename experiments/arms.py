"""Arms: anything that produces one candidate per item.

  baseline:<policy>   a scripted policy (reference, shortest-cheapest, do-nothing)
  gold                the reference plan, checked against SCORED, QUALIFIED, 100/100
  mutation:<name>     a named mutation of the gold candidate, checked against its
                      expected outcome; `mutations` expands to every engine mutation
  files:<dir>         a folder of candidate files, <dir>/<FAMILY>/seed-<N>.json or
                      <dir>/<W1..W5>.json, read exactly as `fundbook grade` reads a
                      candidate (engine._jsonin: bounded, strict); a missing file is
                      a MISSING row, one that reader refuses is graded MALFORMED
  attempts:<dir>      model attempts (runs/attempts/<id>/record.json): only records
                      that pass the launcher's verify (launchers._verify) are
                      observations; their accepted batches are graded afresh
  practitioners:<dir> practitioner attempts (runs/practitioners/<id>/record.json): the
                      study session's batches, graded afresh (arm_practitioners.py)
  inspect:<log>       an Inspect AI log of inspect_fundbook/desk, imported in memory as
                      `fundbook inspect import` imports it (every engine call re-executed
                      in Pyodide); each sample's accepted batches, graded afresh (arm_inspect.py)
  mock-worker         the launcher's free mock worker, run per item through the
                      host controller in a local sandbox
  model:llama-cpp:F   a real local model (GGUF file F), one recorded attempt per
                      item (experiments/arm_model.py)

`NAME=SPEC` names an arm (`mine=files:./candidates`). Engine arms (baseline,
gold, mutation) are produced inside the work unit, wherever it runs; the
others are produced on the host and handed to it as candidates.
"""

import hashlib
import os
import stat
import tempfile

import engine
from engine import POLICIES
from launchers.inspect import is_inspect_record

from .arm_practitioners import PractitionerIndex
from .errors import ExperimentError

ENGINE_KINDS = ("policy", "gold", "mutation")
# Folder arms beyond files: and attempts:, each an index of candidates by fixture_sha256.
FOLDER_ARMS = {"practitioners": PractitionerIndex}
# Arms whose candidates are cheap to produce again: a resumed sweep recomputes a sample of them.
RECHECK_KINDS = ENGINE_KINDS + ("files", "attempts", "mock-worker", "inspect", *FOLDER_ARMS)
NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-")


def _named(name, spec):
    if not name or set(name) - NAME_CHARS:
        raise ExperimentError(f"--arm {name}: an arm name is letters, digits, '_', '.', ':' or '-'")
    return dict(spec, name=name)


def parse_arm(text, recorded=None) -> list:
    """One --arm value -> [arm spec] (`mutations` gives several). `recorded`: {--arm value: the arm as a stopped
    sweep's manifest records it}, for reading a model arm's attempts back where its library is not installed."""
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
    if kind == "inspect":  # one Inspect log file (experiments/arm_inspect.py)
        if not arg or not os.path.isfile(arg):
            raise ExperimentError(f"--arm {text}: {arg or '(nothing)'} is not an Inspect log file")
        return [_named(name or f"inspect:{os.path.basename(arg)}", {"kind": "inspect", "path": arg})]
    if spec == "mock-worker":
        return [_named(name or "mock-worker", {"kind": "mock-worker"})]
    if kind == "model":  # model:llama-cpp:PATH, one real attempt per item (experiments/arm_model.py)
        from .arm_model import parse

        model = parse(name, arg, text, (recorded or {}).get(text))
        return [_named(model.pop("name"), model)]
    raise ExperimentError(
        f"--arm {text}: expected baseline:<policy>, gold, mutation:<name>, mutations, "
        f"files:<dir>, attempts:<dir>, practitioners:<dir>, inspect:<log>, mock-worker or "
        f"model:llama-cpp:<GGUF file>, model:openai:MODEL, model:anthropic:MODEL or "
        f"model:openai-compatible:MODEL@URL"
    )


def parse_arms(values, recorded=None) -> list:
    arms = [a for v in values for a in parse_arm(v, recorded)]
    names = [a["name"] for a in arms]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise ExperimentError(f"--arm: {dup[0]} is given twice")
    if not arms:
        raise ExperimentError("--arm: give at least one arm")
    return arms


def public(arm) -> dict:
    """What the sweep manifest records about an arm (no host paths for engine arms)."""
    return {
        k: v for k, v in arm.items() if k not in ("candidates", "read_only", "tiers", "base_url", "text")
    }  # how it ran, not what


# -- host producers ------------------------------------------------------------------


def _file_for(root, item_id):
    return os.path.join(root, *item_id.split("/")) + ".json"


def recheckable(arm) -> bool:
    return arm["kind"] in RECHECK_KINDS


NOT_JSON = "<not JSON>"  # a candidate the strict reader refuses: graded MALFORMED, the row stays


def _read_candidate(path):
    """(candidate or None when missing, sha256 of the file's bytes or None).

    Read as `fundbook grade` reads a candidate: at most the engine's candidate
    limit, then engine._jsonin's strict parser (depth checked first, no
    duplicate names, no lone surrogates, integers only); anything that reader
    refuses is graded MALFORMED. A FIFO or device in a candidate's place is
    refused: it is not a file the arm could have written."""
    from engine import MAX_CANDIDATE_BYTES, parse_json

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError) as exc:
        raise ExperimentError(f"{path}: cannot read ({getattr(exc, 'strerror', None) or exc})")
    digest, kept, size = hashlib.sha256(), [], 0
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ExperimentError(f"{path}: not a regular file (a candidate file expected)")
        os.set_blocking(fd, True)
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            digest.update(chunk)
            if size <= MAX_CANDIDATE_BYTES:
                kept.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise ExperimentError(f"{path}: cannot read ({exc.strerror or exc})")
    finally:
        os.close(fd)
    try:
        candidate = parse_json(b"".join(kept), path, "a candidate", MAX_CANDIDATE_BYTES)
    except engine.InputError:
        candidate = NOT_JSON
    return candidate, digest.hexdigest()


def _attempt_batches(record):
    c = record.get("content") or {}
    return [p["batch"] for p in c.get("proposals") or [] if p.get("outcome") == "accepted"]


def _only_files(folder):
    """Every entry of an attempt folder is a regular file or a folder (a FIFO would hang the verify)."""
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            mode = os.lstat(path).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise ExperimentError(f"{path}: not a regular file (an attempt folder holds files)")


class AttemptIndex:
    """Verified model attempts under a folder, by the fixture they answer."""

    def __init__(self, root):
        from launchers import LaunchError
        from launchers import verify_attempt
        from . import jsondoc
        from .files import read_file

        self.by_fixture = {}
        for name in sorted(os.listdir(root)):
            folder = os.path.join(root, name)
            path = os.path.join(folder, "record.json")
            if not os.path.isdir(folder) or not os.path.lexists(path):
                continue
            if is_inspect_record(path):  # an Inspect attempt is an observation of the inspect:LOG arm, not this one
                continue
            _only_files(folder)
            data = read_file(path, "an attempt record")
            jsondoc.loads(data, path, "an attempt record")  # strict and depth-checked before the launcher reads it
            try:
                verified = verify_attempt(path)
            except LaunchError as exc:
                raise ExperimentError(
                    f"attempts:{root}: {name} is not a verified attempt ({exc.format_message()}); "
                    f"only records that pass `fundbook-launch verify` are observations"
                )
            except RecursionError:
                raise ExperimentError(f"{path}: nested too deeply to be an attempt record")
            record = verified["record"]
            task = record["content"]["task"]
            if task["fixture_sha256"] in self.by_fixture:
                raise ExperimentError(f"{path}: a second attempt for {task['instance_id']} (one per item)")
            candidate = {
                "format": 1,
                "fixture_sha256": task["fixture_sha256"],
                "instance_id": task["instance_id"],
                "label": record["content"].get("attempt_id"),
                "batches": _attempt_batches(record),
            }
            self.by_fixture[task["fixture_sha256"]] = (candidate, hashlib.sha256(data).hexdigest())


def mock_worker_candidate(instance):
    """(candidate, usage) from one free mock attempt through the launcher's controller."""
    from launchers import Controller, Desk, Limits
    from launchers import Journal
    from launchers import Ledger
    from launchers import MockSampler
    from launchers import LocalSandbox

    free = {"input_micro_usd_per_mtok": 0, "output_micro_usd_per_mtok": 0}
    from engine import public_salt

    with tempfile.TemporaryDirectory(prefix="fundbook-mock-arm-") as tmp:
        ledger = Ledger(engine.content_sha256({"arm": "mock-worker"}), 0, 10**9, free)
        desk = os.path.join(tmp, "desk.sqlite")
        # a practice world is public: the public salt keeps the worker's packets, and so its rows, reproducible
        engine.History(desk).init(instance, instance["horizon"], public_salt(engine.fixture_sha256(instance)))
        controller = Controller(
            Desk(instance, desk),
            MockSampler(),
            LocalSandbox(),
            ledger,
            Limits(),
            Journal(os.path.join(tmp, "journal.jsonl")),
        )
        controller.run()
        batches = [p["batch"] for p in controller.proposals if p.get("outcome") == "accepted"]
        totals = ledger.totals()
    candidate = {
        "format": 1,
        "fixture_sha256": engine.fixture_sha256(instance),
        "instance_id": instance["instance_id"],
        "label": "mock-worker",
        "batches": batches,
    }
    return candidate, {
        "calls": controller.calls,
        "tokens_in": totals["tokens_in"],
        "tokens_out": totals["tokens_out"],
        "micro_usd": totals["charged_micro_usd"],
    }


class Producer:
    """Candidates of host arms for items; records the sha256 of every input it read."""

    def __init__(self, arms):
        self.arms = arms
        self.attempts = {a["name"]: AttemptIndex(a["path"]) for a in arms if a["kind"] == "attempts"}
        self.attempts.update({a["name"]: FOLDER_ARMS[a["kind"]](a["path"]) for a in arms if a["kind"] in FOLDER_ARMS})
        if any(a["kind"] == "inspect" for a in arms):
            from .arm_inspect import InspectLogIndex

            self.attempts.update({a["name"]: InspectLogIndex(a["path"]) for a in arms if a["kind"] == "inspect"})
        self.inputs = {a["name"]: {} for a in arms if a["kind"] not in ENGINE_KINDS}
        self.usage = {}

    def task_arm(self, arm, row):
        """The arm as the work unit takes it, for the item of manifest `row`."""
        kind = arm["kind"]
        if kind in ENGINE_KINDS:
            return {k: arm[k] for k in ("name", "kind", "policy", "mutation") if k in arm}
        if kind == "files":
            candidate, sha = _read_candidate(_file_for(arm["path"], row["item_id"]))
        elif kind in ("attempts", "inspect") or kind in FOLDER_ARMS:
            candidate, sha = self.attempts[arm["name"]].by_fixture.get(row["fixture_sha256"], (None, None))
        elif kind == "model":  # experiments/arm_model.py: the item's attempt, run now or read back
            from .arm_model import produce

            candidate, sha, usage = produce(arm, row)
            self.usage.setdefault(arm["name"], {})[row["item_id"]] = usage
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
