"""The Inspect attempt record's format, in one place: what `fundbook inspect import` writes
(launchers/inspect/_import.py) and what the build accepts (builders/inspect_records.py) are the same rules,
read from here, so nothing imports that the build refuses.

It owns the record's constants and limits, and how a value the log carries becomes a record value: a world id
(ASCII, canonical: FUND_0N-seed-S with no leading zero), a model name of any printable shape (stored as data,
slugged only for the folder name), a URL with its credentials removed, the task arguments checked by type,
the attempt id (its epoch in it, so the counting order of a world's tries never rests on a hash) and the
record's `claims`: what fundbook established by re-deriving it, and what is only as the log gives it.
Changing a field or a rule here changes the record format: bump RECORD_SCHEMA and SCHEMA_VERSION.
"""

import re

import engine
from engine import InputError, shown

RECORD_SCHEMA = "fundbook.inspect-attempt/2"
SCHEMA_VERSION = 2
SCHEMA_FAMILY = "fundbook.inspect-attempt/"  # every version: an old record is refused as one, never read as a worker's
TRANSCRIPT_SCHEMA = "fundbook.inspect-transcript/1"
RECEIPTS_SCHEMA = "fundbook.receipts/1"
KIND, HARNESS, LABEL, SPLIT = "inspect-attempt", "inspect", "model", "public-practice"
TASK_NAME = "inspect_fundbook/desk"
PROTOCOLS = ("tool", "text")
EXECUTION_PATH = "Inspect log, every engine call re-executed through the compiled bundle in Pyodide"
OUTSIDE = (
    "usage and cost as Inspect logged them: provenance only, outside fundbook's ledger and claims "
    "(fundbook neither made nor paid these calls)"
)

# Limits: every log up to them is read in well under 512 MiB (tests/inspect/test_memory.py measures it).
MAX_LOG_BYTES = 32 * 1024 * 1024  # a log file (a 5-world, 20-checkpoint tool log is about 0.2 MB)
MAX_UNPACKED_BYTES = 64 * 1024 * 1024  # what a .eval log's members unpack to, all together
MAX_MEMBERS = 10_000  # members of a .eval log (two a sample, a few more)
MAX_WINDOW_BYTES = 32 * 1024 * 1024  # a zstd window or an lzma dictionary a member may ask for
MAX_FILE_BYTES = 64 * 1024 * 1024  # record.json, transcript.json, receipts.json
MAX_MESSAGE_BYTES = 1024 * 1024  # one message's text (the HTTP samplers' limit for an answer, too)
MAX_ENGINE_CALLS = 50_000  # engine calls a log's model turns make (a 20-checkpoint run: about 80)
MAX_EPOCH = 999  # the attempt id carries the epoch in three digits
MAX_NAME = 300  # a model name, a URL: characters
DAYS = (1, 60)
MESSAGE_LIMIT = (2, 40_000)

WORLD = re.compile(r"(FUND_0[1-9])-seed-([1-9][0-9]{0,15})")
ATTEMPT_ID = re.compile(
    r"inspect-([A-Za-z0-9._-]{1,60})-(FUND_0[1-9])-seed-([1-9][0-9]{0,15})-e([0-9]{3})-([0-9a-f]{8})"
)
HEX64 = re.compile(r"[0-9a-f]{64}")
TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")  # Inspect's eval and run ids
VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+-]{0,63}")  # a package version
CREATED = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?\+00:00")  # UTC, so tries order as text
_PRINTABLE = re.compile(r"[^\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]+")
URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]{0,15}://[^\s\"'<>]+")
REDACTED = "REDACTED"
# Query parameters and object keys whose value is a credential (compared lowercased, without '-', '_' or '.').
SECRET_NAMES = frozenset(
    {
        "key",
        "apikey",
        "xapikey",
        "token",
        "accesstoken",
        "authtoken",
        "idtoken",
        "sessiontoken",
        "secret",
        "clientsecret",
        "password",
        "passwd",
        "pwd",
        "pass",
        "auth",
        "authorization",
        "bearer",
        "cookie",
        "sig",
        "signature",
        "credential",
        "credentials",
        "session",
    }
)


def _refuse(label, field, expected, got):
    raise InputError(f"{label}: {field}: expected {expected}, got {shown(got)}")


# -- worlds, names, ids ------------------------------------------------------------------------------------------
def world_of(text):
    """(family, seed) of a canonical world id FUND_0N-seed-S (ASCII digits, no leading zero); None otherwise."""
    m = WORLD.fullmatch(text) if isinstance(text, str) else None
    if not m or m.group(1) not in engine.FAMILIES:
        return None
    return m.group(1), int(m.group(2))


