"""The model arm: one frozen launcher configuration, one real attempt per item.

  model:llama-cpp:PATH     the local open-weights sampler over the GGUF file PATH
                           (launchers/_sampler_llama.py), the compact prompt and
                           the desk grammar, in the local sandbox, at no cost
  model:llama-cpp:packaged the same over the model requirements-local.lock
                           installs (SmolLM2-135M-Instruct.Q4_1), with no host
                           path in the sweep's manifest
  model:openai:MODEL, model:anthropic:MODEL, model:openai-compatible:MODEL@URL
                           a model behind an HTTP API (experiments/arm_api.py:
                           paid ones under the project's freeze, each item's
                           claim at its caps, in an isolating sandbox)

Each item's attempt is a full launcher attempt (claim, ledger, record,
transcript, receipts, cache.jsonl) written to the attempts folder
(`$FUNDBOOK_ARM_ATTEMPTS`, default runs/attempts/, the Attempts page) under a
name fixed by the configuration and the item, so a sweep resumes: an item
whose attempt is already recorded -- and verifies, under the same
configuration hash -- is read back, never run again (the feasibility pilot's
second pass and the sweep's Pyodide sample read it too). The candidate is the
batches the desk accepted, graded afresh like every other arm's, so its rows
carry the same evaluator id.

Items are produced one at a time, when the sweep asks for them, in the
sweep's order: a sequential rule that stops the sweep early saves the
attempts it did not need. With --workers N each of N processes loads its own
copy of each model; the sampler's thread counts are in the recorded settings,
so an answer does not depend on N (only the wall time does).

An operator pauses a long sweep between worlds by creating the file named by
`$FUNDBOOK_ARM_PAUSE`: the next attempt does not start, the sweep stops with
its finished items kept, and running it again resumes at that world.

Intervention policy, applied by the code: an attempt that ended `operator`
or `infrastructure_interruption` (a stop or a host failure, not the model's
doing) is kept and published, and the item is tried once more under the next
name (`.2`); the last try is the item's attempt whatever its end (the one
rule, builders/counting.py, which the site's pages count by too). A stop
(SIGTERM, Ctrl-C) also stops the sweep: the item's next try starts when the
sweep is run again, never in the process the operator stopped.

A world's tries bind each other: each record is read from the folder its own
attempt id names (two tries swapped, or a retry renamed into the place of a
deleted try, is refused by name), a retry is never read without the try
before it, and no try follows one that ended for good.
"""

import os
import shutil
import tempfile

import engine
from builders import counting

from . import arm_api
from .arm_limits import LIMITS
from .errors import ExperimentError, NotInstalled

ATTEMPTS_ENV = "FUNDBOOK_ARM_ATTEMPTS"
PAUSE_ENV = "FUNDBOOK_ARM_PAUSE"  # a file: while it exists, no new attempt starts (the sweep stops between worlds)
PACKAGED = "packaged"  # model:llama-cpp:packaged (SmolLM2), model:llama-cpp:packaged:NAME (launchers/_packaged.py)
RETRY_ENDS = counting.RETRY_ENDS  # the one rule for which try counts (builders/counting.py)
MAX_TRIES = counting.MAX_TRIES
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_factories = {}  # model file -> the sampler factory (the file hashed and inspected once a process)


def attempts_dir() -> str:
    return os.environ.get(ATTEMPTS_ENV) or os.path.join(REPO, "runs", "attempts")


def _factory(model_file):
    from launchers import LaunchError, SamplerOptions, sampler
    from launchers import NotInstalled as Missing

    packaged = model_file == PACKAGED or model_file.startswith(PACKAGED + ":")
    key = model_file if packaged else os.path.abspath(model_file)
    if key not in _factories:
        try:  # a packaged model ("packaged", "packaged:NAME") is resolved by the sampler: its file and template
            _factories[key] = sampler(
                "llama-cpp",
                SamplerOptions(
                    call_deadline_s=LIMITS["call_deadline_s"],
                    temperature_milli=0,
                    seed=0,
                    own={"model_file": model_file},
                ),
            )
        except LaunchError as exc:
            kind = NotInstalled if isinstance(exc, Missing) else ExperimentError
            raise kind(f"--arm model:llama-cpp:{model_file}: {exc.format_message()}")
    return _factories[key]


def configuration(model_file) -> dict:
    """The frozen launcher configuration of the arm: what decides its attempts, hashed into its name."""
    from launchers import worker_identity

    build = _factory(model_file)
    if build.model_id is None:  # it names the attempts, the register's row and the pages
        raise ExperimentError(
            f"--arm model:llama-cpp:{model_file}: the file's name is not a model id (letters, "
            f"digits and . _ : / + @ -): rename the file"
        )
    ident = worker_identity(build.sampling["prompt"])
    config = {
        "provider": "llama-cpp",
        "model": build.model_id,
        "sampling": build.sampling,
        "limits": dict(LIMITS),
        "sandbox": "local",
        "prompt": ident["prompt"],
        "output_schema": ident["output_schema"],
        "worker": ident["worker"],
    }
    return dict(config, config_hash=engine.content_sha256(config))


