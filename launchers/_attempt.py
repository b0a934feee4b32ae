"""`execute` and `recover`: one attempt, from claim consumption to the retained record.

Order matters. Everything that can be refused or can fail is done first, and
costs nothing: the options (a paid sampler runs only in an isolated sandbox,
never the local one), the output folder, the world, the prices (a mock standing in for a real model
is priced as that model, a projection), the code (a paid attempt needs a
clean tree and the published engine), the claim (checked, not spent; its caps
against this attempt's worst case; its price row), the freeze and, for a
confirmatory attempt, a passing pilot, the project ledger (a claim it never
registered or has seen is refused; the project caps), the credentials, the
host (power, sleep, disk), the settled history being continued, the decision
cache. Then the claim is consumed (step 0), in one signal-free block whose
every step is journaled before the next: the start (with the consumption's
nonce, chosen before), the marker, the consumption, the project ledger's
claim entry. From there on every exit -- a normal end, any exception,
SIGTERM, SIGHUP, Ctrl-C -- leaves an end in the journal and a record
assembled from the partial folder's files (the journal, the ledger, the desk
history), whose counts come from the receipts. The folder is
`<out>.partial/` while the attempt runs (with `status.json` saying
`running`) and is renamed to `<out>` when the record is written: the record
first (atomically), then the project ledger's settlement, then the working
files, then the rename. `recover` finishes whatever a dead host left, from
whichever boundary it died at (`_crash.BOUNDARIES`): a folder that never
consumed its claim is cleared, a record already written is settled and
moved, anything else is assembled as an `incomplete_execution`.
"""

import os
import platform
import shutil
from dataclasses import dataclass

import engine

from . import _budget, _credentials, _desk, _host
from ._attempt_checks import check_budget, check_freeze
from ._claims import check as check_claim
from ._claims import consume, new_consumption, state_dir
from ._controller import Controller, Desk, Timing, close_status
from ._crash import boundary
from ._errors import BudgetHalt, CapacityError, FreezeRefused, InputError, LaunchError, OutputExists, SandboxError
from ._errors import UsageRefused
from ._journal import Journal, write_status
from ._ledger import Ledger
from ._lock import AttemptLock
from ._prices import model_price, sandbox_rate, table_sha256
from ._project import ProjectLedger, project_dir
from ._provenance import code_revision, engine_identity, packages
from ._recover import finish
from ._recover import what as _what
from ._sampler_cache import CACHE_EXPORT
from ._signals import Guard, Stopped, stop_reason
from ._spec import AttemptSpec
from ._staging import worker_identity
from ._verify import verify_attempt

FREE = _budget.FREE_PRICE


@dataclass
class Checked:
    """What the checks before consumption found and fixed: the world, the price row and sandbox rate it books
    at, the configuration it records, the code and engine, the freeze and its caps, the project ledger, the
    attempts it continues or replays, the host's preflight."""

    instance: dict
    price: dict
    projection: bool
    rate: int
    config: dict
    code: dict
    engine_id: dict
    resume: dict = None
    replay: dict = None
    freeze: dict = None
    caps: object = None
    project_ledger: object = None
    host_facts: object = None


def pricing(sampler, model, prices):
    """(price row the ledger books at, projection): a mock is priced as the model id it runs under (a projection:
    nothing is spent), a cached replay costs nothing, every other sampler is priced from the table."""
    if sampler.projected:
        try:
            row = model_price(prices, model)
        except InputError as exc:
            raise InputError(
                f"--model {model}: {exc.format_message()}; a mock attempt is priced as the model it "
                f"stands for (`mock` itself costs nothing)"
            ) from None
        return row, any(row.values())
    if sampler.free:
        return dict(FREE), False
    return model_price(prices, model), False


def check_out_dir(out):
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise OutputExists(f"{out}: exists and is not empty (an attempt needs a new output directory)")
    if os.path.exists(out + ".partial"):
        raise OutputExists(f"{out}.partial: an unfinished attempt is in the way (`fundbook-launch recover` it)")


