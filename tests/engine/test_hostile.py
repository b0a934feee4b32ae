"""Hostile files and histories: one line, the documented exit code, nothing changed.

Every case here gave a Python traceback (or a silent wrong answer) before the
engine read its inputs through `engine._jsonin` and checked stored values.
"""

import json
import shutil
import sqlite3

import pytest
from click.testing import CliRunner

import engine
from engine._baselines import policy_batch
from fundbook.cli import cli

DEEP = "[" * 5000 + "]" * 5000


def invoke(*args):
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


def one_line(result, code=1):
    err = result.stderr.strip()
    assert result.exit_code == code, (result.exit_code, result.output)
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err
    return err


@pytest.fixture
def history(tmp_path):
    db = tmp_path / "h.sqlite"
    h = engine.History(db)
    h.init(engine.load_episode("W3"), salt="5a" * 32)
    h.submit(policy_batch("reference", h.packet()))
    return db


def _batch_text(db, mutate):
    batch = policy_batch("reference", engine.History(db).packet())
    return mutate(batch)


@pytest.mark.parametrize(
    "name,text,needle",
    [
        ("surrogate", lambda b: json.dumps(dict(b, note="\ud800")), "lone surrogate"),
        (
            "surrogate-key",
            lambda b: json.dumps(b).replace('"report": {', '"report": {"\\udfff": 1, ', 1),
            "lone surrogate",
        ),
        ("deep", lambda b: json.dumps(dict(b, note="x"))[:-1] + ', "actions2": ' + DEEP + "}", "nested deeper than 64"),
        ("huge-int", lambda b: json.dumps(dict(b, day=2**53)), "outside +-(2^53-1)"),
        ("giant-int", lambda b: json.dumps(b).replace('"day": 2', '"day": ' + "9" * 5000, 1), "far outside"),
        ("float", lambda b: json.dumps(b).replace('"day": 2', '"day": 2.0', 1), "not an integer"),
        ("nan", lambda b: json.dumps(b).replace('"day": 2', '"day": NaN', 1), "NaN"),
        ("long-note", lambda b: json.dumps(dict(b, note="n" * 2001)), "note: longer than 2000"),
        ("fat-file", lambda b: json.dumps(dict(b, note="n" * 10)) + " " * 70_000, "65536-byte limit"),
        ("not-utf8", lambda b: b"\xff\xfe{}", "not UTF-8"),
        (
            "unknown-report-asset",
            lambda b: json.dumps(
                {
                    **b,
                    "report": {
                        **b["report"],
                        "assets": {
                            **b["report"]["assets"],
                            "\ue000": b["report"]["assets"]["A1"],
                            "\U0001f600": b["report"]["assets"]["A1"],
                        },
                    },
                }
            ),
            "unknown asset",
        ),
        (
            "future-asset-report",
            lambda b: json.dumps(
                {**b, "report": {**b["report"], "assets": {**b["report"]["assets"], "A9": b["report"]["assets"]["A1"]}}}
            ),
            "unknown asset 'A9'",
        ),
    ],
)
def test_hostile_batches_are_one_line_and_change_nothing(history, tmp_path, name, text, needle):
    body = _batch_text(history, text)
    path = tmp_path / "batch.json"
    path.write_bytes(body if isinstance(body, bytes) else body.encode("utf-8", "surrogatepass"))
    before = history.read_bytes()
    err = one_line(invoke("desk", "submit", "--db", history, "--input", path))
    assert needle in err
    assert history.read_bytes() == before


def test_a_fifty_megabyte_note_is_refused_unread(history, tmp_path):
    path = tmp_path / "big.json"
    with open(path, "w") as fh:
        fh.write('{"day": 2, "report": {}, "actions": [], "note": "')
        fh.write("x" * (50 * 1024 * 1024))
        fh.write('"}')
    before = history.read_bytes()
    assert "65536-byte limit" in one_line(invoke("desk", "submit", "--db", history, "--input", path))
    assert history.read_bytes() == before


