"""The committed publication is what this commit's engine produces.

A fresh build of every fixture through the bundle must give the committed
records' content exactly (the command included: it names the bundle where
`make build-engine` writes it, wherever the test built it), the committed
index entries, and a committed provenance that describes this checkout's
sources: any engine change that alters an outcome, the bundle or the engine
sources must come with regenerated runs (`make build-runs`)."""

import os

from builders._provenance import build_part
from tests.builders.conftest import load, pyodide_test
from tests.conftest import REPO

STALE = "runs/ is stale: run `make build-runs` and commit runs/"


@pyodide_test
def test_committed_runs_match_a_fresh_build(published):
    committed = load(os.path.join(REPO, "runs", "index.json"))
    fresh = load(os.path.join(published["dir"], "index.json"))
    assert fresh["schema"] == committed["schema"], STALE
    assert fresh["engine"] == committed["engine"], STALE
    assert [e["run_id"] for e in fresh["entries"]] == [e["run_id"] for e in committed["entries"]], STALE
    for mine, theirs in zip(fresh["entries"], committed["entries"]):
        same = ("run_id", "kind", "fixture_id", "fixture_sha256", "record", "content_sha256")
        assert {k: mine[k] for k in same} == {k: theirs[k] for k in same}, f"{STALE} ({mine['run_id']})"
        assert (
            load(os.path.join(published["dir"], os.path.basename(mine["record"])))["content"]
            == load(os.path.join(REPO, theirs["record"]))["content"]
        ), f"{STALE} ({mine['run_id']})"


@pyodide_test
def test_the_committed_provenance_describes_this_checkout(published):
    """No commit hash inside: the sources by sha256 and git blob id, so the
    committed provenance must name exactly this checkout's inputs."""
    committed = load(os.path.join(REPO, "runs", "engine", "provenance.json"))
    fresh = load(os.path.join(published["dir"], "engine", "provenance.json"))
    assert build_part(committed) == build_part(fresh), STALE
    with (
        open(os.path.join(REPO, "runs", "engine", "manifest.json"), "rb") as a,
        open(os.path.join(published["dir"], "engine", "manifest.json"), "rb") as b,
    ):
        assert a.read() == b.read(), STALE
