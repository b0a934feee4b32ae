"""The committed publication is what this commit's engine produces.

A fresh build of every fixture through the bundle must give the committed
records (the bundle path in the recorded command and trace apart, since the test builds
outside the checkout): any engine change that alters an outcome or the bundle
must come with regenerated runs (`make build-runs`)."""

import os

from tests.builders.conftest import load, pyodide_test
from tests.conftest import REPO


def _without_command(record):
    """Content less what names the bundle's path: the command and the trace it is in."""
    content = {k: v for k, v in record["content"].items() if k != "command"}
    content["outputs"] = {k: v for k, v in content["outputs"].items() if k != "trace"}
    return content


@pyodide_test
def test_committed_runs_match_a_fresh_build(published):
    committed = load(os.path.join(REPO, "runs", "index.json"))
    fresh = load(os.path.join(published["dir"], "index.json"))
    stale = "runs/ is stale: run `make build-runs` and commit runs/"
    assert fresh["engine"] == committed["engine"], stale
    assert [e["run_id"] for e in fresh["entries"]] == [e["run_id"] for e in committed["entries"]], stale
    for entry in fresh["entries"]:
        mine = load(os.path.join(published["dir"], os.path.basename(entry["record"])))
        theirs = load(os.path.join(REPO, entry["record"]))
        assert _without_command(mine) == _without_command(theirs), f"{stale} ({entry['run_id']})"