def parse(name, arg, text, recorded=None) -> dict:
    """`--arm model:llama-cpp:PATH` -> the arm spec (its default name pins the configuration hash).

    `recorded`: the arm as a stopped sweep's manifest (sweep.json) records it. A stopped sweep is judged as it
    ran: that configuration stands in (its hash checked), whatever today's code or library would build, and the
    arm is read-only: its recorded attempts are read back and verified, and a missing one is an error, never a
    model run."""
    provider, _, path = arg.partition(":")
    if provider in arm_api.PROVIDERS:
        return _parse_api(name, provider, path, text, recorded)
    if provider != "llama-cpp" or not path:
        raise ExperimentError(
            f"--arm {text}: expected model:llama-cpp:<GGUF file>, model:openai:MODEL, "
            f"model:anthropic:MODEL or model:openai-compatible:MODEL@URL"
        )
    if recorded is not None:
        return _from_manifest(name, path, text, recorded, "a stopped sweep is verified as it ran")
    config = configuration(path)
    hashed = {k: v for k, v in config.items() if k != "config_hash"}
    return {
        "name": name or f"model:{config['model']}:{config['config_hash'][:12]}",
        "kind": "model",
        "provider": "llama-cpp",
        "model_file": path,
        "model": config["model"],
        "model_sha256": config["sampling"]["model_sha256"],
        "config_hash": config["config_hash"],
        "configuration": hashed,
    }  # what the hash covers, in the sweep's manifest: the frozen configuration


def _parse_api(name, provider, rest, text, recorded):
    """`--arm model:PROVIDER:...` over an HTTP API: the key checked now (never kept), the settings offline."""
    model, url = arm_api.target(provider, rest, text)
    if recorded is not None:
        arm = _from_manifest(name, rest, text, recorded, "a stopped sweep is verified as it ran", provider)
        return dict(arm, base_url=url, text=text)
    config, paid = arm_api.configuration(provider, model, url, text)
    hashed = {k: v for k, v in config.items() if k != "config_hash"}
    arm = {
        "name": name or f"model:{model}:{config['config_hash'][:12]}",
        "kind": "model",
        "provider": provider,
        "target": rest,
        "model": model,
        "config_hash": config["config_hash"],
        "paid": paid,
        "configuration": hashed,
    }
    arm_api.check_key(dict(arm, text=text, sandbox=config["sandbox"] if paid else None))
    return dict(arm, base_url=url, text=text)


def _from_manifest(name, path, text, entry, why, provider="llama-cpp"):
    """The recorded arm, checked: its configuration hashes to its config_hash, which its name pins."""
    where = f"--arm {text}: the sweep manifest's arm"
    if not isinstance(entry, dict) or not isinstance(entry.get("configuration"), dict):
        raise ExperimentError(f"{where}: expected an object with its configuration")
    try:
        config_hash = engine.content_sha256(entry["configuration"])
    except ValueError as exc:  # not canonical JSON (a float, a lone surrogate): not a configuration the arm hashed
        raise ExperimentError(f"{where}: configuration: {exc}")
    want = name or f"model:{entry['configuration'].get('model')}:{config_hash[:12]}"
    place = "model_file" if provider == "llama-cpp" else "target"
    if (
        entry.get("kind"),
        entry.get(place),
        entry.get("config_hash"),
        entry.get("name"),
        entry.get("provider", "llama-cpp"),
    ) != ("model", path, config_hash, want, provider):
        raise ExperimentError(f"{where}: its configuration does not hash to the arm it names ({why})")
    c = entry["configuration"]
    if provider != "llama-cpp":
        return {
            "name": want,
            "kind": "model",
            "provider": provider,
            "target": path,
            "model": c.get("model"),
            "config_hash": config_hash,
            "paid": entry.get("paid"),
            "configuration": c,
            "read_only": True,
        }
    return {
        "name": want,
        "kind": "model",
        "provider": "llama-cpp",
        "model_file": path,
        "model": c.get("model"),
        "model_sha256": (c.get("sampling") or {}).get("model_sha256"),
        "config_hash": config_hash,
        "configuration": c,
        "read_only": True,
    }


def _slug(arm):
    base = "".join(c if c.isalnum() or c in "._-" else "-" for c in arm["model"]).strip("-._") or "model"
    return f"{base[:60]}-{arm['config_hash'][:8]}"


