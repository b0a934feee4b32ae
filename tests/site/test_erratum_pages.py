"""The grammar-1 erratum on the site: every attempt it names carries its days and its bound on its own page, the
study page carries the dated deviation, and an attempt outside it carries none (figures read from the erratum
file, so the test follows the data)."""

import json
import re

from tests.site.conftest import built_site  # noqa: F401  (the shared strict site build)


def _text(html):
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_each_attempt_in_the_erratum_says_its_days_and_bound_and_no_other_does(built_site):  # noqa: F811
    public, runs, _ = built_site
    doc = json.loads((runs / "errata" / "grammar-1.json").read_text())
    named = {e["attempt_id"]: e for e in doc["attempts"] if e["inexpressible_days"]}
    pages = sorted((public / "attempts").glob("*/index.html"))
    seen = 0
    for page in pages:
        html = page.read_text()
        entry = named.get(page.parent.name)
        if entry is None:
            assert "fb-erratum" not in html, page
            continue
        seen += 1
        box = _text(re.search(r'<div class="admonition warning fb-erratum".*?</div>', html, re.S).group(0))
        days = entry["inexpressible_days"]
        assert f"the truthful report on {len(days)} of its days" in box
        for d in days:
            assert f"day {d['day']} (" in box
        if entry["bound"]:
            b = entry["bound"]
            assert f"at most {b['points']}/100 instead of {entry['points']}/100" in box
            assert f"at most {b['withheld_at_most']} point" in box and b["verdict"] in box
    assert seen == len(named) == doc["summary"]["with_inexpressible_days"]


def test_the_study_page_carries_the_dated_deviation(built_site):  # noqa: F811
    public, runs, _ = built_site
    doc = json.loads((runs / "errata" / "grammar-1.json").read_text())
    html = (public / "studies" / "index.html").read_text()
    for study in doc["studies"]:
        dev = study["deviation"]
        box = _text(
            re.search(
                rf'<div class="admonition warning fb-deviation" id="{study["study"]}-deviation">.*?</div>', html, re.S
            ).group(0)
        )
        assert f"Deviation, {dev['date']}: {dev['field']}" in box
        assert " ".join(dev["reason"].split()) in box
