"""A pre-registration dated by git history, by content (builders/preregistration.py, `make verify-prereg`): on a
temporary repository, a spec frozen before its sweep passes; one re-frozen after its rows (the journal rewritten
consistently would not show it), frozen in the very commit that adds its rows, or re-frozen in the working tree
is named; rows committed under another folder before the spec and moved into place after it are named by the
commit that first held their bytes (on this branch or another), while an empty row file dates nothing; a paid
freeze is dated against the attempts run under it; no history (a tarball, a shallow clone) is said plainly and
checks nothing."""

import json
import os
import shutil
import subprocess

import pytest

from builders import preregistration as prereg

ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
    "GIT_AUTHOR_DATE": "2026-12-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2026-12-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
}


def git(repo, *args):
    out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, env={**os.environ, **ENV})
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def write(repo, rel, doc):
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc, sort_keys=True) + "\n")


def commit(repo, message):
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path):
    """A study frozen (one commit), then its sweep's first rows (the next)."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "runs/studies/s/study.json", {"sweep": "sweep"})
    write(root, "runs/studies/s/c/spec.json", {"margin": "0"})
    write(root, "runs/studies/s/c/freeze.json", {"spec_sha256": "a" * 64})
    frozen = commit(root, "freeze")
    write(root, "runs/studies/s/sweep/journal.jsonl", '{"entry":"start"}\n')
    rows = commit(root, "rows")
    return root, frozen, rows


def run(root):
    lines, errors = [], []
    code = prereg.check(str(root), lines.append, errors.append)
    return code, lines, errors


def test_a_spec_frozen_before_its_rows_passes(repo):
    root, frozen, _ = repo
    code, lines, errors = run(root)
    assert (code, errors) == (0, [])
    assert lines == [
        f"verify-prereg: runs/studies/s/c: frozen in {frozen[:12]} (2026-12-01), an ancestor of every "
        f"commit that held what it governs, under any path (1 file)"
    ]
    assert prereg.freeze_commit(str(root / "runs/studies/s/c"), str(root)) == {"commit": frozen, "date": "2026-12-01"}


def test_a_spec_re_frozen_after_its_rows_is_named(repo):
    root, _, rows = repo
    write(root, "runs/studies/s/c/spec.json", {"margin": "-50"})  # margin 0 to -50, freeze rewritten to match
    write(root, "runs/studies/s/c/freeze.json", {"spec_sha256": "b" * 64})
    again = commit(root, "re-freeze")
    code, _, errors = run(root)
    assert code == 1
    assert errors == [
        f"error: runs/studies/s/c: frozen in {again[:12]} (2026-12-01), which is not an ancestor of "
        f"{rows[:12]}, a commit that held runs/studies/s/sweep/journal.jsonl: a spec is committed "
        f"before the first row or attempt it governs (re-frozen after its rows, or rows moved into "
        f"place?)"
    ]


def test_a_spec_frozen_in_the_commit_that_adds_its_rows_is_named(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "runs/comparisons/c/spec.json", {"margin": "0"})
    write(root, "runs/comparisons/c/freeze.json", {"spec_sha256": "a" * 64})
    write(root, "runs/comparisons/c/evidence.json", {"files": [{"kind": "journal", "path": "../sw/journal.jsonl"}]})
    write(root, "runs/comparisons/sw/journal.jsonl", "{}\n")
    write(root, "runs/comparisons/sw/observations.jsonl", "{}\n")
    commit(root, "all at once")
    code, _, errors = run(root)
    assert (
        code == 1
        and errors[0].startswith("error: runs/comparisons/c: frozen in ")
        and "a commit that held runs/comparisons/sw/journal.jsonl" in errors[0]
    )


def _moved_study(tmp_path, rows_where):
    """Rows committed under `rows_where` first, then the spec, then the rows moved into the sweep's folder."""
    root = tmp_path / "moved"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    write(root, "README", "a study\n")
    commit(root, "start")
    rows = '{"entry":"start"}\n{"item":"FUND_01/seed-1","value":91}\n'
    if rows_where == "side branch":  # on a branch never merged: the bytes exist in the history all the same
        git(root, "checkout", "-q", "-b", "drafts")
        write(root, "scratch/journal.jsonl", rows)
        early = commit(root, "rows, early, on a side branch")
        git(root, "checkout", "-q", "main")
    else:
        write(root, f"{rows_where}/journal.jsonl", rows)
        early = commit(root, "rows, early, elsewhere")
    write(root, "runs/studies/s/study.json", {"sweep": "sweep"})
    write(root, "runs/studies/s/c/spec.json", {"margin": "0"})
    write(root, "runs/studies/s/c/freeze.json", {"spec_sha256": "a" * 64})
    frozen = commit(root, "freeze")
    if rows_where != "side branch":
        (root / "runs/studies/s/sweep").mkdir(parents=True)
        git(root, "mv", f"{rows_where}/journal.jsonl", "runs/studies/s/sweep/journal.jsonl")
    else:
        write(root, "runs/studies/s/sweep/journal.jsonl", rows)
    commit(root, "rows moved into place after the spec")
    return root, early, frozen


