"""Every published receipts head, recomputed from the contract's formula alone.

No project code: an RFC 8785 writer of its own (enough for these records:
objects, arrays, strings, integers, booleans, null), then the contract's chain:

    F        = sha256(JCS(instance))
    salt     = sha256("fundbook/public-salt/" + F)          (published fixtures; an attempt reveals its own)
    genesis  = sha256(JCS({"fixture_sha256": F, "salt": salt}))
    hash_i   = sha256(JCS({seq, day, kind, payload, prev_hash})), prev_hash_1 = genesis
    head     = {size: n, hash: hash_n}, and for an empty chain {size: 0, hash: genesis}
"""

import hashlib
import json
import os

import pytest

from tests.conftest import REPO

RUNS = os.path.join(REPO, "runs")


def jcs(value) -> str:
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int):
        assert abs(value) <= 2**53 - 1
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ",".join(jcs(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: k.encode("utf-16-be"))  # RFC 8785: UTF-16 code units
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + jcs(value[k]) for k in keys) + "}"
    raise TypeError(f"not JSON for the contract: {type(value).__name__}")


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def contract_head(instance, receipts, salt=None):
    fixture = sha(jcs(instance))
    salt = salt or hashlib.sha256(b"fundbook/public-salt/" + fixture.encode()).hexdigest()
    prev = genesis = sha(jcs({"fixture_sha256": fixture, "salt": salt}))
    for n, r in enumerate(receipts, 1):
        assert r["seq"] == n and r["prev_hash"] == prev
        prev = sha(jcs({k: r[k] for k in ("seq", "day", "kind", "payload", "prev_hash")}))
        assert prev == r["hash"]
    return {"size": len(receipts), "hash": prev if receipts else genesis}


def _load(*parts):
    with open(os.path.join(*parts), encoding="utf-8") as fh:
        return json.load(fh)


RUN_IDS = sorted(e["run_id"] for e in _load(RUNS, "index.json")["entries"])


@pytest.mark.parametrize("run_id", RUN_IDS)
def test_every_published_head_follows_the_contract(run_id):
    record = _load(RUNS, f"{run_id}.json")["content"]
    instance = _load(RUNS, "inputs", f"{run_id}.json")["instance"]
    receipts = _load(RUNS, "receipts", f"{run_id}.json")
    head = contract_head(instance, receipts["receipts"])
    assert record["receipts_head"] == head
    assert receipts["receipts_head"] == head


def test_the_unrun_candidates_publish_their_genesis():
    """M7 (malformed) and M8 (missing reference) never run: their head is the empty chain's, the genesis."""
    unrun = [r for r in RUN_IDS if r.endswith(("M7_malformed", "M8_missing_reference"))]
    assert len(unrun) == 10
    for run_id in unrun:
        record = _load(RUNS, f"{run_id}.json")["content"]
        instance = _load(RUNS, "inputs", f"{run_id}.json")["instance"]
        assert record["receipts_head"]["size"] == 0
        assert record["receipts_head"] == contract_head(instance, [])
        assert record["receipts_head"]["hash"] != sha(jcs(instance))  # not the fixture hash (the old fallback)


def test_model_attempts_follow_it_with_their_revealed_salt():
    attempts = os.path.join(RUNS, "attempts")
    checked = 0
    for name in sorted(os.listdir(attempts)):
        if not os.path.isfile(os.path.join(attempts, name, "record.json")):
            continue
        content = _load(attempts, name, "record.json")["content"]
        receipts = _load(attempts, name, "receipts.json")
        receipts = receipts["receipts"] if isinstance(receipts, dict) else receipts
        from engine import generate, with_horizon  # the world only: the chain itself is recomputed by the formula above

        instance = generate(content["task"]["family"], content["task"]["seed"])
        if content.get("harness") == "inspect":
            # An Inspect attempt (launchers/inspect): its world over the days the task ran, under the public salt
            # (the environment's source names none), always finalised by the scorer, which reveals that salt.
            instance = with_horizon(instance, content["task"]["horizon"])
            public = hashlib.sha256(b"fundbook/public-salt/" + content["task"]["fixture_sha256"].encode()).hexdigest()
            assert receipts[-1]["kind"] == "FINAL" and receipts[-1]["payload"]["salt"] == public
            assert sha(jcs(instance)) == content["task"]["fixture_sha256"]
            assert content["receipts_head"] == content["result"]["receipts_head"] == contract_head(instance, receipts)
            checked += 1
            continue
        if receipts[-1]["kind"] == "FINAL":  # a finalised run reveals its salt in its last receipt
            final = receipts[-1]["payload"]
            assert final["salt"] == content["salt"] and final["fixture_sha256"] == content["task"]["fixture_sha256"]
        else:  # stopped before the run was finalised (an operator stop, a host that died): the record reveals it
            assert content["termination"]["status"] != "completed" and content["salt"]
        assert sha(jcs(instance)) == content["task"]["fixture_sha256"]
        assert content["receipts_head"] == contract_head(instance, receipts, salt=content["salt"])
        checked += 1
    assert checked >= 1


def test_the_writer_is_rfc8785_on_its_own_sorting_example():
    # RFC 8785 section 3.2.3: keys sorted by UTF-16 code units
    value = {
        "\u20ac": "Euro Sign",
        "\r": "Carriage Return",
        "\ufb33": "Hebrew Letter Dalet With Dagesh",
        "1": "One",
        "\U0001f600": "Emoji: Grinning Face",
        "\u0080": "Control",
        "\u00f6": "Latin Small Letter O With Diaeresis",
    }
    assert [k for k in json.loads(jcs(value))] == ["\r", "1", "\u0080", "\u00f6", "\u20ac", "\U0001f600", "\ufb33"]
