"""`fundbook-launch sandbox ...`: the worker's transport, usable without any inference.

Each command acts on a Modal sandbox named by a transport record
(fundbook.sandbox/1, a JSON file written 0600, like a desk history: it names
the app and the sandbox anyone holding it can drive): `build` builds the
worker image; `launch` creates an app of its own and a network-blocked
sandbox holding the staged worker, the first packet of a family/seed and,
with `--fixture NAME`, a deterministic proof fixture (`_proofs.py`), and
writes the record (app and sandbox ids, the staged manifest, the fixture and
the sha256 of what it must print, the time limit and its compute cost against
a cap of its own, separate from any inference cap); `status` polls it;
`exec-worker -- CMD` runs a command in it and prints its output, and
`exec-worker --fixture NAME` runs the fixture and compares its output with
the host's; `checkpoint` snapshots its filesystem (the worker's retained work
included); `resume --new-record` starts a new sandbox from the last snapshot
and writes a new record linked to the old one, which is never rewritten
except to append checkpoints and stops; `stop` terminates the sandbox and
stops the app the launcher created, and says `stopped` only when it reached
them (otherwise the attempt is appended to `stop_attempts` and the command
exits 1). No claim, no model, no key reaches any of them. The credentials
are checked (present, of the right shape) before the SDK is called, and
every SDK failure -- Modal unreachable, an authentication error -- is one
line, exit 1.
"""

import datetime
import os
import secrets

import engine
from engine import pretty_json

from . import _desk, _proofs
from ._errors import BudgetHalt, InputError, SandboxError
from ._jsonfile import read_bytes, read_json
from ._prices import format_usd, sandbox_rate
from ._sandbox_modal import GRACE_S, WORKDIR, modal_config, sdk_error
from ._staging import manifest, stage

SCHEMA = "fundbook.sandbox/1"


def _now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _modal(modal):
    if modal is not None:
        return modal
    from ._credentials import check_modal

    check_modal()  # one line before the SDK is touched, not an AuthError traceback after
    try:
        import modal as sdk
    except ImportError as exc:
        raise InputError(f"the modal SDK is not installed ({exc}): `make venv`")
    return sdk


def _not_found(exc):
    return type(exc).__name__ == "NotFoundError"


def read(path) -> dict:
    doc = read_json(path, "transport record")
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("sandbox_id"), str):
        raise InputError(f"{path}: schema: expected a {SCHEMA} transport record")
    for key, kind in (("app_name", str), ("checkpoints", list)):
        if not isinstance(doc.get(key), kind):
            raise InputError(f"{path}: {key}: expected {'text' if kind is str else 'a list'}")
    if not all(isinstance(c, dict) and isinstance(c.get("image_id"), str) for c in doc["checkpoints"]):
        raise InputError(f"{path}: checkpoints: expected [{{image_id, at}}]")
    return doc


def write(path, doc, new=False):
    """Write the record privately (0600): temp file beside it, then rename."""
    if new and os.path.lexists(path):
        raise InputError(f"{path}: already exists (a transport record is never overwritten)")
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            os.fchmod(fh.fileno(), 0o600)
            fh.write(pretty_json(doc))
        os.replace(tmp, path)
    except OSError as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise InputError(f"{path}: cannot write ({exc.strerror})")


def _check_cost(prices, timeout_s, cap):
    rate = sandbox_rate(prices, "modal")
    cost = rate * (timeout_s + GRACE_S)
    if cost > cap:
        raise BudgetHalt(
            f"the sandbox's {timeout_s} s (+{GRACE_S} s grace) at {rate} micro-USD/s costs up to "
            f"{format_usd(cost)}, above --cap-micro-usd {format_usd(cap)}",
            limit="sandbox",
        )
    return rate, cost


def build_image(modal=None, python_version="3.11"):
    modal = _modal(modal)
    try:
        app = modal.App.lookup(f"fundbook-build-{secrets.token_hex(6)}", create_if_missing=True)
    except Exception as exc:
        raise SandboxError(f"modal: cannot reach Modal to build the image ({sdk_error(exc)})")
    try:
        image = modal.Image.debian_slim(python_version=python_version).build(app)
    except Exception as exc:
        raise SandboxError(f"modal: cannot build the worker image ({sdk_error(exc)})")
    finally:
        try:
            app.stop()
        except Exception:
            pass  # the build's own app: nothing runs in it
    return {"image_id": getattr(image, "object_id", None), "python_version": python_version}