def world_id(family, seed) -> str:
    return f"{family}-seed-{seed}"


def printable(value, label, field, what, limit=MAX_NAME, optional=False):
    """Text kept as data (a model name, an answer's model): 1..limit printable characters, any shape."""
    if optional and value is None:
        return value
    if not isinstance(value, str) or not 1 <= len(value) <= limit or not _PRINTABLE.fullmatch(value):
        _refuse(label, field, f"{what}: 1 to {limit} printable characters", value)
    return value


def slug(text) -> str:
    """A model name as a folder name's part: letters, digits, '.', '_' and '-' (the name itself is data)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")[:60].strip("-.") or "model"


def model_parts(as_logged) -> dict:
    """Inspect's model string "<provider>/<name>" as the record keeps it (both as logged)."""
    provider, _, name = as_logged.partition("/")
    return {"id": name or as_logged, "provider": provider if name else None, "as_logged": as_logged}


def attempt_id(model_id, family, seed, epoch, digest) -> str:
    """inspect-<model slug>-<world>-e<epoch, 3 digits>-<8 hex of the model turns>. A world's tries order by the
    eval's creation time, then by this id: within one eval, by epoch (builders/counting.py, the one rule)."""
    return f"inspect-{slug(model_id)}-{world_id(family, seed)}-e{epoch:03d}-{digest[:8]}"


# -- credentials --------------------------------------------------------------------------------------------------
def _secret_name(name) -> bool:
    return re.sub(r"[-_.]", "", str(name)).lower() in SECRET_NAMES


def redact_url(url: str) -> str:
    """The URL with its credentials replaced by REDACTED: the user:password@ part, and the value of any query
    parameter named like a credential (api_key, token, sig...). Idempotent: a redacted URL is its own redaction."""
    m = re.match(r"([A-Za-z][A-Za-z0-9+.-]*://)([^/?#]*)(.*)", url, re.S)
    if not m:
        return url
    scheme, netloc, rest = m.groups()
    if "@" in netloc:
        netloc = REDACTED + "@" + netloc.rsplit("@", 1)[1]
    path, hashmark, fragment = rest.partition("#")
    path, question, query = path.partition("?")
    if question:
        parts = []
        for part in query.split("&"):
            name, eq, value = part.partition("=")
            parts.append(f"{name}={REDACTED}" if eq and value and _secret_name(name) else part)
        query = "&".join(parts)
    return scheme + netloc + path + question + query + hashmark + fragment


def redact_text(text: str) -> str:
    """Every URL inside a text redacted (redact_url)."""
    return URL_IN_TEXT.sub(lambda m: redact_url(m.group(0)), text)


def credentials(value, path="") -> list:
    """[(path, original text, redacted text)] for every string in a JSON value holding a credential in a URL;
    and [(path, None, None)] for an object key named like a credential with a non-empty value (which no
    redaction of text can make safe: the log is refused)."""
    found = []
    if isinstance(value, dict):
        for k, v in value.items():
            where = f"{path}.{k}" if path else str(k)
            if _secret_name(k) and v not in (None, "", REDACTED, [], {}):
                found.append((where, None, None))
            else:
                found += credentials(v, where)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += credentials(v, f"{path}[{i}]")
    elif isinstance(value, str) and "://" in value:
        clean = redact_text(value)
        if clean != value:
            found.append((path, value, clean))
    return found


def url(value, label, field):
    """A logged server URL as a record keeps it: null, or http(s) without credentials."""
    if value is None:
        return value
    if not isinstance(value, str) or len(value) > MAX_NAME or not re.fullmatch(r"https?://[^\s\x00-\x1f\x7f]+", value):
        _refuse(label, field, "null or an http(s) URL", value)
    if redact_url(value) != value:
        raise InputError(
            f"{label}: {field}: expected a URL without credentials (user:password@ or a secret query "
            f"parameter), got a URL holding one"
        )
    return value


# -- task arguments ---------------------------------------------------------------------------------------------
def _whole(value, label, field, low, high):
    if type(value) is not int or not low <= value <= high:
        _refuse(label, field, f"a whole number from {low} to {high}", value)
    return value


