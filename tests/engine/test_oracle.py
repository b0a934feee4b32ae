"""The information boundary as an oracle: nothing a desk sees -- packets,
responses, refusal and rejection messages, tool outputs, receipts and their
hashes -- lets a program tell the undisclosed parts of a world apart better
than chance.

Three kinds of evidence:
* future ids (a quote offered later, an asset announced later) get exactly the
  response a random nonexistent id gets, from the engine and from the tools;
* twin worlds that differ only in what is still undisclosed on day d give the
  desk byte-identical views up to day d (hashes aside, which are shown to be
  recomputable from the view and its salted genesis alone);
* the CLOSE receipt's state hash is what the desk itself computes with the
  `project` tool, so guessing hidden values against it finds nothing.

Seeds 5001.. are used nowhere else in the tests.
"""

import copy
import json

import pytest

import engine
from engine._baselines import policy_batch
from engine._book import public_book
from engine._canon import content_sha256
from engine._commitment import world_commitment
from engine._receipts import receipt_hash
from engine._rng import HashRng

ORACLE_SEEDS = range(5001, 5051)  # 50 unseen seeds per family for the id oracle
TWIN_SEEDS = range(5101, 5111)  # 10 per family for the twin-world oracle


def _respond(run, batch):
    """What the desk sees when it submits a batch: the rejection message, or the decisions."""
    try:
        trial = copy.deepcopy(run)
        decisions, _ = trial.submit(batch)
        return {"decisions": decisions}
    except engine.BatchRejected as exc:
        return {"rejected": exc.message}


def _normalise(value, ident):
    return json.loads(json.dumps(value).replace(json.dumps(ident)[1:-1], "<ID>"))


def _random_id(rng, prefix, label):
    return f"{prefix}{rng.randint(label, 10, 99999)}"


@pytest.mark.parametrize("family", engine.FAMILIES)
def test_future_ids_get_the_answer_of_ids_that_never_exist(family):
    probes = 0
    for seed in ORACLE_SEEDS:
        instance = engine.generate(family, seed)
        rng = HashRng("oracle", seed)
        quotes = {q["id"]: q for q in instance["quotes"]}
        assets = {a["id"]: a for a in instance["assets"]}
        run = engine.Run(instance)
        while run.open_day is not None:
            day = run.open_day
            packet = run.packet()
            batch = policy_batch("reference", packet)
            shown_asset = packet["assets"][0]["id"] if packet["assets"] else "A1"
            shown_quote = packet["quotes"][0]["id"] if packet["quotes"] else "Q01"
            future_quotes = sorted(q for q, v in quotes.items() if v["offered_day"] > day)
            future_assets = sorted(a for a, v in assets.items() if v["announce_day"] > day)
            for kind, futures, prefix in (("quote", future_quotes, "Q"), ("asset", future_assets, "A")):
                for future in futures[:2]:
                    fake = _random_id(rng, prefix, f"{day}{future}")
                    while fake in quotes or fake in assets:
                        fake += "x"
                    answers = []
                    for ident in (future, fake):
                        action = {
                            "id": "probe",
                            "type": "FUND",
                            "asset": shown_asset,
                            "quote": shown_quote,
                            "notional": 10**8,
                            kind: ident,
                        }
                        probe = dict(batch, actions=[action])
                        engine_answer = _respond(run, probe)
                        tool_answer = engine.project(packet, [action])
                        try:
                            exposure = engine.exposure(packet, action["asset"], action["quote"])
                        except engine.InputError as exc:
                            exposure = exc.message
                        answers.append(_normalise([engine_answer, tool_answer, exposure], ident))
                    assert answers[0] == answers[1], (instance["instance_id"], day, kind, future, answers)
                    assert "rejected" in answers[0][0] and answers[0][1]["rejected"] == answers[0][0]["rejected"]
                    probes += 1
                    # the report's asset keys too
                    if kind == "asset":
                        reports = []
                        for ident in (future, fake):
                            entry = {"funded": 0, "unfunded": 0, "maturity_gap_days": 0, "tail_cent_days": 0}
                            report = dict(batch["report"], assets=dict(batch["report"]["assets"], **{ident: entry}))
                            reports.append(_normalise(_respond(run, dict(batch, report=report)), ident))
                        assert reports[0] == reports[1] and "rejected" in reports[0]
            run.submit(batch)
    assert probes >= 50  # every family has future ids on early days


# -- twin worlds ---------------------------------------------------------------------


def _undisclosed_twin(instance, day, approvals_seen):
    """The same world with everything not yet disclosed on `day` changed."""
    twin = copy.deepcopy(instance)
    twin["title"] = twin.get("title", "") + " (twin)"
    for q in twin["quotes"]:
        if q["offered_day"] > day:
            q["rate_bps"] += 7
            q["haircut_bps"] = min(10_000, q["haircut_bps"] + 50)
            q["max_notional"] += 1
    for s in twin["sources"]:
        if s["published_day"] > day:
            s["text"] += " (revised)"
    published = {s["id"]: s["published_day"] for s in instance["sources"]}
    for e in twin["events"]:
        if published[e["source"]] > day:
            if e["kind"] == "capacity_cut":
                e["capacity"] += 1
            elif e["kind"] == "haircut_change":
                e["haircut_floor_bps"] += 1
    for a in twin["assets"]:
        if a["announce_day"] > day:
            a["notional"] += 100
            a["coupon_bps"] += 1
    if not approvals_seen:
        for p in twin["approval_policy"]:
            p["valid_days"] += 1
            p["max_amount"] += 1
    engine.validate_instance(twin)
    return twin


