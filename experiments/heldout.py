"""The held-out split: seeds drawn from a secret, committed before any arm runs.

A secret (32 random bytes, hex) determines everything: the item list -- world
k is family `families[k % len(families)]` with a seed drawn by sha256 from the
secret and k, in [2^32, 2^53): far too many to enumerate, still an exact JSON
integer -- and a salt. The commitment is

    sha256(salt_hex + canonical_json([[family, seed], ...]))

published (commitment.json) before any arm sees a held-out world. The reveal
(reveal.json) publishes the secret; anyone re-derives the salt and the list
from it and checks them against the commitment. Practice seeds are the small
public ones (1, 2, 3, ...), so the two splits never meet.
"""

import datetime
import hashlib
import os
import re
import secrets as _secrets

from engine import FAMILIES, canonical_json

from . import jsondoc
from .errors import ExperimentError

SEED_LOW = 2**32
SEED_HIGH = 2**53 - 1  # inclusive: the largest integer a JSON reader keeps exactly
MAX_COUNT = 1_000_000  # worlds in one split: a commitment naming more is refused, not drawn
COMMITMENT_SCHEMA = "fundbook.heldout-commitment/1"
REVEAL_SCHEMA = "fundbook.heldout-reveal/1"
SCHEME = "sha256(salt_hex + canonical_json([[family, seed], ...])); salt and seeds derived from the secret"
HEX64 = re.compile(r"[0-9a-f]{64}")  # always fullmatch: "$" would let a trailing newline in


def new_secret() -> str:
    return _secrets.token_hex(32)


def _check_secret(secret):
    if not isinstance(secret, str) or not HEX64.fullmatch(secret):
        raise ExperimentError("held-out secret: expected 64 lowercase hex characters (32 random bytes)")
    return bytes.fromhex(secret)


def salt(secret) -> str:
    return hashlib.sha256(b"fundbook/heldout/salt\0" + _check_secret(secret)).hexdigest()


def draw(secret, families, count) -> list:
    """[[family, seed], ...]: `count` distinct worlds, families in turn."""
    key = _check_secret(secret)
    families = list(families)
    span = SEED_HIGH - SEED_LOW + 1
    items, used, i = [], set(), 0
    while len(items) < count:
        digest = hashlib.sha256(b"fundbook/heldout/seed\0" + key + i.to_bytes(8, "big")).digest()
        i += 1
        pair = (families[len(items) % len(families)], SEED_LOW + int.from_bytes(digest[:8], "big") % span)
        if pair not in used:
            used.add(pair)
            items.append(list(pair))
    return items


def commitment_sha256(secret, items) -> str:
    return hashlib.sha256(salt(secret).encode() + canonical_json(items)).hexdigest()


def _check_families(families):
    families = list(families) if isinstance(families, (list, tuple)) else []
    if not families or any(f not in FAMILIES for f in families) or len(set(families)) != len(families):
        raise ExperimentError(f"held-out families: expected distinct names from {', '.join(FAMILIES)}")
    return families


def commit(secret, families, count, date=None) -> dict:
    families = _check_families(families)
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_COUNT:
        raise ExperimentError(f"held-out count: expected a positive number of worlds, at most {MAX_COUNT}")
    items = draw(secret, families, count)
    return {
        "schema": COMMITMENT_SCHEMA,
        "families": families,
        "count": count,
        "seed_range": [SEED_LOW, SEED_HIGH],
        "scheme": SCHEME,
        "sha256": commitment_sha256(secret, items),
        "created": date or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
    }


COMMITMENT_KEYS = {"schema", "families", "count", "seed_range", "scheme", "sha256", "created"}