def _create(modal, image, timeout_s):
    name = f"fundbook-transport-{secrets.token_hex(6)}"
    try:
        app = modal.App.lookup(name, create_if_missing=True)
    except Exception as exc:
        raise SandboxError(f"modal: cannot reach Modal to create an app ({sdk_error(exc)})")
    cfg = modal_config()
    try:
        sandbox = modal.Sandbox.create(
            app=app,
            image=image,
            block_network=True,
            timeout=int(timeout_s) + GRACE_S,
            workdir=WORKDIR,
            cpu=cfg["cpu_milli"] / 1000,
            memory=cfg["memory_mib"],
        )
    except Exception as exc:
        try:
            app.stop()
        except Exception:
            pass
        raise SandboxError(f"modal: cannot create the sandbox ({sdk_error(exc)})")
    return name, app, sandbox


def launch(record_path, task, timeout_s, cap, prices, modal=None, fixture=None) -> dict:
    """A sandbox for the world `task` names (a `_spec.Task`: family, seed, horizon), its record at `record_path`."""
    family, seed, horizon = task.family, task.seed, task.horizon
    if os.path.lexists(record_path):
        raise InputError(f"{record_path}: already exists (a transport record is never overwritten)")
    if fixture is not None and fixture not in _proofs.FIXTURES:
        raise InputError(f"--fixture {fixture}: expected one of {sorted(_proofs.FIXTURES)}")
    rate, cost = _check_cost(prices, timeout_s, cap)
    try:
        packet = engine.Run(_desk.world(family, seed, horizon)).packet()
    except ValueError as exc:
        raise InputError(f"--family/--seed: {exc}")
    except engine.DeskError as exc:
        raise InputError(f"--horizon: {exc.message}")
    files = stage(packet)
    if fixture is not None:
        files = dict(sorted({**files, **_proofs.files(fixture)}.items()))
    modal = _modal(modal)
    try:
        image = modal.Image.debian_slim(python_version=modal_config()["python_version"])
    except Exception as exc:
        raise SandboxError(f"modal: cannot describe the worker image ({sdk_error(exc)})")
    name, app, sandbox = _create(modal, image, timeout_s)
    try:
        for rel, data in sorted(files.items()):
            sandbox.filesystem.write_bytes(data, f"{WORKDIR}/{rel}")
    except Exception as exc:
        for stop in (sandbox.terminate, app.stop):
            try:
                stop()
            except Exception:
                pass
        raise SandboxError(f"modal: cannot stage the worker ({sdk_error(exc)})")
    proof = None
    if fixture is not None:
        out = _proofs.expected(fixture, files, packet)
        proof = {
            "name": fixture,
            "command": _proofs.command(fixture),
            "expected_sha256": engine.sha256_hex(out.encode("utf-8")),
        }
    doc = {
        "schema": SCHEMA,
        "created": _now(),
        "family": family,
        "seed": seed,
        "horizon": horizon,
        "app_name": name,
        "app_id": getattr(app, "app_id", None),
        "app_created": True,
        "sandbox_id": sandbox.object_id,
        "timeout_s": timeout_s,
        "micro_usd_per_second": rate,
        "max_micro_usd": cost,
        "cap_micro_usd": cap,
        "staged": manifest(files),
        "fixture": proof,
        "checkpoints": [],
        "resumed_from": None,
        "stopped": None,
        "stop_attempts": [],
    }
    write(record_path, doc, new=True)
    return doc


def _sandbox(doc, modal):
    try:
        return _modal(modal).Sandbox.from_id(doc["sandbox_id"])
    except InputError:
        raise
    except Exception as exc:
        raise SandboxError(f"modal: sandbox {doc['sandbox_id']} cannot be reached ({sdk_error(exc)})")


def status(record_path, modal=None) -> dict:
    doc = read(record_path)
    sb = _sandbox(doc, modal)
    try:
        code = sb.poll()
    except Exception as exc:
        raise SandboxError(f"modal: cannot poll sandbox {doc['sandbox_id']} ({sdk_error(exc)})")
    return {
        "sandbox_id": doc["sandbox_id"],
        "running": code is None,
        "exit_code": code,
        "stopped": doc.get("stopped"),
        "checkpoints": len(doc["checkpoints"]),
    }


def exec_worker(record_path, argv, timeout_s=600, modal=None):
    if not argv:
        raise InputError("exec-worker: name a command after -- (or --fixture NAME)")
    doc = read(record_path)
    sb = _sandbox(doc, modal)
    try:
        process = sb.exec(*argv, workdir=WORKDIR, timeout=timeout_s, text=True)
        out = process.stdout.read()
        err = process.stderr.read()
        code = process.wait()
    except Exception as exc:
        raise SandboxError(f"modal: exec in {doc['sandbox_id']} failed ({sdk_error(exc)})")
    return out, err, code


