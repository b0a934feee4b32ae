"""What the published build was made from against this checkout's: the first difference between two
documents, and each build input that differs (`compare_inputs`), with a one-line hint where one helps."""

import json
import re
import subprocess

import engine

from .._files import ROOT
from .._provenance import build_part


def first_difference(a, b, path="content"):
    """The engine's first-difference walk, rooted at `path`."""
    return engine.first_difference(a, b, path)


def value_at(doc, path, root="content"):
    """The JSON at a first_difference path (short), or "(absent)"."""
    node = doc
    tail = path.split(" ")[0][len(root):]
    for key, idx in re.findall(r"\.([^.\[\s]+)|\[(\d+)\]", tail):
        try:
            node = node[int(idx)] if idx else node[key]
        except (KeyError, IndexError, TypeError):
            return "(absent)"
    return json.dumps(node, sort_keys=True)[:120]


# -- build inputs ---------------------------------------------------------------------------------

def _git_state(path, root=ROOT) -> str:
    """How a repository file stands against git's HEAD, for a one-line hint."""
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--", path], cwd=root, capture_output=True,
                             text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return ""
    return " (uncommitted change in this checkout)" if out.strip() else " (as committed here: the published runs are older)"


def _deps(doc):
    deps = ((doc.get("buildDefinition") or {}).get("resolvedDependencies")) or []
    return {d.get("name") or d.get("uri"): d.get("digest") for d in deps}


def _hint(key, published, here):
    if key.endswith("source_date_epoch"):
        return (f" (SOURCE_DATE_EPOCH: this build used {here}, the published bundle {published}; "
                f"the Makefile pins {published})")
    if "pyodide_version" in key or "python_version" in key or "pyc_magic" in key:
        return " (a different Pyodide runtime in node_modules: run `npm ci`)"
    return ""


def compare_inputs(published_doc, rebuilt_doc, report, label="runs/engine/provenance.json"):
    """The published build definition against this checkout's: name each input that differs."""
    a, b = build_part(published_doc), build_part(rebuilt_doc)
    if a == b:
        n = sum(1 for name in _deps(a) if str(name).startswith("engine/"))
        ext = a["buildDefinition"]["externalParameters"]
        report.ok(f"build inputs: the published build's ({n} engine sources, pyodide "
                  f"{ext['runtime']['pyodide_version']}, SOURCE_DATE_EPOCH {ext['source_date_epoch']})")
        return True
    before = len(report.items)
    old, new = _deps(a), _deps(b)
    for name in sorted(set(old) | set(new), key=str):
        if old.get(name) != new.get(name):
            if name not in new:
                report.add("input", f"{label}: build input {name}: published {old[name]}, absent from this checkout")
            elif name not in old:
                report.add("input", f"{label}: build input {name}: not in the published build, "
                                    f"here {new[name]}{_git_state(name) if '/' in str(name) else ''}")
            else:
                report.add("input", f"{label}: build input {name}: published sha256 {old[name].get('sha256', old[name])}, "
                                    f"this checkout {new[name].get('sha256', new[name])}"
                                    f"{_git_state(name) if '/' in str(name) else ''}")
    for key in ("externalParameters", "internalParameters", "buildType"):
        pa = (a["buildDefinition"] or {}).get(key)
        pb = (b["buildDefinition"] or {}).get(key)
        where = first_difference(pa, pb, f"buildDefinition.{key}")
        if where:
            report.add("input", f"{label}: {where}: published {value_at(pa, where, f'buildDefinition.{key}')}, "
                                f"this build {value_at(pb, where, f'buildDefinition.{key}')}"
                                f"{_hint(where, value_at(pa, where, f'buildDefinition.{key}'), value_at(pb, where, f'buildDefinition.{key}'))}")
    for key in ("_type", "predicateType", "builder.id", "subject"):
        if a[key] != b[key] and not (key == "subject" and len(report.items) > before):
            report.add("input", f"{label}: {key}: published {json.dumps(a[key])[:120]}, this build "
                                f"{json.dumps(b[key])[:120]} (same inputs, different output)")
    return False
