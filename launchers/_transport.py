"""`fundbook-launch sandbox ...`: the worker's transport, usable without any inference.

Each command acts on a Modal sandbox named by a transport record
(fundbook.sandbox/1, a JSON file): `build` builds the worker image; `launch`
creates an app of its own and a network-blocked sandbox holding the staged
worker and the first packet of a family/seed, and writes the record (app and
sandbox ids, the staged manifest, the time limit and its compute cost
against a cap of its own, separate from any inference cap); `status` polls it;
`exec-worker -- CMD` runs a command in it and prints its output; `checkpoint`
snapshots its filesystem (the worker's retained work included);
`resume --new-record` starts a new sandbox from the last snapshot and writes a
new record linked to the old one, which is never rewritten except to append
checkpoints and its stop; `stop` terminates the sandbox and stops the app the
launcher created. No claim, no model, no key reaches any of them.
"""

import datetime
import json
import os
import secrets

import engine
from engine import pretty_json

from ._errors import BudgetHalt, InputError, SandboxError
from ._prices import format_usd, sandbox_rate
from ._sandbox_modal import GRACE_S, WORKDIR, modal_config
from ._staging import manifest, stage

SCHEMA = "fundbook.sandbox/1"


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _modal(modal):
    if modal is not None:
        return modal
    try:
        import modal as sdk
    except ImportError as exc:
        raise InputError(f"the modal SDK is not installed ({exc}): `make venv`")
    return sdk


def read(path) -> dict:
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the transport record ({exc.strerror})")
    except ValueError as exc:
        raise InputError(f"{path}: not valid JSON ({exc})")
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("sandbox_id"), str):
        raise InputError(f"{path}: schema: expected a {SCHEMA} transport record")
    return doc


def write(path, doc, new=False):
    if new and os.path.exists(path):
        raise InputError(f"{path}: already exists (a transport record is never overwritten)")
    tmp = path + ".tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(pretty_json(doc))
        os.replace(tmp, path)
    except OSError as exc:
        raise InputError(f"{path}: cannot write ({exc.strerror})")


def _check_cost(prices, timeout_s, cap):
    rate = sandbox_rate(prices, "modal")
    cost = rate * (timeout_s + GRACE_S)
    if cost > cap:
        raise BudgetHalt(f"the sandbox's {timeout_s} s (+{GRACE_S} s grace) at {rate} micro-USD/s costs up to "
                         f"{format_usd(cost)}, above --cap-micro-usd {format_usd(cap)}", limit="sandbox")
    return rate, cost


def build_image(modal=None, python_version="3.11"):
    modal = _modal(modal)
    app = modal.App.lookup(f"fundbook-build-{secrets.token_hex(6)}", create_if_missing=True)
    try:
        image = modal.Image.debian_slim(python_version=python_version).build(app)
    finally:
        app.stop()
    return {"image_id": getattr(image, "object_id", None), "python_version": python_version}


def _create(modal, image, timeout_s):
    name = f"fundbook-transport-{secrets.token_hex(6)}"
    app = modal.App.lookup(name, create_if_missing=True)
    cfg = modal_config()
    try:
        sandbox = modal.Sandbox.create(app=app, image=image, block_network=True, timeout=int(timeout_s) + GRACE_S,
                                       workdir=WORKDIR, cpu=cfg["cpu_milli"] / 1000, memory=cfg["memory_mib"])
    except Exception as exc:
        app.stop()
        raise SandboxError(f"modal: cannot create the sandbox ({type(exc).__name__}: {exc})")
    return name, app, sandbox


def launch(record_path, family, seed, horizon, timeout_s, cap, prices, modal=None) -> dict:
    if os.path.exists(record_path):
        raise InputError(f"{record_path}: already exists (a transport record is never overwritten)")
    rate, cost = _check_cost(prices, timeout_s, cap)
    try:
        packet = engine.Run(engine.with_horizon(engine.generate(family, seed), horizon)).packet()
    except ValueError as exc:
        raise InputError(f"--family/--seed: {exc}")
    except engine.DeskError as exc:
        raise InputError(f"--horizon: {exc.message}")
    files = stage(packet)
    modal = _modal(modal)
    name, app, sandbox = _create(modal, modal.Image.debian_slim(python_version=modal_config()["python_version"]),
                                 timeout_s)
    try:
        for rel, data in sorted(files.items()):
            sandbox.filesystem.write_bytes(data, f"{WORKDIR}/{rel}")
    except Exception as exc:
        sandbox.terminate()
        app.stop()
        raise SandboxError(f"modal: cannot stage the worker ({type(exc).__name__}: {exc})")
    doc = {"schema": SCHEMA, "created": _now(), "family": family, "seed": seed, "horizon": horizon,
           "app_name": name, "app_id": getattr(app, "app_id", None), "app_created": True,
           "sandbox_id": sandbox.object_id, "timeout_s": timeout_s, "micro_usd_per_second": rate,
           "max_micro_usd": cost, "cap_micro_usd": cap, "staged": manifest(files),
           "checkpoints": [], "resumed_from": None, "stopped": None}
    write(record_path, doc, new=True)
    return doc