def check_commitment_doc(doc, where) -> dict:
    """A published commitment, every field of it: the ones its sha256 does not cover (seed_range,
    scheme) must be exactly what this code draws and hashes with, so an edit to them is refused."""
    if not isinstance(doc, dict) or doc.get("schema") != COMMITMENT_SCHEMA:
        raise ExperimentError(f"{where}: schema: expected {COMMITMENT_SCHEMA!r}")
    extra = sorted(set(doc) - COMMITMENT_KEYS)
    if extra:
        raise ExperimentError(f"{where}: {extra[0]}: not a field of a commitment")
    _check_families(doc.get("families") or [])
    if not isinstance(doc.get("count"), int) or isinstance(doc["count"], bool) or not 1 <= doc["count"] <= MAX_COUNT:
        raise ExperimentError(f"{where}: count: expected an integer in 1..{MAX_COUNT}")
    if not isinstance(doc.get("sha256"), str) or not HEX64.fullmatch(doc["sha256"]):
        raise ExperimentError(f"{where}: sha256: expected 64 hex characters")
    if doc.get("seed_range") != [SEED_LOW, SEED_HIGH]:
        raise ExperimentError(
            f"{where}: seed_range: expected [{SEED_LOW}, {SEED_HIGH}] (the range this code draws "
            f"held-out seeds from), got {str(doc.get('seed_range'))[:60]}"
        )
    if doc.get("scheme") != SCHEME:
        raise ExperimentError(f"{where}: scheme: expected {SCHEME!r} (how this code hashes the list)")
    created = doc.get("created")
    try:
        if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", created):
            raise ValueError(created)
        datetime.date.fromisoformat(created)
    except (TypeError, ValueError):
        raise ExperimentError(f"{where}: created: expected a date YYYY-MM-DD") from None
    return doc


def reveal(secret, commitment) -> dict:
    """The reveal document, after checking the secret opens the commitment."""
    items = open_commitment(secret, commitment, "the commitment")
    return {
        "schema": REVEAL_SCHEMA,
        "commitment_sha256": commitment["sha256"],
        "secret": secret,
        "salt": salt(secret),
        "items": items,
    }


def open_commitment(secret, commitment, where) -> list:
    """The committed item list, or ExperimentError when the secret does not open it."""
    items = draw(secret, commitment["families"], commitment["count"])
    got = commitment_sha256(secret, items)
    if got != commitment["sha256"]:
        raise ExperimentError(
            f"{where}: the secret does not open the commitment (sha256 expected "
            f"{commitment['sha256']}, the secret gives {got})"
        )
    return items


def check_reveal(doc, commitment, where) -> list:
    """A published reveal against its commitment: the items it opens."""
    if not isinstance(doc, dict) or doc.get("schema") != REVEAL_SCHEMA:
        raise ExperimentError(f"{where}: schema: expected {REVEAL_SCHEMA!r}")
    if doc.get("commitment_sha256") != commitment["sha256"]:
        raise ExperimentError(
            f"{where}: commitment_sha256 expected {commitment['sha256']}, got {doc.get('commitment_sha256')}"
        )
    items = open_commitment(doc.get("secret"), commitment, where)
    if doc.get("salt") != salt(doc["secret"]) or doc.get("items") != items:
        raise ExperimentError(f"{where}: salt or items differ from what the secret derives")
    return items


def read_secret(path) -> str:
    """A secret file (or a pipe): the 64 hex characters alone, or a reveal.json holding them."""
    from .files import read_file

    data = read_file(path, "the held-out secret", 1 << 20, pipe=True)
    text = data.decode("utf-8", "replace").strip()
    if text.startswith("{"):
        doc = jsondoc.loads(data, path, "a reveal.json with a secret, or 64 hex characters")
        text = doc.get("secret") if isinstance(doc, dict) else None
    if not isinstance(text, str) or not HEX64.fullmatch(text):
        raise ExperimentError(f"{path}: expected the held-out secret as 64 lowercase hex characters")
    return text


def write_secret(path, secret):
    """A new secret file, readable by its owner only; never over an existing file."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secret + "\n")
    except OSError as exc:
        raise ExperimentError(f"{path}: cannot write the held-out secret ({exc.strerror or exc})")
