"""Reading the published records the site is built from.

The site shows only what runs/ holds: the hash-chained index, one record per
run, and the model attempts. Each file is checked against the hashes the index
and the record itself carry before anything is rendered, so a page can never
show a number its record does not back. Problems are one-line SiteInputError
messages naming the file, the field and what was expected.
"""

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from builders.run_index import check_chain
from engine import content_sha256

INDEX_SCHEMA = "fundbook.index/2"
RUN_SCHEMA = "fundbook.run/1"
ATTEMPT_SCHEMA = "fundbook.attempt/1"
PRACTITIONER_SCHEMA = "fundbook.practitioner/1"
PUBLISHED_SUFFIXES = (
    ".json",
    ".jsonl",
    ".parquet",
    ".eval",
)  # files under runs/ copied into the site (.eval: a kept Inspect log)
# A published file's name as records give it: runs/ then plain path segments (no "..", no scheme).
PUBLISHED_PATH = re.compile(r"^runs(/[A-Za-z0-9][A-Za-z0-9._-]{0,127})+$")
RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class SiteInputError(Exception):
    """A published record the site cannot render; the message is one line."""


@dataclass
class Run:
    run_id: str
    entry: dict  # the index entry
    record: dict  # the whole record (content, content_sha256, volatile)
    record_path: str  # repo-relative, e.g. runs/reference-W1.json

    @property
    def content(self):
        return self.record["content"]

    @property
    def duration_ms(self):
        """The volatile execution time when it is a whole number of milliseconds, else None."""
        volatile = self.record.get("volatile")
        ms = volatile.get("duration_ms") if isinstance(volatile, dict) else None
        return ms if isinstance(ms, int) and not isinstance(ms, bool) else None


@dataclass
class Attempt:
    attempt_id: str
    record: dict
    transcript: dict | None
    folder: str  # repo-relative, e.g. runs/attempts/<id>

    @property
    def content(self):
        return self.record["content"]

    @property
    def inspect(self) -> bool:
        """An Inspect-imported attempt (harness inspect, builders/inspect_records.py), not the worker's."""
        return is_inspect_record(self.record)


@dataclass
class Session:
    """A practitioner's desk session, imported into runs/practitioners/<id>/."""

    session_id: str
    record: dict
    folder: str  # repo-relative, e.g. runs/practitioners/<id>

    @property
    def content(self):
        return self.record["content"]


@dataclass
class Publication:
    runs_dir: Path
    index: dict
    runs: list = field(default_factory=list)
    attempts: list = field(default_factory=list)
    practitioners: list = field(default_factory=list)
    verify_js: bool = False  # the practice desk's verify.js exists: run pages load it
    errata: dict = field(default_factory=dict)  # runs/errata/grammar-1.json (make verify-erratum recomputes it)

    def erratum_of(self, attempt_id):
        """The grammar-1 erratum's entry for an attempt with inexpressible days, or None."""
        for entry in self.errata.get("attempts") or []:
            if entry.get("attempt_id") == attempt_id and entry.get("inexpressible_days"):
                return entry
        return None

    def study_erratum(self, name):
        return next((s for s in (self.errata.get("studies") or []) if s.get("study") == name), None)

    def extra_files(self):
        """Published files under runs/ (relative to runs_dir) to copy into the site."""
        out = []
        for path in sorted(self.runs_dir.rglob("*")):
            if path.is_file() and path.suffix in PUBLISHED_SUFFIXES and not path.name.startswith("."):
                out.append(path.relative_to(self.runs_dir).as_posix())
        return out


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def load_json(path: Path, label: str):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SiteInputError(f"{label}: file not found") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SiteInputError(f"{label}: expected UTF-8 JSON ({exc})") from None
    except RecursionError:
        raise SiteInputError(f"{label}: expected JSON nested less deeply") from None


def resolve_published(runs_dir: Path, rel, label: str) -> Path:
    """The file a record names ("runs/receipts/x.json"), which must lie inside runs_dir."""
    if not isinstance(rel, str) or not PUBLISHED_PATH.match(rel) or "/../" in f"{rel}/" or "/./" in f"{rel}/":
        raise SiteInputError(
            f"{label}: expected a path runs/<name>[/<name>...] of letters, digits, '.', '_' or '-', got {rel!r}"
        )
    return runs_dir / rel.split("/", 1)[1]


