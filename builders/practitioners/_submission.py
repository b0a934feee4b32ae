"""Reading a practitioner submission (the file the desk's study mode exports)
strictly: bounded, through the engine's own reader (engine._jsonin: no NaN,
no duplicate names, no floats, no lone surrogates, no deep nesting, integers
within +-(2^53-1)), every field of a known name and shape, every bound held,
the consent one the desk has shown, the bundle the one this import runs.

Each refusal is one InputError naming the file and the field. What only a
re-execution can show (a batch the desk rejects, a receipts head that is not
the batches') is checked after it (_stage.py).
"""

import re

import engine
from engine import InputError
from engine import shown
from engine import MAX_SESSION_BYTES, parse_json, read_limited

from . import _protocol as P

MAX_SUBMISSION_BYTES = MAX_SESSION_BYTES  # a session's moves and its clock: as the desk stores it

_PARTICIPANT = re.compile(P.PARTICIPANT)
_COHORT = re.compile(P.COHORT)
_HEX64 = re.compile(P.HEX64)
TOP = (
    "schema",
    "participant",
    "cohort",
    "source",
    "task",
    "moves",
    "consent",
    "clock",
    "affordances",
    "termination",
    "desk",
    "receipts_head",
)


class Fields:
    """Checks on one document, each error naming `label: field`."""

    def __init__(self, label):
        self.label = label

    def fail(self, field, expected, got=None):
        tail = "" if got is None else f", got {got}"
        raise InputError(f"{self.label}: {field}: expected {expected}{tail}")

    def shown(self, value):
        return shown(value)

    def obj(self, value, field, keys):
        if not isinstance(value, dict):
            self.fail(field, f"an object with {', '.join(keys)}", type(value).__name__)
        missing = [k for k in keys if k not in value]
        if missing:
            raise InputError(
                f"{self.label}: {field}.{missing[0]}: missing"
                + (
                    " (a practitioner submission needs the participant's accepted consent)"
                    if field == "submission" and missing[0] == "consent"
                    else ""
                )
            )
        extra = sorted(set(value) - set(keys))
        if extra:
            self.fail(
                f"{field}.{extra[0][:40]}", f"no such field (a newer desk? this reader knows {P.SUBMISSION_SCHEMA})"
            )
        return value

    def integer(self, value, field, low, high):
        if type(value) is not int or not low <= value <= high:
            self.fail(field, f"an integer in {low}..{high}", self.shown(value))
        return value

    def text(self, value, field, pattern, what):
        if not isinstance(value, str) or not pattern.fullmatch(value):
            self.fail(field, what, self.shown(value))
        return value

    def choice(self, value, field, options):
        if value not in options or not isinstance(value, str):
            self.fail(field, f"one of {', '.join(options)}", self.shown(value))
        return value

    def array(self, value, field, most):
        if not isinstance(value, list):
            self.fail(field, "a list", type(value).__name__)
        if len(value) > most:
            self.fail(field, f"at most {most} entries", str(len(value)))
        return value


def read_submission(path, bundle, consents=None) -> dict:
    """The submission at `path`, checked; `bundle` = {bundle_sha256, manifest_sha256, engine_version,
    pyodide_version} of the bundle this import runs. InputError on anything else."""
    try:
        data = read_limited(path, MAX_SUBMISSION_BYTES)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file (a practitioner submission expected)")
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory (a practitioner submission file expected)")
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror or exc})")
    if len(data) > MAX_SUBMISSION_BYTES:
        raise InputError(f"{path}: larger than the {MAX_SUBMISSION_BYTES}-byte limit for a practitioner submission")
    doc = parse_json(data, str(path), "a practitioner submission", MAX_SUBMISSION_BYTES)
    return check_submission(doc, str(path), bundle, consents)


