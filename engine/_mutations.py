"""Mutations M1..M11: constructed adverse candidates with a stated expected
outcome. They test the grader, not a model. A mutation passes when the observed
outcome equals the expected one, field for field.
"""

import copy

from ._canon import sha256_hex
from ._candidate import gold_candidate
from ._errors import InputError
from ._report import MATERIALITY_BPS, error_within, field_base
from ._rules import decide, market_from_instance
from ._run import Run

MUTATIONS = (
    "M1_stale_quote", "M2_double_pledge", "M3_cash_overdraw", "M4_fully_hedged_tail",
    "M5_unapproved_capacity", "M6_authority_reuse", "M7_malformed", "M8_missing_reference",
    "M9_understated_tail", "M10_omitted_exposure", "M11_cash_misstatement",
)
MUTATION_NOTES = {
    "M1_stale_quote": "a FUND names a quote that is not valid that day: refused TIMING",
    "M2_double_pledge": "the same collateral is pledged twice: the second FUND is refused TITLE",
    "M3_cash_overdraw": "a REPAY would take projected cash under the buffer: refused CASH",
    "M4_fully_hedged_tail": "reports zero tail while the book has one: NOT_QUALIFIED",
    "M5_unapproved_capacity": "a FUND over counterparty capacity without authority: refused CAPACITY",
    "M6_authority_reuse": "an EXECUTE reuses consumed authority: refused AUTHORITY",
    "M7_malformed": "the candidate is not well-formed: MALFORMED, no score",
    "M8_missing_reference": "the candidate answers a fixture with no reference: UNSCORABLE, no score",
    "M9_understated_tail": "one report halves a non-zero tail (gap kept): NOT_QUALIFIED",
    "M10_omitted_exposure": "one report leaves out a position that has a tail: NOT_QUALIFIED",
    "M11_cash_misstatement": "one report overstates cash by 1,400,000.00: NOT_QUALIFIED",
}
MISSTATEMENT = 140_000_000  # cents: 1,400,000.00


class NotApplicable(InputError):
    """The episode lacks what the mutation needs (say, an approved execution)."""


def _refusal(day, action_id, reason):
    return {"status": "SCORED", "refusal": {"day": day, "action": action_id, "reason": reason}}


def _first(gold, predicate):
    for batch in gold["batches"]:
        for index, action in enumerate(batch["actions"]):
            if predicate(action):
                return batch, index, action
    return None, None, None


def _m1(instance, gold):
    """A FUND naming a quote the desk was shown earlier but that has expired:
    inserted on the first day such a quote exists (a quote offered later would
    be an unknown id, rejected with the batch, not a stale one)."""
    for batch in gold["batches"]:
        day = batch["day"]
        stale = [q for q in instance["quotes"] if q["offered_day"] <= q["valid_through"] < day]
        assets = sorted(a["id"] for a in instance["assets"] if a["announce_day"] <= day)
        if stale and assets:
            quote = max(stale, key=lambda q: (q["valid_through"], q["id"]))
            asset = next(a for a in instance["assets"] if a["id"] == assets[0])
            action = {"id": "m1-stale-quote", "type": "FUND", "asset": asset["id"], "quote": quote["id"],
                      "notional": asset["notional"]}
            batch["actions"].insert(0, action)
            return _refusal(day, action["id"], "TIMING")
    raise NotApplicable("M1_stale_quote needs a checkpoint after some quote has expired")


def _m2(instance, gold):
    batch, index, action = _first(gold, lambda a: a["type"] == "FUND")
    if batch is None:
        raise NotApplicable("M2_double_pledge needs a FUND in the reference plan")
    twin = dict(action, id="m2-double-pledge")
    batch["actions"].insert(index + 1, twin)
    return _refusal(batch["day"], twin["id"], "TITLE")


def _m3(instance, gold):
    run = Run(instance)
    market = market_from_instance(instance)
    for batch in gold["batches"]:
        day = batch["day"]
        trial = copy.deepcopy(run.book)
        for action in batch["actions"]:
            decide(trial, market, day, action)
        for tid in sorted(trial["trades"]):
            if trial["trades"][tid]["status"] != "live":
                continue
            probe = {"id": "m3-cash-overdraw", "type": "REPAY", "trade": tid}
            if decide(copy.deepcopy(trial), market, day, probe)["reason"] == "CASH":
                batch["actions"].append(probe)
                return _refusal(day, probe["id"], "CASH")
        run.submit(batch)
    raise NotApplicable("M3_cash_overdraw needs a live trade whose repayment would breach the buffer")


def _m4(instance, gold):
    run = Run(instance)
    changed = False
    for batch in gold["batches"]:
        _, record = run.submit(copy.deepcopy(batch))
        for aid, entry in record["gold_report"]["assets"].items():
            if entry["tail_cent_days"] > 0:
                batch["report"]["assets"][aid]["tail_cent_days"] = 0
                batch["report"]["assets"][aid]["maturity_gap_days"] = 0
                changed = True
    if not changed:
        raise NotApplicable("M4_fully_hedged_tail needs a checkpoint where the book has a tail")
    return {"status": "SCORED", "verdict": "NOT_QUALIFIED", "failed_gates": ["no_false_full_protection"]}