def _require(obj, key, label, kind=None):
    if not isinstance(obj, dict) or key not in obj:
        raise SiteInputError(f"{label}: field `{key}` missing")
    if kind is not None and not isinstance(obj[key], kind):
        raise SiteInputError(f"{label}: field `{key}` expected {kind.__name__}")
    return obj[key]


def _check_content(record, label, schema):
    if not isinstance(record, dict):
        raise SiteInputError(f"{label}: expected a JSON object")
    if record.get("schema") != schema:
        raise SiteInputError(f"{label}: field `schema` expected {schema!r}, got {record.get('schema')!r}")
    content = _require(record, "content", label, dict)
    claimed = _require(record, "content_sha256", label, str)
    try:
        computed = content_sha256(content)
    except (ValueError, UnicodeEncodeError) as exc:  # a float, a huge integer or a lone surrogate
        reason = str(exc)
        raise SiteInputError(f"{label}: field `content` is not canonical JSON ({reason})") from None
    if computed != claimed:
        raise SiteInputError(f"{label}: field `content_sha256` does not match sha256(canonical_json(content))")
    return content


def load_runs(runs_dir: Path) -> tuple[dict, list]:
    label = f"{runs_dir.name}/index.json"
    index = load_json(runs_dir / "index.json", label)
    if not isinstance(index, dict):
        raise SiteInputError(f"{label}: expected a JSON object")
    if index.get("schema") != INDEX_SCHEMA:
        raise SiteInputError(f"{label}: field `schema` expected {INDEX_SCHEMA!r}, got {index.get('schema')!r}")
    entries = _require(index, "entries", label, list)
    runs = []
    for i, entry in enumerate(entries):
        where = f"{label}: entries[{i}]"
        run_id = _require(entry, "run_id", where, str)
        if not RUN_ID.match(run_id):
            raise SiteInputError(f"{where}.run_id: expected an id of letters, digits, '.', '_' or '-', got {run_id!r}")
        rel = _require(entry, "record", where, str)
        # The index names records repo-relative (runs/<id>.json); resolve inside runs_dir.
        path = resolve_published(runs_dir, rel, f"{where}.record")
        name = rel.split("/", 1)[1]
        if not path.is_file():
            raise SiteInputError(f"{where}.record: file {rel} not found")
        if file_sha256(path) != entry.get("file_sha256"):
            raise SiteInputError(f"{rel}: file sha256 differs from {label} entries[{i}].file_sha256")
        record = load_json(path, rel)
        content = _check_content(record, rel, RUN_SCHEMA)
        if record["content_sha256"] != entry.get("content_sha256"):
            raise SiteInputError(f"{rel}: field `content_sha256` differs from {label} entries[{i}]")
        if content.get("run_id") != run_id:
            raise SiteInputError(f"{rel}: field `content.run_id` expected {run_id!r}")
        runs.append(Run(run_id=run_id, entry=entry, record=record, record_path=f"runs/{name}"))
    head = index.get("head") if isinstance(index.get("head"), dict) else {}
    if head.get("size") != len(entries) or (entries and head.get("hash") != entries[-1].get("hash")):
        raise SiteInputError(f"{label}: field `head` expected the size and hash of the last entry")
    try:
        broken = check_chain(index)  # builders/run_index.py: the formula build-runs chains with
    except (KeyError, TypeError, ValueError, UnicodeEncodeError):
        broken = "an entry without the chained fields"
    if broken is not None:
        raise SiteInputError(f"{label}: the hash chain breaks at {broken}")
    return index, runs


from builders.inspect_format import RECORD_SCHEMA as INSPECT_ATTEMPT_SCHEMA  # noqa: E402,F401  (the format's owner)
from builders.inspect_format import is_inspect_record  # noqa: E402  (a record of any version: the current one's check)


