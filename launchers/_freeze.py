"""The freeze: what a paid study will run, fixed before its first paid call.

`freeze.json` (fundbook.freeze/1) holds the code (commit and the git trees of
engine/ and launchers/), the sha256 of the prompt, of the output schema and of
the worker's files, the published engine bundle, the harness config and its
hash, the model ids, the provider, the prices, the families, split and seeds,
the caps (per claim and project-wide) and the intervention policy. It is
written once and never edited.

A paid `execute` builds the same content from what it is about to run and
compares it with the freeze, field by field; a difference is allowed only when
`deviations.json` beside the freeze holds a dated entry for that field
`{date, field, original, effective, reason}` whose effective value is what
runs. The deviations an attempt relied on are copied into its record.
"""

import datetime
import json
import os
from typing import NamedTuple

from engine import canonical_json, content_sha256, pretty_json
from engine import NotCanonical

from ._errors import FreezeRefused, InputError
from ._jsonfile import read_json
from ._provenance import code_revision, engine_identity, packages
from ._staging import worker_identity

FREEZE_SCHEMA = "fundbook.freeze/1"
DEVIATIONS_SCHEMA = "fundbook.deviations/1"
DEVIATIONS_NAME = "deviations.json"
MEMBERSHIP = ("models", "families", "seeds")  # what runs must be one of the frozen values
AT_MOST = ("caps.claim_micro_usd", "caps.claim_tokens", "caps.claim_sandbox_micro_usd")  # a claim may be smaller
NOT_COMPARED = (
    "config_hash",
    "intervention_policy",
    "caps.project_micro_usd",
    "caps.project_sandbox_micro_usd",
    "code.commit",
)  # derived, or not a property of one attempt; code.trees are compared instead
# pilot.*: the pilot's terms gate confirmatory attempts (`_pilot.require`); they are not a property of one attempt
# tiers.*: the tier plan admits or refuses a confirmatory seed (`_tiers.admit`), from the records' spend
# intervention.*: enforced across attempts (`_attempt`'s check of a continuation), not a property of one attempt


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def identity() -> dict:
    """What the code is, whatever the settings: the part of the freeze an attempt cannot choose."""
    code = code_revision()
    eng = engine_identity()
    pk = packages()
    return {
        "code": {"commit": code["commit"], "trees": code["trees"]},
        **worker_identity(),
        "engine": {"bundle_sha256": eng["bundle_sha256"], "manifest_sha256": eng["manifest_sha256"]},
        "packages": {"tinker": pk["tinker"], "modal": pk["modal"]},
    }


class Worlds(NamedTuple):
    """The worlds a freeze covers (or an attempt plays): families, split and seeds."""

    families: list
    split: str
    seeds: list


def content(*, config, models, provider, prices, worlds: Worlds, caps, intervention_policy, freeze_only=None) -> dict:
    """The frozen (or, for an attempt, the current) fields. `prices`: {"models": {id: row}, "sandbox": {...},
    "table_sha256"}. `freeze_only` (the freeze, not an attempt): `pilot`, whether a passing pilot gates
    confirmatory attempts, its criteria and the cost estimate it is held to (`_pilot.terms`); `intervention`;
    `tiers`."""
    freeze_only = freeze_only or {}
    families, split, seeds = worlds
    pilot, intervention, tiers = (freeze_only.get(k) for k in ("pilot", "intervention", "tiers"))
    body = {
        **identity(),
        "config": config,
        "config_hash": content_sha256(config),
        "models": sorted(models),
        "provider": provider,
        "prices": prices,
        "families": sorted(families),
        "split": split,
        "seeds": sorted(seeds),
        "caps": caps,
        "intervention_policy": intervention_policy,
    }
    if pilot is not None:
        body["pilot"] = pilot
    if intervention is not None:  # the policy's enforced part: {"max_resumes": N} continuations of one attempt
        body["intervention"] = intervention
    if tiers is not None:  # the freeze only: the tier plan (cells, seeds, budget, order of sacrifice, sd table)
        body["tiers"] = tiers
    return body


