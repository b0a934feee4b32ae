"""`execute` and `recover`: one attempt, from claim consumption to the retained record.

Order matters. Everything that can be refused or can fail is done first, and
costs nothing: the options (a paid sampler never runs in the local sandbox),
the output folder, the world, the prices (a mock standing in for a real model
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

import engine

from . import ATTEMPT_SCHEMA_VERSION, _budget, _credentials, _desk, _freeze, _host, _pilot, _tiers
from ._claims import check as check_claim
from ._claims import consume, marker_state, new_consumption, plan_text, state_dir
from ._controller import Controller, Limits, close_status
from ._crash import boundary
from ._errors import (BudgetHalt, CapacityError, ClaimRefused, FreezeRefused, InputError, LaunchError, OutputExists,
                      SandboxError, UsageRefused)
from ._journal import STATUS_NAME, Journal, now_iso, parse_iso, read_journal, write_status
from ._ledger import Ledger, load_ledger
from ._lock import LOCK_NAME, AttemptLock
from ._prices import model_price, sandbox_rate, table_sha256
from ._project import ProjectLedger, project_dir
from ._provenance import code_revision, engine_identity, packages
from ._jsonfile import fsync_dir
from ._record import read_record, summary_text, transcript_doc, write_attempt
from ._signals import Guard, Stopped, stop_reason
from ._sampler_cache import CACHE_EXPORT
from ._staging import NEVER_STAGED_PATHS, worker_identity
from ._verify import verify_attempt

LABELS = {"mock": "mock", "cache": "cached replay"}  # anything else: "model"
FREE_SAMPLERS = ("mock", "cache", "llama-cpp")  # llama-cpp: open weights on this host, priced at 0
PROJECTED_SAMPLERS = ("mock",)  # free, but priced as the model id it runs under: a projection (the mock row is 0)
FREE = _budget.FREE_PRICE
RECOVERED_END = {"status": "incomplete_execution", "limit": "infrastructure", "worker_exit_code": None,
                 "reason": "the host controller stopped mid-attempt (it died, or lost its power); the record was "
                           "recovered from its partial directory"}
WORKING_FILES = ("desk.sqlite", "journal.jsonl", STATUS_NAME)


class NothingSpent(LaunchError):
    """`recover` found an attempt that never consumed its claim: its folder is cleared, the claim still usable."""


def is_free(sampler_name, sampling=None) -> bool:
    """Nothing is paid: mock, cache, llama-cpp, and an openai-compatible server on this host (`--local-server`,
    which its settings record)."""
    return sampler_name in FREE_SAMPLERS or (sampler_name == "openai-compatible"
                                             and (sampling or {}).get("local_server") == 1)


def pricing(sampler_name, model, prices, sampling=None):
    """(price row the ledger books at, projection): a mock is priced as the model id it runs under (a projection:
    nothing is spent), a cached replay costs nothing, every other sampler is priced from the table."""
    if sampler_name in PROJECTED_SAMPLERS:
        try:
            row = model_price(prices, model)
        except InputError as exc:
            raise InputError(f"--model {model}: {exc.format_message()}; a mock attempt is priced as the model it "
                             f"stands for (`mock` itself costs nothing)") from None
        return row, any(row.values())
    if is_free(sampler_name, sampling):
        return dict(FREE), False
    return model_price(prices, model), False


def label_of(sampler_name):
    return LABELS.get(sampler_name, "model")


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
        if c["termination"]["status"] == "completed" or c["result"] is not None or (
                found["run"] is not None and found["run"].finalized):
            raise InputError(f"--resume-from {path}: the attempt completed: there is nothing to continue")
        if found["run"] is None:
            raise InputError(f"--resume-from {path}: the attempt has no settled history to continue from")
    elif c.get("resumed_from"):
        raise InputError(f"--replay-of {path}: a continuation is replayed from the attempt it continues")
    return found


def execute(*, claim_path, out, family, seed, split, model, sampler_name, sandbox_name, make_sampler, make_sandbox,
            prices, limits: Limits, horizon=20, attempt_id=None, state=None, paid=False, freeze_path=None,
            project=None, command_line=None, resume_from=None, replay_of=None, sampling=None, sandbox_config=None,
            role=None, pilot_path=None, host=None, environ=None, sleep=None):
    """Run one attempt. `make_sampler(model)` / `make_sandbox()` build the adapters after the claim is consumed.

    `paid`: a sampler that spends money (needs the modal sandbox, a clean tree, the published engine and a
    matching freeze). `resume_from`: an interrupted attempt's folder to continue. `replay_of`: the record a
    cached replay reproduces. `role`: "pilot" for an attempt of `fundbook-launch pilot` (any other attempt under a
    freeze is confirmatory: it needs a passing pilot, `pilot_path`, or a deviation). `host`: the host probes
    (`_host.Host`); `environ`: where credentials are looked up."""
    if paid and sandbox_name == "local":
        raise UsageRefused("--sandbox local: a paid sampler runs only in the modal sandbox (local is for mock and "
                           "cache: it is not an isolation boundary)")
    check_out_dir(out)
    resume = load_source(resume_from, "resume") if resume_from else None
    replay = load_source(replay_of, "replay") if replay_of else None
    if resume is not None:
        instance = resume["instance"]
    else:
        try:
            instance = engine.with_horizon(engine.generate(family, seed), horizon)
        except ValueError as exc:
            raise InputError(f"--family/--seed: {exc}")
        except engine.DeskError as exc:
            raise InputError(f"--horizon: {exc.message}")
    price, projection = pricing(sampler_name, model, prices, sampling)
    rate = sandbox_rate(prices, sandbox_name)
    _credentials.check(sampler_name, sandbox_name, environ)  # present and well-formed, before the claim is touched
    sandbox_config = sandbox_config or {"name": sandbox_name}
    config = {"sampler": sampler_name, "sandbox": sandbox_config, "sampling": sampling or {},
              "limits": vars(limits), "horizon": instance["horizon"]}
    code, engine_id = code_revision(), engine_identity()
    if paid and code["dirty"] is not False:
        raise FreezeRefused("the working tree has uncommitted changes outside runs/ (or is not a git checkout): a paid "
                            "attempt runs committed code only")
    if paid and not engine_id["sources_match"]:
        raise FreezeRefused(f"the engine is not the published bundle's ({engine_id['mismatch']}): attempts are judged "
                            f"by the published engine")
    claim_doc = check_claim(claim_path, family, split, model, state=state)
    claim = claim_doc["claim"]
    freeze = caps = None
    if paid or freeze_path:
        freeze, caps = _check_freeze(freeze_path or os.path.join(project_dir(project), "freeze.json"), paid, config,
                                     model, price, sampler_name, sandbox_config, rate, instance, family, seed, split,
                                     claim, prices, role, pilot_path, resume, project)
    _check_budget(claim_path, claim, limits, instance["horizon"], sandbox_name, sandbox_config, price, rate,
                  sampler_name, is_free(sampler_name, sampling))
    project_ledger = ProjectLedger(project_dir(project))
    project_ledger.check_claim(claim, caps, claim_doc["sha256"])
    parent = os.path.dirname(os.path.abspath(out))
    host_facts, inhibitor = _host.preflight(parent if os.path.isdir(parent) else ".",
                                            _host.worst_case_bytes(limits, instance["horizon"]),
                                            f"fundbook attempt {os.path.basename(out)}", host)
    try:
        return _run(claim_path, out, family, seed, split, model, sampler_name, sandbox_name, make_sampler,
                    make_sandbox, prices, limits, attempt_id, state, freeze, caps, project_ledger, command_line,
                    resume, replay, instance, price, projection, rate, config, code, engine_id, role, host_facts,
                    resume_from, sleep)
    finally:
        if inhibitor is not None:
            inhibitor.release()


def _run(claim_path, out, family, seed, split, model, sampler_name, sandbox_name, make_sampler, make_sandbox,
         prices, limits, attempt_id, state, freeze, caps, project_ledger, command_line, resume, replay, instance,
         price, projection, rate, config, code, engine_id, role, host_facts, resume_from, sleep):
    guard = Guard()  # from here a stop is an exception: the folder is removed before, recorded after, consumption
    with guard:
        tmp, lock = _make_partial(out), None
        try:
            lock = AttemptLock(tmp).acquire()
            write_status(tmp, "preparing")
            resumed = None
            history = engine.History(os.path.join(tmp, "desk.sqlite"))
            # the desk history is made before the claim is spent: an unscorable horizon costs nothing
            if resume is not None:
                rc = resume["record"]["content"]
                salt = rc.get("salt")
                _desk.rebuild(history, instance, instance["horizon"], salt, resume["receipts"], rc["receipts_head"])
                resumed = {"retained": (resume["retained"] or {}).get("files") or {}}
            else:
                salt = replay["record"]["content"].get("salt") if replay is not None else _desk.new_salt()
                _desk.init_history(history, instance, instance["horizon"], salt)
        except BaseException as exc:
            if lock is not None:
                lock.release()
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(exc, engine.DeskError):
                raise InputError(f"--horizon {instance['horizon']}: {exc.message}" if resume is None else
                                 f"--resume-from {resume_from}: {exc.message}")
            if isinstance(exc, (Stopped, KeyboardInterrupt)):
                raise LaunchError(f"{stop_reason(exc)} before the claim was spent: nothing was consumed")
            raise
        journal = Journal(os.path.join(tmp, "journal.jsonl"))
        started = consumed = False
        stop = None
        claim_doc = None
        try:
            with guard.deferred():
                boundary("consume:before-start")
                consumption = new_consumption()
                pending = check_claim(claim_path, family, split, model, state=state)
                claim = pending["claim"]
                attempt_id = attempt_id or f"{label_of(sampler_name).split()[0]}-{family}-seed-{seed}-{claim['id'][4:12]}"
                journal.write("start", _start_body(
                    attempt_id, sampler_name, sandbox_name, model, price, projection, rate, limits, config, instance,
                    family, seed, split, dict(pending, consumption=consumption), code, engine_id, freeze,
                    command_line, project_ledger, resume, replay, salt, prices, role, state, host_facts))
                started = True
                boundary("consume:before-marker")
                claim_doc = consume(claim_path, family, split, model, state=state, consumption=consumption)
                consumed = True  # step 0: nothing was spent before this
                boundary("consume:after-marker")
                journal.write("consumed", {"nonce": consumption["nonce"]})
                boundary("consume:after-journal")
                try:
                    entry = project_ledger.open_claim(claim_doc, attempt_id, caps)
                except BudgetHalt:  # the project filled up since the check: the claim is spent, so it is entered
                    entry = project_ledger.open_claim(claim_doc, attempt_id, caps, recovering=True)
                    raise
                boundary("project:after-open")
                journal.write("project", {"dir": os.path.abspath(project_ledger.dir), "seq": entry["seq"],
                                          "hash": entry["hash"]})
                boundary("project:after-journal")
                write_status(tmp, "running", attempt_id=attempt_id, claim_id=claim["id"])
        except BaseException as exc:
            if not consumed:
                lock.release()
                shutil.rmtree(tmp, ignore_errors=True)
                if isinstance(exc, (Stopped, KeyboardInterrupt)):
                    raise LaunchError(f"{stop_reason(exc)} before the claim was spent: nothing was consumed") from None
                if not isinstance(exc, LaunchError):  # e.g. the journal's disk is full: one line, nothing spent
                    raise LaunchError(f"{claim_path}: the claim could not be consumed ({_what(exc)}); nothing was "
                                      f"spent") from None
                raise
            stop = exc  # the attempt ends at once, and is recorded
        sampler = None
        try:
            if stop is not None:
                raise stop
            claim = claim_doc["claim"]
            ledger = Ledger(claim_doc["sha256"], claim["cap_micro_usd"], claim["cap_tokens"], price,
                            path=os.path.join(tmp, "ledger.jsonl"),
                            cap_sandbox_micro_usd=claim.get("cap_sandbox_micro_usd", 0), sandbox_rate=rate)
            sampler = make_sampler(model)
            sandbox = make_sandbox()
            journal.write("adapters", {"provider": sampler.provider, "sampling": sampler.sampling,
                                       "network": sandbox.network, "worker_env_keys": sandbox.worker_env_keys()})
            extra = {"sleep": sleep} if sleep is not None else {}
            Controller(instance, sampler, sandbox, ledger, limits, os.path.join(tmp, "desk.sqlite"), journal,
                       retained=(resumed or {}).get("retained"), **extra).run()
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
                record = finish(tmp, out, lock=lock, project=project_ledger.dir)
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


def _what(exc):
    return exc.format_message() if isinstance(exc, LaunchError) else f"{type(exc).__name__}: {exc}"


def _check_budget(claim_path, claim, limits, horizon, sandbox_name, sandbox_config, price, rate, sampler_name,
                  free=None):
    """The claim's plan against this attempt, before anything is spent: the price row it was authorised at, the
    sandbox compute its time limit needs, and the worker's worst case for these limits (unless the claim says
    its budget is partial)."""
    plan = claim["plan"]
    free = sampler_name in FREE_SAMPLERS if free is None else free
    if not free or sampler_name in PROJECTED_SAMPLERS:
        if plan.get("price") != price:
            raise ClaimRefused(f"{claim_path}: claim.plan.price: the claim was authorised at {plan.get('price')}, this "
                               f"attempt prices {claim['scope']['model']} at {price} (authorise with the same "
                               f"--prices)")
    need = (limits.worker_seconds + sandbox_config.get("grace_s", 0)) * rate
    if claim.get("cap_sandbox_micro_usd", 0) < need:
        raise BudgetHalt(f"{claim_path}: the claim's sandbox cap of {claim.get('cap_sandbox_micro_usd', 0)} micro-USD "
                         f"cannot cover the worker's {limits.worker_seconds} s at {rate} micro-USD/s", limit="sandbox")
    if claim["partial_budget"].get("accepted") or (free and sampler_name not in PROJECTED_SAMPLERS):
        return  # accepted as partial; or a cached replay, whose hits reserve neither money nor tokens
    tokens_in = plan.get("tokens_in")
    if not isinstance(tokens_in, int) or isinstance(tokens_in, bool) or tokens_in < 0:
        raise ClaimRefused(f"{claim_path}: claim.plan.tokens_in: expected a non-negative integer")
    _, usd, tokens = _budget.worst(price, tokens_in, limits.max_tokens_per_call, horizon, limits.max_calls)
    short = [f"--cap-micro-usd {claim['cap_micro_usd']} < {usd} micro-USD" for _ in [0] if claim["cap_micro_usd"] < usd]
    short += [f"--cap-tokens {claim['cap_tokens']} < {tokens} tokens" for _ in [0] if claim["cap_tokens"] < tokens]
    if short:
        raise BudgetHalt(f"{claim_path}: the claim's caps are below this attempt's worst case ({'; '.join(short)}, for "
                         f"{horizon} checkpoints, --max-tokens {limits.max_tokens_per_call}, --max-calls "
                         f"{limits.max_calls}; authorised for {plan_text(plan)}): it could be planned to halt; "
                         f"authorise for these limits, or with --accept-partial-budget", limit="cost")


def _check_freeze(path, paid, config, model, price, sampler_name, sandbox_config, rate, instance, family, seed, split,
                  claim, prices, role, pilot_path, resume=None, project=None):
    if not os.path.exists(path):
        if paid:
            raise FreezeRefused(f"{path}: no freeze: a paid attempt runs only against a freeze (`fundbook-launch "
                                f"freeze` first)")
        raise InputError(f"--freeze {path}: no such file")
    doc, entries = _freeze.load(path)
    current = _freeze.content(
        config=config, models=[model], provider=sampler_name,
        prices={"models": {model: price}, "sandbox": {"name": sandbox_config["name"], "micro_usd_per_second": rate},
                "table_sha256": table_sha256(prices)},
        families=[family], split=split, seeds=[] if role == "pilot" else [seed],  # pilot seeds are not the study's
        caps={"claim_micro_usd": claim["cap_micro_usd"], "claim_tokens": claim["cap_tokens"],
              "claim_sandbox_micro_usd": claim.get("cap_sandbox_micro_usd", 0)},
        intervention_policy=doc["content"].get("intervention_policy"))
    used = _freeze.check(doc, entries, current, path)
    if resume is not None:
        _check_continuation(doc, entries, path, resume, project, used)
    caps = _freeze.project_caps(doc, entries, path)
    out = {"sha256": doc["content_sha256"], "frozen_at": doc["frozen_at"], "deviations": used}
    if role != "pilot":
        out["pilot"] = _pilot.require(path, doc, entries, pilot_path)
        for entry in out["pilot"].pop("deviations", []):
            if entry not in used:
                used.append(entry)
        if doc["content"].get("tiers") is not None:  # seed 002's tiers: a cut seed, or one not planned, never runs
            plan = _tiers.check_plan(doc["content"]["tiers"], f"{path}: tiers")
            spent = _tiers.spent_from_records(_tiers.records_in(os.path.dirname(os.path.abspath(path))),
                                              doc["content_sha256"])
            tier, cell = _tiers.admit(plan, spent, model, family, seed, f"{path}: tiers")
            out["tier"] = {"tier": tier, "cell": cell}
    return out, caps


def _lineage(folders):
    """{attempt id: the attempt id it continues, or None} of the attempts in `folders` (their records, and the
    journals of the ones still running or never recovered): who continues whom, as the attempts say."""
    parents = {}
    for folder in folders:
        if not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            base = os.path.join(folder, name)
            if os.path.isfile(os.path.join(base, "pilot.json")):
                parents.update(_lineage([base]))
                continue
            try:
                if os.path.isfile(os.path.join(base, "record.json")):
                    c = read_record(os.path.join(base, "record.json"))["content"]
                elif os.path.isfile(os.path.join(base, "journal.jsonl")):
                    c = read_journal(os.path.join(base, "journal.jsonl"))[0][2]
                else:
                    continue
            except InputError:
                continue  # not an attempt this check can read; `ledger` and `verify` name it
            parents[c.get("attempt_id")] = (c.get("resumed_from") or {}).get("attempt_id")
    return parents


def _check_continuation(doc, entries, path, resume, project, used):
    """The frozen intervention policy, enforced: at most `intervention.max_resumes` continuations of one attempt
    (counted over its whole line: continuing the original twice, or continuing a continuation, are both a second
    one), unless a dated deviation raises it. Refused before any claim is consumed."""
    try:
        limit = _freeze.effective(doc, entries, "intervention.max_resumes")
    except InputError:
        return  # frozen by an older launcher: the policy is text only
    source = resume["record"]["content"]
    parents = _lineage([project_dir(project), os.path.dirname(os.path.dirname(os.path.abspath(resume["path"])))])
    parents.setdefault(source["attempt_id"], (source.get("resumed_from") or {}).get("attempt_id"))

    def root(attempt_id):
        seen = set()
        while parents.get(attempt_id) is not None and attempt_id not in seen:
            seen.add(attempt_id)
            attempt_id = parents[attempt_id]
        return attempt_id
    origin = root(source["attempt_id"])
    done = sorted(a for a, parent in parents.items() if parent is not None and root(a) == origin)
    if len(done) + 1 > limit:
        raise FreezeRefused(f"{path}: intervention.max_resumes: the frozen policy allows {limit} continuation(s) of "
                            f"attempt {origin}; {len(done)} already ({', '.join(done) or 'none'}): this would be "
                            f"continuation {len(done) + 1} (record a dated deviation of intervention.max_resumes "
                            f"to allow it)")
    for entry in entries:
        if entry.get("field") == "intervention.max_resumes" and entry not in used and len(done) + 1 > \
                _freeze.lookup(doc["content"], "intervention.max_resumes"):
            used.append(entry)  # the record names the deviation it relied on


def _start_body(attempt_id, sampler_name, sandbox_name, model, price, projection, rate, limits, config, instance,
                family, seed, split, claim_doc, code, engine_id, freeze, command_line, project_ledger, resume, replay,
                salt, prices, role, state, host_facts):
    claim = claim_doc["claim"]
    body = {
        "attempt_id": attempt_id, "label": label_of(sampler_name), "sampler": sampler_name, "sandbox": sandbox_name,
        "model": model, "price": price, "projection": projection, "sandbox_rate": rate, "limits": vars(limits),
        "config": config, "prices_table_sha256": table_sha256(prices), "role": role,
        "task": {"version": engine.ENGINE_VERSION, "family": family, "seed": seed, "split": split,
                 "instance_id": instance["instance_id"], "fixture_sha256": engine.fixture_sha256(instance),
                 "horizon": instance["horizon"]},
        "claim": {"id": claim["id"], "scope": claim["scope"], "cap_micro_usd": claim["cap_micro_usd"],
                  "cap_tokens": claim["cap_tokens"], "cap_sandbox_micro_usd": claim.get("cap_sandbox_micro_usd", 0),
                  "plan": claim["plan"], "partial_budget": claim["partial_budget"],
                  "sha256": claim_doc["sha256"], "consumed_at_step": 0, "consumption": claim_doc["consumption"]},
        "claim_expires": claim["expires"], "code": code, "packages": packages(),
        "engine": {k: engine_id[k] for k in ("bundle_sha256", "manifest_sha256", "sources_match")},
        **worker_identity((config.get("sampling") or {}).get("prompt")), "freeze": freeze,
        "command_line": list(command_line or []),
        "salt": salt, "resumed_from": None, "replay_of": None,
        "host": f"{platform.system()} {platform.machine()} python {platform.python_version()}",
        # where the consumption and the project entry live (host paths: journal only, never the record)
        "state_dir": os.path.abspath(state_dir(state)), "project_dir": os.path.abspath(project_ledger.dir),
        "host_preflight": host_facts}
    if resume is not None:
        c = resume["record"]["content"]
        body["resumed_from"] = {"attempt_id": c["attempt_id"], "content_sha256": resume["record"]["content_sha256"],
                                "receipts_head": c["receipts_head"], "settled_days": c["settled_days"]}
    if replay is not None:
        c = replay["record"]["content"]
        body["replay_of"] = {"attempt_id": c["attempt_id"], "content_sha256": replay["record"]["content_sha256"],
                             "receipts_head": c["receipts_head"]}
    return body


def _end_for(exc):
    if isinstance(exc, (KeyboardInterrupt, Stopped)):
        return {"status": "operator", "reason": stop_reason(exc), "limit": "operator", "worker_exit_code": None}
    if isinstance(exc, BudgetHalt):
        return {"status": "budget_halt", "reason": exc.format_message(), "limit": exc.limit, "worker_exit_code": None}
    what = _what(exc)
    if isinstance(exc, CapacityError):  # refused for capacity before any call (e.g. creating the client)
        return {"status": "capacity_block", "reason": what, "limit": "capacity", "worker_exit_code": None,
                "capacity_block": {"call": None, "error": what[:300], "backoff_ms": [], "waited_ms": 0,
                                   "calls_answered": 0, "released_clients": None}}
    if isinstance(exc, SandboxError):
        return {"status": "infrastructure_interruption", "reason": what, "limit": "infrastructure",
                "worker_exit_code": None}
    return {"status": "infrastructure_interruption", "reason": f"the attempt failed on the host: {what}",
            "limit": "infrastructure", "worker_exit_code": None}


def _clear(partial, lock, why):
    lock.release()
    shutil.rmtree(partial, ignore_errors=True)
    raise NothingSpent(f"{partial}: {why}: nothing was spent and the claim was not consumed; the folder was removed")


def recover(partial, out, project=None, state=None):
    """Finish an attempt whose host died, from its partial directory (refused while it is live), from whichever
    step boundary the host died at: clear a folder that never consumed its claim (NothingSpent); settle and move a
    record already written; otherwise assemble the record (an `incomplete_execution`) and settle it."""
    if not os.path.isdir(partial):
        raise InputError(f"{partial}: not an unfinished attempt (no such folder)")
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise OutputExists(f"{out}: exists and is not empty")
    lock = AttemptLock(partial).acquire()
    journal_path = os.path.join(partial, "journal.jsonl")
    if _complete_record(partial) is not None:  # the host died after record.json was in place
        return finish(partial, out, recovered=True, lock=lock, project=project)
    if not os.path.exists(journal_path):
        _clear(partial, lock, "the host stopped before the attempt's start was journaled")
    try:
        events = read_journal(journal_path)
    except InputError:
        if not _has_whole_line(journal_path):  # the host died writing the start: the claim was never touched
            _clear(partial, lock, "the host stopped while the attempt's start was being journaled")
        lock.release()
        raise
    start = events[0][2]
    claim = start["claim"]
    journal = Journal(journal_path)
    if not any(kind == "consumed" for kind, _, _ in events):
        root = state or start.get("state_dir")
        found = marker_state(root, claim["id"], claim["consumption"]["nonce"]) if root else "ours"
        if found != "ours":
            _clear(partial, lock, "the host stopped before the claim was consumed"
                   + (" (another attempt consumed it)" if found == "theirs" else ""))
        journal.write("consumed", {"nonce": claim["consumption"]["nonce"], "recovered": True})
    folder = project or (_last(events, "project") or {}).get("dir") or start.get("project_dir")
    if _last(events, "project") is None and folder:
        doc = {"claim": claim, "sha256": claim["sha256"], "consumption": claim["consumption"]}
        entry = ProjectLedger(folder).open_claim(doc, start["attempt_id"], None, recovering=True)
        journal.write("project", {"dir": os.path.abspath(folder), "seq": entry["seq"], "hash": entry["hash"],
                                  "recovered": True})
        events = read_journal(journal_path)
    left = _sandbox_info(events)
    if start.get("sandbox") == "modal" and left.get("app_created") and not left.get("app_stopped"):
        from ._sandbox_modal import stop_leftovers  # leave no app behind that the launcher created
        journal.write("sandbox", stop_leftovers(left))
    return finish(partial, out, recovered=True, lock=lock, project=folder)


def _has_whole_line(path):
    from ._jsonfile import read_head
    head = read_head(path, 1 << 20)
    return head is None or b"\n" in head


def _complete_record(folder):
    path = os.path.join(folder, "record.json")
    if not os.path.exists(path):
        return None
    try:
        return read_record(path)
    except InputError:
        return None


def _last(events, kind):
    found = [body for k, _, body in events if k == kind]
    return found[-1] if found else None


def _sandbox_info(events):
    """The latest word on the sandbox: its start, the end of the attempt, or a later clean-up by `recover`."""
    info = {}
    for kind, _, body in events:
        if kind == "sandbox":
            info = body
        elif kind == "end" and body.get("sandbox"):
            info = body["sandbox"]
    return info


def _desk_state(tmp, salt):
    """(receipts, head, result) from the desk history; the result when the run was finalised."""
    path = os.path.join(tmp, "desk.sqlite")
    if not os.path.exists(path):
        return [], None, None
    try:
        status, result, run = engine.History(path).result()
    except engine.DeskError:
        return [], None, None
    return run.receipts, run.head, result if status == "finalized" else None


def _proposals(events, receipts, offset):
    """The proposals as journaled, each answered from the journal or -- for one the host died on before journaling
    the desk's answer (it writes ahead) -- from the receipts."""
    answered = {body["index"]: body for k, _, body in events if k == "proposal"}
    batches = [r for r in receipts if r["kind"] == "BATCH"][offset:]
    out, committed = [], 0
    for k, _, intent in events:
        if k != "submit":
            continue
        p = answered.get(intent["index"])
        if p is None:
            p = dict(intent)
            if committed < len(batches) and engine.content_sha256(batches[committed]["payload"]["batch"]) == \
                    intent.get("batch_sha256"):
                p.update(outcome="accepted", decisions=_desk.decisions_after(receipts, offset + committed),
                         reconciled="from the receipts (the host stopped before journaling the desk's answer)")
            else:
                p.update(outcome="not_committed",
                         message="the host stopped before the desk answered; the receipts hold no such batch")
        if p.get("outcome") == "accepted":
            committed += 1
        out.append(p)
    return out


