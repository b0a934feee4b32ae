"""The study definition (study.json): its fields, read and checked, and the family-wise error it states,
checked against its frozen specs."""

import math
import os

from . import rules
from .errors import ExperimentError
from .jsondoc import read_doc
from .study_files import STUDY

SCHEMA = "fundbook.study/1"
FIELDS = {"schema", "name", "sweep", "arms", "secret_file", "comparisons"}
OPTIONAL = {"tiers", "family_wise"}  # tiers: a tier plan file in the study folder (launchers/_tiers.py), seed 002's
# tiers; family_wise: the error stated up front across all the study's decisions (checked against the specs)
FAMILY_WISE = {"alpha", "correction"}


def load(study_dir) -> dict:
    path = os.path.join(study_dir, STUDY)
    doc, _ = read_doc(path, "a study definition")
    if not isinstance(doc, dict) or not FIELDS <= set(doc) <= FIELDS | OPTIONAL or doc["schema"] != SCHEMA:
        raise ExperimentError(
            f"{path}: expected {SCHEMA} with exactly {', '.join(sorted(FIELDS))} (and optionally "
            f"{', '.join(sorted(OPTIONAL))})"
        )
    if "tiers" in doc and (not isinstance(doc["tiers"], str) or "/" in doc["tiers"] or doc["tiers"] in ("", ".", "..")):
        raise ExperimentError(f"{path}: tiers: expected the name of a tier plan file in the study folder")
    for key in ("arms", "comparisons"):
        if not isinstance(doc[key], list) or not doc[key] or not all(isinstance(v, str) for v in doc[key]):
            raise ExperimentError(f"{path}: {key}: expected a non-empty list of strings")
    for key in ("name", "sweep", "secret_file"):
        if not isinstance(doc[key], str) or not doc[key] or os.path.isabs(doc[key]) or ".." in doc[key].split("/"):
            raise ExperimentError(f"{path}: {key}: expected a relative path inside the repository")
    return doc


def family_wise(study_dir, doc) -> dict | None:
    """The study's stated family-wise error, checked against its frozen specs: every comparison is a betting rule
    (anytime-valid), and twice the sum of their alphas (each decision can err in two directions, for and against
    its claim) is at most the stated alpha: Bonferroni's union bound, which needs no independence and holds at
    whatever world each rule stops, since each rule's own guarantee does (Ville's inequality)."""
    if "family_wise" not in doc:
        return None
    path = os.path.join(study_dir, STUDY)
    fw = doc["family_wise"]
    if not isinstance(fw, dict) or set(fw) != FAMILY_WISE or not all(isinstance(fw[k], str) for k in FAMILY_WISE):
        raise ExperimentError(f"{path}: family_wise: expected {{alpha, correction}} as texts")
    try:
        stated = rules.dec(fw["alpha"])
    except rules.RuleError as exc:
        raise ExperimentError(f"{path}: family_wise.alpha: {exc}") from None
    total = (0, 1)
    for name in doc["comparisons"]:
        spec, _ = read_doc(os.path.join(study_dir, name, "spec.json"), "a comparison spec")
        if rules.Rule(spec).method != rules.BETTING:
            raise ExperimentError(f"{path}: family_wise: {name} is not a betting rule (its guarantee is not anytime)")
        a = rules.dec(spec["alpha"])
        total = (total[0] * a[1] + a[0] * total[1], total[1] * a[1])
    if 2 * total[0] * stated[1] > stated[0] * total[1]:
        raise ExperimentError(
            f"{path}: family_wise.alpha: {fw['alpha']} is less than twice the comparisons' alphas "
            f"summed ({2 * total[0] // math.gcd(2 * total[0], total[1])}/{total[1] // math.gcd(2 * total[0], total[1])}): "
            f"the union bound does not give it"
        )
    g = math.gcd(2 * total[0], total[1])
    return {
        "alpha": fw["alpha"],
        "correction": fw["correction"],
        "comparisons": len(doc["comparisons"]),
        "bound": f"{2 * total[0] // g}/{total[1] // g}",
    }