def _make_partial(out):
    tmp = out + ".partial"
    try:
        os.makedirs(tmp, mode=0o700)
    except OSError as exc:
        raise InputError(f"--out {out}: cannot create the attempt's folder ({exc.strerror or exc})")
    return tmp


def load_source(path, what):
    """A recorded attempt to continue or replay: its record fully verified (hashes and receipts)."""
    record_path = os.path.join(path, "record.json") if os.path.isdir(path) else path
    found = verify_attempt(record_path)
    found["path"] = record_path
    c = found["record"]["content"]
    if what == "resume":
        if (
            c["termination"]["status"] == "completed"
            or c["result"] is not None
            or (found["run"] is not None and found["run"].finalized)
        ):
            raise InputError(f"--resume-from {path}: the attempt completed: there is nothing to continue")
        if found["run"] is None:
            raise InputError(f"--resume-from {path}: the attempt has no settled history to continue from")
    elif c.get("resumed_from"):
        raise InputError(f"--replay-of {path}: a continuation is replayed from the attempt it continues")
    return found


def _world(spec, resume):
    if resume is not None:
        return resume["instance"]
    try:
        return _desk.world(spec.task.family, spec.task.seed, spec.task.horizon)
    except ValueError as exc:
        raise InputError(f"--family/--seed: {exc}")
    except engine.DeskError as exc:
        raise InputError(f"--horizon: {exc.message}")


def execute(spec: AttemptSpec, *, host=None, environ=None, sleep=None):
    """Run one attempt. The sampler and sandbox providers build their adapters after the claim is consumed.

    A paid sampler needs an isolated sandbox (modal or local-isolated, never local), a clean tree, the published
    engine and a matching freeze. A resumed attempt continues an interrupted one's settled history; a replay
    reproduces a recorded one from its cache. An attempt of role "pilot" belongs to `fundbook-launch pilot`; any
    other under a freeze is confirmatory: it needs a passing pilot or a deviation. `host`: the host probes
    (`_host.Host`); `environ`: where credentials are looked up; `sleep`: the controller's (tests)."""
    if spec.paid and spec.sandbox.name == "local":
        raise UsageRefused(
            "--sandbox local: a paid sampler runs only in an isolated sandbox (modal, or local-isolated "
            "on this host; local is for mock and cache: it is not an isolation boundary)"
        )
    check_out_dir(spec.out)
    sources = spec.sources
    resume = load_source(sources.resume, "resume") if sources.resume else None
    replay = load_source(sources.replay, "replay") if sources.replay else None
    instance = _world(spec, resume)
    price, projection = pricing(spec.sampler, spec.model, spec.prices)
    rate = sandbox_rate(spec.prices, spec.sandbox.name)
    _credentials.check(spec.sampler.name, spec.sandbox.name, environ)  # present and well-formed, before the claim
    sandbox_config = spec.sandbox.config or {"name": spec.sandbox.name}
    config = {
        "sampler": spec.sampler.name,
        "sandbox": sandbox_config,
        "sampling": spec.sampler.sampling or {},
        "limits": vars(spec.limits),
        "horizon": instance["horizon"],
    }
    run = Checked(instance, price, projection, rate, config, code_revision(), engine_identity(), resume, replay)
    if spec.paid and run.code["dirty"] is not False:
        raise FreezeRefused(
            "the working tree has uncommitted changes outside runs/ (or is not a git checkout): a paid "
            "attempt runs committed code only"
        )
    if spec.paid and not run.engine_id["sources_match"]:
        raise FreezeRefused(
            f"the engine is not the published bundle's ({run.engine_id['mismatch']}): attempts are "
            f"judged by the published engine"
        )
    task, places = spec.task, spec.places
    claim_doc = check_claim(spec.claim, task.family, task.split, spec.model, state=places.state)
    claim = claim_doc["claim"]
    if spec.paid or sources.freeze:
        path = sources.freeze or os.path.join(project_dir(places.project), "freeze.json")
        run.freeze, run.caps = check_freeze(spec, path, claim, run)
    check_budget(spec, claim, run)
    run.project_ledger = ProjectLedger(project_dir(places.project))
    run.project_ledger.check_claim(claim, run.caps, claim_doc["sha256"])
    parent = os.path.dirname(os.path.abspath(spec.out))
    run.host_facts, inhibitor = _host.preflight(
        parent if os.path.isdir(parent) else ".",
        _host.worst_case_bytes(spec.limits, instance["horizon"]),
        f"fundbook attempt {os.path.basename(spec.out)}",
        host,
    )
    try:
        return _run(spec, run, sleep)
    finally:
        if inhibitor is not None:
            inhibitor.release()


