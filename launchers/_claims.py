"""Single-use authorisation claims.

`authorise` writes a claim -- id, scope (family, split, model), caps in integer
micro-USD (inference and, separately, sandbox compute) and tokens, expiry, and
the plan its caps were checked against -- to a claim file, registers its
sha256 under the launcher's state directory and in the project ledger
(`_project.py`), and refuses caps below the worker's worst case for that plan
(`budget`'s own figure) unless the operator accepts a partial budget, which the
claim then says. `check` reads and checks a claim without spending it (an
edited cap, the scope, the expiry); `consume` checks again and puts
`consumed/<id>.json` in place atomically (written beside it, then linked: it
is whole or absent), binding the consumption to a nonce and a time chosen
before it (the attempt journals them first, so a host that dies at any
instant leaves a folder `recover` can account for). Whatever happens after
that -- success, crash, timeout -- the claim stays consumed: no retry and no
renewed allowance on the same claim. (The project ledger also refuses a claim
it has seen, and a claim it never registered, so deleting the marker or
pointing at a new project folder does not renew it.)
"""

import datetime
from dataclasses import dataclass
import os
import secrets

from engine import FAMILIES, canonical_json, content_sha256, pretty_json
from engine import NotCanonical

from ._crash import boundary
from ._errors import ClaimRefused, InputError
from ._jsonfile import fsync_dir, read_json

CLAIM_SCHEMA = "fundbook.claim/1"
SPLITS = ("public-practice", "heldout")  # any seed of FUND_01..FUND_04; heldout: a committed held-out world
# (experiments/heldout.py), run by a model arm of a held-out sweep
DEFAULT_STATE = os.path.join(os.path.expanduser("~"), ".fundbook-launch")
MAX_HOURS = 24 * 366  # a claim lives at most a year


def state_dir(path=None) -> str:
    """Where issued and consumed claims are registered (FUNDBOOK_LAUNCH_STATE overrides the default)."""
    return path or os.environ.get("FUNDBOOK_LAUNCH_STATE") or DEFAULT_STATE


def iso(moment) -> str:
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


def _shortfalls(plan, cap_micro_usd, cap_tokens, cap_sandbox_micro_usd):
    out = []
    for option, have, want, unit in (
        ("--cap-micro-usd", cap_micro_usd, plan["worst_case_micro_usd"], "micro-USD"),
        ("--cap-tokens", cap_tokens, plan["worst_case_tokens"], "tokens"),
        ("--cap-sandbox-micro-usd", cap_sandbox_micro_usd, plan["sandbox_micro_usd"], "micro-USD of sandbox compute"),
    ):
        if have < want:
            out.append(f"{option} {have} is below the worker's worst case of {want} {unit}")
    return out


def plan_text(plan) -> str:
    return (
        f"{plan['checkpoints']} checkpoints, --tokens-in {plan['tokens_in']}, --max-tokens {plan['max_tokens']}, "
        f"--max-calls {plan['max_calls']}, --worker-seconds {plan['worker_seconds']} in the {plan['sandbox']} sandbox"
    )


@dataclass(frozen=True)
class Grant:
    """How a claim is granted beyond its scope, caps and lifetime: its sandbox cap, the plan its caps are checked
    against (None: the worker's defaults priced from launchers/prices.json, at zero for a `local` model run on
    this host), whether a shortfall is accepted (recorded in the claim), where the claim registry (`state`) and
    the project ledger (`project`) are, and the time it is issued (`now`, for tests)."""

    cap_sandbox_micro_usd: int = 0
    plan: dict = None
    accept_partial_budget: bool = False
    local: bool = False
    state: str = None
    project: str = None
    now: object = None


