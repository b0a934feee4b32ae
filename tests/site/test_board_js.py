"""site/assets/fundbook/intervals.js, run by Node, against builders/site/intervals.py: the board's verify
recomputes every row's Wilson and Student-t intervals in the reader's browser, so the two must give the same
digits on any scores."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from builders.site import intervals

REPO = Path(__file__).resolve().parents[2]
MODULE = REPO / "site" / "assets" / "fundbook" / "intervals.js"
SCRIPT = """
import { tMean, wilson } from "%s";
let data = "";
process.stdin.setEncoding("utf8");
for await (const chunk of process.stdin) data += chunk;
const { rates, means } = JSON.parse(data);
process.stdout.write(JSON.stringify({ rates: rates.map(([k, n]) => wilson(k, n)), means: means.map((v) => tMean(v)) }));
"""


def node(rates, means):
    if not shutil.which("node"):
        pytest.skip("node is not installed")
    proc = subprocess.run(
        ["node", "--input-type=module", "-e", SCRIPT % MODULE.as_uri()],
        input=json.dumps({"rates": rates, "means": means}),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


EDGES = [[0, 1], [1, 1], [0, 30], [30, 30], [7, 13], [1, 1000], [999, 1000]]
MEANS = [[30], [0, 0], [100, 100, 100], [0, 100], [28, 29, 30], list(range(101)), [49] * 40 + [9]]


def test_the_edges_agree():
    got = node(EDGES, MEANS)
    assert got["rates"] == [intervals.wilson(k, n) for k, n in EDGES]
    assert got["means"] == [intervals.t_mean(v) for v in MEANS]
    assert node([[0, 0]], [[]]) == {"rates": [None], "means": [None]}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(st.integers(0, 1200), st.integers(1, 1200)).map(lambda t: [min(t), max(t)]), min_size=1, max_size=20
    ),
    st.lists(st.lists(st.integers(0, 100), min_size=1, max_size=60), min_size=1, max_size=20),
)
def test_any_scores_agree(rates, means):
    got = node(rates, means)
    assert got["rates"] == [intervals.wilson(k, n) for k, n in rates]
    assert got["means"] == [intervals.t_mean(v) for v in means]