def _prepare_history(spec, run, tmp):
    """The desk history, made before the claim is spent (an unscorable horizon costs nothing): (salt, retained)."""
    history = engine.History(os.path.join(tmp, "desk.sqlite"))
    instance = run.instance
    if run.resume is not None:
        rc = run.resume["record"]["content"]
        salt = rc.get("salt")
        _desk.rebuild(history, instance, instance["horizon"], salt, run.resume["receipts"], rc["receipts_head"])
        return salt, {"retained": (run.resume["retained"] or {}).get("files") or {}}
    salt = run.replay["record"]["content"].get("salt") if run.replay is not None else _desk.new_salt()
    _desk.init_history(history, instance, instance["horizon"], salt)
    return salt, None


def _consume(spec, run, journal, salt, tmp):
    """Step 0, journaled step by step: the start, the marker, the consumption, the project ledger's claim entry.
    Returns (claim document, attempt id, consumed); an exception after consumption is the attempt's end."""
    task, state = spec.task, spec.places.state
    boundary("consume:before-start")
    consumption = new_consumption()
    pending = check_claim(spec.claim, task.family, task.split, spec.model, state=state)
    claim = pending["claim"]
    attempt_id = (
        spec.attempt_id or f"{spec.sampler.label.split()[0]}-{task.family}-seed-{task.seed}-{claim['id'][4:12]}"
    )
    journal.write("start", _start_body(spec, run, dict(pending, consumption=consumption), salt, attempt_id))
    boundary("consume:before-marker")
    claim_doc = consume(spec.claim, task.family, task.split, spec.model, state=state, consumption=consumption)
    return claim_doc, attempt_id, consumption


def _open_project(run, journal, claim_doc, attempt_id, tmp):
    try:
        entry = run.project_ledger.open_claim(claim_doc, attempt_id, run.caps)
    except BudgetHalt:  # the project filled up since the check: the claim is spent, so it is entered
        entry = run.project_ledger.open_claim(claim_doc, attempt_id, run.caps, recovering=True)
        raise
    boundary("project:after-open")
    journal.write(
        "project", {"dir": os.path.abspath(run.project_ledger.dir), "seq": entry["seq"], "hash": entry["hash"]}
    )
    boundary("project:after-journal")
    write_status(tmp, "running", attempt_id=attempt_id, claim_id=claim_doc["claim"]["id"])


