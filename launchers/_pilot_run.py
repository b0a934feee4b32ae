"""`fundbook-launch pilot`: one attempt of the frozen configuration per pilot seed, then pilot.json.

The attempts go through the same `execute` as any attempt (role "pilot"), with the sampler, sandbox, sampling
settings, limits and horizon the freeze -- with its deviations -- says, so the pilot works with any sampler the
adapters know. The figures, criteria and verdict are `_pilot`'s, computed from the records written.
"""

import os
from dataclasses import dataclass

from . import _freeze, _providers
from ._attempt import execute
from ._claims import read_claim
from ._controller import Limits
from ._errors import InputError
from ._pilot import Frozen, check_spend, content, effective_terms, projection, write
from ._provider import SamplerOptions
from ._record import read_record
from ._spec import AttemptSpec, Places, Sources, Task


@dataclass(frozen=True)
class PilotSpec:
    """A pilot: the freeze whose configuration it runs, one claim per seed, the family and model (default: the
    freeze's only one), its folder, the price table, where the ledgers are, a decision cache, the GGUF file of a
    frozen llama-cpp configuration, and the operator's confirmation of the projected worst case."""

    freeze: str
    claims: tuple
    seeds: tuple
    out_dir: str
    prices: dict
    family: str = None
    model: str = None
    places: Places = Places()
    cache_path: str = None
    model_file: str = None
    confirm_spend: int = None
    command_line: tuple = ()


def frozen_run(doc, entries):
    """The configuration the freeze (with its deviations) says to run: sampler, sandbox name, sampling, limits,
    horizon, models and families."""

    def eff(field):
        return _freeze.effective(doc, entries, field)

    sampling = {k: eff(f"config.sampling.{k}") for k in sorted(eff("config.sampling") or {})}
    limits = Limits(
        eff("config.limits.worker_seconds"),
        eff("config.limits.call_deadline_s"),
        eff("config.limits.max_tokens_per_call"),
        eff("config.limits.max_calls"),
    )
    return {
        "sampler": eff("config.sampler"),
        "sandbox": eff("config.sandbox.name"),
        "sampling": sampling,
        "limits": limits,
        "horizon": eff("config.horizon"),
        "models": eff("models"),
        "families": eff("families"),
    }


def _frozen_sampler(plan, pilot, model, environ):
    """The frozen sampler, built as its provider checks it: every setting from the freeze; a llama-cpp file from
    `model_file`, which must be the frozen one (its sha256 is in the frozen sampling); an HTTP API's server URL
    from the environment."""
    frozen, name = plan["sampling"], plan["sampler"]
    if name == "llama-cpp":
        if pilot.model_file is None:
            raise InputError("--model-file: the freeze runs the llama-cpp sampler: name its GGUF file")
        cls = _providers.sampler_class(name)
        own = {k: frozen[k] for k in cls.OPTIONS if k in frozen}
        built = _providers.sampler(
            name,
            SamplerOptions(
                cache_path=pilot.cache_path,
                temperature_milli=frozen.get("temperature_milli", 0),
                seed=frozen.get("seed", 0),
                own=dict(own, model_file=pilot.model_file),
            ),
        )
        if built.sampling.get("model_sha256") != frozen.get("model_sha256"):
            raise InputError(
                f"--model-file {pilot.model_file}: sha256 {built.sampling.get('model_sha256', '')[:12]} "
                f"is not the frozen model's {str(frozen.get('model_sha256'))[:12]}"
            )
        for key in sorted(set(built.sampling) | set(frozen)):
            if built.sampling.get(key) != frozen.get(key):
                raise InputError(
                    f"--model-file {pilot.model_file}: sampling.{key} is {built.sampling.get(key)!r} "
                    f"here, the freeze has {frozen.get(key)!r} (a change is a deviation)"
                )
        return built
    cls = _providers.sampler_class(name)
    own = {k: (frozen[k] == 1 if k == "local_server" else frozen[k]) for k in cls.OPTIONS if k in frozen}
    return _providers.sampler(
        name,
        SamplerOptions(
            cache_path=pilot.cache_path,
            call_deadline_s=plan["limits"].call_deadline_s,
            temperature_milli=frozen.get("temperature_milli", 700),
            seed=frozen.get("seed", 0),
            model=model if cls.API else None,
            own=own,
            environ=environ,
        ),
    )