def write_freeze(path, body) -> dict:
    """Write a new freeze (never over an existing one); refuses a dirty tree or an engine unlike the published one."""
    if os.path.exists(path):
        raise FreezeRefused(
            f"{path}: a freeze exists and is never edited (record a change with `fundbook-launch deviate`)"
        )
    code = code_revision()
    if code["dirty"] is not False:
        raise FreezeRefused(
            "the working tree has uncommitted changes outside runs/ (or is not a git checkout): "
            "freeze committed code only"
        )
    eng = engine_identity()
    if not eng["sources_match"]:
        raise FreezeRefused(f"the engine is not the published one ({eng['mismatch']}): `make build-runs` and commit")
    doc = {"schema": FREEZE_SCHEMA, "frozen_at": now_iso(), "content": body, "content_sha256": content_sha256(body)}
    _write(path, doc)
    return doc


def _write(path, doc):
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
        tmp = path + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(pretty_json(doc))
        os.replace(tmp, path)
    except OSError as exc:
        raise InputError(f"{path}: cannot write ({exc.strerror})")


def _read_json(path, what):
    return read_json(path, what)


def deviations_path(freeze_path):
    return os.path.join(os.path.dirname(os.path.abspath(freeze_path)), DEVIATIONS_NAME)


def load(path):
    """(freeze document, [deviation entries]); both checked (schema, content hash, the deviations' freeze)."""
    doc = _read_json(path, "freeze")
    if not isinstance(doc, dict) or doc.get("schema") != FREEZE_SCHEMA or not isinstance(doc.get("content"), dict):
        raise FreezeRefused(f"{path}: schema: expected a {FREEZE_SCHEMA} freeze")
    if content_sha256(doc["content"]) != doc.get("content_sha256"):
        raise FreezeRefused(f"{path}: content does not hash to content_sha256 (the freeze was edited)")
    dev_path = deviations_path(path)
    entries = []
    if os.path.exists(dev_path):
        dev = _read_json(dev_path, "deviations")
        if (
            not isinstance(dev, dict)
            or dev.get("schema") != DEVIATIONS_SCHEMA
            or not isinstance(dev.get("entries"), list)
        ):
            raise FreezeRefused(f"{dev_path}: schema: expected {DEVIATIONS_SCHEMA}")
        if dev.get("freeze_sha256") != doc["content_sha256"]:
            raise FreezeRefused(f"{dev_path}: freeze_sha256 names another freeze than {path}")
        entries = dev["entries"]
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict) or not isinstance(entry.get("field"), str):
                raise FreezeRefused(
                    f"{dev_path}: entries[{i}]: expected a deviation {{date, field, original, effective, reason}}"
                )
    return doc, entries


def _walk(node, parts):
    """(found, value) of the dotted `parts` under `node`; a key may hold dots itself (a model id such as
    gpt-5.4-mini under prices.models): the longest key that matches is tried first."""
    if not parts:
        return True, node
    if not isinstance(node, dict):
        return False, None
    for k in range(len(parts), 0, -1):
        key = ".".join(parts[:k])
        if key in node:
            found, value = _walk(node[key], parts[k:])
            if found:
                return True, value
    return False, None


def lookup(body, field):
    found, value = _walk(body, field.split("."))
    if not found:
        raise InputError(f"--field {field}: the freeze has no such field")
    return value