def _run(spec, run, sleep):
    guard = Guard()  # from here a stop is an exception: the folder is removed before, recorded after, consumption
    with guard:
        tmp, lock = _make_partial(spec.out), None
        try:
            lock = AttemptLock(tmp).acquire()
            write_status(tmp, "preparing")
            salt, resumed = _prepare_history(spec, run, tmp)
        except BaseException as exc:
            if lock is not None:
                lock.release()
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(exc, engine.DeskError):
                raise InputError(
                    f"--horizon {run.instance['horizon']}: {exc.message}"
                    if run.resume is None
                    else f"--resume-from {spec.sources.resume}: {exc.message}"
                )
            if isinstance(exc, (Stopped, KeyboardInterrupt)):
                raise LaunchError(f"{stop_reason(exc)} before the claim was spent: nothing was consumed")
            raise
        journal = Journal(os.path.join(tmp, "journal.jsonl"))
        consumed = False
        stop = None
        claim_doc = None
        try:
            with guard.deferred():
                claim_doc, attempt_id, consumption = _consume(spec, run, journal, salt, tmp)
                consumed = True  # step 0: nothing was spent before this
                boundary("consume:after-marker")
                journal.write("consumed", {"nonce": consumption["nonce"]})
                boundary("consume:after-journal")
                _open_project(run, journal, claim_doc, attempt_id, tmp)
        except BaseException as exc:
            if not consumed:
                lock.release()
                shutil.rmtree(tmp, ignore_errors=True)
                if isinstance(exc, (Stopped, KeyboardInterrupt)):
                    raise LaunchError(f"{stop_reason(exc)} before the claim was spent: nothing was consumed") from None
                if not isinstance(exc, LaunchError):  # e.g. the journal's disk is full: one line, nothing spent
                    raise LaunchError(
                        f"{spec.claim}: the claim could not be consumed ({_what(exc)}); nothing was spent"
                    ) from None
                raise
            stop = exc  # the attempt ends at once, and is recorded
        sampler = None
        try:
            if stop is not None:
                raise stop
            claim = claim_doc["claim"]
            ledger = Ledger(
                claim_doc["sha256"],
                claim["cap_micro_usd"],
                claim["cap_tokens"],
                run.price,
                path=os.path.join(tmp, "ledger.jsonl"),
                cap_sandbox_micro_usd=claim.get("cap_sandbox_micro_usd", 0),
                sandbox_rate=run.rate,
            )
            sampler = spec.sampler(spec.model)
            sandbox = spec.sandbox()
            journal.write(
                "adapters",
                {
                    "provider": sampler.provider,
                    "sampling": sampler.sampling,
                    "network": sandbox.network,
                    "worker_env_keys": sandbox.worker_env_keys(),
                },
            )
            desk = Desk(run.instance, os.path.join(tmp, "desk.sqlite"), (resumed or {}).get("retained"))
            Controller(
                desk,
                sampler,
                sandbox,
                ledger,
                spec.limits,
                journal,
                Timing(sleep=sleep) if sleep is not None else Timing(),
            ).run()
        except BaseException as exc:  # whatever ended it before the controller did: the record says so
            end = _end_for(exc)
            service = None
            if sampler is not None and hasattr(sampler, "close"):  # a session opened for nothing is still finished
                sampler.close(close_status(end["status"]), end["reason"][:200])
                service = sampler.service_info() if hasattr(sampler, "service_info") else None
            journal.write("end", {"termination": end, "worker_stderr": "", "service": service})
        finally:
            with guard.deferred(swallow=True):
                _export_cache(sampler, tmp)
                record = finish(tmp, spec.out, lock=lock, project=run.project_ledger.dir)
    return record


def _export_cache(sampler, tmp):
    """The decision-cache answers this attempt used, as canonical JSONL beside its record (hashed there), so the
    attempt replays from its own folder. A failure leaves the file out: the record then lists no cache."""
    if sampler is None or not hasattr(sampler, "export_jsonl"):
        return
    try:
        sampler.export_jsonl(os.path.join(tmp, CACHE_EXPORT))
    except Exception:
        path = os.path.join(tmp, CACHE_EXPORT)
        if os.path.exists(path):
            os.remove(path)