def _sandbox(doc, modal):
    try:
        return _modal(modal).Sandbox.from_id(doc["sandbox_id"])
    except Exception as exc:
        raise SandboxError(f"modal: sandbox {doc['sandbox_id']} cannot be reached ({type(exc).__name__}: {exc})")


def status(record_path, modal=None) -> dict:
    doc = read(record_path)
    code = _sandbox(doc, modal).poll()
    return {"sandbox_id": doc["sandbox_id"], "running": code is None, "exit_code": code,
            "stopped": doc.get("stopped"), "checkpoints": len(doc["checkpoints"])}


def exec_worker(record_path, argv, timeout_s=600, modal=None):
    if not argv:
        raise InputError("exec-worker: name a command after --")
    doc = read(record_path)
    sb = _sandbox(doc, modal)
    try:
        process = sb.exec(*argv, workdir=WORKDIR, timeout=timeout_s, text=True)
        out = process.stdout.read()
        err = process.stderr.read()
        code = process.wait()
    except Exception as exc:
        raise SandboxError(f"modal: exec in {doc['sandbox_id']} failed ({type(exc).__name__}: {exc})")
    return out, err, code


def checkpoint(record_path, modal=None) -> dict:
    doc = read(record_path)
    try:
        image = _sandbox(doc, modal).snapshot_filesystem()
    except SandboxError:
        raise
    except Exception as exc:
        raise SandboxError(f"modal: cannot snapshot {doc['sandbox_id']} ({type(exc).__name__}: {exc})")
    entry = {"image_id": image.object_id, "at": _now()}
    doc["checkpoints"].append(entry)
    write(record_path, doc)
    return entry


def resume(record_path, new_record, timeout_s, cap, prices, modal=None) -> dict:
    doc = read(record_path)
    if not doc["checkpoints"]:
        raise InputError(f"{record_path}: no checkpoint to resume from (`fundbook-launch sandbox checkpoint` first)")
    if os.path.exists(new_record):
        raise InputError(f"{new_record}: already exists (a transport record is never overwritten)")
    rate, cost = _check_cost(prices, timeout_s, cap)
    modal = _modal(modal)
    last = doc["checkpoints"][-1]
    try:
        image = modal.Image.from_id(last["image_id"])
    except Exception as exc:
        raise SandboxError(f"modal: checkpoint image {last['image_id']} cannot be read ({type(exc).__name__}: {exc})")
    name, app, sandbox = _create(modal, image, timeout_s)
    with open(record_path, "rb") as fh:
        old_sha = engine.sha256_hex(fh.read())
    new = {"schema": SCHEMA, "created": _now(), "family": doc["family"], "seed": doc["seed"],
           "horizon": doc["horizon"], "app_name": name, "app_id": getattr(app, "app_id", None), "app_created": True,
           "sandbox_id": sandbox.object_id, "timeout_s": timeout_s, "micro_usd_per_second": rate,
           "max_micro_usd": cost, "cap_micro_usd": cap, "staged": doc["staged"], "checkpoints": [],
           "resumed_from": {"record": os.path.basename(record_path), "record_sha256": old_sha,
                            "sandbox_id": doc["sandbox_id"], "image_id": last["image_id"]},
           "stopped": None}
    write(new_record, new, new=True)
    return new


def stop(record_path, modal=None) -> dict:
    doc = read(record_path)
    modal = _modal(modal)
    outcome = {"sandbox_terminated": False, "app_stopped": False}
    try:
        modal.Sandbox.from_id(doc["sandbox_id"]).terminate()
        outcome["sandbox_terminated"] = True
    except Exception:
        pass  # already gone
    if doc.get("app_created") and doc.get("app_id"):
        try:
            modal.App.lookup(doc["app_id"]).stop()
            outcome["app_stopped"] = True
        except Exception:
            pass
    doc["stopped"] = dict(outcome, at=_now())
    write(record_path, doc)
    return doc["stopped"]
