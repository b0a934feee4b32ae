"""A grammar that can always say the truth (grammar 2, launchers/_grammar.py).

For every state the desk can reach -- hypothesis over families, seeds and days, each day a random batch drawn
from what the day's view offers (legal or refused by the desk: huge notionals, wrong quotes, escalations,
executions, skipped days) -- and for every published world under the three scripted policies, the day's
truthful report (the engine's gold report once the day has settled) is accepted by the answer grammar, by its
portable form and by the Inspect task's submit_batch schema, and so is every batch the reference policy plays.
"""

import functools
import json
import os

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import engine
from launchers import _grammar
from launchers._sampler_api import portable_schema
from launchers.worker import prompt

from inspect_fundbook._schema import project_parameters, submit_batch_parameters

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INSPECT = jsonschema.Draft202012Validator(submit_batch_parameters())
POLICIES = ("reference", "shortest-cheapest", "do-nothing")


def _renamed(actions):
    """The actions as the grammar writes them: ids a1, a2, ... by position, no note (never scored)."""
    return [{**{k: v for k, v in a.items() if k != "note"}, "id": f"a{i + 1}"} for i, a in enumerate(actions)]


def _problems(view, day, actions, truth):
    """Every schema that refuses the day's truthful batch, with its first error (an empty list: all accept)."""
    schema = _grammar.batch_schema(view)
    batch = {"day": day, "actions": _renamed(actions), "report": truth}
    found = []
    for name, s in (("grammar", schema), ("portable", portable_schema(schema))):
        error = next(iter(jsonschema.Draft202012Validator(s).iter_errors(batch)), None)
        if error is not None:
            found.append(f"{name}: {error.message[:200]}")
    error = next(iter(INSPECT.iter_errors({"day": day, "report": truth, "actions": actions})), None)
    if error is not None:
        found.append(f"inspect: {error.message[:200]}")
    return found


def _view(packet):
    return prompt.view(packet, engine.project(packet, [])["report"])


def _settle(run, batch):
    """Submit the batch with the report `project` computes for its actions; -> the day's gold report."""
    packet = run.packet()
    truthful = engine.project(packet, batch["actions"])["report"]
    run.submit(dict(batch, report=truthful))
    gold = run.days[-1]["gold_report"]
    assert truthful == gold  # the calculation tool states exactly what the engine settles
    return gold


def _ids(view, key, keep=lambda e: True):
    return [e["id"] for e in view.get(key) or [] if keep(e)]


def _action(draw, view):
    """One action of a shape the grammar allows, its ids from the view, its amounts anything from 1 up."""
    assets, quotes, trades = _ids(view, "assets"), _ids(view, "quotes"), _ids(view, "trades")
    parties = _ids(view, "counterparties")
    approved = _ids(view, "approvals", lambda a: a.get("status") == "approved")
    amount = st.one_of(st.integers(1, 10**6), st.integers(10**6, 5 * 10**9), st.integers(1, 2**53 - 1))
    kinds = (
        ["ESCALATE"]
        + (["FUND"] if assets and quotes else [])
        + (["ROLL"] if trades and quotes else [])
        + (["REPAY"] if trades else [])
        + (["EXECUTE"] if approved and assets and quotes else [])
    )
    kind = draw(st.sampled_from(kinds))
    if kind == "FUND" or kind == "EXECUTE":
        fund = {
            "type": "FUND",
            "asset": draw(st.sampled_from(assets)),
            "quote": draw(st.sampled_from(quotes)),
            "notional": draw(st.one_of(st.sampled_from([a["notional"] for a in view["assets"]]), amount)),
        }
        if kind == "FUND":
            return fund
        return {"type": "EXECUTE", "approval": draw(st.sampled_from(approved)), "action": fund}
    if kind == "ROLL":
        return {"type": "ROLL", "trade": draw(st.sampled_from(trades)), "quote": draw(st.sampled_from(quotes))}
    if kind == "REPAY":
        return {"type": "REPAY", "trade": draw(st.sampled_from(trades))}
    authority = draw(st.sampled_from(engine.AUTHORITY_KINDS if parties else ("tenor", "buffer")))
    out = {"type": "ESCALATE", "kind": authority, "amount": draw(amount)}
    return dict(out, counterparty=draw(st.sampled_from(parties))) if authority == "capacity" else out


