"""What a study reads back from its stopped sweep's manifest (sweep.json): the evaluator it ran under, and its
model arms as recorded, so `verify` judges a stopped study as it ran."""

import os

from .errors import ExperimentError
from .jsondoc import read_doc


def _as_run(out, fixed) -> dict:
    """A stopped study is verified under the evaluator it ran under (its manifest's provenance, which must hash to
    the id its journal and rows carry), never relabelled: the rows keep their id. What changes with today's engine
    is only who recomputes: `verify` requires this checkout's engine (evaluator `current_evaluator_id`) to give
    every journalled value again, so an engine release that changed no value leaves the study verifiable, and one
    that changed a value is named by world."""
    from .evaluator import evaluator_id

    path = os.path.join(out, "sweep.json")
    manifest, _ = read_doc(path, "the sweep manifest")
    prov, eid = manifest.get("provenance"), manifest.get("evaluator_id")
    try:
        hashed = evaluator_id(prov) if isinstance(prov, dict) else None
    except (TypeError, ValueError):
        hashed = None
    if hashed is None or hashed != eid:
        raise ExperimentError(f"{path}: provenance: does not hash to the evaluator_id the manifest names")
    if prov.get("items") != fixed["provenance"]["items"]:
        raise ExperimentError(f"{path}: provenance.items: not the items of the study's committed worlds")
    return dict(fixed, provenance=prov, evaluator_id=eid, current_evaluator_id=fixed["evaluator_id"])


def _recorded(out, doc):
    """{--arm value: the arm as the stopped sweep's manifest records it} (none before the sweep stops): what
    verify reads a model arm's configuration from where its library is not installed."""
    path = os.path.join(out, "sweep.json")
    if not os.path.exists(path):
        return {}
    manifest, _ = read_doc(path, "the sweep manifest")
    arms = manifest.get("arms") if isinstance(manifest, dict) else None
    if not isinstance(arms, list) or not all(isinstance(a, dict) for a in arms):
        raise ExperimentError(f"{path}: arms: expected a list of objects")
    found = {}
    for text in doc["arms"]:
        spec = text.partition("=")[2] or text
        if spec.startswith("model:"):
            _, provider, path_arg = spec.split(":", 2) if spec.count(":") >= 2 else (None, "llama-cpp", "")
            place = "model_file" if provider == "llama-cpp" else "target"
            match = [
                a
                for a in arms
                if a.get("kind") == "model" and a.get(place) == path_arg and a.get("provider", "llama-cpp") == provider
            ]
            if len(match) != 1:
                raise ExperimentError(f"{path}: arms: expected one model arm over {path_arg}, found {len(match)}")
            found[text] = match[0]
    return found
