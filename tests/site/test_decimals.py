"""The decision pages show figures at 2 decimals (bounds rounded outwards) and verify compares them: the
browser's roundDecimal (site/assets/desk/checks.js, re-exported by site/assets/fundbook/decisions.js) must
round every decimal string exactly as builders/site/fmt.py decimal() does, or verify would call a true page a forgery (or a forged one true)."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders.site import fmt
from tests.site.conftest import built_site  # noqa: F401  (the shared strict site build)

REPO = Path(__file__).resolve().parents[2]
SCRIPT = """
globalThis.document = { querySelectorAll: () => [] };
const { roundDecimal } = await import(%s);
let data = "";
process.stdin.setEncoding("utf8");
for await (const chunk of process.stdin) data += chunk;
process.stdout.write(JSON.stringify(JSON.parse(data).map(([t, p, m]) => roundDecimal(t, p, m))));
""" % json.dumps(str(REPO / "site" / "assets" / "fundbook" / "decisions.js"))


def js_round(cases):
    if not shutil.which("node"):
        pytest.skip("node is not installed")
    out = subprocess.run(
        ["node", "--input-type=module", "-e", SCRIPT],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


DECIMALS = st.builds(
    lambda neg, whole, frac: ("-" if neg else "") + whole + ("." + frac if frac else ""),
    st.booleans(),
    st.from_regex(r"[0-9]{1,8}", fullmatch=True),
    st.from_regex(r"[0-9]{0,11}", fullmatch=True),
)
CASE = st.tuples(DECIMALS, st.integers(0, 4), st.sampled_from(["half-even", "floor", "ceiling"]))


def test_the_study_s_bounds_round_outwards():
    cases = [
        ["-0.489499703", 2, "ceiling"],
        ["-100.000000000", 2, "floor"],
        ["-19.346153846", 2, "half-even"],
        ["22.965000000", 2, "half-even"],
        ["-0.001", 2, "ceiling"],
        ["1234567.891", 2, "floor"],
    ]
    assert js_round(cases) == ["-0.48", "-100.00", "-19.35", "22.96", "0.00", "1,234,567.89"]
    assert [fmt.decimal(*c) for c in cases] == ["-0.48", "-100.00", "-19.35", "22.96", "0.00", "1,234,567.89"]


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(CASE, min_size=50, max_size=150))
def test_the_browser_rounds_every_decimal_as_the_page_does(cases):
    assert js_round([list(c) for c in cases]) == [fmt.decimal(*c) for c in cases]


def test_no_decision_page_prints_more_than_two_decimals(built_site):  # noqa: F811
    """Every decision page, the Comparisons index and the Studies page: no number in what a reader reads has more
    than two decimals (a cost under a cent says so; decision.json holds every digit)."""
    import html
    import re

    public = built_site[0]
    decided = [p.parent for p in (built_site[1]).glob("**/decision.json")]
    pages = [public / "comparisons" / d.name / "index.html" for d in decided]
    pages += [public / "comparisons" / "index.html", public / "studies" / "index.html"]
    assert len(pages) > 4
    for page in pages:
        text = page.read_text(encoding="utf-8")
        body = re.sub(r"<script.*?</script>", "", text[text.index("<article") : text.index("</article>")], flags=re.S)
        shown = html.unescape(re.sub(r"<[^>]+>", " ", body))
        long = re.findall(r"(?<![\w.])-?\d[\d,]*\.\d{3,}\b", shown)
        assert not long, (page.relative_to(public).as_posix(), long[:5])