def run_fixture(record_path, name, timeout_s=600, modal=None) -> dict:
    """Run the proof fixture staged at launch; {"matches", "sha256", "expected_sha256", "stderr", "exit_code"}."""
    doc = read(record_path)
    proof = doc.get("fixture")
    if not isinstance(proof, dict) or proof.get("name") != name:
        staged = proof.get("name") if isinstance(proof, dict) else None
        raise InputError(
            f"--fixture {name}: the sandbox of {record_path} was launched "
            + (f"with fixture {staged!r}" if staged else "without a fixture (`sandbox launch --fixture`)")
        )
    out, err, code = exec_worker(record_path, _proofs.command(name), timeout_s, modal)
    got = engine.sha256_hex(out.encode("utf-8")) if isinstance(out, str) else None
    return {
        "matches": code == 0 and got == proof["expected_sha256"],
        "sha256": got,
        "expected_sha256": proof["expected_sha256"],
        "stderr": err,
        "exit_code": code,
    }


def checkpoint(record_path, modal=None) -> dict:
    doc = read(record_path)
    sb = _sandbox(doc, modal)
    try:
        image = sb.snapshot_filesystem()
    except Exception as exc:
        raise SandboxError(f"modal: cannot snapshot {doc['sandbox_id']} ({sdk_error(exc)})")
    entry = {"image_id": image.object_id, "at": _now()}
    doc["checkpoints"].append(entry)
    write(record_path, doc)
    return entry


def resume(record_path, new_record, timeout_s, cap, prices, modal=None) -> dict:
    doc = read(record_path)
    if not doc["checkpoints"]:
        raise InputError(f"{record_path}: no checkpoint to resume from (`fundbook-launch sandbox checkpoint` first)")
    if os.path.lexists(new_record):
        raise InputError(f"{new_record}: already exists (a transport record is never overwritten)")
    rate, cost = _check_cost(prices, timeout_s, cap)
    modal = _modal(modal)
    last = doc["checkpoints"][-1]
    try:
        image = modal.Image.from_id(last["image_id"])
    except Exception as exc:
        raise SandboxError(f"modal: checkpoint image {last['image_id']} cannot be read ({sdk_error(exc)})")
    name, app, sandbox = _create(modal, image, timeout_s)
    old_sha = engine.sha256_hex(read_bytes(record_path, "transport record"))
    new = {
        "schema": SCHEMA,
        "created": _now(),
        "family": doc.get("family"),
        "seed": doc.get("seed"),
        "horizon": doc.get("horizon"),
        "app_name": name,
        "app_id": getattr(app, "app_id", None),
        "app_created": True,
        "sandbox_id": sandbox.object_id,
        "timeout_s": timeout_s,
        "micro_usd_per_second": rate,
        "max_micro_usd": cost,
        "cap_micro_usd": cap,
        "staged": doc.get("staged"),
        "fixture": doc.get("fixture"),
        "checkpoints": [],
        "resumed_from": {
            "record": os.path.basename(record_path),
            "record_sha256": old_sha,
            "sandbox_id": doc["sandbox_id"],
            "image_id": last["image_id"],
        },
        "stopped": None,
        "stop_attempts": [],
    }
    write(new_record, new, new=True)
    return new


def stop(record_path, modal=None) -> dict:
    """Terminate the sandbox and stop the app; `stopped` is written only when both were reached (or are known
    gone). Otherwise the attempt is appended to `stop_attempts` and SandboxError says what was not reached."""
    doc = read(record_path)
    modal = _modal(modal)
    outcome = {"sandbox_terminated": False, "app_stopped": False}
    problems = []
    try:
        modal.Sandbox.from_id(doc["sandbox_id"]).terminate()
        outcome["sandbox_terminated"] = True
    except Exception as exc:
        if _not_found(exc):
            outcome["sandbox_terminated"] = True  # it no longer exists: nothing left to terminate
        else:
            problems.append(f"sandbox {doc['sandbox_id']}: {sdk_error(exc)}")
    if doc.get("app_created"):
        try:
            modal.App.lookup(doc["app_name"]).stop()
            outcome["app_stopped"] = True
        except Exception as exc:
            if _not_found(exc):
                outcome["app_stopped"] = True
            else:
                problems.append(f"app {doc['app_name']}: {sdk_error(exc)}")
    else:
        outcome["app_stopped"] = None  # not the launcher's app: left alone
    entry = dict(outcome, at=_now(), problems=problems)
    if problems:
        doc["stop_attempts"] = list(doc.get("stop_attempts") or []) + [entry]
        write(record_path, doc)
        raise SandboxError(
            f"modal: the stop did not reach everything ({'; '.join(problems)}); {record_path} keeps "
            f"stopped: null and lists the attempt in stop_attempts"
        )
    doc["stopped"] = dict(outcome, at=entry["at"])
    write(record_path, doc)
    return doc["stopped"]
