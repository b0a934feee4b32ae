"""The held-out split: a secret draws the worlds, a salted commitment binds them, the reveal opens it."""

import hashlib
import json

import pytest
from hypothesis import given, settings, strategies as st

from engine import FAMILIES, canonical_json
from experiments import heldout
from experiments.errors import ExperimentError

SECRET = "11" * 32
OTHER = "22" * 32


def test_draw_is_deterministic_distinct_large_and_json_safe():
    items = heldout.draw(SECRET, FAMILIES, 400)
    assert items == heldout.draw(SECRET, FAMILIES, 400)
    assert len({tuple(i) for i in items}) == 400
    assert [f for f, _ in items[:8]] == list(FAMILIES) * 2
    assert all(heldout.SEED_LOW <= s <= 2**53 - 1 for _, s in items)
    assert json.loads(json.dumps(items)) == items
    assert heldout.draw(SECRET, FAMILIES, 10) == items[:10]
    assert heldout.draw(OTHER, FAMILIES, 10) != items[:10]


def test_commitment_is_the_salted_sha256_of_the_canonical_list():
    items = heldout.draw(SECRET, ["FUND_02"], 3)
    salt = hashlib.sha256(b"fundbook/heldout/salt\0" + bytes.fromhex(SECRET)).hexdigest()
    expected = hashlib.sha256(salt.encode() + canonical_json(items)).hexdigest()
    doc = heldout.commit(SECRET, ["FUND_02"], 3, date="2026-01-02")
    assert doc["sha256"] == expected
    assert doc == {
        "schema": heldout.COMMITMENT_SCHEMA,
        "families": ["FUND_02"],
        "count": 3,
        "seed_range": [2**32, 2**53 - 1],
        "scheme": heldout.SCHEME,
        "sha256": expected,
        "created": "2026-01-02",
    }


def test_the_reveal_opens_the_commitment_and_tampering_is_caught():
    doc = heldout.commit(SECRET, FAMILIES, 8, date="2026-01-02")
    reveal = heldout.reveal(SECRET, doc)
    assert heldout.check_reveal(reveal, doc, "reveal.json") == heldout.draw(SECRET, FAMILIES, 8)
    with pytest.raises(ExperimentError, match="does not open the commitment"):
        heldout.reveal(OTHER, doc)
    forged = dict(reveal, items=[[f, s + 1] for f, s in reveal["items"]])
    with pytest.raises(ExperimentError, match="salt or items differ"):
        heldout.check_reveal(forged, doc, "reveal.json")
    with pytest.raises(ExperimentError, match="commitment_sha256 expected"):
        heldout.check_reveal(dict(reveal, commitment_sha256="0" * 64), doc, "reveal.json")
    with pytest.raises(ExperimentError, match="does not open"):
        heldout.check_reveal(dict(reveal, secret=OTHER), doc, "reveal.json")


@settings(max_examples=25, deadline=None)
@given(st.binary(min_size=32, max_size=32), st.integers(1, 30))
def test_any_other_list_gives_another_commitment(key, count):
    secret = key.hex()
    items = heldout.draw(secret, FAMILIES, count)
    changed = [list(i) for i in items]
    changed[-1][1] += 1
    assert heldout.commitment_sha256(secret, items) != heldout.commitment_sha256(secret, changed)


def test_secret_files_and_bad_inputs(tmp_path):
    (tmp_path / "s").write_text(SECRET + "\n")
    assert heldout.read_secret(tmp_path / "s") == SECRET
    (tmp_path / "r.json").write_text(json.dumps({"secret": SECRET}))
    assert heldout.read_secret(tmp_path / "r.json") == SECRET
    (tmp_path / "bad").write_text("not a secret")
    with pytest.raises(ExperimentError, match="64 lowercase hex"):
        heldout.read_secret(tmp_path / "bad")
    with pytest.raises(ExperimentError, match="missing: no such file"):
        heldout.read_secret(tmp_path / "missing")
    with pytest.raises(ExperimentError, match="distinct names"):
        heldout.commit(SECRET, ["FUND_09"], 3)
    with pytest.raises(ExperimentError, match="positive number"):
        heldout.commit(SECRET, FAMILIES, 0)
    with pytest.raises(ExperimentError, match="schema"):
        heldout.check_commitment_doc({"schema": "x"}, "c.json")