def task_args(args, label, field="task_args") -> dict:
    """The task arguments an eval logged that the replay reads, held to the task's own types
    (inspect_fundbook/_task.py): -> the checked {days, protocol, message_limit}; InputError names the argument.
    The others (the agent, the bundle's path, the worlds as typed) are data."""
    if not isinstance(args, dict):
        _refuse(label, field, "an object", args)
    days = _whole(args.get("days", 20), label, f"{field}.days", *DAYS)
    protocol = args.get("protocol", "tool")
    if protocol not in PROTOCOLS:
        _refuse(label, f"{field}.protocol", f"one of {', '.join(PROTOCOLS)}", protocol)
    limit = _whole(args.get("message_limit", 400), label, f"{field}.message_limit", *MESSAGE_LIMIT)
    worlds = args.get("worlds", "")
    if not (isinstance(worlds, str) or (isinstance(worlds, list) and all(isinstance(w, str) for w in worlds))):
        _refuse(label, f"{field}.worlds", "a text or a list of texts (Inspect's comma list)", worlds)
    return {"days": days, "protocol": protocol, "message_limit": limit}


# -- claims ---------------------------------------------------------------------------------------------------------
# What the record says fundbook established (re-derived) and what it holds only as the log gives it. Pages render
# these texts; the build requires exactly these (a record cannot claim more).
CLAIMS = {
    "established": [
        {
            "claim": "world",
            "fields": ["content.task"],
            "text": "The world is the published world named here: the engine rebuilds it to this fixture sha256.",
        },
        {
            "claim": "moves",
            "fields": ["content.moves", "content.receipts_head", "content.outputs.receipts", "content.engine"],
            "text": "The batches in the log's model turns, replayed through the desk and answered again by the "
            "compiled bundle named here (in Pyodide), get the desk's decisions and produce these receipts and "
            "this receipts head.",
        },
        {
            "claim": "grade",
            "fields": ["content.result"],
            "text": "This grade (status, verdict, score out of 100, gates) is the engine's grade of those moves; the "
            "log's desk_grade score, its explanation, the header's metric and the reductions are exactly it.",
        },
        {
            "claim": "desk answers",
            "fields": ["content.transcript", "content.turns"],
            "text": "Every desk answer the log holds (the system message, each packet, tool result and ToolError) is "
            "the one the desk gives to the model turns before it, byte for byte; transcript.json holds the "
            "log's messages.",
        },
        {
            "claim": "kept log",
            "fields": ["content.inspect.log"],
            "text": "The log is kept beside this record under its sha256, with any credential in its URLs replaced by "
            "REDACTED; `fundbook inspect verify` imports it again and requires this record.",
        },
    ],
    "as_logged": [
        {
            "claim": "model",
            "fields": ["content.model"],
            "text": "The model and its provider are the names the log gives. fundbook did not call the model: which "
            "model, or whether any model, wrote the model turns is as logged, not verified.",
        },
        {
            "claim": "bundle of the eval",
            "fields": ["content.inspect.task_version", "content.inspect.bundle_sha256"],
            "text": "The engine bundle the eval ran with is as logged; every engine answer was re-derived through "
            "the bundle in content.engine instead.",
        },
        {
            "claim": "eval",
            "fields": [
                "content.inspect.version",
                "content.inspect.eval_id",
                "content.inspect.run_id",
                "content.inspect.created",
                "content.inspect.epoch",
                "content.inspect.model_base_url",
                "content.inspect.generate_config",
                "content.inspect.task_args",
                "content.inspect.limit",
            ],
            "text": "Inspect's version, the eval's ids, epoch and creation time, the server, the generate config, the "
            "task arguments and the limit that stopped the sample are as logged.",
        },
        {"claim": "usage", "fields": ["content.inspect.usage", "content.inspect.usage_note"], "text": OUTSIDE},
    ],
}


def claims() -> dict:
    """A fresh copy of CLAIMS for a record."""
    return {side: [dict(c, fields=list(c["fields"])) for c in items] for side, items in CLAIMS.items()}


COUNTING_RULE = (
    "Each (eval, sample, epoch) of a log imports once, as one try of its world; a model's tries of a "
    "world are ordered by the eval's creation time as logged, then by epoch, and the last counts (the "
    "one rule, builders/counting.py)."
)


def is_inspect_record(record) -> bool:
    """Is this attempt record (record.json, parsed) an Inspect attempt? Its schema is of the Inspect format, any
    version: the one answer for a whole record (the site's loader asks it before it picks the record's check;
    launchers/inspect/_kind.py answers the same for a path). A checked record's content also says so
    (harness "inspect": builders/site/counted.py is_inspect)."""
    return isinstance(record, dict) and str(record.get("schema")).startswith(SCHEMA_FAMILY)