def authorise(out_path, family, split, model, cap_micro_usd, cap_tokens, hours, grant: Grant = Grant()) -> dict:
    """Write a new claim file and register it (state directory and project ledger); returns the claim document.

    `plan`: what the caps are checked against (`_budget.attempt_plan`); by default the worker's defaults priced
    from launchers/prices.json. Caps below its worst case are refused unless `accept_partial_budget`."""
    from ._budget import FREE_PRICE, Planned, attempt_plan
    from ._prices import load_prices
    from ._project import ProjectLedger, project_dir

    cap_sandbox_micro_usd, plan, local, now = grant.cap_sandbox_micro_usd, grant.plan, grant.local, grant.now
    accept_partial_budget, state, project = grant.accept_partial_budget, grant.state, grant.project

    if family not in FAMILIES:
        raise InputError(f"--family: expected one of {list(FAMILIES)}, got {family!r}")
    if split not in SPLITS:
        raise InputError(f"--split: expected one of {list(SPLITS)}, got {split!r}")
    if cap_micro_usd < 0 or cap_sandbox_micro_usd < 0 or cap_tokens <= 0 or hours <= 0:
        raise InputError(
            "--cap-micro-usd >= 0, --cap-sandbox-micro-usd >= 0, --cap-tokens > 0 and --hours > 0 are required"
        )
    if hours > MAX_HOURS:
        raise InputError(f"--hours {hours}: expected at most {MAX_HOURS} (a claim lives at most a year)")
    if plan is None:  # `local`: a model run on this host (llama-cpp), planned at zero cost in the local sandbox
        plan = attempt_plan(
            load_prices(),
            model,
            Planned(sandbox="local" if model == "mock" or local else "modal"),
            price=FREE_PRICE if local else None,
        )
    short = _shortfalls(plan, cap_micro_usd, cap_tokens, cap_sandbox_micro_usd)
    if short and not accept_partial_budget:
        raise InputError(
            f"{'; '.join(short)} (budget's figure for {plan_text(plan)}): an attempt under this claim "
            f"could be planned to halt; raise the caps, or pass --accept-partial-budget (recorded in the "
            f"claim)"
        )
    if os.path.exists(out_path):
        raise InputError(f"{out_path}: already exists (a claim file is never overwritten)")
    now = now or datetime.datetime.now(datetime.timezone.utc)
    expires = now + datetime.timedelta(hours=hours)
    claim = {
        "id": "clm-" + secrets.token_hex(8),
        "scope": {"family": family, "split": split, "model": model},
        "cap_micro_usd": cap_micro_usd,
        "cap_tokens": cap_tokens,
        "cap_sandbox_micro_usd": cap_sandbox_micro_usd,
        "issued": iso(now),
        "expires": iso(expires),
        "plan": plan,
        "partial_budget": {"accepted": bool(short), "shortfalls": short},
    }
    try:
        doc = {"schema": CLAIM_SCHEMA, "claim": claim, "sha256": content_sha256(claim)}
    except NotCanonical as exc:  # a cap past 2^53-1, a model id that is not Unicode text
        raise InputError(f"--model/--cap-*: cannot be hashed ({str(exc).removeprefix('$.').replace('scope.', '--')})")
    book = ProjectLedger(project_dir(project))  # read (and its chain checked) before anything is written
    tmp = out_path + ".tmp"
    try:  # the claim file first: a registered claim is never left without its file
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(pretty_json(doc))
    except OSError as exc:
        raise InputError(f"--out {out_path}: cannot write the claim file ({exc.strerror})")
    root = state_dir(state)
    issued = os.path.join(root, "issued", claim["id"] + ".json")
    try:
        os.makedirs(os.path.join(root, "issued"), mode=0o700, exist_ok=True)
        _write_new(issued, canonical_json(doc))
    except OSError as exc:
        os.unlink(tmp)
        raise InputError(f"--state {root}: cannot register the claim ({exc.strerror})")
    try:
        book.register(doc)
    except BaseException:
        os.unlink(tmp)
        os.unlink(issued)
        raise
    os.replace(tmp, out_path)
    return doc


def _check_shape(doc, path):
    claim = doc.get("claim") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or doc.get("schema") != CLAIM_SCHEMA or not isinstance(claim, dict):
        raise ClaimRefused(f"{path}: schema: expected a {CLAIM_SCHEMA} claim file")
    for key, kind in (
        ("id", str),
        ("scope", dict),
        ("cap_micro_usd", int),
        ("cap_tokens", int),
        ("cap_sandbox_micro_usd", int),
        ("expires", str),
        ("plan", dict),
        ("partial_budget", dict),
    ):
        if not isinstance(claim.get(key), kind) or isinstance(claim.get(key), bool):
            raise ClaimRefused(
                f"{path}: claim.{key}: expected {'an integer' if kind is int else kind.__name__}"
                + (" (a claim from an older launcher: authorise again)" if key == "plan" else "")
            )