def deviate(freeze_path, field, effective, reason, now=None) -> dict:
    """Append a dated deviation {date, field, original, effective, reason} beside the freeze."""
    doc, entries = load(freeze_path)
    if field in NOT_COMPARED[:1] or field == "content_sha256":
        raise InputError(f"--field {field}: derived from other fields; deviate those instead")
    original = lookup(doc["content"], field)
    if isinstance(original, dict) and not field.startswith("prices."):  # a price row changes as a whole
        raise InputError(f"--field {field}: name a single value (e.g. {field}.{sorted(original)[0]})")
    if original is not None and _kind(effective) != _kind(original):
        raise InputError(f"--effective {_show(effective)}: expected {_kind(original)}, as the frozen value of {field}")
    if field.startswith("caps.") and effective < 0:
        raise InputError(f"--effective {effective}: expected a non-negative integer for {field}")
    if effective == original:
        raise InputError(f"--effective: equals the frozen value of {field}: nothing deviates")
    if not reason.strip():
        raise InputError("--reason: say why (a deviation without a reason is not recorded)")
    entry = {
        "date": now or now_iso(),
        "field": field,
        "original": original,
        "effective": effective,
        "reason": reason.strip(),
    }
    try:
        canonical_json(entry)
    except NotCanonical as exc:  # a lone surrogate, a float, an integer past 2^53-1
        raise InputError(f"--effective/--reason: cannot be recorded ({str(exc).removeprefix('$.')})")
    entries = entries + [entry]
    _write(
        deviations_path(freeze_path),
        {"schema": DEVIATIONS_SCHEMA, "freeze_sha256": doc["content_sha256"], "entries": entries},
    )
    return entry


def _leaves(body, prefix=""):
    out = {}
    for key, value in body.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value and path not in ("prices.sandbox",):
            out.update(_leaves(value, path + "."))
        else:
            out[path] = value
    return out


def effective(doc, entries, field):
    """The value in force for `field`: the latest deviation's, else the frozen one."""
    value = lookup(doc["content"], field)
    for entry in entries:
        if entry.get("field") == field:
            value = entry.get("effective")
    return value


def project_caps(doc, entries, where) -> dict:
    """The project caps in force (frozen, or as deviated), each a non-negative integer."""
    caps = {}
    for name in ("project_micro_usd", "project_sandbox_micro_usd"):
        value = effective(doc, entries, "caps." + name)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise FreezeRefused(
                f"{where}: caps.{name}: expected a non-negative integer (frozen or deviated), got {_show(value)}"
            )
        caps[name] = value
    return caps


def check(doc, entries, current, where) -> list:
    """Compare what is about to run (`current`, built by `content`) with the freeze; returns the deviations
    relied on, or raises FreezeRefused naming the first field that differs without one."""
    frozen = _leaves(doc["content"])
    now = _leaves(current)
    used = []

    def allowed(field, ok):
        for entry in reversed(entries):
            if entry.get("field") == field and ok(entry.get("effective")):
                if entry not in used:
                    used.append(entry)
                return True
        return False

    for field in sorted(set(frozen) | set(now)):
        if field in NOT_COMPARED or field.startswith(("prices.models.", "pilot.", "intervention.", "tiers.")):
            continue
        want, have = frozen.get(field), now.get(field)
        if field in MEMBERSHIP:
            for item in have or []:
                if item not in (want or []) and not allowed(field, lambda eff, item=item: item in (eff or [])):
                    raise FreezeRefused(
                        f"{where}: {field}: {item!r} is not among the frozen {want!r} (no deviation allows it)"
                    )
            continue
        if field in AT_MOST:
            if (
                have is not None
                and want is not None
                and have > want
                and not allowed(field, lambda eff: isinstance(eff, int) and have <= eff)
            ):
                raise FreezeRefused(
                    f"{where}: {field}: this claim's {have} is above the frozen {want} (no deviation allows it)"
                )
            continue
        if want != have and not allowed(field, lambda eff: eff == have):
            raise FreezeRefused(
                f"{where}: {field}: frozen {_show(want)}, this attempt has {_show(have)} (record a "
                f"deviation with `fundbook-launch deviate` or run what was frozen)"
            )
    for model, row in (current.get("prices", {}).get("models") or {}).items():
        field = f"prices.models.{model}"
        want = (doc["content"].get("prices", {}).get("models") or {}).get(model)
        if want != row and not allowed(field, lambda eff: eff == row):
            raise FreezeRefused(f"{where}: {field}: frozen {_show(want)}, this attempt prices {_show(row)}")
    return used


def _kind(value):
    """The JSON type of a value, as a deviation must keep it."""
    for kind, types in (
        ("a boolean", bool),
        ("an integer", int),
        ("a number", float),
        ("a string", str),
        ("a list", list),
        ("an object", dict),
    ):
        if isinstance(value, types):
            return kind
    return "null"


def _show(value):
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."