def attempt_ids(arm, row):
    first = f"{_slug(arm)}-{row['family']}-seed-{row['seed']}"
    return [first] + [f"{first}.{n}" for n in range(2, MAX_TRIES + 1)]


def _read(path, arm, row, attempt_id=None):
    """A recorded attempt of this item: verified, under this configuration, for this world, and (`attempt_id`)
    the try its folder names: a record read from another try's folder (two tries swapped, a retry renamed
    into the place of a try deleted) is refused."""
    from launchers import LaunchError
    from launchers import verify_attempt

    try:
        record = verify_attempt(path)["record"]
    except LaunchError as exc:
        raise ExperimentError(
            f"{path}: the recorded attempt does not verify ({exc.format_message()}); move it "
            f"aside to run the item again"
        )
    c = record["content"]
    if c["task"]["fixture_sha256"] != row["fixture_sha256"]:
        raise ExperimentError(f"{path}: an attempt on another world than {row['item_id']}")
    if _config_hash(c) != arm["config_hash"]:
        raise ExperimentError(f"{path}: recorded under another configuration than the arm's {arm['config_hash'][:12]}")
    if attempt_id is not None and c.get("attempt_id") != attempt_id:
        raise ExperimentError(
            f"{path}: the record is attempt {str(c.get('attempt_id'))[:120]!r}, read from the folder "
            f"of try {attempt_id}: each try is kept in its own folder under its own id (two tries "
            f"swapped, or a try renamed into another's place)"
        )
    return record


def _config_hash(content):
    """The arm configuration an attempt record was run under, rebuilt from its content."""
    sampling = {k: v for k, v in content["sampling"].items() if k != "max_tokens_per_call"}
    limits = content["limits"]
    config = {
        "provider": content["model"]["provider"],
        "model": content["model"]["id"],
        "sampling": sampling,
        "limits": {k: limits[k] for k in LIMITS},
        "sandbox": content["information_boundary"]["sandbox"],
        "prompt": content["prompt"],
        "output_schema": content["output_schema"],
        "worker": content["worker"],
    }
    if config["provider"] == "openai-compatible":  # the server it asked, as recorded (no credentials or query)
        config["base_url"] = (content.get("service") or {}).get("base_url")
    return engine.content_sha256(config)