@pytest.mark.parametrize(
    "what,edit,needle",
    [
        ("surrogate", lambda inst: json.dumps(inst).replace('"title": "', '"title": "\\ud800', 1), "lone surrogate"),
        ("deep", lambda inst: json.dumps(inst)[:-1] + ', "x": ' + DEEP + "}", "nested deeper"),
        (
            "big-notional",
            lambda inst: (
                json.dumps(inst)
                .replace('"notional": ', '"notional": 9007199254740993', 1)
                .replace("9007199254740993" + str(inst["assets"][0]["notional"]), "9007199254740993", 1)
            ),
            "outside +-(2^53-1)",
        ),
        (
            "notional-over-limit",
            lambda inst: json.dumps(
                {**inst, "assets": [{**inst["assets"][0], "notional": 2**52}] + inst["assets"][1:]}
            ),
            "expected an integer in 1..1000000000000",
        ),
        (
            "bad-id",
            lambda inst: json.dumps({**inst, "assets": [{**inst["assets"][0], "id": "A\n1"}] + inst["assets"][1:]}),
            "expected an id",
        ),
        (
            "float-cash",
            lambda inst: json.dumps(inst).replace('"opening_cash": ', '"opening_cash": 1.5, "x": ', 1),
            "not an integer",
        ),
    ],
)
def test_hostile_family_files_are_one_line(tmp_path, what, edit, needle):
    root = tmp_path / "FUND_01" / "seed-1"
    root.mkdir(parents=True)
    instance = engine.generate("FUND_01", 1)
    (root / "instance.json").write_bytes(edit(instance).encode("utf-8", "surrogatepass"))
    db = tmp_path / "h.sqlite"
    for args in (("desk", "init", "--family-root", root, "--db", db), ("gold", "--family-root", root)):
        assert needle in one_line(invoke(*args))
    assert not db.exists()


