"""Random and mutated batches for the fuzz test and `make bench` (seeded: reproducible)."""

import copy
import json

from engine import policy_batch

JUNK = [None, True, -1, 0, 2**60, 1.5, "", "x" * 3000, [], {}, "FUND", {"id": 1}]


def _mutate_value(rng, value):
    if isinstance(value, dict) and value and rng.random() < 0.6:
        key = rng.choice(sorted(value))
        if rng.random() < 0.3:
            del value[key]
        else:
            value[key] = _mutate_value(rng, value[key])
        return value
    if isinstance(value, list) and value and rng.random() < 0.6:
        i = rng.randrange(len(value))
        value[i] = _mutate_value(rng, value[i])
        return value
    return rng.choice(JUNK)


def fuzz_batch(rng, packet):
    """A batch for the packet's day: often plausible, often broken in one place."""
    base = policy_batch(rng.choice(["reference", "shortest-cheapest", "do-nothing"]), packet)
    roll = rng.random()
    if roll < 0.25:
        return base
    batch = copy.deepcopy(base)
    if roll < 0.45:
        # plausible actions with wild ids and amounts
        ids = {
            "asset": [a["id"] for a in packet["assets"]] + ["A99"],
            "quote": [q["id"] for q in packet["quotes"]] + ["Q01", "Q99"],
            "trade": [t["id"] for t in packet["trades"]] + ["FT999"],
            "approval": [a["id"] for a in packet["approvals"]] + ["AP009"],
        }
        for i in range(rng.randint(1, 4)):
            kind = rng.choice(["FUND", "ROLL", "REPAY", "ESCALATE", "EXECUTE"])
            action = {"id": f"f{i}", "type": kind}
            if kind in ("FUND", "EXECUTE"):
                body = {
                    "type": "FUND",
                    "asset": rng.choice(ids["asset"]),
                    "quote": rng.choice(ids["quote"]),
                    "notional": rng.choice([1, 10**6, 5 * 10**8, 2 * 10**9, 10**12]),
                }
                if kind == "FUND":
                    action.update({k: v for k, v in body.items() if k != "type"})
                else:
                    action.update(approval=rng.choice(ids["approval"]), action=body)
            elif kind in ("ROLL", "REPAY"):
                action["trade"] = rng.choice(ids["trade"])
                if kind == "ROLL":
                    action["quote"] = rng.choice(ids["quote"])
            else:
                action.update(
                    kind=rng.choice(["capacity", "tenor", "buffer"]),
                    counterparty=rng.choice(["CP1", "CP2", "CP3"]),
                    amount=rng.choice([1, 10**8, 10**10]),
                )
            batch["actions"].append(action)
    elif roll < 0.55:
        batch["day"] = rng.choice([packet["day"] - 1, packet["day"] + 1, 0, 99])
    elif roll < 0.62:
        return rng.choice(JUNK)
    elif roll < 0.7:
        batch["actions"] = batch["actions"] + copy.deepcopy(batch["actions"][:1])  # duplicate ids
    else:
        _mutate_value(rng, batch)
    return batch


def as_file_bytes(rng, batch):
    text = json.dumps(batch)
    if rng.random() < 0.05:
        return text[: rng.randrange(max(1, len(text)))].encode()  # truncated JSON
    return text.encode()
