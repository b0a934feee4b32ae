"""A pre-registration dated by the repository's history, not by the files alone.

  python -m builders.preregistration [--repo DIR]      (`make verify-prereg`, part of `make verify`)

A journal proves order only relative to itself: someone who re-freezes a spec
after its sweep can rewrite freeze.json, the manifest's comparison entry, the
journal's serve line (re-chained) and the decision consistently. What they
cannot rewrite in place is the git history others hold. So for every frozen
spec -- each comparison's and each study comparison's spec.json and
freeze.json (with its study's tier plan, when it has one), and the paid
path's freeze (runs/attempts/freeze.json, its tier plan inside) -- this
finds the commit that first held the files' current bytes, and requires it to
be a proper ancestor of every commit that added a row file of the sweep it
governs (journal.jsonl, observations.jsonl, observations.partial.jsonl) or an
attempt record run under it (a record whose content names a freeze). Any
spec that is not is named (exit 1).

Where there is no history to read -- no git, a folder that is not a
repository (a tarball), a shallow clone -- it says so plainly and checks
nothing (exit 0): the dating needs the full history.
"""

import json
import os
import shutil
import subprocess
import sys

ROW_FILES = ("journal.jsonl", "observations.jsonl", "observations.partial.jsonl")


class CannotCheck(Exception):
    """The history needed to date a freeze is not here."""


class Git:
    def __init__(self, root):
        if shutil.which("git") is None:
            raise CannotCheck("git is not installed")
        self.root = root
        top = self._run("rev-parse", "--show-toplevel", check=False)
        if top is None:
            raise CannotCheck(f"{root} is not a git repository (a tarball or an export has no history)")
        if self._run("rev-parse", "--is-shallow-repository") == "true":
            raise CannotCheck("a shallow clone (`git fetch --unshallow` to get the whole history)")
        self.top = top

    def _run(self, *args, check=True):
        done = subprocess.run(["git", "-C", self.root, *args], capture_output=True, text=True)
        if done.returncode != 0:
            if check:
                raise CannotCheck(f"git {' '.join(args[:2])}: {done.stderr.strip().splitlines()[-1:] or ['failed']}")
            return None
        return done.stdout.strip()

    def first_with_content(self, path):
        """(commit, date) of the first commit in which `path` holds its current bytes; None when uncommitted."""
        blob = self._run("hash-object", "--", path)
        rel = os.path.relpath(os.path.abspath(path), self.top).replace(os.sep, "/")
        for line in (self._run("log", "--reverse", "--format=%H %cs", "--", rel) or "").splitlines():
            commit, date = line.split()
            if self._run("rev-parse", f"{commit}:{rel}", check=False) == blob:
                return commit, date
        return None

    def added(self, path):
        """The commit that first added `path` (None: never committed)."""
        rel = os.path.relpath(os.path.abspath(path), self.top).replace(os.sep, "/")
        out = self._run("log", "--reverse", "--diff-filter=A", "--format=%H", "--", rel)
        return out.splitlines()[0] if out else None

    def is_ancestor(self, a, b) -> bool:
        return a != b and self._run("merge-base", "--is-ancestor", a, b, check=False) is not None


def _json(path):
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def frozen_specs(runs_dir) -> list:
    """[(label, [files that are the pre-registration], [files that hold what it governs])]."""
    out = []
    for base in ("comparisons", "studies"):
        top = os.path.join(runs_dir, base)
        for dirpath, dirnames, files in os.walk(top):
            dirnames.sort()
            if "freeze.json" not in files or "spec.json" not in files:
                continue
            specs = [os.path.join(dirpath, "spec.json"), os.path.join(dirpath, "freeze.json")]
            study = _json(os.path.join(os.path.dirname(dirpath), "study.json"))
            if isinstance(study, dict) and isinstance(study.get("tiers"), str):  # a study's tier plan is frozen too
                specs.append(os.path.join(os.path.dirname(dirpath), study["tiers"]))
            out.append((os.path.relpath(dirpath, os.path.dirname(runs_dir)), specs, _sweep_rows(dirpath)))
    paid = os.path.join(runs_dir, "attempts", "freeze.json")
    if os.path.exists(paid):
        out.append((os.path.relpath(paid, os.path.dirname(runs_dir)), [paid], _governed_attempts(os.path.dirname(paid))))
    return out


