import json

import pytest

from launchers._errors import BudgetHalt, InputError
from launchers._ledger import Ledger, genesis, load_ledger

PRICE = {"input_micro_usd_per_mtok": 130000, "output_micro_usd_per_mtok": 400000}
CLAIM = "a" * 64


def _ledger(tmp_path, cap=5000, tokens=100000):
    return Ledger(CLAIM, cap, tokens, PRICE, path=str(tmp_path / "ledger.jsonl"))


def test_reserve_charge_release(tmp_path):
    ledger = _ledger(tmp_path)
    assert ledger.head == {"size": 0, "hash": genesis(CLAIM)}
    assert ledger.reserve(1, 6000, 2000)["micro_usd"] == 1580
    assert ledger.totals()["committed_micro_usd"] == 1580
    ledger.settle(1, 6000, 500)
    kinds = [(e["kind"], e["micro_usd"]) for e in ledger.entries]
    assert kinds == [("reserve", 1580), ("charge", 980), ("release", 600)]
    t = ledger.totals()
    assert (t["charged_micro_usd"], t["unresolved_micro_usd"], t["tokens_in"], t["tokens_out"]) == (980, 0, 6000, 500)


def test_refusal_at_the_cost_cap_writes_nothing(tmp_path):
    ledger = _ledger(tmp_path, cap=3000)
    ledger.reserve(1, 6000, 2000)
    ledger.settle(1, 6000, 2000)
    before = (tmp_path / "ledger.jsonl").read_bytes()
    with pytest.raises(BudgetHalt) as err:
        ledger.reserve(2, 6000, 2000)
    assert err.value.limit == "cost" and (tmp_path / "ledger.jsonl").read_bytes() == before


def test_refusal_at_the_token_cap(tmp_path):
    ledger = _ledger(tmp_path, cap=10**9, tokens=10000)
    ledger.reserve(1, 6000, 2000)
    with pytest.raises(BudgetHalt) as err:
        ledger.reserve(2, 1000, 2000)
    assert err.value.limit == "tokens"


def test_unresolved_reservation_stays_a_liability(tmp_path):
    ledger = _ledger(tmp_path)
    ledger.reserve(1, 6000, 2000)
    ledger.mark_unresolved(1, "request_timeout")
    t = ledger.totals()
    assert t["unresolved_micro_usd"] == 1580 and t["unresolved_calls"] == [1] and t["charged_micro_usd"] == 0
    with pytest.raises(BudgetHalt):  # it still counts against the cap
        for call in range(2, 5):
            ledger.reserve(call, 6000, 2000)


def test_cache_hit_is_free(tmp_path):
    ledger = _ledger(tmp_path, cap=0, tokens=1)
    ledger.reserve(1, 6000, 2000, free=True)
    ledger.settle(1, 6000, 300, "cache hit", free=True)
    assert ledger.totals()["charged_micro_usd"] == 0 and ledger.totals()["committed_tokens"] == 0


def test_reload_after_crash_keeps_open_reservations(tmp_path):
    ledger = _ledger(tmp_path)
    ledger.reserve(1, 6000, 2000)
    ledger.settle(1, 6000, 100)
    ledger.reserve(2, 6000, 2000)
    again = load_ledger(str(tmp_path / "ledger.jsonl"), CLAIM, 5000, 100000, PRICE)
    assert again.head == ledger.head
    assert again.totals() == ledger.totals() and again.totals()["unresolved_calls"] == [2]


@pytest.mark.parametrize("edit", ["change", "drop", "swap"])
def test_an_edited_ledger_is_detected(tmp_path, edit):
    ledger = _ledger(tmp_path)
    for call in (1, 2):
        ledger.reserve(call, 100, 100)
        ledger.settle(call, 100, 50)
    path = tmp_path / "ledger.jsonl"
    lines = path.read_bytes().splitlines()
    if edit == "change":
        entry = json.loads(lines[1])
        entry["micro_usd"] = 0
        lines[1] = json.dumps(entry).encode()
    elif edit == "drop":
        del lines[2]
    else:
        lines[1], lines[2] = lines[2], lines[1]
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(InputError, match="hash chain is broken"):
        load_ledger(str(path), CLAIM, 5000, 100000, PRICE)


def test_a_call_is_reserved_once(tmp_path):
    ledger = _ledger(tmp_path)
    ledger.reserve(1, 1, 1)
    with pytest.raises(InputError, match="already reserved"):
        ledger.reserve(1, 1, 1)