def load_attempts(runs_dir: Path) -> list:
    root = runs_dir / "attempts"
    attempts = []
    if not root.is_dir():
        return attempts
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        rel = f"runs/attempts/{folder.name}"
        if not RUN_ID.match(folder.name):
            raise SiteInputError(f"{rel}: expected a folder name of letters, digits, '.', '_' or '-'")
        if folder.name.endswith(".partial") and not (folder / "record.json").exists():
            raise SiteInputError(
                f"{rel}: an unfinished attempt (still running, or its host died: `fundbook-launch "
                f"recover` it); every attempt is published, once it has its record"
            )
        record = load_json(folder / "record.json", f"{rel}/record.json")
        if is_inspect_record(record):
            attempts.append(_inspect_attempt(runs_dir, folder, rel))
            continue
        content = _check_content(record, f"{rel}/record.json", ATTEMPT_SCHEMA)
        attempt_id = _require(content, "attempt_id", f"{rel}/record.json: content", str)
        transcript = None
        if (folder / "transcript.json").is_file():
            transcript = load_json(folder / "transcript.json", f"{rel}/transcript.json")
            named = content.get("transcript")
            claimed = named.get("sha256") if isinstance(named, dict) else None
            if claimed and claimed != file_sha256(folder / "transcript.json"):
                raise SiteInputError(f"{rel}/transcript.json: sha256 differs from record content.transcript.sha256")
        attempts.append(Attempt(attempt_id=attempt_id, record=record, transcript=transcript, folder=rel))
    _inspect_unique(attempts)
    return attempts


def _inspect_unique(attempts):
    """One (eval, sample, epoch) is published once (builders/inspect_records.py check_unique)."""
    from builders import inspect_records
    from engine import InputError

    try:
        inspect_records.check_unique({a.attempt_id: a.content for a in attempts if a.inspect})
    except InputError as exc:
        raise SiteInputError(exc.message) from None


def _inspect_attempt(runs_dir: Path, folder: Path, rel: str) -> Attempt:
    """An Inspect attempt, held to the importer's own checks (builders/inspect_records.py: every field, its
    files, its receipts re-executed on the host) before any page shows it; refused in one line otherwise."""
    from builders import inspect_records
    from engine import InputError

    try:
        record = inspect_records.check_published(str(runs_dir), folder.name, inspect_records.published_engine(runs_dir))
    except InputError as exc:
        raise SiteInputError(exc.message) from None
    transcript = load_json(folder / "transcript.json", f"{rel}/transcript.json")
    return Attempt(attempt_id=folder.name, record=record, transcript=transcript, folder=rel)


def load_practitioners(runs_dir: Path) -> list:
    """Every imported practice-desk session (none until a consenting participant's is imported)."""
    root = runs_dir / "practitioners"
    sessions = []
    if not root.is_dir():
        return sessions
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        rel = f"runs/practitioners/{folder.name}"
        if not RUN_ID.match(folder.name):
            raise SiteInputError(f"{rel}: expected a folder name of letters, digits, '.', '_' or '-'")
        if folder.name.endswith(".partial") and not (folder / "record.json").exists():
            raise SiteInputError(
                f"{rel}: an unfinished attempt (still running, or its host died: `fundbook-launch "
                f"recover` it); every attempt is published, once it has its record"
            )
        record = load_json(folder / "record.json", f"{rel}/record.json")
        _check_content(record, f"{rel}/record.json", PRACTITIONER_SCHEMA)
        sessions.append(Session(session_id=folder.name, record=record, folder=rel))
    return sessions


ERRATUM = "errata/grammar-1.json"
ERRATUM_SCHEMA = "fundbook.grammar-erratum/1"


def load_errata(runs_dir: Path) -> dict:
    """The grammar-1 erratum ({} when absent), of its schema."""
    path = runs_dir / ERRATUM
    if not path.exists():
        return {}
    doc = load_json(path, f"runs/{ERRATUM}")
    if not isinstance(doc, dict) or doc.get("schema") != ERRATUM_SCHEMA or not isinstance(doc.get("attempts"), list):
        raise SiteInputError(f"runs/{ERRATUM}: expected {ERRATUM_SCHEMA} with a list of attempts")
    return doc


def load_publication(runs_dir: Path) -> Publication:
    index, runs = load_runs(runs_dir)
    return Publication(
        runs_dir=runs_dir,
        index=index,
        runs=runs,
        attempts=load_attempts(runs_dir),
        practitioners=load_practitioners(runs_dir),
        errata=load_errata(runs_dir),
    )