def test_hostile_candidates_are_one_line(tmp_path):
    gold = engine.gold_candidate(engine.load_episode("W1"))
    cases = {
        "surrogate.json": json.dumps(dict(gold, label="\ud800")).encode("utf-8", "surrogatepass"),
        "deep.json": (json.dumps(gold)[:-1] + ', "x": ' + DEEP + "}").encode(),
        "huge.json": json.dumps(dict(gold, format=2**60)).encode(),
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        err = one_line(invoke("grade", tmp_path / name, "--episode", "W1"))
        assert name in err


def test_seeds_beyond_the_exact_range_are_usage_errors(tmp_path):
    for seeds in (str(2**53), "0", "5..3", "x", "1..2000000"):
        err = one_line(invoke("families", "--output", tmp_path, "--seeds", seeds), code=64)
        assert "--seeds" in err
    r = invoke("families", "--output", tmp_path, "--seeds", "3..5", "--family", "FUND_02", "--json")
    assert r.exit_code == 0 and [w["instance_id"] for w in json.loads(r.stdout)["written"]] == [
        "FUND_02/seed-3",
        "FUND_02/seed-4",
        "FUND_02/seed-5",
    ]


def test_init_into_a_missing_folder_is_one_line(tmp_path):
    err = one_line(invoke("desk", "init", "--episode", "W1", "--db", tmp_path / "no" / "such" / "h.sqlite"))
    assert "does not exist" in err and not (tmp_path / "no").exists()
    err = one_line(invoke("desk", "init", "--episode", "W1", "--db", tmp_path, "--salt", "00" * 32), code=64)
    assert "is a directory" in err
    err = one_line(invoke("desk", "init", "--episode", "W1", "--db", tmp_path / "h.sqlite", "--salt", "AB" * 32))
    assert "--salt" in err and not (tmp_path / "h.sqlite").exists()


@pytest.mark.parametrize(
    "tool,args,needle",
    [
        ("headroom", [], "packet.day: expected an integer"),
        ("exposure", ["--asset", "A1", "--quote", "Q1"], "packet.day"),
        ("project", ["--actions", "ACTIONS"], "packet.day"),
        ("interest", ["--principal", 1, "--rate-bps", 1, "--start-day", 1, "--end-day", 2], "packet.day"),
    ],
)
def test_tools_on_an_empty_packet_are_one_line(tmp_path, tool, args, needle):
    (tmp_path / "p.json").write_text("{}")
    (tmp_path / "a.json").write_text("[]")
    args = [tmp_path / "a.json" if a == "ACTIONS" else a for a in args]
    assert needle in one_line(invoke("tools", tool, "--packet", tmp_path / "p.json", *args))


def test_tools_refuse_amounts_beyond_any_world(tmp_path):
    packet = engine.Run(engine.load_episode("W1")).packet()
    (tmp_path / "p.json").write_text(json.dumps(packet))
    for args, needle in (
        (["interest", "--principal", 2**80, "--rate-bps", 450, "--start-day", 1, "--end-day", 3], "principal"),
        (["interest", "--principal", 100, "--rate-bps", -1, "--start-day", 1, "--end-day", 3], "rate_bps"),
        (["interest", "--principal", 100, "--rate-bps", 1, "--start-day", 3, "--end-day", 1], "end_day"),
        (["exposure", "--asset", "A1", "--quote", "Q1", "--notional", 2**80], "notional"),
        (["exposure", "--asset", "A9", "--quote", "Q1"], "unknown asset 'A9'"),
        (["exposure", "--asset", "A1", "--quote", "Q99"], "unknown quote 'Q99'"),
    ):
        assert needle in one_line(
            invoke("tools", *[str(a) for a in args[:1]], "--packet", tmp_path / "p.json", *args[1:])
        )


def test_tools_on_mutilated_packets_never_raise_anything_but_input_errors():
    """Every top-level field of a real packet removed or replaced by a wrong type."""
    packet = engine.Run(engine.load_episode("W3")).packet()
    wrong = [None, "x", -1, 2**60, [], {}, [{}], [None], True]
    checked = 0
    for key in sorted(packet):
        for value in [None] + wrong:
            bad = dict(packet)
            if value is None:
                del bad[key]
            else:
                bad[key] = value
            for call in (
                lambda p: engine.headroom(p),
                lambda p: engine.project(p, []),
                lambda p: engine.exposure(p, "A1", "Q1"),
                lambda p: engine.interest(p, 1, 1, 1, 2),
            ):
                try:
                    call(bad)
                except engine.InputError as exc:
                    assert "\n" not in exc.message
                checked += 1
    assert checked == len(packet) * 10 * 4


# -- corrupted histories ----------------------------------------------------------


def _edit(db, sql, *params):
    conn = sqlite3.connect(db)
    conn.execute(sql, params)
    conn.commit()
    conn.close()


CORRUPTIONS = [
    ("float-day", "UPDATE receipts SET day = 1.5 WHERE seq = 3", (), "seq and day must be small integers"),
    ("huge-day", "UPDATE receipts SET day = ? WHERE seq = 3", (2**62,), "seq and day must be small integers"),
    (
        "float-payload",
        "UPDATE receipts SET payload = replace(payload, '\"cash\":', '\"cash\":1.5,\"x\":') WHERE kind = 'CLOSE'",
        (),
        "not an integer",
    ),
    (
        "huge-payload",
        'UPDATE receipts SET payload = replace(payload, \'"cash":\', \'"cash":99999999999999999999,"x":\') '
        "WHERE kind = 'CLOSE'",
        (),
        "outside +-(2^53-1)",
    ),
    (
        "surrogate-payload",
        'UPDATE receipts SET payload = replace(payload, \'"batch":\', \'"x":"\\ud800","batch":\') '
        "WHERE kind = 'CLOSE'",
        (),
        "lone surrogate",
    ),
    ("invalid-utf8", "UPDATE receipts SET payload = CAST(? AS TEXT) WHERE seq = 2", (b'{"a":"\xff\xfe"}',), ""),
    ("head-size-text", "UPDATE meta SET value = 'twelve' WHERE key = 'head_size'", (), "meta.head_size"),
    ("head-size-huge", "UPDATE meta SET value = '99999999999999999999' WHERE key = 'head_size'", (), "meta.head_size"),
    ("no-salt", "DELETE FROM meta WHERE key = 'salt'", (), "meta.salt missing"),
    (
        "finalized-without-result",
        "UPDATE meta SET value = 'finalized' WHERE key = 'status'",
        (),
        "meta.result is missing",
    ),
    ("status-junk", "UPDATE meta SET value = 'done' WHERE key = 'status'", (), "meta.status"),
    ("instance-not-json", "UPDATE meta SET value = '{nope' WHERE key = 'instance'", (), "meta.instance"),
    ("instance-deep", "UPDATE meta SET value = ? WHERE key = 'instance'", (DEEP,), "nested deeper"),
    ("schema-old", "UPDATE meta SET value = '1' WHERE key = 'schema_version'", (), "older engine"),
    ("meta-blob", "UPDATE meta SET value = x'00ff' WHERE key = 'horizon'", (), "not text"),
]


@pytest.mark.parametrize("name,sql,params,needle", CORRUPTIONS, ids=[c[0] for c in CORRUPTIONS])
def test_corrupt_histories_are_one_line_for_every_command(history, tmp_path, name, sql, params, needle):
    _edit(history, sql, *params)
    before = history.read_bytes()
    batch = tmp_path / "b.json"
    batch.write_text(json.dumps({"day": 2, "report": {}, "actions": []}))
    for args in (
        ("desk", "packet", "--db", history),
        ("desk", "replay", "--db", history),
        ("desk", "result", "--db", history),
        ("desk", "submit", "--db", history, "--input", batch),
        ("desk", "advance", "--db", history),
        ("desk", "result", "--db", history, "--finalize"),
    ):
        err = one_line(invoke(*args))
        assert needle in err, (args, err)
    assert history.read_bytes() == before


def test_result_not_json_and_a_forged_result(tmp_path):
    db = tmp_path / "w3.sqlite"
    h = engine.History(db)
    h.init(engine.load_episode("W3"))
    r = invoke("desk", "result", "--db", db, "--finalize", "--json")
    honest = json.loads(r.stdout)
    assert r.exit_code == 0 and honest["verdict"] == "NOT_QUALIFIED" and honest["score"]["points"] == 8
    forged = dict(honest, verdict="QUALIFIED", score=dict(honest["score"], points=100))
    _edit(db, "UPDATE meta SET value = ? WHERE key = 'result'", json.dumps(forged))
    before = db.read_bytes()
    for cmd in ("result", "replay"):
        err = one_line(invoke("desk", cmd, "--db", db))
        assert "stored result differs" in err and "result.score.points: stored 100, re-derived 8" in err
    _edit(db, "UPDATE meta SET value = '{\"status\": ' WHERE key = 'result'")
    assert "meta.result: not valid JSON" in one_line(invoke("desk", "result", "--db", db))
    assert db.read_bytes() != before  # (the second edit) -- and the honest result comes back once restored
    _edit(db, "UPDATE meta SET value = ? WHERE key = 'result'", engine.canonical_json(honest).decode())
    r = invoke("desk", "result", "--db", db, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout) == honest


def test_a_regraded_final_receipt_is_caught(tmp_path):
    """Rewrite the FINAL receipt (and the stored result) to a better grade and
    re-hash the chain: replay re-grades the receipts and names the FINAL receipt."""
    db = tmp_path / "w3.sqlite"
    h = engine.History(db)
    h.init(engine.load_episode("W3"), salt="11" * 32)
    h.finalize()
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT seq, day, kind, payload FROM receipts ORDER BY seq").fetchall()
    final = json.loads(rows[-1][3])
    final["result_sha256"] = "0" * 64
    entries = [{"day": d, "kind": k, "payload": json.loads(p)} for _, d, k, p in rows[:-1]]
    entries.append({"day": rows[-1][1], "kind": "FINAL", "payload": final})
    from engine._commitment import world_commitment
    from engine._receipts import extend

    chain = []
    extend(chain, entries, world_commitment(engine.fixture_sha256(engine.load_episode("W3")), "11" * 32))
    conn.execute("DELETE FROM receipts")
    conn.executemany(
        "INSERT INTO receipts VALUES (?, ?, ?, ?, ?, ?)",
        [
            (r["seq"], r["day"], r["kind"], engine.canonical_json(r["payload"]).decode(), r["prev_hash"], r["hash"])
            for r in chain
        ],
    )
    conn.execute("UPDATE meta SET value = ? WHERE key = 'head_hash'", (chain[-1]["hash"],))
    conn.commit()
    conn.close()
    err = one_line(invoke("desk", "result", "--db", db))
    assert f"receipt {len(chain)} (FINAL" in err and "result_sha256" in err


def test_expect_head_binds_result_and_submit(tmp_path):
    db = tmp_path / "h.sqlite"
    h = engine.History(db)
    h.init(engine.load_episode("W2"))
    for _ in range(3):
        run, _, _ = h.submit(policy_batch("reference", h.packet()))
    held = f"{run.head['size']}:{run.head['hash']}"
    snapshot = tmp_path / "day3.sqlite"
    shutil.copy(db, snapshot)
    batch = tmp_path / "b.json"
    batch.write_text(json.dumps(policy_batch("reference", h.packet())))
    r = invoke("desk", "submit", "--db", db, "--input", batch, "--expect-head", held, "--json")
    assert r.exit_code == 0
    new = json.loads(r.stdout)["head"]
    # a rolled-back history (the copy from before the submit) is refused against the head the caller holds
    shutil.copy(snapshot, db)
    before = db.read_bytes()
    for args in (
        ("desk", "submit", "--db", db, "--input", batch),
        ("desk", "result", "--db", db),
        ("desk", "packet", "--db", db),
        ("desk", "advance", "--db", db),
    ):
        err = one_line(invoke(*args, "--expect-head", f"{new['size']}:{new['hash']}"))
        assert "truncated or rolled back" in err
    assert db.read_bytes() == before
    assert "SIZE:SHA256" in one_line(invoke("desk", "result", "--db", db, "--expect-head", "12:abc"), code=64)


def test_after_the_last_checkpoint_and_before_finalising(tmp_path):
    db = tmp_path / "h.sqlite"
    h = engine.History(db)
    h.init(engine.load_episode("W1"), 3)
    for _ in range(3):
        h.submit(policy_batch("reference", h.packet()))
    batch = tmp_path / "b.json"
    batch.write_text(json.dumps({"day": 4, "report": {}, "actions": []}))
    before = db.read_bytes()
    for args in (
        ("desk", "advance", "--db", db),
        ("desk", "submit", "--db", db, "--input", batch),
        ("desk", "packet", "--db", db),
    ):
        err = one_line(invoke(*args))
        assert "every checkpoint (1..3) is closed" in err and "finalise the run" in err
    assert db.read_bytes() == before
    r = invoke("desk", "result", "--db", db)
    assert r.exit_code == 1 and "OPEN" in r.stdout
    r = invoke("desk", "result", "--db", db, "--finalize", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["verdict"] == "QUALIFIED"
