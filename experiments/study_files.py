"""The files a study folder holds, and which of them verify accounts for: the study's definition and state, each
comparison's frozen files and, once decided, the evidence its decision lists (every try of every measured world of
the model arms among them), nothing else (experiments/study.py verifies with these)."""

import os

import engine

from .errors import ExperimentError
from .journal import JOURNAL
from .jsondoc import read_doc

STUDY = "study.json"
STATUS = "status.json"


def files_in(folder) -> list:
    return [os.path.join(folder, n) for n in sorted(os.listdir(folder)) if os.path.isfile(os.path.join(folder, n))]


def attempt_files(tries) -> list:
    return [path for world in tries.values() for _, folder in world for path in files_in(folder)]


def check_attempts(sweep_dir, folder, tries):
    """The decision's evidence lists exactly the files of every try of the measured worlds, and inputs.json
    names each world's last try (the record its rows were graded from)."""
    evidence, _ = read_doc(os.path.join(folder, "evidence.json"), "the decision's evidence list")
    listed = [(e.get("name"), e.get("sha256")) for e in evidence["files"] if e.get("kind") == "attempt"]
    want = []
    for path in attempt_files(tries):  # as the model arm reads them: try folder, file name, sha256
        with open(path, "rb") as fh:
            want.append(
                (f"{os.path.basename(os.path.dirname(path))}/{os.path.basename(path)}", engine.sha256_hex(fh.read()))
            )
    if listed != want:
        odd = [w for w in want if w not in listed] or [x for x in listed if x not in want] or want
        raise ExperimentError(
            f"{folder}/evidence.json: does not list the study's attempt files as they are (first "
            f"difference: {str(odd[0][0])[:200]}, sha256 {str(odd[0][1])[:16]}): decide the study again"
        )
    path = os.path.join(sweep_dir, "inputs.json")
    if not tries:
        return
    inputs, _ = read_doc(path, "the host arms' input hashes")
    for iid, world in tries.items():
        last = os.path.join(world[-1][1], "record.json")
        with open(last, "rb") as fh:
            sha = engine.sha256_hex(fh.read())
        if not any(isinstance(arm, dict) and arm.get(iid) == sha for arm in inputs.values()):
            raise ExperimentError(
                f"{path}: does not name world {iid}'s input as its last try "
                f"{os.path.basename(world[-1][1])} (record sha256 {sha[:16]})"
            )


RUNNING_SWEEP_FILES = ("commitment.json", "feasibility.json", JOURNAL, "observations.partial.jsonl", "inputs.json")


def no_stray_file(study_dir, doc, stopped):
    """Every file under the study folder is one verify accounts for: study.json, status.json, README.md, each
    comparison's frozen files and, once decided, whatever its evidence list names (the sweep's files among
    them); while the sweep runs, its journal, partial rows, commitment, pilot and inputs."""
    root = os.path.abspath(study_dir)
    listed = {os.path.join(root, n) for n in (STUDY, STATUS, "README.md")}
    if "tiers" in doc:
        listed.add(os.path.join(root, doc["tiers"]))
    for name in doc["comparisons"]:
        folder = os.path.join(root, name)
        listed |= {os.path.join(folder, n) for n in ("spec.json", "freeze.json", "deviations.json", "result.json")}
        if stopped:
            evidence, _ = read_doc(os.path.join(folder, "evidence.json"), "the decision's evidence list")
            listed.add(os.path.join(folder, "evidence.json"))
            listed |= {
                os.path.normpath(os.path.join(folder, e["path"]))
                for e in evidence.get("files") or []
                if isinstance(e, dict) and isinstance(e.get("path"), str)
            }
    if not stopped:
        listed |= {os.path.join(root, doc["sweep"], n) for n in RUNNING_SWEEP_FILES}
    for dirpath, dirnames, files in os.walk(root):
        dirnames.sort()
        for name in sorted(files):
            path = os.path.join(dirpath, name)
            if path not in listed:
                raise ExperimentError(
                    f"{os.path.join(study_dir, os.path.relpath(path, root))}: not part of the "
                    f"study (neither its definition, its state, a frozen spec nor a file its "
                    f"decisions' evidence lists)"
                )
