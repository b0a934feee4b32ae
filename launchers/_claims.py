"""Single-use authorisation claims.

`authorise` writes a claim -- id, scope (family, split, model), caps in integer
micro-USD (inference and, separately, sandbox compute) and tokens, expiry -- to
a claim file and registers its sha256 under the launcher's state directory.
`check` reads and checks a claim without spending it (an edited cap, the scope,
the expiry); `consume` checks again and creates `consumed/<id>.json` with
O_EXCL, binding the consumption to a fresh nonce and its time. Whatever happens
after that -- success, crash, timeout -- the claim stays consumed: no retry and
no renewed allowance on the same claim. (The project ledger, `_project.py`,
also refuses a claim it has seen, so deleting the marker does not renew it.)
"""

import datetime
import json
import os
import secrets

from engine import FAMILIES, canonical_json, content_sha256, pretty_json
from engine._canon import NotCanonical

from ._errors import ClaimRefused, InputError

CLAIM_SCHEMA = "fundbook.claim/1"
SPLITS = ("public-practice", "heldout")  # any seed of FUND_01..FUND_04; heldout: a committed held-out world
                                        # (experiments/heldout.py), run by a model arm of a held-out sweep
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


def authorise(out_path, family, split, model, cap_micro_usd, cap_tokens, hours, state=None, now=None,
              cap_sandbox_micro_usd=0) -> dict:
    """Write a new claim file and register it; returns the claim document."""
    if family not in FAMILIES:
        raise InputError(f"--family: expected one of {list(FAMILIES)}, got {family!r}")
    if split not in SPLITS:
        raise InputError(f"--split: expected one of {list(SPLITS)}, got {split!r}")
    if cap_micro_usd < 0 or cap_sandbox_micro_usd < 0 or cap_tokens <= 0 or hours <= 0:
        raise InputError("--cap-micro-usd >= 0, --cap-sandbox-micro-usd >= 0, --cap-tokens > 0 and --hours > 0 "
                         "are required")
    if os.path.exists(out_path):
        raise InputError(f"{out_path}: already exists (a claim file is never overwritten)")
    now = now or datetime.datetime.now(datetime.timezone.utc)
    try:
        expires = now + datetime.timedelta(hours=hours)
    except OverflowError:
        raise InputError(f"--hours {hours}: expected a number of hours before the year 9999")
    claim = {"id": "clm-" + secrets.token_hex(8), "scope": {"family": family, "split": split, "model": model},
             "cap_micro_usd": cap_micro_usd, "cap_tokens": cap_tokens, "cap_sandbox_micro_usd": cap_sandbox_micro_usd,
             "issued": _iso(now), "expires": _iso(expires)}
    try:
        doc = {"schema": CLAIM_SCHEMA, "claim": claim, "sha256": content_sha256(claim)}
    except NotCanonical as exc:  # a cap past 2^53-1, a model id that is not Unicode text
        raise InputError(f"--model/--cap-*: cannot be hashed ({str(exc).removeprefix('$.').replace('scope.', '--')})")
    tmp = out_path + ".tmp"
    try:  # the claim file first: a registered claim is never left without its file
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(pretty_json(doc))
    except OSError as exc:
        raise InputError(f"--out {out_path}: cannot write the claim file ({exc.strerror})")
    try:
        root = state_dir(state)
        os.makedirs(os.path.join(root, "issued"), mode=0o700, exist_ok=True)
        _write_new(os.path.join(root, "issued", claim["id"] + ".json"), canonical_json(doc))
    except OSError as exc:
        os.unlink(tmp)
        raise InputError(f"--state {state_dir(state)}: cannot register the claim ({exc.strerror})")
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


def check(path, family, split, model, state=None, now=None) -> dict:
    """Check a claim without consuming it (the refusals cost nothing). Returns the claim document."""
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
    if os.path.exists(_marker(root, claim["id"])):
        raise ClaimRefused(f"{path}: claim {claim['id']} is already consumed (a consumed claim is not permission to retry)")
    return doc


def _marker(root, claim_id):
    return os.path.join(root, "consumed", claim_id + ".json")


def consume(path, family, split, model, state=None, now=None) -> dict:
    """Check a claim and consume it, once. Returns the claim document with its `consumption` (nonce, time)."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    doc = check(path, family, split, model, state=state, now=now)
    claim = doc["claim"]
    root = state_dir(state)
    os.makedirs(os.path.join(root, "consumed"), mode=0o700, exist_ok=True)
    consumption = {"nonce": secrets.token_hex(16), "consumed_at": _iso(now)}
    try:
        _write_new(_marker(root, claim["id"]), canonical_json({"id": claim["id"], "sha256": doc["sha256"], **consumption}))
    except FileExistsError:
        raise ClaimRefused(f"{path}: claim {claim['id']} is already consumed (a consumed claim is not permission to retry)")
    return dict(doc, consumption=consumption)