def check_submission(doc, label, bundle, consents=None) -> dict:
    f = Fields(label)
    if isinstance(doc, dict) and isinstance(doc.get("schema"), str) and doc["schema"] != P.SUBMISSION_SCHEMA:
        f.fail("schema", f"{P.SUBMISSION_SCHEMA} (other versions are refused)", f.shown(doc["schema"]))
    f.obj(doc, "submission", TOP)
    f.choice(doc["schema"], "schema", (P.SUBMISSION_SCHEMA,))
    f.text(doc["participant"], "participant", _PARTICIPANT, "a pseudonym p- and 16 hexadecimal digits")
    f.text(doc["cohort"], "cohort", _COHORT, "a cohort name of 1..40 lowercase letters, digits and inner '-'")
    source = f.obj(doc["source"], "source", ("family", "seed"))
    f.choice(source["family"], "source.family", engine.FAMILIES)
    f.integer(source["seed"], "source.seed", 1, 2**53 - 1)
    instance = engine.generate(source["family"], source["seed"])
    task = f.obj(doc["task"], "task", ("instance_id", "fixture_sha256", "horizon"))
    for key, want in (
        ("instance_id", instance["instance_id"]),
        ("fixture_sha256", engine.fixture_sha256(instance)),
        ("horizon", instance["horizon"]),
    ):
        if task[key] != want:
            f.fail(f"task.{key}", f"{want} (the world of {source['family']} seed {source['seed']})", f.shown(task[key]))
    horizon = instance["horizon"]
    moves = f.array(doc["moves"], "moves", horizon)
    for i, move in enumerate(moves):
        if isinstance(move, dict) and set(move) == {"batch"}:
            if not isinstance(move["batch"], dict):
                f.fail(f"moves[{i}].batch", "a batch object {day, report, actions}", type(move["batch"]).__name__)
        elif isinstance(move, dict) and set(move) == {"skip"}:
            f.integer(move["skip"], f"moves[{i}].skip", i + 1, i + 1)
        else:
            f.fail(f"moves[{i}]", "{batch} or {skip: day}")
    _check_consent(f, doc["consent"], consents if consents is not None else P.consent_versions())
    closed = len(moves)
    clock = f.obj(doc["clock"], "clock", ("per_checkpoint_ms", "open_checkpoint_ms", "pauses"))
    per = f.array(clock["per_checkpoint_ms"], "clock.per_checkpoint_ms", horizon)
    if len(per) != closed:
        f.fail("clock.per_checkpoint_ms", f"one time per closed checkpoint ({closed})", str(len(per)))
    for i, ms in enumerate(per):
        f.integer(ms, f"clock.per_checkpoint_ms[{i}]", 0, P.MAX_MS)
    f.integer(clock["open_checkpoint_ms"], "clock.open_checkpoint_ms", 0, P.MAX_MS)
    for i, pause in enumerate(f.array(clock["pauses"], "clock.pauses", P.MAX_PAUSES)):
        f.obj(pause, f"clock.pauses[{i}]", ("checkpoint", "ms", "reason"))
        f.integer(pause["checkpoint"], f"clock.pauses[{i}].checkpoint", 1, horizon + 1)
        f.integer(pause["ms"], f"clock.pauses[{i}].ms", 0, P.MAX_MS)
        f.choice(pause["reason"], f"clock.pauses[{i}].reason", P.PAUSE_REASONS)
    checkpoints = [p["checkpoint"] for p in clock["pauses"]]
    if checkpoints != sorted(checkpoints) or (checkpoints and checkpoints[-1] > closed + 1):
        f.fail("clock.pauses", f"pauses in checkpoint order, none after the open checkpoint ({closed + 1})")
    aff = f.obj(doc["affordances"], "affordances", ("offered", "used"))
    if aff["offered"] != list(P.OFFERED):
        f.fail(
            "affordances.offered",
            f"the study mode's affordances {list(P.OFFERED)} (exactly the model worker's)",
            f.shown(aff["offered"]),
        )
    used = f.array(aff["used"], "affordances.used", len(P.OFFERED))
    if any(u not in P.OFFERED for u in used) or used != [a for a in P.OFFERED if a in used]:
        f.fail("affordances.used", "offered affordances, each once, in the offered order", f.shown(used))
    term = f.obj(doc["termination"], "termination", ("status", "reason", "checkpoints_submitted", "checkpoints_closed"))
    f.choice(term["status"], "termination.status", P.STATUSES)
    f.choice(
        term["reason"],
        "termination.reason",
        (P.COMPLETED_REASON,) if term["status"] == "completed" else P.ABANDON_REASONS,
    )
    submitted = sum(1 for m in moves if "batch" in m)
    f.integer(term["checkpoints_submitted"], "termination.checkpoints_submitted", submitted, submitted)
    f.integer(term["checkpoints_closed"], "termination.checkpoints_closed", closed, closed)
    desk = f.obj(
        doc["desk"], "desk", ("build", "bundle_sha256", "manifest_sha256", "engine_version", "pyodide_version")
    )
    f.text(desk["build"], "desk.build", _HEX64, "the desk build's sha256 (64 hexadecimal digits)")
    for key in ("bundle_sha256", "manifest_sha256", "engine_version", "pyodide_version"):
        if desk[key] != bundle[key]:
            f.fail(
                f"desk.{key}",
                f"{bundle[key]} (the engine bundle this import runs, as every published run)",
                f"{f.shown(desk[key])}: the session ran another bundle",
            )
    head = f.obj(doc["receipts_head"], "receipts_head", ("size", "hash"))
    f.integer(head["size"], "receipts_head.size", 0, 10**6)
    f.text(head["hash"], "receipts_head.hash", _HEX64, "64 hexadecimal digits")
    return doc


def _check_consent(f, consent, versions):
    consent = f.obj(consent, "consent", ("version", "sha256"))
    if consent["version"] not in versions:
        f.fail(
            "consent.version",
            f"a consent text the desk has shown ({', '.join(sorted(versions))})",
            f.shown(consent["version"]),
        )
    if consent["sha256"] != versions[consent["version"]]:
        f.fail(
            "consent.sha256",
            f"{versions[consent['version']]} (site/assets/desk/consent/v{consent['version']}.txt)",
            f.shown(consent["sha256"]),
        )
