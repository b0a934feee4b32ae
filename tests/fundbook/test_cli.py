"""Every command and exit code, in process (click's CliRunner)."""

import json

import pytest
from click.testing import CliRunner

import engine
from engine._baselines import policy_batch
from fundbook.cli import cli


@pytest.fixture
def runner():
    return CliRunner()


def run(runner, *args):
    result = runner.invoke(cli, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def one_line_error(result):
    err = result.stderr.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err
    return err


def test_grading_sequence(runner, tmp_path):
    gold, m4, m7, m8 = (tmp_path / n for n in ("gold.json", "m4.json", "m7.json", "m8.json"))
    r = run(runner, "gold", "--episode", "W3", "--output", gold)
    assert r.exit_code == 0, r.output
    r = run(runner, "grade", gold, "--episode", "W3")
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    order = [next(i for i, line in enumerate(lines) if line.startswith(k)) for k in ("status", "verdict", "score")]
    assert order == sorted(order) and "100/100" in r.stdout and "QUALIFIED" in r.stdout
    r = run(runner, "mutate", "M4_fully_hedged_tail", "--episode", "W3", "--output", m4)
    assert r.exit_code == 0
    r = run(runner, "grade", m4, "--episode", "W3", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["verdict"] == "NOT_QUALIFIED"
    run(runner, "mutate", "M7_malformed", "--episode", "W3", "--output", m7)
    r = run(runner, "grade", m7, "--episode", "W3")
    assert r.exit_code == 1 and "MALFORMED" in r.stdout and "no score" in r.stdout
    run(runner, "mutate", "M8_missing_reference", "--episode", "W3", "--output", m8)
    r = run(runner, "grade", m8, "--episode", "W3", "--json")
    assert r.exit_code == 2 and json.loads(r.stdout)["status"] == "UNSCORABLE"


def test_mutate_list_and_stdout(runner):
    r = run(runner, "mutate", "--list")
    assert r.exit_code == 0 and all(m in r.stdout for m in engine.MUTATIONS)
    r = run(runner, "mutate", "M2_double_pledge", "--episode", "W1")
    assert r.exit_code == 0 and json.loads(r.stdout)["label"] == "M2_double_pledge"
    r = run(runner, "mutate", "M5_unapproved_capacity", "--episode", "W1")
    assert r.exit_code == 1 and "approved execution" in one_line_error(r)


def test_usage_errors_exit_64_never_2(runner, tmp_path):
    for args in (
        ["grade"],
        ["grade", "x.json", "--episode", "W9"],
        ["gold"],
        ["gold", "--episode", "W1", "--family-root", tmp_path],
        ["desk", "submit", "--db", "x"],
        ["nonsense"],
        ["families", "--output", tmp_path, "--seeds", "0"],
        ["desk", "replay", "--db", "x", "--expect-head", "zz"],
        ["mutate"],
    ):
        r = run(runner, *args)
        assert r.exit_code == 64, (args, r.output)
        one_line_error(r)


def test_input_errors_are_one_line_exit_1(runner, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    for args, needle in (
        (["grade", tmp_path / "missing.json", "--episode", "W1"], "missing.json: no such file"),
        (["grade", bad, "--episode", "W1"], "bad.json: not valid JSON"),
        (["grade", tmp_path, "--episode", "W1"], "is a directory"),
        (["desk", "packet", "--db", tmp_path / "none.sqlite"], "no such history"),
        (["desk", "init", "--family-root", tmp_path, "--db", tmp_path / "h.sqlite"], "instance.json: cannot read"),
    ):
        r = run(runner, *args)
        assert r.exit_code == 1, (args, r.output)
        assert needle in one_line_error(r)


def test_family_generator_and_desk_runtime(runner, tmp_path):
    fam, db = tmp_path / "families", tmp_path / "h.sqlite"
    r = run(runner, "families", "--output", fam, "--seeds", "1", "2", "--json")
    assert r.exit_code == 0 and len(json.loads(r.stdout)["written"]) == 8
    root = fam / "FUND_01" / "seed-1"
    assert json.loads((root / "instance.json").read_text()) == engine.generate("FUND_01", 1)
    r = run(runner, "desk", "init", "--family-root", root, "--db", db, "--observation-end-day", "20")
    assert r.exit_code == 0, r.output
    r = run(runner, "desk", "init", "--family-root", root, "--db", db)
    assert r.exit_code == 1 and "already exists" in one_line_error(r)
    packet_path = tmp_path / "packet.json"
    r = run(runner, "desk", "packet", "--db", db, "--family-root", root, "--output", packet_path)
    assert r.exit_code == 0 and "day 1 of 20" in r.stdout
    packet = json.loads(packet_path.read_text())
    batch = policy_batch("reference", packet)
    batch_path = tmp_path / "batch.json"
    batch_path.write_text(json.dumps(batch))
    # the dry run predicts the report exactly
    r = run(runner, "tools", "project", "--packet", packet_path, "--actions", batch_path, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["report"] == batch["report"]
    r = run(runner, "tools", "project", "--packet", packet_path, "--actions", batch_path)
    assert r.exit_code == 0 and "cash at the close" in r.stdout and "state hash at the close" in r.stdout
    for tool_args in (
        ["headroom"],
        ["interest", "--principal", 100000, "--rate-bps", 450, "--start-day", 1, "--end-day", 6],
    ):
        r = run(runner, "tools", tool_args[0], "--packet", packet_path, *tool_args[1:])
        assert r.exit_code == 0, r.output
    wrong = dict(batch, day=5)
    (tmp_path / "wrong.json").write_text(json.dumps(wrong))
    before = db.read_bytes()
    r = run(runner, "desk", "submit", "--db", db, "--input", tmp_path / "wrong.json")
    assert r.exit_code == 1 and "batch.day: expected the open day 1, got 5" in one_line_error(r)
    assert db.read_bytes() == before
    r = run(runner, "desk", "submit", "--db", db, "--input", batch_path, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["open_day"] == 2
    r = run(runner, "desk", "submit", "--db", db, "--input", batch_path)
    assert r.exit_code == 1 and "duplicate batch" in one_line_error(r)
    r = run(runner, "desk", "advance", "--db", db)
    assert r.exit_code == 0 and "day 2 closed without a batch" in r.stdout
    r = run(runner, "desk", "replay", "--db", db, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["verified"] is True
    head = json.loads(r.stdout)["head"]
    r = run(runner, "desk", "replay", "--db", db, "--expect-head", f"{head['size'] + 1}:{head['hash']}")
    assert r.exit_code == 1 and "extended" not in r.stderr and "truncated" in one_line_error(r)
    r = run(runner, "desk", "result", "--db", db)
    assert r.exit_code == 1 and "OPEN" in r.stdout
    r = run(runner, "desk", "result", "--db", db, "--finalize", "--json")
    res = json.loads(r.stdout)
    assert r.exit_code == 0 and res["status"] == "SCORED" and res["score"]["denominator"] == 100
    assert [d["batch"] for d in res["days"]][:3] == ["accepted", "missing", "missing"]
    r = run(runner, "desk", "result", "--db", db, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout) == res
    r = run(runner, "desk", "submit", "--db", db, "--input", batch_path)
    assert r.exit_code == 1 and "finalised" in one_line_error(r)
    r = run(runner, "desk", "replay", "--db", db, "--family-root", fam / "FUND_01" / "seed-2")
    assert r.exit_code == 1 and "not the one the history was initialised with" in one_line_error(r)


def test_desk_on_an_episode_and_corrupted_histories(runner, tmp_path):
    db = tmp_path / "w1.sqlite"
    r = run(runner, "desk", "init", "--episode", "W1", "--db", db, "--observation-end-day", "5")
    assert r.exit_code == 0 and "observed to day 5" in r.stdout
    (tmp_path / "junk.sqlite").write_bytes(b"this is not sqlite" * 100)
    r = run(runner, "desk", "packet", "--db", tmp_path / "junk.sqlite")
    assert r.exit_code == 1 and "not a readable fundbook history" in one_line_error(r)
    (tmp_path / "trunc.sqlite").write_bytes(db.read_bytes()[:1500])
    r = run(runner, "desk", "replay", "--db", tmp_path / "trunc.sqlite")
    assert r.exit_code == 1
    one_line_error(r)
    r = run(runner, "desk", "init", "--episode", "W1", "--db", tmp_path / "x.sqlite", "--observation-end-day", "99")
    assert r.exit_code == 1 and "observation end day" in one_line_error(r)


def test_version(runner):
    r = run(runner, "--version")
    assert r.exit_code == 0 and engine.ENGINE_VERSION in r.stdout


@pytest.mark.parametrize(
    "name,body,needle",
    [
        ("malformed", '{"day": 1, ', "not valid JSON"),
        ("wrong-type", json.dumps({"day": "1", "report": {}, "actions": []}), "batch.day: expected integer, got str"),
        ("unknown-id", None, "unknown quote 'Q404'"),
        ("not-object", "[1, 2]", "expected a JSON object"),
        ("bool-as-int", None, "notional: expected integer, got bool"),
    ],
)
def test_bad_batches_change_nothing(runner, tmp_path, name, body, needle):
    db = tmp_path / "h.sqlite"
    history = engine.History(db)
    history.init(engine.load_episode("W1"))
    batch = policy_batch("reference", history.packet())
    if name == "unknown-id":
        batch["actions"][0]["quote"] = "Q404"
        body = json.dumps(batch)
    elif name == "bool-as-int":
        batch["actions"][0]["notional"] = True
        body = json.dumps(batch)
    path = tmp_path / f"{name}.json"
    path.write_text(body)
    before = db.read_bytes()
    r = run(runner, "desk", "submit", "--db", db, "--input", path)
    assert r.exit_code == 1 and needle in one_line_error(r)
    assert db.read_bytes() == before


def test_init_refuses_a_horizon_the_reference_cannot_carry(runner, tmp_path):
    fam = tmp_path / "f"
    run(runner, "families", "--output", fam, "--seeds", "1", "--family", "FUND_01")
    db = tmp_path / "short.sqlite"
    r = run(
        runner, "desk", "init", "--family-root", fam / "FUND_01" / "seed-1", "--db", db, "--observation-end-day", "3"
    )
    assert r.exit_code == 1 and "observe it longer" in one_line_error(r)
    assert not db.exists()
