"""Building an attempt's spec in tests from the keywords a test names (a fake sampler under any name, a sandbox
object), and the providers by the keywords the tests were written with."""

from launchers import AttemptSpec, Given, GivenSandbox, Limits, Places, SamplerOptions, Sources, Task, execute
from launchers import sampler, sandbox


def spec_of(claim_path, out, family, seed, model, make_sampler, make_sandbox, prices, **kw):
    """An AttemptSpec from a test's keywords: `make_sampler` a callable model -> adapter (or a provider),
    `sampler_name` the name its records carry, `paid` whether it spends; `make_sandbox` a callable -> sandbox."""
    name = kw.get("sampler_name") or getattr(make_sampler, "name", None)
    sampling = kw.get("sampling")
    the_sampler = Given(
        name,
        make_sampler,
        dict(sampling if sampling is not None else getattr(make_sampler, "sampling", None) or {}),
        paid=kw.get("paid", False),
    )
    sandbox_name = kw.get("sandbox_name", "local")
    the_sandbox = GivenSandbox(sandbox_name, make_sandbox, kw.get("sandbox_config"))
    return AttemptSpec(
        claim=claim_path,
        out=out,
        task=Task(family, seed, kw.get("split", "public-practice"), kw.get("horizon", 20)),
        model=model,
        sampler=the_sampler,
        sandbox=the_sandbox,
        prices=prices,
        limits=kw.get("limits") or Limits(),
        sources=Sources(kw.get("resume_from"), kw.get("replay_of"), kw.get("freeze_path"), kw.get("pilot_path")),
        places=Places(kw.get("state"), kw.get("project")),
        attempt_id=kw.get("attempt_id"),
        role=kw.get("role"),
        command_line=tuple(kw.get("command_line") or ()),
    )


def execute_kw(**kw):
    """`execute` of the spec these keywords name, with the runtime seams (host, environ, sleep) passed on."""
    seams = {k: kw.pop(k) for k in ("host", "environ", "sleep") if k in kw}
    return execute(spec_of(**kw), **seams)


def sampler_factory(
    name,
    cache_path=None,
    call_deadline=120,
    temperature_milli=None,
    sampling_seed=0,
    replay_sampling=None,
    environ=None,
    local=None,
    api=None,
):
    """The sampler provider `name` from the keywords of the old factory function (tests)."""
    api = dict(api or {})
    own = dict(local or {})
    if "threads" in own:
        own["n_threads"] = own.pop("threads")
    for key in ("base_url", "dialect", "local_server", "reasoning_effort", "effort"):
        if key in api:
            own[key] = api.pop(key)
    from launchers import sampler_class

    own = {k: v for k, v in own.items() if k in sampler_class(name).OPTIONS}  # the old function ignored the rest
    return sampler(
        name,
        SamplerOptions(
            cache_path=cache_path,
            call_deadline_s=call_deadline,
            temperature_milli=temperature_milli,
            seed=sampling_seed,
            replay_sampling=replay_sampling,
            environ=environ,
            own=own,
            **api,
        ),
    )


def api_factory(name, cache_path, call_deadline, temperature_milli=0, sampling_seed=0, environ=None, **kw):
    """An HTTP API sampler's provider from the keywords of the old factory function (tests)."""
    return sampler_factory(name, cache_path, call_deadline, temperature_milli, sampling_seed, environ=environ, api=kw)


def llama_factory(model_file, cache_path=None, temperature_milli=0, seed=0, **settings):
    """The llama-cpp provider from the keywords of the old factory function (tests)."""
    return sampler_factory(
        "llama-cpp", cache_path, 120, temperature_milli, seed, local=dict(settings, model_file=model_file)
    )


def sandbox_factory(name, modal=None):
    from launchers import SandboxOptions

    return sandbox(name, SandboxOptions(modal=modal))
