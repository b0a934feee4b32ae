"""A pre-registration dated by the repository's history, by content, not by the files alone.

  python -m builders.preregistration [--repo DIR]      (`make verify-prereg`, part of `make verify`)

A journal proves order only relative to itself: someone who re-freezes a spec
after its sweep can rewrite freeze.json, the manifest's comparison entry, the
journal's serve line (re-chained) and the decision consistently. What they
cannot rewrite in place is the git history others hold. So for every frozen
spec -- each comparison's and each study comparison's spec.json and
freeze.json (with its study's tier plan, when it has one), and the paid
path's freeze (runs/attempts/freeze.json, its tier plan inside) -- and for
what it governs -- the row files of its sweep (journal.jsonl,
observations.jsonl, observations.partial.jsonl) and the attempt records run
under it (a record whose content names a freeze) -- this dates bytes, not
paths: every version a governed file has had (its git blobs) is looked for in
every commit of the history, under any path, and each commit that brought
those bytes in must already have the spec's current bytes (under any path)
in a proper ancestor. Rows committed under another folder before the spec
and moved into place after it are named by the commit that first held them,
as are rows re-frozen over (exit 1). An empty file dates nothing.

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
        self._intro = None
        self._ancestor = {}
        self.empty = self._run("hash-object", "-t", "blob", "--stdin", stdin="")

    def _run(self, *args, check=True, stdin=None):
        done = subprocess.run(["git", "-C", self.root, *args], capture_output=True, text=True, input=stdin)
        if done.returncode != 0:
            if check:
                raise CannotCheck(f"git {' '.join(args[:2])}: {done.stderr.strip().splitlines()[-1:] or ['failed']}")
            return None
        return done.stdout.strip()

    def rel(self, path) -> str:
        return os.path.relpath(os.path.abspath(path), self.top).replace(os.sep, "/")

    def blob(self, path):
        """The git blob of a file's current bytes (None: no such file)."""
        return self._run("hash-object", "--", path) if os.path.isfile(path) else None

    def introductions(self) -> dict:
        """{blob: [(commit, path)]}: every commit of the history (every ref, merges against each parent) that
        brought a blob in under a path, renames seen as what they are to the tree (a new path with old bytes)."""
        if self._intro is None:
            self._intro = {}
            out = self._run("log", "--all", "-m", "--raw", "--no-renames", "--no-abbrev", "--format=C %H")
            commit = None
            for line in (out or "").splitlines():
                if line.startswith("C "):
                    commit = line[2:]
                elif line.startswith(":") and commit:
                    meta, _, path = line.partition("\t")
                    fields = meta.split()
                    if len(fields) >= 5 and fields[4] != "D":
                        self._intro.setdefault(fields[3], []).append((commit, path))
        return self._intro

    def versions(self, path) -> list:
        """Every blob a path has held in any commit, and its bytes now."""
        rel = self.rel(path)
        found = [b for b, where in self.introductions().items() if any(p == rel for _, p in where)]
        now = self.blob(path)
        return sorted(set(found + ([now] if now else [])))

    def date(self, commit) -> str:
        return self._run("show", "-s", "--format=%cs", commit)

    def is_ancestor(self, a, b) -> bool:
        if (a, b) not in self._ancestor:
            self._ancestor[(a, b)] = a != b and self._run("merge-base", "--is-ancestor", a, b, check=False) is not None
        return self._ancestor[(a, b)]


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
        out.append(
            (os.path.relpath(paid, os.path.dirname(runs_dir)), [paid], _governed_attempts(os.path.dirname(paid)))
        )
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


def _frozen(git, spec_files):
    """(commit, date) the spec's current bytes were all committed by -- the latest of each file's first commit --
    and, per file, every commit that brought its bytes in; None when one file's bytes were never committed."""
    firsts, intros = [], []
    for path in spec_files:
        commits = sorted({c for c, _ in git.introductions().get(git.blob(path), [])})
        if not commits:
            return None
        intros.append(commits)
        # the first to bring it in: the one no other is an ancestor of is not it; the one that is every other's
        firsts.append(max(commits, key=lambda c: -_order(git, c, commits)))
    commit = max(firsts, key=lambda c: _order(git, c, firsts))
    return commit, git.date(commit), intros


def _early(git, governed, intros):
    """The first (row path, commit, path there) whose bytes a commit holds that has not every spec file's current
    bytes in a proper ancestor; None when every governed byte came after the spec."""
    for path in governed:
        for blob in git.versions(path):
            if blob == git.empty:
                continue
            for commit, where in sorted(git.introductions().get(blob, [])):
                if not all(any(git.is_ancestor(s, commit) for s in spec) for spec in intros):
                    return path, commit, where
    return None


def _committed(git, governed) -> int:
    return sum(1 for p in governed if any(b != git.empty and b in git.introductions() for b in git.versions(p)))


def check(repo, log=print, err=_stderr) -> int:
    runs_dir = os.path.join(repo, "runs")
    try:
        git = Git(repo)
    except CannotCheck as exc:
        log(f"verify-prereg: cannot check when each pre-registration was committed: {exc}; nothing was checked")
        return 0
    problems = 0
    for label, spec_files, governed in frozen_specs(runs_dir):
        frozen = _frozen(git, spec_files)
        held = _committed(git, governed)
        if frozen is None:
            if held:
                first = min(
                    c
                    for p in governed
                    for b in git.versions(p)
                    if b != git.empty
                    for c, _ in git.introductions().get(b, [])
                )
                err(
                    f"error: {label}: the frozen spec's current bytes were never committed, but what it governs was "
                    f"(first in {first[:12]}): a pre-registration is committed before its rows"
                )
                problems += 1
            else:
                log(f"verify-prereg: {label}: not committed yet (nothing it governs is either)")
            continue
        commit, date, intros = frozen
        early = _early(git, governed, intros)
        if early:
            path, c, where = early
            rel = os.path.relpath(path, repo).replace(os.sep, "/")
            moved = f" (its bytes, under {where})" if where != rel else ""
            err(
                f"error: {label}: frozen in {commit[:12]} ({date}), which is not an ancestor of {c[:12]}, a commit "
                f"that held {rel}{moved}: a spec is committed before the first row or attempt it governs "
                f"(re-frozen after its rows, or rows moved into place?)"
            )
            problems += 1
        elif held:
            log(
                f"verify-prereg: {label}: frozen in {commit[:12]} ({date}), an ancestor of every commit that held "
                f"what it governs, under any path ({held} file{'s' if held != 1 else ''})"
            )
        else:
            log(f"verify-prereg: {label}: frozen in {commit[:12]} ({date}); nothing it governs is committed yet")
    return 1 if problems else 0


def _order(git, commit, others):
    """How many of the others are ancestors of commit: the latest has most."""
    return sum(1 for o in others if o != commit and git.is_ancestor(o, commit))


def freeze_commit(folder, repo=None):
    """{"commit", "date"} of a freeze folder's spec.json and freeze.json as committed (the later of the two, dated
    by content), or None where it cannot be dated (no history, not committed): what the site shows beside the
    freeze's date."""
    repo = repo or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        git = Git(repo)
        frozen = _frozen(git, [os.path.join(folder, n) for n in ("spec.json", "freeze.json")])
    except CannotCheck:
        return None
    if frozen is None:
        return None
    return {"commit": frozen[0], "date": frozen[1]}


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
