"""The information boundary: no packet holds the future, the plan or any gold value."""

import json

import pytest

import engine
from engine._baselines import policy_batch

FORBIDDEN_KEYS = ("gold", "reference", "mutation", "approval_policy", "hidden", "responses", "events")


def _keys(value, out):
    if isinstance(value, dict):
        for k, v in value.items():
            out.add(k)
            _keys(v, out)
    elif isinstance(value, list):
        for v in value:
            _keys(v, out)
    return out


@pytest.mark.parametrize("family", engine.FAMILIES)
def test_no_packet_leaks(family):
    checked = 0
    for seed in range(1, 51):
        instance = engine.generate(family, seed)
        gold = engine.gold_candidate(instance)
        plan = {b["day"]: b for b in gold["batches"]}
        run = engine.Run(instance)
        while run.open_day is not None:
            day = run.open_day
            packet = run.packet()
            text = json.dumps(packet, sort_keys=True)
            keys = _keys(packet, set())
            assert not keys & set(FORBIDDEN_KEYS), (instance["instance_id"], day, keys & set(FORBIDDEN_KEYS))
            for source in instance["sources"]:
                if source["published_day"] > day:
                    assert source["text"] not in text and f'"{source["id"]}"' not in text
            for event in instance["events"]:
                if event["effective_day"] > day:
                    assert f'"{event["id"]}"' not in text
            visible = {q["id"] for q in packet["quotes"]}
            for quote in instance["quotes"]:
                if quote["offered_day"] > day:
                    assert quote["id"] not in visible and f'"{quote["id"]}"' not in text
            for asset in instance["assets"]:
                if asset["announce_day"] > day:
                    assert f'"{asset["id"]}"' not in text
            # the plan's batch and gold report for today and later are nowhere in the packet
            earlier = [json.dumps(plan[d]["report"], sort_keys=True) for d in range(1, day)]
            for later in range(day, run.horizon + 1):
                report = json.dumps(plan[later]["report"], sort_keys=True)
                if report not in earlier:  # a report equal to a past one is history, not a leak
                    assert report not in text
                for action in plan[later]["actions"]:
                    assert json.dumps(action, sort_keys=True) not in text
            run.submit(policy_batch("reference", packet))
            checked += 1
    assert checked == 50 * 20
