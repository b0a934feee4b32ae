"""Fresh state per fixture: in one Pyodide runtime, a fixture's record does not
depend on what ran before it."""

import hashlib
import json
import os
import subprocess
import sys

from builders._files import ROOT

from .conftest import read_bytes, pyodide_test

A = {"kind": "adversarial", "episode": "W3", "mutation": "M4_fully_hedged_tail"}
B = {"kind": "baseline", "family": "FUND_02", "seed": 2, "policy": "shortest-cheapest"}
C = {"kind": "reference", "episode": "W5"}


def _run(bundle_dir, specs):
    zip_path = os.path.join(bundle_dir, "fundbook-engine.zip")
    digest = hashlib.sha256(read_bytes(zip_path)).hexdigest()
    argv = ["node", "builders/runner/run_fixtures.mjs", "--bundle", zip_path, "--bundle-sha256", digest]
    for spec in specs:
        argv += ["--fixture", json.dumps(spec)]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=True)
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    return [e for e in events if e["event"] == "fixture"]


@pyodide_test
def test_no_module_state_leaks_between_fixtures(bundle_dir):
    forward = _run(bundle_dir, [A, B, C, A, B, C])
    backward = _run(bundle_dir, [C, B, A])
    alone = {spec["kind"]: _run(bundle_dir, [spec])[0] for spec in (B,)}

    def digests(events):
        return [
            (
                e["run_id"],
                e["fields_sha256"],
                hashlib.sha256(e["receipts_text"].encode()).hexdigest(),
                hashlib.sha256(e["input_text"].encode()).hexdigest(),
            )
            for e in events
        ]

    first, second = digests(forward[:3]), digests(forward[3:])
    assert first == second
    assert digests(backward) == first[::-1]
    assert digests([alone["baseline"]]) == [first[1]]
    # every fixture imported the engine again, from the bundle's bytecode
    for event in forward:
        assert event["fresh_modules"] is True
        assert all(m["origin"].endswith(".pyc") for m in event["modules"])


def test_the_fresh_module_probe_catches_state_carried_over(tmp_path):
    """The runner's own check, exercised on host CPython from the sources: a
    module that survives from the previous fixture is named."""
    script = f"""
import sys
sys.path.insert(0, {os.path.join(ROOT, "builders", "runner")!r})
import run_fixtures as h
h.ZIP = {ROOT!r}  # the sources stand in for the bundle here
h._engine()
assert h._fresh() is True
survivor = sys.modules["engine._rules"]
h._engine()
vars(survivor)[h.PROBE] = True
sys.modules["engine._rules"] = survivor  # as if the purge had missed it
try:
    h._fresh()
except h.Stop as exc:
    print(exc)
"""
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True)
    assert proc.stdout.strip() == "module engine._rules carried state over from the previous fixture", proc.stderr
