"""Parity: host CPython from the sources must agree with the bundle in
Pyodide on every record; an injected divergence is named by record and field."""

import pytest

from builders._errors import BuildError
from builders.runs import build_runs
from builders.runs._host import execute_on_host

from .conftest import pyodide_test, snapshot


@pyodide_test
def test_parity_holds_for_every_published_record(published):
    assert published["summary"]["parity"] is True
    assert len(published["summary"]["host_us"]) == published["summary"]["runs"]


@pyodide_test
def test_an_injected_divergence_names_the_record_and_field(bundle_dir, tmp_path, monkeypatch):
    out = tmp_path / "runs"
    out.mkdir()
    (out / "keep.txt").write_text("untouched\n")
    before = snapshot(out)

    def diverging_host(spec):
        host = execute_on_host(spec)
        if spec["run_id"] == "reference-W2":
            host["execution"]["result"]["economics"]["interest"] += 1
        return host

    from builders.runs import _parity, _stage

    monkeypatch.setattr(
        _stage, "check_parity", lambda records, specs: _parity.check_parity(records, specs, diverging_host)
    )
    with pytest.raises(BuildError) as err:
        build_runs(bundle_dir, str(out), run_ids=["reference-W1", "reference-W2"])
    message = err.value.format_message()
    assert message.startswith("parity: runs/reference-W2.json differs")
    assert "content.economics.interest" in message
    assert snapshot(out) == before
