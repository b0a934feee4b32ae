"""The attempt journal: what the controller knows, appended as it happens.

One JSON object a line in `<out>.partial/journal.jsonl`: the attempt's start
(claim, task, limits, price), the adapters, the staged files, every transcript
step, every proposal with the evaluator's answer, the graded result and the
end. The record is always assembled from the journal, the ledger file and the
desk history -- after a normal end and, with `recover`, after a host that died
mid-attempt -- so both paths write the same kind of record. Each line carries
its wall-clock time (`at`), which only ever reaches the record's `volatile`.
"""

import datetime
import json
import os

from ._errors import InputError
from ._signals import critical


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_iso(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)


def plain(obj):
    """What the worker sent, made safe for hashed records: floats and unsafe integers become text."""
    if isinstance(obj, dict):
        return {str(k): plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain(v) for v in obj]
    if isinstance(obj, float) or (isinstance(obj, int) and not isinstance(obj, bool) and abs(obj) > 2**53 - 1):
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
    try:
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})")
    events = []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            events.append((obj["kind"], obj["at"], obj["body"]))
        except (ValueError, KeyError, TypeError):
            if i >= len(lines) - 2:  # the last written line
                break
            raise InputError(f"{path}: line {i + 1}: not a journal entry")
    if not events or events[0][0] != "start":
        raise InputError(f"{path}: the journal does not begin with the attempt's start")
    return events