def run(pilot: PilotSpec, *, sampler=None, sandbox=None, host=None, environ=None, sleep=None) -> dict:
    """One pilot attempt per (claim, seed) of the frozen configuration, then pilot.json in its folder. The spend
    is confirmed first: refused, before any claim is consumed, when the confirmation is missing or short, or when
    the worst case passes the frozen pilot spend cap. `sampler`, `sandbox`: providers built elsewhere (tests)."""
    doc, entries = _freeze.load(pilot.freeze)
    plan = frozen_run(doc, entries)
    claims, seeds = list(pilot.claims), list(pilot.seeds)
    if len(claims) != len(seeds) or not claims:
        raise InputError(
            f"--claim/--seed: one claim per pilot attempt (got {len(claims)} claims for {len(seeds)} "
            f"seeds; a claim is spent once)"
        )
    model = pilot.model or (plan["models"][0] if len(plan["models"]) == 1 else None)
    family = pilot.family or (plan["families"][0] if len(plan["families"]) == 1 else None)
    if model not in plan["models"] or family not in plan["families"]:
        raise InputError(
            f"--model/--family: the pilot runs a frozen model and family ({plan['models']}, {plan['families']})"
        )
    frozen_seeds = set(_freeze.effective(doc, entries, "seeds") or [])
    if frozen_seeds & set(seeds):
        raise InputError(
            f"--seed {sorted(frozen_seeds & set(seeds))}: a pilot seed is one of the study's frozen seeds "
            f"(pilot seeds are excluded from confirmatory estimates: pick others)"
        )
    if len(set(seeds)) != len(seeds):
        raise InputError("--seed: each pilot seed once")
    out_dir = pilot.out_dir
    if os.path.exists(out_dir) and (not os.path.isdir(out_dir) or os.listdir(out_dir)):
        raise InputError(f"--out {out_dir}: exists and is not empty (a pilot writes a new folder)")
    spend = projection(effective_terms(doc, entries, pilot.freeze), model, [read_claim(c)["claim"] for c in claims])
    check_spend(spend, pilot.confirm_spend)
    if pilot.model_file is not None and plan["sampler"] != "llama-cpp":
        raise InputError(f"--model-file: the freeze runs the {plan['sampler']} sampler, not llama-cpp")
    sampler = sampler or _frozen_sampler(plan, pilot, model, environ)
    sandbox = sandbox or _providers.sandbox(plan["sandbox"])
    os.makedirs(out_dir, exist_ok=True)
    folders, records = [], []
    for i, (claim, seed) in enumerate(zip(claims, seeds)):
        folder = f"{i + 1:02d}-{family}-seed-{seed}"
        spec = AttemptSpec(
            claim=claim,
            out=os.path.join(out_dir, folder),
            task=Task(family, seed, _freeze.effective(doc, entries, "split"), plan["horizon"]),
            model=model,
            sampler=sampler,
            sandbox=sandbox,
            prices=pilot.prices,
            limits=plan["limits"],
            sources=Sources(freeze=pilot.freeze),
            places=pilot.places,
            role="pilot",
            command_line=tuple(pilot.command_line or ()),
        )
        execute(spec, host=host, environ=environ, sleep=sleep)
        folders.append(folder)
        records.append(read_record(os.path.join(out_dir, folder, "record.json")))
    body = content(Frozen(doc, entries, pilot.freeze), model, family, seeds, folders, records, pilot.confirm_spend)
    return write(os.path.join(out_dir, "pilot.json"), body, records)
