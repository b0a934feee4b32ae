"""The evidence behind the Comparisons section: which drawn decisions there are (runs/comparisons/ and
each pre-registered study's), and loading them, the grader certificate, the calibration study and the
build's re-check (build/experiments/checks.json, or FUNDBOOK_EXPERIMENTS_DIR), every evidence file hashed
against its list before a page shows anything it backs (a mismatch is a SiteInputError naming the file).
comparisons.py renders the pages from what `load` returns."""

import hashlib
import json
import os
import posixpath
from pathlib import Path

from . import fmt
from .records import SiteInputError

ROOT = Path(__file__).resolve().parents[2]
CALIBRATION_FILE = "comparisons/calibration/rules-calibration.json"


def checks_dir() -> Path:
    return Path(os.environ.get("FUNDBOOK_EXPERIMENTS_DIR") or ROOT / "build" / "experiments")


def _json(path: Path, label: str):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SiteInputError(f"{label}: file not found") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise SiteInputError(f"{label}: expected UTF-8 JSON ({exc})") from None


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def decided_folders(runs_dir: Path) -> list:
    """[(folder, its path under the site)] of every drawn decision: runs/comparisons/<name>/, then each
    pre-registered study's comparisons (runs/studies/<study>/<name>/, once its rule stopped and it was decided).
    A page is named by the folder's name, so two decisions of one name are refused."""
    found = []
    base = runs_dir / "comparisons"
    for folder in sorted(p for p in base.iterdir() if p.is_dir()) if base.is_dir() else []:
        found.append((folder, f"runs/comparisons/{folder.name}"))
    studies = runs_dir / "studies"
    for study in sorted(p for p in studies.iterdir() if p.is_dir()) if studies.is_dir() else []:
        if not fmt.SAFE_ID.match(study.name) or not (study / "study.json").is_file():
            continue
        where = f"runs/studies/{study.name}"
        doc = _json(study / "study.json", f"{where}/study.json")
        names = doc.get("comparisons") if isinstance(doc, dict) else None
        if not isinstance(names, list) or not all(isinstance(n, str) and fmt.SAFE_ID.match(n) for n in names):
            raise SiteInputError(f"{where}/study.json: comparisons: expected a list of folder names")
        found.extend((study / n, f"{where}/{n}") for n in sorted(names))
    found = [(folder, rel) for folder, rel in found if (folder / "decision.json").is_file()]
    seen = {}
    for folder, rel in found:
        if folder.name in seen:
            raise SiteInputError(
                f"{rel}: a decision named {folder.name} is also at {seen[folder.name]} (one page each)"
            )
        seen[folder.name] = rel
    return found


def load(runs_dir: Path) -> dict:
    """{"comparisons": [...], "certificate": ..., "checks": ...}, every evidence file checked."""
    out = {"comparisons": [], "certificate": None, "checks": None, "sweeps": {}}
    for folder, rel in decided_folders(runs_dir):
        evidence = _json(folder / "evidence.json", f"{rel}/evidence.json")
        files = []
        for entry in evidence.get("files") or []:
            path = (folder / entry["path"]).resolve()
            label = posixpath.normpath(f"{rel}/{entry['path']}")
            if not path.is_file():
                raise SiteInputError(f"{label}: file not found (listed in {rel}/evidence.json)")
            if _sha(path) != entry["sha256"]:
                raise SiteInputError(f"{label}: sha256 differs from {rel}/evidence.json ({entry['name']})")
            files.append(dict(entry, href=label))
        files.append(
            {
                "name": f"{folder.name}/evidence.json",
                "kind": "evidence list",
                "href": f"{rel}/evidence.json",
                "sha256": _sha(folder / "evidence.json"),
            }
        )
        decision = _json(folder / "decision.json", f"{rel}/decision.json")
        by_kind = {f["kind"]: f for f in files}
        sweep = _json((folder / by_kind["sweep_manifest"]["path"]), by_kind["sweep_manifest"]["href"])
        feasibility = None
        if "feasibility" in by_kind:
            feasibility = _json(folder / by_kind["feasibility"]["path"], by_kind["feasibility"]["href"])
        rules_file = by_kind.get("rules")
        rules_text = (folder / rules_file["path"]).read_text(encoding="utf-8") if rules_file else None
        from builders.preregistration import freeze_commit  # the freeze's commit, shown beside its date

        out["comparisons"].append(
            {
                "slug": folder.name,
                "rel": rel,
                "decision": decision,
                "files": files,
                "sweep": sweep,
                "freeze_commit": freeze_commit(str(folder)),
                "feasibility": feasibility,
                "verify": evidence.get("verify"),
                "rules": rules_text,
                "rules_href": rules_file["href"] if rules_file else None,
            }
        )
    cert = runs_dir / "certificates" / "grader" / "certificate.json"
    if cert.is_file():
        doc = _json(cert, "runs/certificates/grader/certificate.json")
        files = [
            {
                "name": "certificates/grader/certificate.json",
                "kind": "certificate",
                "href": "runs/certificates/grader/certificate.json",
                "sha256": _sha(cert),
            }
        ]
        for name, sha in sorted(doc["files"].items()):
            path = cert.parent / name
            if not path.is_file() or _sha(path) != sha:
                raise SiteInputError(
                    f"runs/certificates/grader/{name}: missing or sha256 differs from certificate.json"
                )
            files.append(
                {
                    "name": f"certificates/grader/{name}",
                    "kind": name.split(".")[0],
                    "href": f"runs/certificates/grader/{name}",
                    "sha256": sha,
                }
            )
        sweep_path = cert.parent / "sweep.json"
        files.append(
            {
                "name": "certificates/grader/sweep.json",
                "kind": "sweep_manifest",
                "href": "runs/certificates/grader/sweep.json",
                "sha256": _sha(sweep_path),
            }
        )
        out["certificate"] = {"doc": doc, "files": files}
    calibration = runs_dir / CALIBRATION_FILE
    out["calibration"] = _json(calibration, f"runs/{CALIBRATION_FILE}") if calibration.is_file() else None
    checks = checks_dir() / "checks.json"
    if checks.is_file():
        out["checks"] = _json(checks, str(checks))
    return out