@pytest.mark.parametrize("rows_where", ["drafts/sweep", "side branch"])
def test_rows_committed_elsewhere_before_the_spec_and_moved_in_are_named(tmp_path, rows_where):
    root, early, frozen = _moved_study(tmp_path, rows_where)
    code, _, errors = run(root)
    where = "drafts/sweep/journal.jsonl" if rows_where != "side branch" else "scratch/journal.jsonl"
    assert code == 1 and errors == [
        f"error: runs/studies/s/c: frozen in {frozen[:12]} (2026-12-01), which is not an ancestor of {early[:12]}, a "
        f"commit that held runs/studies/s/sweep/journal.jsonl (its bytes, under {where}): a spec is committed before "
        f"the first row or attempt it governs (re-frozen after its rows, or rows moved into place?)"
    ]


def test_an_empty_row_file_dates_nothing(repo):
    """Git has one blob for every empty file (an __init__.py, a placeholder): an empty journal is no evidence."""
    root, frozen, rows = repo
    write(root, "tools/__init__.py", "")
    write(root, "runs/studies/s/sweep/observations.jsonl", "")
    commit(root, "an empty placeholder")
    code, lines, errors = run(root)
    assert (code, errors) == (0, []) and lines[0].endswith("under any path (1 file)")


def test_a_study_s_tier_plan_is_dated_with_its_specs(repo):
    root, _, rows = repo
    write(root, "runs/studies/s/study.json", {"sweep": "sweep", "tiers": "tiers.json"})
    write(root, "runs/studies/s/tiers.json", {"schema": "fundbook.tier-plan/1"})
    late = commit(root, "a tier plan after the rows")
    code, _, errors = run(root)
    assert code == 1 and errors[0].startswith(
        f"error: runs/studies/s/c: frozen in {late[:12]} (2026-12-01), which is not an ancestor of {rows[:12]}"
    )


def test_a_spec_re_frozen_in_the_working_tree_is_named(repo):
    root, _, rows = repo
    write(root, "runs/studies/s/c/freeze.json", {"spec_sha256": "c" * 64})
    code, _, errors = run(root)
    assert code == 1 and errors == [
        f"error: runs/studies/s/c: the frozen spec's current bytes were never committed, but what it governs was "
        f"(first in {rows[:12]}): a pre-registration is committed before its rows"
    ]


def test_a_paid_freeze_is_dated_against_the_attempts_run_under_it(repo):
    root, _, _ = repo
    write(root, "runs/attempts/free-1/record.json", {"content": {"freeze": None}})  # not governed
    commit(root, "a free attempt")
    write(root, "runs/attempts/freeze.json", {"content_sha256": "f" * 64})
    commit(root, "paid freeze")
    write(root, "runs/attempts/paid-1/record.json", {"content": {"freeze": {"sha256": "f" * 64}}})
    commit(root, "a paid attempt")
    assert run(root)[0] == 0
    write(root, "runs/attempts/freeze.json", {"content_sha256": "e" * 64})
    again = commit(root, "the freeze rewritten after the attempt")
    code, _, errors = run(root)
    assert code == 1 and errors == [
        f"error: runs/attempts/freeze.json: frozen in {again[:12]} (2026-12-01), which is not an ancestor of "
        f"{git(root, 'rev-parse', 'HEAD~1')[:12]}, a commit that held runs/attempts/paid-1/record.json: a spec "
        f"is committed before the first row or attempt it governs (re-frozen after its rows, or rows moved into "
        f"place?)"
    ]


def test_no_history_is_said_plainly_and_checks_nothing(repo, tmp_path):
    root, _, _ = repo
    tarball = tmp_path / "tarball"
    shutil.copytree(root / "runs", tarball / "runs")  # the files without their history
    code, lines, errors = run(tarball)
    assert (code, errors) == (0, []) and len(lines) == 1
    assert (
        lines[0].startswith("verify-prereg: cannot check when each pre-registration was committed: ")
        and "is not a git repository (a tarball or an export has no history); nothing was checked" in lines[0]
    )
    shallow = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{root}", str(shallow))
    code, lines, errors = run(shallow)
    assert (code, errors) == (0, []) and lines == [
        "verify-prereg: cannot check when each pre-registration was committed: a shallow clone (`git fetch "
        "--unshallow` to get the whole history); nothing was checked"
    ]
    assert prereg.freeze_commit(str(shallow / "runs/studies/s/c"), str(shallow)) is None


def test_the_published_specs_were_frozen_before_their_rows():
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    lines, errors = [], []
    code = prereg.check(repo, lines.append, errors.append)
    assert (code, errors) == (0, []), errors
    assert all("frozen in" in line or "cannot check" in line for line in lines)


def test_no_git_at_all_is_said_plainly(repo, monkeypatch):
    root, _, _ = repo
    monkeypatch.setattr(prereg.shutil, "which", lambda name: None)
    code, lines, errors = run(root)
    assert (code, errors, lines) == (
        0,
        [],
        [
            "verify-prereg: cannot check when each pre-registration was committed: "
            "git is not installed; nothing was checked"
        ],
    )
