"""The `practitioners:<dir>` arm: practitioner attempts (runs/practitioners/)
as candidates, one per world, beside model attempts and scripted baselines.

A record is an observation only when it holds together: its content hashes
to its content_sha256, its receipts and submission files hash to what the
record says, and the submission is the one the record was made from (its
participant, world and moves). Its candidate is the submission's batches, in
day order, graded afresh by the sweep like any arm's; a checkpoint the
participant closed without a batch, or never reached (an abandoned session),
is a missing batch, exactly as for a model attempt that stopped. The
re-execution of every record through the bundle is `fundbook practitioner
verify` (part of `make verify`).
"""

import hashlib
import os

import engine

from .errors import ExperimentError
from .files import read_file

RECORD_SCHEMA = "fundbook.practitioner/1"  # builders/practitioners/_protocol.py
MAX_FILE_BYTES = 64 * 1024 * 1024


def _read(path):
    """(bytes, document) of one file of a record: a regular file within the limit (a FIFO in its place
    is refused, never waited on), parsed by the engine's strict reader (depth checked first, no
    duplicate names or lone surrogates) -- a hostile file is a one-line error, not a traceback."""
    from engine import parse_json

    data = read_file(path, "a practitioner record file", MAX_FILE_BYTES)
    try:
        return data, parse_json(data, path, "a practitioner record file", MAX_FILE_BYTES)
    except engine.InputError as exc:
        raise ExperimentError(str(exc).splitlines()[0] if str(exc) else f"{path}: not JSON")


def _outputs_dir(root, content, key):
    """The file an output names, under the record's own folder (a record cannot point outside it)."""
    name = os.path.basename(str((content.get("outputs") or {}).get(key, {}).get("path", "")))
    return os.path.join(root, name), content["outputs"][key]["sha256"]


def checked_candidate(folder):
    """(candidate, sha256 of the record file) of one record folder; ExperimentError if it does not hold together."""
    path = os.path.join(folder, "record.json")
    data, record = _read(path)
    try:
        content = record["content"]
        if record.get("schema") != RECORD_SCHEMA or content.get("kind") != "practitioner-attempt":
            raise ExperimentError(f"{path}: not a practitioner record ({RECORD_SCHEMA} expected)")
        if engine.content_sha256(content) != record.get("content_sha256"):
            raise ExperimentError(f"{path}: content does not hash to content_sha256")
        files = {}
        for key in ("receipts", "submission"):
            file, sha = _outputs_dir(folder, content, key)
            blob, doc = _read(file)
            if hashlib.sha256(blob).hexdigest() != sha:
                raise ExperimentError(f"{file}: sha256 is not the one the record names")
            files[key] = doc
        submission, task = files["submission"], content["task"]
        if (
            engine.content_sha256(submission) != content["submission_sha256"]
            or submission["participant"] != content["participant"]
            or submission["task"]["fixture_sha256"] != task["fixture_sha256"]
            or files["receipts"]["receipts_head"] != content["receipts_head"]
        ):
            raise ExperimentError(f"{path}: the record does not match its submission and receipts")
        batches = [m["batch"] for m in submission["moves"] if "batch" in m]
    except (KeyError, TypeError, AttributeError):
        raise ExperimentError(f"{path}: not a practitioner record (content.task, outputs and submission expected)")
    candidate = {
        "format": 1,
        "fixture_sha256": task["fixture_sha256"],
        "instance_id": task["instance_id"],
        "label": content["attempt_id"],
        "batches": batches,
    }
    return candidate, hashlib.sha256(data).hexdigest()


class PractitionerIndex:
    """Practitioner attempts under a folder, by the world they answer (one per world)."""

    def __init__(self, root):
        self.by_fixture = {}
        for name in sorted(os.listdir(root)):
            folder = os.path.join(root, name)
            if name.startswith(".") or not os.path.isfile(os.path.join(folder, "record.json")):
                continue
            candidate, sha = checked_candidate(folder)
            if candidate["fixture_sha256"] in self.by_fixture:
                raise ExperimentError(
                    f"{folder}: a second practitioner attempt for {candidate['instance_id']} "
                    f"(one per item: give each attempt its own folder of records)"
                )
            self.by_fixture[candidate["fixture_sha256"]] = (candidate, sha)
