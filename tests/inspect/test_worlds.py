"""The task's worlds argument names practice worlds or a published held-out list (its reveal must open its
commitment, as `fundbook compare` checks it)."""

import json
import shutil

import pytest

from inspect_fundbook._worlds import parse_worlds

SWEEP = "runs/studies/smollm2-heldout/sweep"


def test_a_published_held_out_list_gives_the_committed_worlds_in_order():
    with open(f"{SWEEP}/reveal.json") as fh:
        items = [tuple(i) for i in json.load(fh)["items"]]
    assert parse_worlds(f"heldout:{SWEEP}:1..3") == items[:3]
    assert parse_worlds(f"heldout:{SWEEP}:20..20") == [("FUND_04", items[19][1])] == [items[19]]
    assert parse_worlds(f"heldout:{SWEEP}") == items and len(items) == 1000
    assert parse_worlds(f"FUND_01:2,heldout:{SWEEP}:1..1") == [("FUND_01", 2), items[0]]


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d.update(secret="0" * 64), "the secret does not open the commitment"),
        (lambda d: d["items"].reverse(), "salt or items differ from what the secret derives"),
        (lambda d: d.update(schema="x"), "schema: expected 'fundbook.heldout-reveal/1'"),
    ],
)
def test_a_reveal_that_does_not_open_its_commitment_is_refused(tmp_path, edit, message):
    shutil.copy(f"{SWEEP}/commitment.json", tmp_path / "commitment.json")
    with open(f"{SWEEP}/reveal.json") as fh:
        doc = json.load(fh)
    edit(doc)
    (tmp_path / "reveal.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="^worlds: heldout: ") as err:
        parse_worlds(f"heldout:{tmp_path}:1..2")
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("heldout:/no/such/dir", "commitment.json: FileNotFoundError"),
        (f"heldout:{SWEEP}:0..2", "positions 0..2: expected 1 <= FIRST <= LAST <= 1000"),
        (f"heldout:{SWEEP}:3..2", "positions 3..2"),
        (f"heldout:{SWEEP}:1..1001", "positions 1..1001"),
        (f"heldout:{SWEEP}:1..2,heldout:{SWEEP}:2..3", "a world is listed twice"),
    ],
)
def test_a_held_out_spec_that_names_no_list_is_one_line(spec, message):
    with pytest.raises(ValueError) as err:
        parse_worlds(spec)
    assert message in str(err.value) and "\n" not in str(err.value)