@settings(
    max_examples=int(os.environ.get("FUNDBOOK_GRAMMAR_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(family=st.sampled_from(engine.FAMILIES), seed=st.integers(1, 2**53 - 1), data=st.data())
def test_every_reachable_days_truthful_report_is_expressible(family, seed, data):
    run = engine.Run(engine.generate(family, seed))
    while run.open_day is not None:
        packet = run.packet()
        view = _view(packet)
        if data.draw(st.integers(0, 9), label="skip") == 0:
            run.skip()
            continue
        n = data.draw(st.integers(0, _grammar.MAX_ACTIONS), label="actions")
        actions = [dict(_action(data.draw, view), id=f"h{i}") for i in range(n)]
        truth = _settle(run, {"day": packet["day"], "actions": actions})
        assert not _problems(view, packet["day"], actions, truth), (family, seed, packet["day"])


def _published_worlds():
    """Every family world the publication names: the register's baselines, every model attempt's task and every
    study's and comparison's held-out worlds (as far as their items files name them)."""
    worlds = set()
    with open(os.path.join(ROOT, "runs", "index.json"), encoding="utf-8") as fh:
        for entry in json.load(fh)["entries"]:
            parts = entry["run_id"].split("-")
            if parts[0] == "baseline":
                worlds.add((parts[1], int(parts[3])))
    attempts = os.path.join(ROOT, "runs", "attempts")
    for name in sorted(os.listdir(attempts)):
        path = os.path.join(attempts, name, "record.json")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as fh:
                task = json.load(fh)["content"]["task"]
            worlds.add((task["family"], task["seed"]))
    for base in ("runs/studies", "runs/comparisons"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, base)):
            if "items.jsonl" in files:
                with open(os.path.join(dirpath, "items.jsonl"), encoding="utf-8") as fh:
                    for line in list(fh)[:40]:
                        item = json.loads(line)
                        if item.get("family") and item.get("seed"):
                            worlds.add((item["family"], item["seed"]))
    return sorted(worlds)


@functools.lru_cache(maxsize=None)
def _played(family, seed, policy):
    """[(view, day, actions, gold report)] of every checkpoint of a world played by a scripted policy."""
    run = engine.Run(engine.generate(family, seed))
    out = []
    while run.open_day is not None:
        packet = run.packet()
        view = _view(packet)
        batch = engine.policy_batch(policy, packet)
        truth = _settle(run, batch)
        out.append((view, packet["day"], batch["actions"], truth))
    return out


PUBLISHED = _published_worlds()


@pytest.mark.parametrize("policy", POLICIES)
def test_every_published_world_under_every_scripted_policy_says_the_truth_in_every_schema(policy):
    assert len(PUBLISHED) >= 40  # the register's 12, the attempts' and the held-out studies' worlds
    bad = []
    for family, seed in PUBLISHED:
        for view, day, actions, truth in _played(family, seed, policy):
            assert len(actions) <= _grammar.MAX_ACTIONS, (family, seed, day, len(actions))
            bad += [(family, seed, day, p) for p in _problems(view, day, actions, truth)]
    assert not bad, bad[:3]


def test_the_reference_plan_without_its_notes_earns_what_it_earns_with_them():
    """The grammar writes no note: the reference plan, notes dropped, scores the same (notes are never scored)."""
    for family, seed in PUBLISHED[:12]:
        instance = engine.generate(family, seed)
        gold = engine.gold_candidate(instance)
        plain = dict(gold, batches=[dict(b, actions=_renamed(b["actions"])) for b in gold["batches"]])
        graded, bare = engine.grade_candidate(gold, instance), engine.grade_candidate(plain, instance)
        assert (bare["status"], bare["verdict"], bare["score"]["points"]) == ("SCORED", "QUALIFIED", 100)
        assert graded["score"] == bare["score"]


def test_the_grammar_names_every_code_the_engine_can_book_and_nothing_typed_by_hand():
    day = _played("FUND_04", 1, "do-nothing")[0]
    schema = _grammar.batch_schema(day[0])
    breach = schema["properties"]["report"]["properties"]["breaches"]["items"]["properties"]["code"]
    assert (
        breach == {"enum": list(engine.vocabulary()["breach_codes"])} == {"enum": ["SETTLEMENT_FAIL", "BUFFER_BREACH"]}
    )
    assert _grammar.GRAMMAR_VERSION == "fundbook.desk-grammar/2"
    with open(os.path.join(ROOT, "launchers", "_grammar.py"), encoding="utf-8") as fh:
        source = fh.read()
    for code in (
        engine.vocabulary()["breach_codes"] + engine.vocabulary()["action_types"] + engine.vocabulary()["reason_codes"]
    ):
        assert f'"{code}"' not in source, code  # built from the export, never a copy
    inspect_codes = submit_batch_parameters()["properties"]["report"]["properties"]["breaches"]["items"]
    assert inspect_codes["properties"]["code"]["enum"] == engine.vocabulary()["breach_codes"]
    kinds = [
        a["properties"]["type"]["enum"][0] for a in project_parameters()["properties"]["actions"]["items"]["anyOf"]
    ]
    assert kinds == engine.vocabulary()["action_types"]


def test_a_report_after_an_escalation_names_the_approval_it_opened_and_grammar_2_can_say_it():
    run = engine.Run(engine.generate("FUND_01", 1))
    packet = run.packet()
    view = _view(packet)
    assert view["approvals_requested"] == packet["counters"]["approval"] == 0
    actions = [{"id": "e1", "type": "ESCALATE", "kind": "tenor", "amount": 5}]
    truth = _settle(run, {"day": packet["day"], "actions": actions})
    assert truth["open_approvals"] == [engine.approval_id(1)] == ["AP001"]
    assert not _problems(view, packet["day"], actions, truth)
    from launchers import _grammar_v1

    grammar_1 = _grammar_v1.batch_schema(prompt.view(packet, engine.project(packet, [])["report"], version="compact/1"))
    batch = {"day": packet["day"], "actions": _renamed(actions), "report": truth}
    assert not jsonschema.Draft202012Validator(grammar_1).is_valid(batch)  # grammar 1 could not say it


@pytest.mark.parametrize("family", engine.FAMILIES)
def test_a_settlement_failure_is_expressible_where_grammar_1_refused_it(family):
    """The issue's finding: day 1's truthful no-action report of FUND_0k seeds 1..8, in grammar 1 and in 2."""
    from launchers import _grammar_v1

    refused_1 = 0
    for seed in range(1, 9):
        view, day, actions, truth = _played(family, seed, "do-nothing")[0]
        batch = {"day": day, "actions": [], "report": truth}
        assert not _problems(view, day, [], truth)
        assert truth == view["report_if_no_action"]
        v1 = {k: v for k, v in view.items() if k != "approvals_requested"}
        refused_1 += not jsonschema.Draft202012Validator(_grammar_v1.batch_schema(v1)).is_valid(batch)
    assert refused_1 == {"FUND_01": 2, "FUND_02": 3, "FUND_03": 0, "FUND_04": 8}[family]  # 13 of 32, as found