def assemble(tmp, recovered=False):
    """Build and write the record from the partial directory's files; returns it."""
    events = read_journal(os.path.join(tmp, "journal.jsonl"))
    start = events[0][2]
    adapters = _last(events, "adapters") or {}
    end_event = _last(events, "end")
    end = end_event["termination"] if end_event else dict(RECOVERED_END)
    steps = [body for k, _, body in events if k == "step"]
    retained = _last(events, "retained")
    claim = start["claim"]
    ledger_path = os.path.join(tmp, "ledger.jsonl")
    caps = dict(cap_sandbox_micro_usd=claim["cap_sandbox_micro_usd"], sandbox_rate=start["sandbox_rate"])
    if os.path.exists(ledger_path):
        ledger = load_ledger(ledger_path, claim["sha256"], claim["cap_micro_usd"], claim["cap_tokens"], start["price"],
                             tolerate_torn_tail=recovered, **caps)
        if recovered:
            _complete_ledger(ledger, steps)
    else:
        ledger = Ledger(claim["sha256"], claim["cap_micro_usd"], claim["cap_tokens"], start["price"], **caps)
    receipts, head, desk_result = _desk_state(tmp, start["salt"])
    if not receipts and any(k == "result" or (k == "proposal" and body.get("outcome") == "accepted")
                            for k, _, body in events):
        raise InputError(f"{tmp}: desk.sqlite is missing or unreadable, yet the journal says batches were committed: "
                         f"the receipts cannot be rebuilt (no record is written over a history it cannot show)")
    offset = (start.get("resumed_from") or {}).get("settled_days", 0)
    proposals = _proposals(events, receipts, offset)
    result = _last(events, "result") or desk_result
    if result is not None and end["status"] != "completed":
        # The run was finalised and graded before the stop or failure arrived: the receipts say the
        # attempt completed (verify holds completed <=> result); the reason keeps what came after.
        end = dict(end, status="completed", limit=None,
                   reason=f"every checkpoint closed; the run is finalised; then {end['reason']}")
    counted = _desk.counts(receipts)
    totals = ledger.totals()
    cost = {"micro_usd": totals["charged_micro_usd"], "tokens_in": totals["tokens_in"], "tokens_out": totals["tokens_out"],
            "prompt_cache_hit_tokens": totals["cached_tokens_in"],
            "unresolved_micro_usd": totals["unresolved_micro_usd"], "unresolved_calls": totals["unresolved_calls"],
            "calls": len({e["call"] for e in ledger.entries if e["account"] == "inference"}),
            "cache_hits": sum(1 for e in ledger.entries if e["kind"] == "charge" and e["note"] == "cache hit"),
            "sandbox_micro_usd": totals["sandbox_charged_micro_usd"],
            "sandbox_unresolved_micro_usd": totals["sandbox_unresolved_micro_usd"],
            **({"cpu_ms": totals["cpu_ms"]} if "cpu_ms" in totals else {}),  # the local sampler's CPU time
            "projection": bool(start.get("projection"))}
    if result is None and end["status"] == "completed":
        end = dict(RECOVERED_END, reason="the worker ended but the run was never finalised")
    summary = summary_text(end, result, counted["accepted_actions"], counted["settled_days"], cost)
    limits = start["limits"]
    end_sampling = (end_event or {}).get("sampling")
    sampling = end_sampling if end_sampling is not None else adapters.get("sampling")
    receipts_head = result["receipts_head"] if result else head
    replay_of = start.get("replay_of")
    if replay_of is not None:
        replay_of = dict(replay_of, head_matches=receipts_head == replay_of["receipts_head"])
    content = {
        "schema_version": ATTEMPT_SCHEMA_VERSION, "attempt_id": start["attempt_id"], "kind": "model-attempt",
        "label": start["label"], "execution_path": "model worker",
        "model": {"id": start["model"], "provider": adapters.get("provider", start["sampler"])},
        "sampling": dict(sampling or {}, max_tokens_per_call=limits["max_tokens_per_call"]),
        "config": start["config"], "config_hash": engine.content_sha256(start["config"]),
        "code": start["code"], "packages": start["packages"], "engine": start["engine"],
        "prompt": start["prompt"], "output_schema": start["output_schema"], "worker": start["worker"],
        "prices": {"model": start["price"], "sandbox": {"name": start["sandbox"],
                                                        "micro_usd_per_second": start["sandbox_rate"]},
                   "table_sha256": start["prices_table_sha256"]},
        "command_line": start["command_line"], "freeze": start["freeze"],
        "task": start["task"], "salt": start["salt"],
        "information_boundary": {
            "sandbox": start["sandbox"], "network": adapters.get("network"), "staged": _last(events, "staged") or [],
            "worker_env_keys": adapters.get("worker_env_keys", []),
            "never_staged": list(NEVER_STAGED_PATHS),
            "model_calls": "made by the host controller; the worker holds no keys and sees no ledger"},
        "sandbox": _sandbox_info(events),
        "service": (end_event or {}).get("service"),
        "claim": claim, "project": _project_ref(_last(events, "project")),
        "limits": limits,
        "ledger": {"entries": ledger.entries, "head": ledger.head, "totals": totals},
        "termination": end, "proposals": proposals,
        "invalid_artefacts": sum(1 for s in steps for t in s["tool_calls"] if t["name"] == "validate_artefact"),
        "receipts_head": receipts_head, "result": result,
        "accepted_actions": counted["accepted_actions"], "settled_days": counted["settled_days"],
        "cost": cost, "resumed_from": start.get("resumed_from"), "replay_of": replay_of, "summary": summary,
        "role": start.get("role") or ("confirmatory" if start["freeze"] else None),
    }
    started, finished = events[0][1], events[-1][1]
    volatile = {"started": started, "finished": finished if not recovered else now_iso(),
                "duration_ms": int((parse_iso(finished) - parse_iso(started)).total_seconds() * 1000),
                "host": start["host"], "claim_expires": start["claim_expires"],
                "worker_stderr_tail": (end_event or {}).get("worker_stderr", ""), "recovered": recovered,
                "sandbox_seconds": (end_event or {}).get("sandbox_seconds"),
                "calls_ms": [body["ms"] for k, _, body in events if k == "latency"],
                "backoff": [body for k, _, body in events if k == "backoff"],
                "host_preflight": start.get("host_preflight")}
    return write_attempt(tmp, content, volatile, transcript_doc(start["attempt_id"], steps, summary), receipts,
                         retained=retained)