def _start_body(spec, run, claim_doc, salt, attempt_id):
    claim = claim_doc["claim"]
    task, instance, engine_id, config = spec.task, run.instance, run.engine_id, run.config
    body = {
        "attempt_id": attempt_id,
        "label": spec.sampler.label,
        "sampler": spec.sampler.name,
        "sandbox": spec.sandbox.name,
        "model": spec.model,
        "price": run.price,
        "projection": run.projection,
        "sandbox_rate": run.rate,
        "limits": vars(spec.limits),
        "config": config,
        "prices_table_sha256": table_sha256(spec.prices),
        "role": spec.role,
        "task": {
            "version": engine.ENGINE_VERSION,
            "family": task.family,
            "seed": task.seed,
            "split": task.split,
            "instance_id": instance["instance_id"],
            "fixture_sha256": engine.fixture_sha256(instance),
            "horizon": instance["horizon"],
        },
        "claim": {
            "id": claim["id"],
            "scope": claim["scope"],
            "cap_micro_usd": claim["cap_micro_usd"],
            "cap_tokens": claim["cap_tokens"],
            "cap_sandbox_micro_usd": claim.get("cap_sandbox_micro_usd", 0),
            "plan": claim["plan"],
            "partial_budget": claim["partial_budget"],
            "sha256": claim_doc["sha256"],
            "consumed_at_step": 0,
            "consumption": claim_doc["consumption"],
        },
        "claim_expires": claim["expires"],
        "code": run.code,
        "packages": packages(),
        "engine": {k: engine_id[k] for k in ("bundle_sha256", "manifest_sha256", "sources_match")},
        **worker_identity((config.get("sampling") or {}).get("prompt")),
        "freeze": run.freeze,
        "command_line": list(spec.command_line or []),
        "salt": salt,
        "resumed_from": None,
        "replay_of": None,
        "host": f"{platform.system()} {platform.machine()} python {platform.python_version()}",
        # where the consumption and the project entry live (host paths: journal only, never the record)
        "state_dir": os.path.abspath(state_dir(spec.places.state)),
        "project_dir": os.path.abspath(run.project_ledger.dir),
        "host_preflight": run.host_facts,
    }
    if run.resume is not None:
        c = run.resume["record"]["content"]
        body["resumed_from"] = {
            "attempt_id": c["attempt_id"],
            "content_sha256": run.resume["record"]["content_sha256"],
            "receipts_head": c["receipts_head"],
            "settled_days": c["settled_days"],
        }
    if run.replay is not None:
        c = run.replay["record"]["content"]
        body["replay_of"] = {
            "attempt_id": c["attempt_id"],
            "content_sha256": run.replay["record"]["content_sha256"],
            "receipts_head": c["receipts_head"],
        }
    return body


def _end_for(exc):
    if isinstance(exc, (KeyboardInterrupt, Stopped)):
        return {"status": "operator", "reason": stop_reason(exc), "limit": "operator", "worker_exit_code": None}
    if isinstance(exc, BudgetHalt):
        return {"status": "budget_halt", "reason": exc.format_message(), "limit": exc.limit, "worker_exit_code": None}
    what = _what(exc)
    if isinstance(exc, CapacityError):  # refused for capacity before any call (e.g. creating the client)
        return {
            "status": "capacity_block",
            "reason": what,
            "limit": "capacity",
            "worker_exit_code": None,
            "capacity_block": {
                "call": None,
                "error": what[:300],
                "backoff_ms": [],
                "waited_ms": 0,
                "calls_answered": 0,
                "released_clients": None,
            },
        }
    if isinstance(exc, SandboxError):
        return {
            "status": "infrastructure_interruption",
            "reason": what,
            "limit": "infrastructure",
            "worker_exit_code": None,
        }
    return {
        "status": "infrastructure_interruption",
        "reason": f"the attempt failed on the host: {what}",
        "limit": "infrastructure",
        "worker_exit_code": None,
    }


def command_line(ctx=None):
    """The command as given (options the operator set, in the command's order), from click's parsed context."""
    import click

    ctx = ctx or click.get_current_context()
    out = [ctx.find_root().info_name or "fundbook-launch", *ctx.command_path.split()[1:]]
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name)
        if source is None or source.name not in ("COMMANDLINE", "ENVIRONMENT"):
            continue
        value = ctx.params.get(param.name)
        if isinstance(param, click.Option) and param.is_flag:
            out += [param.opts[0]] if value else []
        elif isinstance(value, (list, tuple)):
            for item in value:
                out += [param.opts[0], str(item)] if isinstance(param, click.Option) else [str(item)]
        elif value is not None:
            out += [param.opts[0], str(value)] if isinstance(param, click.Option) else [str(value)]
    return out