def _first_tail(instance, gold, kind):
    """(batch, asset id, gold entry) of the first reported position with a tail."""
    run = Run(instance)
    for batch in gold["batches"]:
        _, record = run.submit(copy.deepcopy(batch))
        for aid, entry in sorted(record["gold_report"]["assets"].items()):
            if entry["tail_cent_days"] > 1 and aid in batch["report"]["assets"]:
                return batch, aid, entry
    raise NotApplicable(f"{kind} needs a checkpoint where the book has a tail")


def _failed(gate):
    return {"status": "SCORED", "verdict": "NOT_QUALIFIED", "failed_gates": [gate]}


def _m9(instance, gold):
    # not zero, so only a gate that compares sizes catches it
    batch, aid, entry = _first_tail(instance, gold, "M9_understated_tail")
    batch["report"]["assets"][aid]["tail_cent_days"] = entry["tail_cent_days"] // 2
    return _failed("no_false_full_protection")


def _m10(instance, gold):
    batch, aid, _ = _first_tail(instance, gold, "M10_omitted_exposure")
    del batch["report"]["assets"][aid]
    return _failed("no_false_full_protection")


def _m11(instance, gold):
    # the first checkpoint on which 1,400,000.00 is a material error
    run = Run(instance)
    for batch in gold["batches"]:
        _, record = run.submit(copy.deepcopy(batch))
        cash = record["gold_report"]["cash"]
        base = field_base("cash", cash, {"min_buffer": instance["desk"]["min_buffer"], "notionals": {}})
        if not error_within(MISSTATEMENT, base, MATERIALITY_BPS):
            batch["report"]["cash"] = cash + MISSTATEMENT
            return _failed("no_material_misstatement")
    raise NotApplicable("M11_cash_misstatement needs a checkpoint on which 1,400,000.00 is material")


def _execute(gold, kind, instance=None, authority=None):
    """The first EXECUTE of the reference plan (under `authority` if given)."""
    kinds = {}
    if authority is not None:
        run = Run(instance)
        for batch in gold["batches"]:
            run.submit(copy.deepcopy(batch))
        kinds = {apid: ap["kind"] for apid, ap in run.book["approvals"].items()}
    batch, index, action = _first(gold, lambda a: a["type"] == "EXECUTE" and (
        authority is None or kinds.get(a["approval"]) == authority))
    if batch is None:
        raise NotApplicable(f"{kind} needs an approved execution in the reference plan")
    return batch, index, action


def _m5(instance, gold):
    batch, index, action = _execute(gold, "M5_unapproved_capacity", instance, "capacity")
    plain = dict(action["action"], id=action["id"])
    batch["actions"][index] = plain
    return _refusal(batch["day"], plain["id"], "CAPACITY")


def _m6(instance, gold):
    batch, index, action = _execute(gold, "M6_authority_reuse")
    again = copy.deepcopy(action)
    again["id"] = "m6-authority-reuse"
    batch["actions"].insert(index + 1, again)
    return _refusal(batch["day"], again["id"], "AUTHORITY")


def _m7(instance, gold):
    gold["batches"][0]["actions"] = "FUND everything at the best rate"
    return {"status": "MALFORMED"}


def _m8(instance, gold):
    gold["fixture_sha256"] = sha256_hex(b"fundbook: a fixture with no reference")
    return {"status": "UNSCORABLE"}


_BUILD = {"M1_stale_quote": _m1, "M2_double_pledge": _m2, "M3_cash_overdraw": _m3, "M4_fully_hedged_tail": _m4,
          "M5_unapproved_capacity": _m5, "M6_authority_reuse": _m6, "M7_malformed": _m7, "M8_missing_reference": _m8,
          "M9_understated_tail": _m9, "M10_omitted_exposure": _m10, "M11_cash_misstatement": _m11}


def mutate(name, instance, gold=None):
    """(candidate, expected outcome) for a named mutation; NotApplicable if it cannot be built."""
    if name not in _BUILD:
        raise InputError(f"mutation: expected one of {', '.join(MUTATIONS)}, got {name!r}")
    candidate = copy.deepcopy(gold if gold is not None else gold_candidate(instance))
    expected = _BUILD[name](instance, candidate)
    candidate["label"] = name
    return candidate, expected


def observe(result, expected) -> dict:
    """The observed outcome, in the shape of the expected one."""
    observed = {"status": result["status"]}
    if "verdict" in expected:
        observed["verdict"] = result["verdict"]
    if "failed_gates" in expected:
        observed["failed_gates"] = [g["gate"] for g in result["gates"] if not g["passed"]]
    if "refusal" in expected:
        want = expected["refusal"]
        found = None
        for day in result.get("days", []):
            if day["day"] == want["day"]:
                for d in day["decisions"]:
                    if d["action"] == want["action"]:
                        found = {"day": day["day"], "action": d["action"],
                                 "reason": d["reason"] if d["decision"] == "REFUSED" else "ACCEPTED"}
        observed["refusal"] = found
    return observed