def _view(packets, responses, receipts):
    """The desk's view with hash fields set aside (they are checked separately)."""
    strip = lambda r: {k: v for k, v in r.items() if k not in ("hash", "prev_hash")}
    return {
        "packets": [
            {k: ([strip(r) for r in v] if k == "receipts" else v) for k, v in p.items() if k != "world_commitment"}
            for p in packets
        ],
        "responses": responses,
        "receipts": [strip(r) for r in receipts],
    }


def _play_view(instance, batches, until, salt):
    run = engine.Run(instance, salt)
    packets, responses = [], []
    for batch in batches[:until]:
        packets.append(run.packet())
        decisions, _ = run.submit(batch)
        responses.append(decisions)
    return run, _view(packets, responses, [r for r in run.receipts if r["day"] <= until])


@pytest.mark.parametrize("family", engine.FAMILIES)
def test_twin_worlds_look_the_same_until_disclosed(family):
    compared = 0
    for seed in TWIN_SEEDS:
        instance = engine.generate(family, seed)
        run = engine.Run(instance)
        batches = []
        while run.open_day is not None:
            batches.append(policy_batch("reference", run.packet()))
            run.submit(batches[-1])
        approvals = {r["day"] for r in run.receipts if r["kind"] == "APPROVAL"}
        for day in range(1, instance["horizon"]):
            twin = _undisclosed_twin(instance, day, any(d <= day + 1 for d in approvals))
            salt_a, salt_b = "a1" * 32, "b2" * 32
            run_a, view_a = _play_view(instance, batches, day, salt_a)
            run_b, view_b = _play_view(twin, batches, day, salt_b)
            assert view_a == view_b, (instance["instance_id"], day)
            compared += 1
            # every hash the desk sees is a function of the view and the salted genesis
            genesis = run_a.receipts[0]["prev_hash"]
            assert genesis == world_commitment(engine.fixture_sha256(instance), salt_a)
            prev = genesis
            for r in run_a.receipts:
                assert r["prev_hash"] == prev and r["hash"] == receipt_hash(
                    r["seq"], r["day"], r["kind"], r["payload"], prev
                )
                prev = r["hash"]
    assert compared == len(TWIN_SEEDS) * 19


def _hash_with_hidden(packet, batch, responses):
    """What the state hash was before: the closed book with a hidden answer in it."""
    from engine._packet import book_from_packet, market_from_packet
    from engine._rules import decide
    from engine._settle import close_day

    book = book_from_packet(packet)
    market = market_from_packet(packet)
    for action in batch["actions"]:
        decide(book, market, packet["day"], action)
    close_day(book, packet["day"])
    return content_sha256(dict(public_book(book), hidden={"responses": responses}))


def test_close_state_hash_is_what_the_desk_computes_itself():
    """The W3 attack of the issue: from a day-3 packet, guess the hidden answer
    to AP001 and hash the book with it. The CLOSE state hash is the public
    book's, which the `project` tool already gives, so no guess matches."""
    instance = engine.load_episode("W3")
    run = engine.Run(instance)
    checked = 0
    while run.open_day is not None and run.open_day <= instance["horizon"]:
        packet = run.packet()
        batch = policy_batch("reference", packet)
        predicted = engine.project(packet, batch["actions"])["state_hash"]
        hidden = copy.deepcopy(run.book["hidden"])
        run.submit(batch)
        close = [r for r in run.receipts if r["kind"] == "CLOSE"][-1]
        assert close["payload"]["state_hash"] == predicted
        checked += 1
        if packet["day"] == 3:
            pending = [a for a in packet["approvals"] if a["status"] == "pending"]
            assert pending and hidden["responses"], "W3 escalates before day 3"
            closed = engine.project(packet, batch["actions"])  # the desk's own view of the close
            guesses = 0
            for status in ("approved", "denied"):
                for due in range(4, 12):
                    for expires in [None] + list(range(due, due + 8)):
                        answer = {pending[0]["id"]: {"day": due, "status": status, "expires": expires}}
                        if answer == hidden["responses"]:
                            continue
                        guesses += 1
                        assert _hash_with_hidden(packet, batch, answer) != close["payload"]["state_hash"]
            assert guesses > 100 and closed["state_hash"] == close["payload"]["state_hash"]
            # even the true answer, hashed in, does not give the receipt's hash
            assert _hash_with_hidden(packet, batch, hidden["responses"]) != close["payload"]["state_hash"]
    assert checked == instance["horizon"]


def test_the_commitment_hides_the_world_until_the_final_receipt(tmp_path):
    instance = engine.load_episode("W3")
    fixture = engine.fixture_sha256(instance)
    heads = []
    for name in ("a", "b"):
        h = engine.History(tmp_path / f"{name}.sqlite")
        run = h.init(instance)  # a fresh secret salt each time
        packet = h.packet()
        text = json.dumps(packet)
        assert "fixture_sha256" not in packet and fixture not in text
        assert packet["world_commitment"] == run.world_commitment != fixture
        for _ in range(5):
            h.submit(policy_batch("reference", h.packet()))
        assert fixture not in json.dumps(h.packet())
        run, result = h.finalize()
        final = run.receipts[-1]
        assert final["kind"] == "FINAL" and final["payload"]["fixture_sha256"] == fixture
        assert world_commitment(fixture, final["payload"]["salt"]) == run.receipts[0]["prev_hash"]
        heads.append(run.head["hash"])
    assert heads[0] != heads[1]  # same world, same moves, different secret salts