def _complete_ledger(ledger, steps):
    """A dead host's half-done settlements booked (Ledger.complete, from the journal's answered calls) and
    ledger.jsonl made exactly the entries, in one rename: a record is never written over a ledger whose charge has
    no release, or an answer the ledger never charged. A `recover` killed here leaves the old file or the new one;
    run again, it completes the same entries."""
    answered = {s["call"]["index"]: s["call"] for s in steps if s.get("role") == "model"
                and isinstance(s.get("call"), dict) and "micro_usd" in s["call"]}
    path = ledger.path
    ledger.path = None  # booked in memory, then the whole file replaced
    ledger.complete(answered)
    ledger.path = path
    with open(path, "rb") as fh:
        on_disk = fh.read()
    if on_disk != b"".join(engine.canonical_json(e) + b"\n" for e in ledger.entries):
        ledger.rewrite()
        fsync_dir(os.path.dirname(path))
    boundary("recover:after-ledger")


def _project_ref(entry):
    """The project ledger entry that opened this attempt's claim (its folder is the operator's, not recorded)."""
    return None if entry is None else {"seq": entry["seq"], "hash": entry["hash"]}


def finish(tmp, out, recovered=False, lock=None, project=None):
    """Write the record, settle the project ledger, remove the working files, rename the folder -- in that order,
    each step durable before the next, so a death between any two is finished by `recover`."""
    record = _complete_record(tmp)
    journal_path = os.path.join(tmp, "journal.jsonl")
    if project is None and os.path.exists(journal_path):
        try:
            project = (_last(read_journal(journal_path), "project") or {}).get("dir")
        except InputError:
            project = None
    try:
        if record is None:
            if os.path.exists(journal_path):
                write_status(tmp, "ending")
            record = assemble(tmp, recovered)
        boundary("record:after-record")
        if project:
            book = ProjectLedger(project)
            if book.claim_entry(record["content"]["claim"]["id"]) is not None:
                book.settle(record)
        boundary("record:after-settle")
    except Exception as exc:
        if lock is not None:
            lock.release()
        raise LaunchError(f"{tmp}: the record could not be {'settled' if record else 'assembled'} "
                          f"({_what(exc)}); the attempt's files stay there for `fundbook-launch recover`") from None
    for name in WORKING_FILES:  # their content is in the record, transcript and receipts
        path = os.path.join(tmp, name)
        if os.path.exists(path):
            os.remove(path)
        if name == "desk.sqlite":
            boundary("record:after-desk-removed")
    if lock is not None:
        lock.release(remove=True)
    elif os.path.exists(os.path.join(tmp, LOCK_NAME)):
        os.remove(os.path.join(tmp, LOCK_NAME))
    fsync_dir(tmp)
    boundary("record:after-cleanup")
    if os.path.isdir(out):
        os.rmdir(out)  # checked empty
    os.rename(tmp, out)
    fsync_dir(os.path.dirname(os.path.abspath(out)))
    boundary("record:after-rename")
    return record


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