def read_claim(path) -> dict:
    doc = read_json(path, "claim")
    _check_shape(doc, path)
    if content_sha256(doc["claim"]) != doc.get("sha256"):
        raise ClaimRefused(f"{path}: claim: its content does not hash to sha256 (edited)")
    return doc


def check(path, family, split, model, state=None, now=None) -> dict:
    """Check a claim without consuming it (the refusals cost nothing). Returns the claim document."""
    doc = read_claim(path)
    claim = doc["claim"]
    root = state_dir(state)
    issued = os.path.join(root, "issued", claim["id"] + ".json")
    try:
        registered = read_json(issued, "claim")
    except InputError:
        raise ClaimRefused(
            f"{path}: claim {claim['id']} was not issued by `fundbook-launch authorise` here ({root})"
        ) from None
    if not isinstance(registered, dict) or registered.get("sha256") != doc["sha256"]:
        raise ClaimRefused(f"{path}: claim {claim['id']} differs from the one issued (edited)")
    scope = claim["scope"]
    for key, want in (("family", family), ("split", split), ("model", model)):
        if scope.get(key) != want:
            raise ClaimRefused(f"{path}: claim.scope.{key} is {scope.get(key)!r}, this attempt asks for {want!r}")
    now = now or datetime.datetime.now(datetime.timezone.utc)
    if now >= _parse_iso(claim.get("expires"), f"{path}: claim.expires"):
        raise ClaimRefused(f"{path}: claim {claim['id']} expired at {claim['expires']}")
    if os.path.lexists(marker_path(root, claim["id"])):
        raise ClaimRefused(
            f"{path}: claim {claim['id']} is already consumed (a consumed claim is not permission to retry)"
        )
    return doc


def marker_path(root, claim_id):
    return os.path.join(root, "consumed", claim_id + ".json")


def new_consumption(now=None) -> dict:
    """The nonce and time a consumption will carry: chosen (and journaled) before the claim is consumed."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    return {"nonce": secrets.token_hex(16), "consumed_at": iso(now)}


def consume(path, family, split, model, state=None, now=None, consumption=None) -> dict:
    """Check a claim and consume it, once. Returns the claim document with its `consumption` (nonce, time)."""
    doc = check(path, family, split, model, state=state, now=now)
    consumption = consumption or new_consumption(now)
    put_marker(state_dir(state), doc, consumption, path)
    return dict(doc, consumption=consumption)


def put_marker(root, doc, consumption, where):
    """Put `consumed/<id>.json` in place, whole or not at all; ClaimRefused if another is already there."""
    claim_id = doc["claim"]["id"]
    folder = os.path.join(root, "consumed")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    tmp = os.path.join(folder, f".{claim_id}.{consumption['nonce']}.tmp")
    _write_new(tmp, canonical_json({"id": claim_id, "sha256": doc["sha256"], **consumption}))
    boundary("consume:marker-written")
    try:
        os.link(tmp, marker_path(root, claim_id))  # atomic, and refuses an existing marker
    except FileExistsError:
        raise ClaimRefused(
            f"{where}: claim {claim_id} is already consumed (a consumed claim is not permission to retry)"
        ) from None
    finally:
        os.unlink(tmp)
    fsync_dir(folder)


def marker_state(root, claim_id, nonce) -> str:
    """ "ours" (the marker holds this nonce, or cannot be read), "theirs" (another consumption) or "absent"."""
    path = marker_path(root, claim_id)
    if not os.path.lexists(path):
        return "absent"
    try:
        marker = read_json(path, "consumption marker")
    except InputError:  # a marker torn by an older launcher: consumed, by this attempt as far as anyone can tell
        return "ours"
    return "ours" if isinstance(marker, dict) and marker.get("nonce") == nonce else "theirs"
