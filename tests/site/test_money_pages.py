"""Money reads as money on the run pages: score bases and economics show
formatted amounts and money-days, never raw cents or cent-days."""

import json
import re

import pytest

pytestmark = pytest.mark.xdist_group("site")

RAW = re.compile(r"(?<![\w.,])\d{7,}(?![\w.,])")  # a bare amount in cents: seven digits or more


def _cells(html):
    return [re.sub(r"<[^>]+>", " ", cell) for cell in re.findall(r'<span class="fb-kv">(.*?)</span>', html, re.S)]


def test_score_bases_and_economics_read_as_money(built_site, run_index):
    public, runs = built_site[0], built_site[1]
    checked = 0
    for entry in run_index["entries"]:
        record = json.loads((runs / f"{entry['run_id']}.json").read_text())
        score = record["content"].get("score")
        if not score:
            continue
        html = (public / "runs" / entry["run_id"] / "index.html").read_text()
        cells = _cells(html)
        assert cells, entry["run_id"]
        for cell in cells:
            assert not RAW.search(cell), f"{entry['run_id']}: {cell.strip()}"
        tail = score["components"]["maturity_protection"]["unfunded_tail"]
        shown = f"unfunded tail {tail // 100:,}.{tail % 100:02d} money-days"
        assert shown in " ".join(" ".join(c.split()) for c in cells), entry["run_id"]
        checked += 1
    assert checked >= 10