def _sweep_rows(folder) -> list:
    """The row files of the sweep a comparison folder governs: the one its evidence names, or its study's."""
    sweep = None
    evidence = _json(os.path.join(folder, "evidence.json"))
    if isinstance(evidence, dict):
        for entry in evidence.get("files") or []:
            if isinstance(entry, dict) and entry.get("kind") == "journal" and isinstance(entry.get("path"), str):
                sweep = os.path.dirname(os.path.normpath(os.path.join(folder, entry["path"])))
    study = _json(os.path.join(os.path.dirname(folder), "study.json"))
    if sweep is None and isinstance(study, dict) and isinstance(study.get("sweep"), str):
        sweep = os.path.join(os.path.dirname(folder), study["sweep"])
    if sweep is None:
        return []
    return [os.path.join(sweep, n) for n in ROW_FILES]


def _governed_attempts(folder) -> list:
    found = []
    for dirpath, dirnames, files in os.walk(folder):
        dirnames.sort()
        if "record.json" in files:
            record = _json(os.path.join(dirpath, "record.json"))
            if isinstance(record, dict) and (record.get("content") or {}).get("freeze"):
                found.append(os.path.join(dirpath, "record.json"))
    return found


def _stderr(line):
    print(line, file=sys.stderr)


def check(repo, log=print, err=_stderr) -> int:
    runs_dir = os.path.join(repo, "runs")
    try:
        git = Git(repo)
    except CannotCheck as exc:
        log(f"verify-prereg: cannot check when each pre-registration was committed: {exc}; nothing was checked")
        return 0
    problems = 0
    for label, spec_files, governed in frozen_specs(runs_dir):
        added = {p: c for p, c in ((p, git.added(p)) for p in governed) if c}  # a row file deleted since counts
        dated = [git.first_with_content(p) for p in spec_files]
        if any(d is None for d in dated):
            if added:
                err(f"error: {label}: the frozen spec's current bytes were never committed, but what it governs "
                    f"was (first in {min(added.values())[:12]}): a pre-registration is committed before its rows")
                problems += 1
            else:
                log(f"verify-prereg: {label}: not committed yet (nothing it governs is either)")
            continue
        commit, date = max(dated, key=lambda d: _order(git, d[0], [x[0] for x in dated]))
        late = sorted((os.path.relpath(p, repo), c) for p, c in added.items() if not git.is_ancestor(commit, c))
        if late:
            path, c = late[0]
            err(f"error: {label}: frozen in {commit[:12]} ({date}), which is not an ancestor of {c[:12]}, the "
                f"commit that added {path}: a spec is committed before the first row or attempt it governs "
                f"(re-frozen after its rows?)")
            problems += 1
        elif added:
            log(f"verify-prereg: {label}: frozen in {commit[:12]} ({date}), an ancestor of every commit that added "
                f"what it governs ({len(added)} file{'s' if len(added) != 1 else ''})")
        else:
            log(f"verify-prereg: {label}: frozen in {commit[:12]} ({date}); nothing it governs is committed yet")
    return 1 if problems else 0


def _order(git, commit, others):
    """The later of the spec's files' commits: the one the others are ancestors of."""
    return sum(1 for o in others if o != commit and git.is_ancestor(o, commit))


def freeze_commit(folder, repo=None):
    """{"commit", "date"} of a freeze folder's spec.json and freeze.json as committed (the later of the two), or
    None where it cannot be dated (no history, not committed): what the site shows beside the freeze's date."""
    repo = repo or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        git = Git(repo)
        dated = [git.first_with_content(os.path.join(folder, n)) for n in ("spec.json", "freeze.json")]
    except CannotCheck:
        return None
    if any(d is None for d in dated):
        return None
    commit, date = max(dated, key=lambda d: _order(git, d[0], [x[0] for x in dated]))
    return {"commit": commit, "date": date}


def main(argv=None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if args[:1] == ["--repo"] and len(args) == 2:
        repo = args[1]
    elif args:
        print("usage: python -m builders.preregistration [--repo DIR]", file=sys.stderr)
        return 64
    return check(repo)


if __name__ == "__main__":
    sys.exit(main())