def _run(arm, row, attempt_id, out):
    if arm["provider"] in arm_api.PROVIDERS:
        return arm_api.run(arm, row, attempt_id, out)
    from launchers import AttemptSpec, Grant, Limits, Places, Task, authorise, execute, load_prices, sandbox

    build = _factory(arm["model_file"])
    split = "heldout" if row.get("split") == "heldout" else "public-practice"
    scratch = tempfile.mkdtemp(prefix="fundbook-model-arm-")
    project = os.path.join(scratch, "project")  # a free attempt is bound by its cache (rederive), not by money
    try:  # a free attempt's claim and project ledger are formalities: kept out of the publication
        claim = os.path.join(scratch, "claim.json")
        authorise(
            claim,
            row["family"],
            split,
            build.model_id,
            0,
            10**9,
            24,
            grant=Grant(state=os.path.join(scratch, "state"), local=True, project=project),
        )
        limits = Limits(
            LIMITS["worker_seconds"], LIMITS["call_deadline_s"], LIMITS["max_tokens_per_call"], LIMITS["max_calls"]
        )
        return execute(
            AttemptSpec(
                claim=claim,
                out=out,
                task=Task(row["family"], row["seed"], split, row.get("horizon") or 20),
                model=build.model_id,
                sampler=build,
                sandbox=sandbox("local"),
                prices=load_prices(),
                limits=limits,
                attempt_id=attempt_id,
                places=Places(os.path.join(scratch, "state"), project),
            )
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def attempt_for(arm, row) -> tuple:
    """(record, path) of the item's attempt: read back when recorded, else run now."""
    from launchers import LaunchError

    if row.get("kind") != "family":
        raise ExperimentError(f"--arm {arm['name']}: item {row['item_id']}: a model arm runs family worlds only")
    root = attempts_dir()
    record = path = None
    ids = attempt_ids(arm, row)
    for index, attempt_id in enumerate(ids):
        path = os.path.join(root, attempt_id, "record.json")
        if os.path.exists(path):
            record = _read(path, arm, row, attempt_id)
        else:
            later = _present(root, ids[index + 1 :])
            if later:  # every try is kept: a retry without the try before it is one whose first try went missing
                raise ExperimentError(
                    f"{root}/{attempt_id}: item {row['item_id']}'s try {attempt_id} is missing, "
                    f"but its later try {later[0]} is present: every try of a world is kept"
                )
            if os.path.exists(os.path.join(root, attempt_id) + ".partial"):
                raise ExperimentError(
                    f"{root}/{attempt_id}.partial: an unfinished attempt (`fundbook-launch "
                    f"recover` it, then run the sweep again)"
                )
            if arm.get("read_only"):  # verifying: a recorded attempt is read back, a missing one is never run
                raise ExperimentError(
                    f"{root}/{attempt_id}: item {row['item_id']}'s attempt is not recorded "
                    f"(verifying reads recorded attempts only)"
                )
            if arm.get("tiers") is not None:  # seed 002: a seed the frozen tier plan does not hold, or has cut
                _admit(arm, row)
            pause = os.environ.get(PAUSE_ENV)
            if pause and os.path.exists(pause):  # the operator's pause: between attempts, never inside one
                raise ExperimentError(
                    f"--arm {arm['name']}: paused before item {row['item_id']} ({PAUSE_ENV} "
                    f"{pause} exists): the finished items are kept; run the sweep again to resume"
                )
            try:
                record = _run(arm, row, attempt_id, os.path.join(root, attempt_id))
            except LaunchError as exc:
                raise ExperimentError(f"--arm {arm['name']}: item {row['item_id']}: {exc.format_message()}")
            if record["content"]["termination"]["status"] == "operator":  # a stop means stop: no retry now
                raise ExperimentError(
                    f"--arm {arm['name']}: item {row['item_id']}: stopped by the operator "
                    f"({attempt_id} is kept): run the sweep again to try the item once more"
                )
        status = record["content"]["termination"]["status"]
        if not counting.retry_due(status):  # the last try counts, whatever its end
            later = _present(root, ids[index + 1 :])
            if later:  # the policy tries a world again only after a stop or a host failure
                raise ExperimentError(
                    f"{root}/{later[0]}: a try of item {row['item_id']} after its try {attempt_id} "
                    f"ended {status}: the intervention policy tries a world again only after an "
                    f"{' or '.join(RETRY_ENDS)} end"
                )
            break
    return record, path


def spent(arms) -> dict:
    """{(model, family, seed): micro-USD} over every recorded try of the arms' attempts (what a tier plan
    reconciles: free for a local model, so a plan over one never cuts, but it still admits only what it holds)."""
    from launchers import spent_from_records

    root = attempts_dir()
    prefixes = [f"{_slug(a)}-" for a in arms]
    contents = []
    if os.path.isdir(root):
        for name in sorted(os.listdir(root)):
            path = os.path.join(root, name, "record.json")
            if any(name.startswith(p) for p in prefixes) and os.path.isfile(path):
                from launchers import read_json

                contents.append(read_json(path, "attempt record")["content"])
    return spent_from_records(contents)


def _admit(arm, row):
    from launchers import LaunchError
    from launchers import admit

    try:
        admit(arm["tiers"], spent([arm]), arm["model"], row["family"], row["seed"], "the study's tier plan")
    except LaunchError as exc:
        raise ExperimentError(
            f"--arm {arm['name']}: item {row['item_id']}: {exc.format_message()}: the sweep "
            f"stops here (a betting rule is valid wherever it stops)"
        )


def _present(root, ids) -> list:
    """The tries among `ids` with anything at their place (a record, a folder, an unfinished .partial)."""
    return [
        i for i in ids if os.path.lexists(os.path.join(root, i)) or os.path.lexists(os.path.join(root, i) + ".partial")
    ]


def tries(arm, row) -> list:
    """[(attempt_id, folder)] of every try of the world the attempts folder holds, in order, each checked as
    attempt_for checks it (read back, never run): what a study's evidence lists."""
    attempt_for(dict(arm, read_only=True), row)
    root = attempts_dir()
    return [
        (i, os.path.join(root, i))
        for i in attempt_ids(arm, row)
        if os.path.exists(os.path.join(root, i, "record.json"))
    ]


def produce(arm, row) -> tuple:
    """(candidate, sha256 of the record it came from, usage) for the sweep's Producer."""
    record, path = attempt_for(arm, row)
    c = record["content"]
    candidate = {
        "format": 1,
        "fixture_sha256": c["task"]["fixture_sha256"],
        "instance_id": c["task"]["instance_id"],
        "label": c["attempt_id"],
        "batches": [p["batch"] for p in c["proposals"] if p.get("outcome") == "accepted"],
    }
    with open(path, "rb") as fh:
        sha = engine.sha256_hex(fh.read())
    cost = c["cost"]
    usage = {
        "calls": cost["calls"],
        "tokens_in": cost["tokens_in"],
        "tokens_out": cost["tokens_out"],
        "micro_usd": cost["micro_usd"],
        "cpu_ms": cost.get("cpu_ms", 0),
        "attempt": c["attempt_id"],
        "wall_ms": record["volatile"]["duration_ms"],
        "status": c["termination"]["status"],
    }
    return candidate, sha, usage
