"""Two builds from the same sources, in different checkouts and working
directories, with different TZ, umask and locale: a byte-identical bundle and
identical run content hashes."""

import os
import shutil
import subprocess
import sys

from builders._files import ROOT
from builders._provenance import build_part

from .conftest import load, pyodide_test, snapshot

RUN_IDS = ["adversarial-W2-M1_stale_quote", "baseline-FUND_03-seed-2-do-nothing", "reference-W4"]


def _checkout(target):
    for name in ("engine", "builders"):
        shutil.copytree(os.path.join(ROOT, name), target / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("package.json", "package-lock.json"):
        shutil.copy(os.path.join(ROOT, name), target / name)
    os.symlink(os.path.join(ROOT, "node_modules"), target / "node_modules")


def _build(checkout, cwd, tz, umask, locale):
    env = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(checkout),
        "TZ": tz,
        "LC_ALL": locale,
        "LANG": locale,
        "SOURCE_DATE_EPOCH": "1788739200",
        "PYTHONHASHSEED": "0",
        "HOME": str(cwd),
    }
    run_ids = " ".join(f"--run-id {r}" for r in RUN_IDS)
    script = (
        f"umask {umask} && {sys.executable} -m builders.bundle build --out {checkout}/build/engine && "
        f"{sys.executable} -m builders.runs build --bundle {checkout}/build/engine --out {checkout}/partial-runs "
        f"--no-parity {run_ids}"
    )
    proc = subprocess.run(["sh", "-c", script], cwd=cwd, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pyodide_test
def test_two_builds_give_the_same_bundle_and_byte_identical_runs(tmp_path):
    """b starts from a's publication (as a fresh clone starts from the committed
    runs/): every record's content comes out the same, so each keeps its
    published volatile part and the whole tree is byte for byte a's."""
    a, b, elsewhere = tmp_path / "a", tmp_path / "deeper" / "b", tmp_path / "elsewhere"
    for path in (a, b, elsewhere):
        path.mkdir(parents=True)
    _checkout(a)
    _checkout(b)
    _build(a, a, "UTC", "022", "C.UTF-8")
    shutil.copytree(a / "partial-runs", b / "partial-runs")
    before = snapshot(b / "partial-runs")
    _build(b, elsewhere, "Pacific/Chatham", "077", "C")
    for name in ("fundbook-engine.zip", "manifest.json"):
        assert (a / "build/engine" / name).read_bytes() == (b / "build/engine" / name).read_bytes(), name
    assert build_part(load(a / "build/engine/provenance.json")) == build_part(load(b / "build/engine/provenance.json"))
    after = snapshot(b / "partial-runs")
    assert sorted(after) == sorted(before)
    for name in sorted(before):
        assert after[name] == before[name], name
    text = "".join(data.decode("utf-8", "replace") for data in after.values())
    assert str(tmp_path) not in text
    assert [e["run_id"] for e in load(b / "partial-runs/index.json")["entries"]] == sorted(RUN_IDS)
