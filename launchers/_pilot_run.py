"""`fundbook-launch pilot`: one attempt of the frozen configuration per pilot seed, then pilot.json.

The attempts go through the same `execute` as any attempt (role "pilot"), with the sampler, sandbox, sampling
settings, limits and horizon the freeze -- with its deviations -- says, so the pilot works with any sampler the
adapters know. The figures, criteria and verdict are `_pilot`'s, computed from the records written.
"""

import os

from . import _freeze
from ._adapters import API_SAMPLERS, is_paid, make_sampler_factory, make_sandbox_factory
from ._attempt import execute
from ._controller import Limits
from ._errors import InputError
from ._claims import read_claim
from ._pilot import check_spend, content, effective_terms, projection, write
from ._record import read_record


def frozen_run(doc, entries):
    """The configuration the freeze (with its deviations) says to run: sampler, sandbox name, sampling, limits,
    horizon, models and families."""
    def eff(field):
        return _freeze.effective(doc, entries, field)
    sampling = {k: eff(f"config.sampling.{k}") for k in sorted(eff("config.sampling") or {})}
    limits = Limits(eff("config.limits.worker_seconds"), eff("config.limits.call_deadline_s"),
                    eff("config.limits.max_tokens_per_call"), eff("config.limits.max_calls"))
    return {"sampler": eff("config.sampler"), "sandbox": eff("config.sandbox.name"), "sampling": sampling,
            "limits": limits, "horizon": eff("config.horizon"), "models": eff("models"), "families": eff("families")}


def local_sampler(plan, model_file, cache_path):
    """The llama-cpp factory for a frozen local configuration: every setting from the freeze, the file from
    `model_file`, which must be the frozen one (its sha256 is in the frozen sampling)."""
    from ._sampler_llama import SETTINGS, factory
    if model_file is None:
        raise InputError("--model-file: the freeze runs the llama-cpp sampler: name its GGUF file")
    frozen = plan["sampling"]
    settings = {k: frozen[k] for k in SETTINGS if k in frozen and k not in ("temperature_milli", "seed")}
    build = factory(model_file, cache_path, frozen.get("temperature_milli", 0), frozen.get("seed", 0), **settings)
    if build.sampling.get("model_sha256") != frozen.get("model_sha256"):
        raise InputError(f"--model-file {model_file}: sha256 {build.sampling.get('model_sha256', '')[:12]} is not "
                         f"the frozen model's {str(frozen.get('model_sha256'))[:12]}")
    for key in sorted(set(build.sampling) | set(frozen)):
        if build.sampling.get(key) != frozen.get(key):
            raise InputError(f"--model-file {model_file}: sampling.{key} is {build.sampling.get(key)!r} here, the "
                             f"freeze has {frozen.get(key)!r} (a change is a deviation)")
    return build


def run(*, freeze_path, claims, seeds, family, model, out_dir, prices, state=None, project=None, cache_path=None,
        make_sampler=None, make_sandbox=None, command_line=None, host=None, environ=None, sleep=None,
        model_file=None, confirm_spend=None) -> dict:
    """One pilot attempt per (claim, seed) of the frozen configuration, then pilot.json in `out_dir`.
    `model_file`: the GGUF file of a frozen llama-cpp configuration. `confirm_spend`: the operator's confirmation
    of the projected worst case (refused, before any claim is consumed, when it is missing or short, or when the
    worst case passes the frozen pilot spend cap)."""
    doc, entries = _freeze.load(freeze_path)
    plan = frozen_run(doc, entries)
    if len(claims) != len(seeds) or not claims:
        raise InputError(f"--claim/--seed: one claim per pilot attempt (got {len(claims)} claims for {len(seeds)} "
                         f"seeds; a claim is spent once)")
    model = model or (plan["models"][0] if len(plan["models"]) == 1 else None)
    family = family or (plan["families"][0] if len(plan["families"]) == 1 else None)
    if model not in plan["models"] or family not in plan["families"]:
        raise InputError(f"--model/--family: the pilot runs a frozen model and family ({plan['models']}, "
                         f"{plan['families']})")
    frozen_seeds = set(_freeze.effective(doc, entries, "seeds") or [])
    if frozen_seeds & set(seeds):
        raise InputError(f"--seed {sorted(frozen_seeds & set(seeds))}: a pilot seed is one of the study's frozen seeds "
                         f"(pilot seeds are excluded from confirmatory estimates: pick others)")
    if len(set(seeds)) != len(seeds):
        raise InputError("--seed: each pilot seed once")
    if os.path.exists(out_dir) and (not os.path.isdir(out_dir) or os.listdir(out_dir)):
        raise InputError(f"--out {out_dir}: exists and is not empty (a pilot writes a new folder)")
    spend = projection(effective_terms(doc, entries, freeze_path), model, [read_claim(c)["claim"] for c in claims])
    check_spend(spend, confirm_spend)
    limits, sampler_name, sandbox_name = plan["limits"], plan["sampler"], plan["sandbox"]
    if model_file is not None and sampler_name != "llama-cpp":
        raise InputError(f"--model-file: the freeze runs the {sampler_name} sampler, not llama-cpp")
    if make_sampler is None and sampler_name == "llama-cpp":
        make_sampler = local_sampler(plan, model_file, cache_path)
    frozen = plan["sampling"]
    if make_sampler is None:  # an HTTP API sampler: the frozen settings (the server's URL from the environment)
        api = {"model": model, "dialect": frozen.get("dialect", "openai"),
               "local_server": frozen.get("local_server") == 1,
               "reasoning_effort": frozen.get("reasoning_effort", "low")} if sampler_name in API_SAMPLERS else None
        make_sampler = make_sampler_factory(sampler_name, cache_path, limits.call_deadline_s,
                                            frozen.get("temperature_milli", 700), frozen.get("seed", 0),
                                            environ=environ, api=api)
    make_sandbox = make_sandbox or make_sandbox_factory(sandbox_name)
    os.makedirs(out_dir, exist_ok=True)
    folders, records = [], []
    for i, (claim, seed) in enumerate(zip(claims, seeds)):
        folder = f"{i + 1:02d}-{family}-seed-{seed}"
        execute(claim_path=claim, out=os.path.join(out_dir, folder), family=family, seed=seed,
                split=_freeze.effective(doc, entries, "split"), model=model, sampler_name=sampler_name,
                sandbox_name=sandbox_name, make_sampler=make_sampler, make_sandbox=make_sandbox, prices=prices,
                limits=limits, horizon=plan["horizon"], state=state, paid=is_paid(sampler_name, frozen.get("local_server") == 1),
                freeze_path=freeze_path, project=project, command_line=command_line, sampling=make_sampler.sampling,
                sandbox_config=getattr(make_sandbox, "config", None), role="pilot", host=host, environ=environ,
                sleep=sleep)
        folders.append(folder)
        records.append(read_record(os.path.join(out_dir, folder, "record.json")))
    body = content(doc, entries, freeze_path, model, family, seeds, folders, records, confirm_spend)
    return write(os.path.join(out_dir, "pilot.json"), body, records)
