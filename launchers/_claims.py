"""Single-use authorisation claims.

`authorise` writes a claim -- id, scope (family, split, model), caps in integer
micro-USD and tokens, expiry -- to a claim file and registers its sha256 under
the launcher's state directory. `consume` is the first thing `execute` does: it
checks the file against the registry (an edited cap is refused), the scope and
the expiry, then creates `consumed/<id>.json` with O_EXCL. Whatever happens
after that -- success, crash, timeout -- the claim stays consumed: no retry and
no renewed allowance on the same claim.
"""

import datetime
import json
import os
import secrets

from engine import FAMILIES, canonical_json, content_sha256, pretty_json

from ._errors import ClaimRefused, InputError

CLAIM_SCHEMA = "fundbook.claim/1"
SPLITS = ("public-practice",)  # the only split the engine publishes: FUND_01..FUND_04, any seed
DEFAULT_STATE = os.path.join(os.path.expanduser("~"), ".fundbook-launch")


def state_dir(path=None) -> str:
    """Where issued and consumed claims are registered (FUNDBOOK_LAUNCH_STATE overrides the default)."""
    return path or os.environ.get("FUNDBOOK_LAUNCH_STATE") or DEFAULT_STATE


def _iso(moment) -> str:
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_iso(text, where):
    try:
        return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
    except (TypeError, ValueError):
        raise ClaimRefused(f"{where}: expected an ISO-8601 UTC time like 2026-11-29T12:00:00Z")


def _write_new(path, data: bytes):
    """Create `path` exclusively (fails if it exists), fully written and synced."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def authorise(out_path, family, split, model, cap_micro_usd, cap_tokens, hours, state=None, now=None) -> dict:
    """Write a new claim file and register it; returns the claim document."""
    if family not in FAMILIES:
        raise InputError(f"--family: expected one of {list(FAMILIES)}, got {family!r}")
    if split not in SPLITS:
        raise InputError(f"--split: expected one of {list(SPLITS)}, got {split!r}")
    if cap_micro_usd < 0 or cap_tokens <= 0 or hours <= 0:
        raise InputError("--cap-micro-usd >= 0, --cap-tokens > 0 and --hours > 0 are required")
    if os.path.exists(out_path):
        raise InputError(f"{out_path}: already exists (a claim file is never overwritten)")
    now = now or datetime.datetime.now(datetime.timezone.utc)
    claim = {"id": "clm-" + secrets.token_hex(8), "scope": {"family": family, "split": split, "model": model},
             "cap_micro_usd": cap_micro_usd, "cap_tokens": cap_tokens,
             "issued": _iso(now), "expires": _iso(now + datetime.timedelta(hours=hours))}
    doc = {"schema": CLAIM_SCHEMA, "claim": claim, "sha256": content_sha256(claim)}
    root = state_dir(state)
    os.makedirs(os.path.join(root, "issued"), mode=0o700, exist_ok=True)
    _write_new(os.path.join(root, "issued", claim["id"] + ".json"), canonical_json(doc))
    tmp = out_path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(pretty_json(doc))
    os.replace(tmp, out_path)
    return doc


def read_claim(path) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})")
    except ValueError as exc:
        raise InputError(f"{path}: not valid JSON ({exc})")
    if not isinstance(doc, dict) or doc.get("schema") != CLAIM_SCHEMA or not isinstance(doc.get("claim"), dict):
        raise ClaimRefused(f"{path}: schema: expected a {CLAIM_SCHEMA} claim file")
    if content_sha256(doc["claim"]) != doc.get("sha256"):
        raise ClaimRefused(f"{path}: claim: its content does not hash to sha256 (edited)")
    return doc


def consume(path, family, split, model, state=None, now=None) -> dict:
    """Check a claim and consume it, once. Returns the claim document."""
    doc = read_claim(path)
    claim = doc["claim"]
    root = state_dir(state)
    issued = os.path.join(root, "issued", str(claim.get("id")) + ".json")
    try:
        with open(issued, "rb") as fh:
            registered = json.loads(fh.read())
    except (OSError, ValueError):
        raise ClaimRefused(f"{path}: claim {claim.get('id')} was not issued by `fundbook-launch authorise` here")
    if registered.get("sha256") != doc["sha256"]:
        raise ClaimRefused(f"{path}: claim {claim['id']} differs from the one issued (edited)")
    scope = claim["scope"]
    for key, want in (("family", family), ("split", split), ("model", model)):
        if scope.get(key) != want:
            raise ClaimRefused(f"{path}: claim.scope.{key} is {scope.get(key)!r}, this attempt asks for {want!r}")
    now = now or datetime.datetime.now(datetime.timezone.utc)
    if now >= _parse_iso(claim.get("expires"), f"{path}: claim.expires"):
        raise ClaimRefused(f"{path}: claim {claim['id']} expired at {claim['expires']}")
    os.makedirs(os.path.join(root, "consumed"), mode=0o700, exist_ok=True)
    marker = os.path.join(root, "consumed", claim["id"] + ".json")
    try:
        _write_new(marker, canonical_json({"id": claim["id"], "sha256": doc["sha256"], "consumed": _iso(now)}))
    except FileExistsError:
        raise ClaimRefused(f"{path}: claim {claim['id']} is already consumed (a consumed claim is not permission to retry)")
    return doc
