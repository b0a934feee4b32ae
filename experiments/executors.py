"""Where the work units run: a local process pool (the embedded default) or
Modal (`Function.map` over chunks of items). Both hand every item's result to
the same callback; the sweep writes the files, so the bytes do not depend on
the executor.

Host arms (files, attempts, the mock worker) are produced on the host: in the
pool's worker processes, or in this process before a chunk is sent to Modal.
"""

import multiprocessing
import os
import sys

import click

from . import work
from .errors import ExperimentError

CHUNK_ITEMS = 25
MODAL_APP = "fundbook-sweep"
MODAL_PYTHON = "3.11"
MODAL_CPU = 1.0  # physical cores per container (what Modal bills)
MODAL_MEMORY_MIB = 512
MODAL_TIMEOUT_S = 1800
_producers = {}


def host_run(task) -> dict:
    """Produce the host arms' candidates, then grade: one item, in this process."""
    prepared = host_prepare(task)
    return _finish(work.run_task(prepared["graded"]), prepared)


def _finish(result, prepared):
    result["inputs"] = prepared["inputs"]
    return result


def _host_chunk(tasks):
    return [host_run(t) for t in tasks]


def chunks_of(tasks, size):
    return [tasks[i : i + size] for i in range(0, len(tasks), size)]


def _progress(total, label, show):
    if not show:
        return None
    return click.progressbar(length=total, label=label, file=sys.stderr, show_pos=True, show_eta=True)


def run_local(tasks, workers, on_result, progress=True, chunk_items=CHUNK_ITEMS):
    """The local process pool (`workers` processes; 1 runs in this process)."""
    if workers < 1:
        raise ExperimentError("--workers: expected at least 1")
    if not tasks:
        return
    bar = _progress(len(tasks), f"sweep ({workers} worker{'s' if workers > 1 else ''})", progress)
    try:
        if workers == 1:
            for task in tasks:
                on_result(host_run(task))
                bar and bar.update(1)
            return
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(workers) as pool:
            for results in pool.imap_unordered(_host_chunk, chunks_of(tasks, chunk_items)):
                for result in results:
                    on_result(result)
                bar and bar.update(len(results))
    finally:
        if bar:
            bar.render_finish()


# -- Modal ---------------------------------------------------------------------------


def _default_modal():
    import modal

    return modal


def _ignore(path):
    """What the image leaves out of the two packages: caches (the episodes' JSON stays in)."""
    return "__pycache__" in path.parts or path.suffix == ".pyc"


def modal_function(modal):
    """The app and the function the sweep maps over: real Modal SDK objects."""
    app = modal.App(MODAL_APP)
    image = modal.Image.debian_slim(python_version=MODAL_PYTHON).add_local_python_source(
        "engine", "experiments", ignore=_ignore
    )
    function = app.function(
        image=image,
        cpu=MODAL_CPU,
        memory=MODAL_MEMORY_MIB,
        timeout=MODAL_TIMEOUT_S,
        serialized=True,
        name="sweep_chunk",
    )(work.remote_chunk)
    return app, function


def remote_map(app, function, chunks):
    """The one remote call: run the app and map the function over the chunks
    (results as they finish). Tests replace exactly this."""
    with app.run():
        yield from function.map(chunks, order_outputs=False)


def run_modal(tasks, on_result, expected_sources, progress=True, chunk_items=CHUNK_ITEMS * 20, modal=None):
    """Fan the tasks out with Modal. Host arms are produced here first; every
    container's engine sources must hash to the bundle manifest's digests."""
    if not tasks:
        return
    modal = modal or _default_modal()
    ready, kept = [], {}
    for task in tasks:
        prepared = host_prepare(task)
        ready.append(prepared["graded"])
        kept[task["row"]["item_id"]] = prepared
    app, function = modal_function(modal)
    bar = _progress(len(ready), "sweep (modal)", progress)
    try:
        for out in _remote_results(app, function, chunks_of(ready, chunk_items)):
            if out.get("sources") != expected_sources:
                diff = sorted(set(out.get("sources") or {}) ^ set(expected_sources)) or sorted(
                    p for p in expected_sources if out["sources"].get(p) != expected_sources[p]
                )
                raise ExperimentError(
                    f"modal: the container's engine sources differ from the bundle manifest "
                    f"(first: {diff[0] if diff else '?'}); its results are discarded"
                )
            for result in out["results"]:
                on_result(_finish(result, kept[result["item_id"]]))
            bar and bar.update(len(out["results"]))
    finally:
        if bar:
            bar.render_finish()


def _remote_results(app, function, chunks):
    """remote_map, with Modal's own failures (no token, a lost container, a timeout) as one line;
    the chunks already received stay in the partial file, so a re-run resumes."""
    results = remote_map(app, function, chunks)
    while True:
        try:
            out = next(results)
        except StopIteration:
            return
        except Exception as exc:  # the SDK's error types vary by version and cause
            raise ExperimentError(
                f"modal: the sweep stopped ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'no message'}); "
                f"finished items are kept: run the same command again to resume"
            )
        yield out


def host_prepare(task) -> dict:
    """A task with its host arms produced: what goes to a remote worker."""
    from .arms import ENGINE_KINDS, Producer

    arms, inputs = [], {}
    for arm in task["arms"]:
        if arm["kind"] in ENGINE_KINDS or arm["kind"] == "candidate":
            arms.append(arm)
            continue
        key = (arm["name"], arm["kind"], arm.get("path"))
        producer = _producers.get(key) or _producers.setdefault(key, Producer([arm]))
        arms.append(producer.task_arm(arm, task["row"]))
        inputs[arm["name"]] = {
            "sha256": producer.inputs[arm["name"]][task["row"]["item_id"]],
            "usage": producer.usage.get(arm["name"], {}).get(task["row"]["item_id"]),
        }
    return {"graded": {"item": task["item"], "fixture_sha256": task["fixture_sha256"], "arms": arms}, "inputs": inputs}


def cpu_count():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
