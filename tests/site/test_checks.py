"""site/assets/desk/checks.js, run by Node, against the Python it mirrors:
the index chain (builders/run_index.py), canonical JSON (engine._canon), and
the text of every figure format (builders/site/fmt.py figure_text, then
escape.visible). Verify compares a page with a record through these, so the
two sides must agree byte for byte."""

import copy
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine
from builders.run_index import check_chain
from builders.site import escape, fmt

REPO = Path(__file__).resolve().parents[2]
CHECKS = REPO / "site" / "assets" / "desk" / "checks.js"
SCRIPT = """
import * as checks from "%s";
let data = "";
process.stdin.setEncoding("utf8");
for await (const chunk of process.stdin) data += chunk;
const { chains, canon, figures } = JSON.parse(data);
const out = { chains: [], canon: [], figures: [] };
for (const index of chains) out.chains.push(await checks.checkChain(index));
for (const value of canon) {
  try { out.canon.push(checks.canonicalJSON(value)); } catch (e) { out.canon.push({ error: e.message }); }
}
for (const [value, format] of figures) out.figures.push(checks.figureText(value, format));
process.stdout.write(JSON.stringify(out));
"""


def node(chains=(), canon=(), figures=()):
    if not shutil.which("node"):
        pytest.skip("node is not installed")
    payload = json.dumps({"chains": list(chains), "canon": list(canon), "figures": list(figures)}, ensure_ascii=True)
    proc = subprocess.run(
        ["node", "--input-type=module", "-e", SCRIPT % CHECKS.as_uri()],
        input=payload,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module")
def index():
    path = REPO / "runs" / "index.json"
    if not path.is_file():
        pytest.skip("needs the published runs/index.json")
    return json.loads(path.read_text())


def _tampered(index):
    """(what, index) pairs, each broken in one way, plus the intact one."""
    out = [("intact", index)]
    for what, edit in [
        ("entry field", lambda i: i["entries"][3].update(kind="reference")),
        ("prev_hash", lambda i: i["entries"][5].update(prev_hash="0" * 64)),
        ("hash", lambda i: i["entries"][7].update(hash="f" * 64)),
        ("swapped entries", lambda i: i["entries"].insert(1, i["entries"].pop(2))),
        ("dropped entry", lambda i: i["entries"].pop(4)),
        ("dropped last entry", lambda i: i["entries"].pop()),
        ("head size", lambda i: i["head"].update(size=i["head"]["size"] + 1)),
        ("head hash", lambda i: i["head"].update(hash="e" * 64)),
        ("file_sha256 only", lambda i: i["entries"][2].update(file_sha256="d" * 64)),
    ]:
        changed = copy.deepcopy(index)
        edit(changed)
        out.append((what, changed))
    return out


def test_chain_check_in_js_agrees_with_the_builders(index):
    cases = _tampered(index)
    results = node(chains=[i for _, i in cases])["chains"]
    for (what, idx), js in zip(cases, results):
        python = check_chain(idx)
        assert js["ok"] == (python is None), (what, js, python)
        if python not in (None, "head"):
            at = int(js["at"].split("[")[1].split("]")[0])
            assert idx["entries"][at]["run_id"] == python, (what, js, python)
        if python == "head":
            assert js["at"].startswith("head"), (what, js)
    assert results[0] == {"ok": True, "size": index["head"]["size"], "head": index["head"]["hash"]}


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53 - 1), 2**53 - 1),
    st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=12),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=12,
)
FORMATS = sorted(fmt.FORMATS)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(json_values, min_size=1, max_size=30))
def test_canonical_json_and_every_figure_format_agree(values):
    figures = [[v, f] for v in values for f in FORMATS]
    out = node(canon=values, figures=figures)
    for value, js in zip(values, out["canon"]):
        assert js == engine.canonical_json(value).decode("utf-8"), value
    for (value, format), js in zip(figures, out["figures"]):
        assert js == escape.visible(fmt.figure_text(value, format)), (value, format)


def test_figure_formats_of_record_shaped_values():
    values = [
        (123456789, "money"),
        (-5, "money"),
        (None, "money"),
        ({"points": 73, "denominator": 100}, "score"),
        (None, "score"),
        ({"points": 30, "max": 30}, "points"),
        (None, "verdict"),
        (True, "passed"),
        (False, "passed"),
        (["CASH", "TIMING"], "list"),
        ([], "list"),
        ({"report_matched": 11, "report_fields": 12}, "report"),
        ({"action": "d01-a1", "type": "FUND", "decision": "REFUSED", "reason": "CASH"}, "decision"),
        ({"action": "d01-a1", "type": "FUND", "decision": "ACCEPTED", "reason": None}, "decision"),
        ({"episode": "W3", "kind": "adversarial", "mutation": "M4_fully_hedged_tail"}, "fixture"),
        ({"family": "FUND_01", "kind": "baseline", "policy": "do-nothing", "seed": 2}, "fixture"),
        ({"argv": ["node", "x y", "it's", ""], "env": {"B": "2", "A": "1"}}, "command"),
        ({"refusal": {"action": "d01-a1", "day": 1, "reason": "TIMING"}, "status": "SCORED"}, "expectation"),
        ({"failed_gates": ["no_false_full_protection"], "status": "SCORED", "verdict": "NOT_QUALIFIED"}, "expectation"),
        ("0" * 64, "short"),
        ([1, 2, 3], "count"),
        ("\u202e100/100\u200b", "text"),
        ({"b": [1, "é", None], "a": {"x": True}}, "json"),
    ]
    out = node(figures=[[v, f] for v, f in values])["figures"]
    assert out == [escape.visible(fmt.figure_text(v, f)) for v, f in values]
    assert out[0] == "1,234,567.89" and out[14] == "W3 · M4_fully_hedged_tail"
    assert out[16] == "A=1 B=2 node 'x y' 'it'\"'\"'s' ''"
    assert out[21] == "⟨U+202E⟩100/100⟨U+200B⟩"


