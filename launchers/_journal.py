"""The attempt journal: what the controller knows, appended as it happens.

One JSON object a line in `<out>.partial/journal.jsonl`: the attempt's start
(claim, the consumption's nonce chosen before the claim is spent, task,
limits, price), the consumption, the project entry, the adapters, the staged
files, every transcript step, every proposal with the evaluator's answer,
the graded result and the end. The record is always assembled from the
journal, the ledger file and the desk history -- after a normal end and,
with `recover`, after a host that died mid-attempt -- so both paths write the
same kind of record. Each line carries its wall-clock time (`at`), which only
ever reaches the record's `volatile`. Beside it, `status.json` says what the
attempt is doing (`running` until it ends) for anyone watching.
"""

import datetime
import json
import os

from engine import MAX_SAFE_INTEGER

from ._errors import InputError
from ._jsonfile import read_lines
from ._signals import critical

STATUS_NAME = "status.json"
PLAIN_DEPTH = 40  # deeper worker values are kept as their JSON text: a record nests them a few levels further


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_iso(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)


def _text(value: str) -> str:
    try:
        value.encode("utf-8")
        return value
    except UnicodeEncodeError:  # a lone surrogate is not Unicode text: replaced, never a failed write
        return value.encode("utf-8", "replace").decode("utf-8")


def plain(obj, depth=0):
    """What the worker sent, made safe for hashed records: floats and unsafe integers become text, lone
    surrogates are replaced, and values nested deeper than PLAIN_DEPTH are kept as their JSON text."""
    if depth > PLAIN_DEPTH and isinstance(obj, (dict, list, tuple)):
        return _text(json.dumps(obj, sort_keys=True, default=repr)[:4096])
    if isinstance(obj, dict):
        return {_text(str(k)): plain(v, depth + 1) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v, depth + 1) for v in obj]
    if isinstance(obj, str):
        return _text(obj)
    if isinstance(obj, float) or (isinstance(obj, int) and not isinstance(obj, bool) and abs(obj) > MAX_SAFE_INTEGER):
        return repr(obj)
    return obj


class Journal:
    def __init__(self, path):
        self.path = path

    def write(self, kind, body):
        line = json.dumps({"kind": kind, "at": now_iso(), "body": plain(body)}, sort_keys=True, ensure_ascii=False)
        with critical(), open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())


def read_journal(path):
    """[(kind, at, body)]; a torn last line (the host died mid-write) is dropped, any other bad line refused."""
    lines, _ = read_lines(path, "journal", torn_tail=True)
    events = []
    for number, obj in lines:
        if (
            not isinstance(obj, dict)
            or not isinstance(obj.get("kind"), str)
            or not isinstance(obj.get("at"), str)
            or not isinstance(obj.get("body"), (dict, list, type(None)))
        ):
            raise InputError(f"{path}: line {number}: not a journal entry")
        events.append((obj["kind"], obj["at"], obj["body"]))
    if not events or events[0][0] != "start" or not isinstance(events[0][2], dict):
        raise InputError(f"{path}: the journal does not begin with the attempt's start")
    return events


def write_status(folder, status, **facts):
    """`status.json` beside the journal: `preparing`, `running`, `ending` (with the termination status)."""
    path = os.path.join(folder, STATUS_NAME)
    body = dict(facts, schema="fundbook.attempt-status/1", status=status, pid=os.getpid(), at=now_iso())
    try:
        with open(path + ".tmp", "w", encoding="utf-8") as fh:
            fh.write(json.dumps(plain(body), sort_keys=True, indent=1) + "\n")
        os.replace(path + ".tmp", path)
    except OSError:
        pass  # a status file is for watchers; the journal is the attempt's account