def test_gate_details_read_as_money_on_both_sides():
    details = [
        "material misstatement: day 5 cash 500000000 vs -470000000 (20638 bps); day 5 assets.A2.funded 1000000000 vs 0 (10000 bps)",
        "understated or omitted exposure: day 1 A1 maturity_gap_days 0 < 19 days; day 1 A1 tail_cent_days 0 < 28500000000 cent-days",
        "day 2 A1 tail_cent_days None < 5 cent-days; day 3 cash 1234567890123456 vs 1 (9 bps)",  # 16 digits: left as it is
        "day 4 cash \u0661\u0662 vs 5 (1 bps); xcash 5 vs 6 (1 bps); day 5 assets.A 1.funded 5 vs 6 (",  # not the phrases
        "no cash or funding figure off by more than 100 bps of its base",
    ]
    out = node(figures=[[d, "gate_detail"] for d in details])["figures"]
    assert out == [escape.visible(fmt.figure_text(d, "gate_detail")) for d in details]
    assert out[0] == (
        "material misstatement: day 5 cash 5,000,000.00 vs -4,700,000.00 (20638 bps); "
        "day 5 assets.A2.funded 10,000,000.00 vs 0.00 (10000 bps)"
    )
    assert out[1].endswith("day 1 A1 tail 0.00 < 285,000,000.00 money-days")
    assert out[2:] == details[2:]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["cash", "assets.A1.funded", "assets.Q_9.unfunded", "tail_cent_days"]),
            st.integers(-(10**17), 10**17),
            st.integers(-(10**17), 10**17),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_gate_detail_rewrite_agrees_for_any_amounts(parts):
    details = [
        f"day 1 {f} {a} < {b} cent-days" if f == "tail_cent_days" else f"day 1 {f} {a} vs {b} ({a % 997} bps)"
        for f, a, b in parts
    ]
    out = node(figures=[[d, "gate_detail"] for d in details])["figures"]
    assert out == [escape.visible(fmt.figure_text(d, "gate_detail")) for d in details]


def test_visible_agrees_on_invisible_characters_and_lone_surrogates():
    text = "a\u202eb\u200bc\u2066d\x00e\x7f\u2028f\ud800g\tok\nline"
    assert node(figures=[[text, "text"]])["figures"] == [escape.visible(text)]
    assert escape.visible(text) == "a⟨U+202E⟩b⟨U+200B⟩c⟨U+2066⟩d⟨U+0000⟩e⟨U+007F⟩⟨U+2028⟩f⟨U+D800⟩g\tok\nline"


def test_receipt_payloads_read_alike_on_both_sides():
    """The run pages' receipts (fmt "payload"): money keys, money-days, hashes, nested lists, empty values."""
    receipts = (
        json.loads((REPO / "runs" / "receipts" / "reference-W3.json").read_text())["receipts"]
        if (REPO / "runs" / "receipts" / "reference-W3.json").is_file()
        else []
    )
    values = [r["payload"] for r in receipts] + [
        {"cash": -5, "tail_cent_days": 10**15, "notional": 2**53 - 1, "ids": [], "x": {}, "h": "f" * 64, "H": "F" * 64},
        {"actions": [{"notional": 1, "id": "a"}, [1, {"cash": 2}]], "open_approvals": ["AP001", None, True]},
        {"\U0001f600": 1, "\uffff": 2, "é": {"amount": 3}},
        [1, "x"],
        None,
        "plain",
        7,
    ]
    out = node(figures=[[v, "payload"] for v in values])["figures"]
    assert out == [escape.visible(fmt.figure_text(v, "payload")) for v in values]
    assert not receipts or any("; notional " in t and ",000.00" in t for t in out)


def test_canonical_json_orders_keys_by_utf16_code_units_like_the_engine():
    """U+E000 sorts after U+10000 in UTF-16 (a surrogate pair starts at 0xD800), before it by
    code point: the engine hashes the UTF-16 order (RFC 8785), and so must verify."""
    values = [{"\ue000": None, "\U00010000": None}, {"\uffff": 1, "\U0001f600": 2, "a": 3}]
    out = node(canon=values)["canon"]
    assert out == [engine.canonical_json(v).decode("utf-8") for v in values]
    assert out[0] == '{"\U00010000":null,"\ue000":null}'
