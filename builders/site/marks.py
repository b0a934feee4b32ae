"""Verifiable regions: where every figure is a mark, by construction.

A verifiable page wraps what its in-browser verify checks in regions,
`<div data-fb-verified="NAME">`. Inside a region every figure is a mark: an
element written by figures.Figures (data-fb-path) or by a decision page's
figure helper (data-fb-decision), whose text verify compares with the value
it re-derives. The build scans each rendered page (hooks.on_post_page) and
refuses, in one line naming the page and the text, a region that shows a
digit or a status or verdict word anywhere else: in its text, or in a title,
aria-label or alt a reader sees. A figure written straight into a template
cannot reach the site.

The reader's verify runs the same scan over the live page
(site/assets/desk/marks.js, with checks.js FIGURE_PATTERN, the same pattern
as FIGURE below): a figure typed into a copy of the page outside a mark is
named there too. Text outside the regions (explanations, messages, the
trace) is not verified, and the verify box says so.
"""

import re
from html.parser import HTMLParser

from .records import SiteInputError

REGION = "data-fb-verified"
MARKS = ("data-fb-path", "data-fb-decision")
SEEN_ATTRS = ("title", "aria-label", "alt")  # attribute text a reader sees
# The words records use for a status, a verdict, a gate or a decision (engine codes, decision verdicts, how an
# attempt ended), and any digit (\d: every Unicode decimal digit). Case-sensitive, whole words; checks.js
# FIGURE_PATTERN is the same pattern (tests/site/test_marks.py holds the two equal).
WORDS = (
    "NOT_QUALIFIED",
    "QUALIFIED",
    "SCORED",
    "MALFORMED",
    "UNSCORABLE",
    "ACCEPTED",
    "REFUSED",
    "REJECTED",
    "supported",
    "inconclusive",
    "passed",
    "failed",
    "completed",
    "interrupted",
    "recovered",
)
FIGURE_PATTERN = r"\d|(?<![A-Za-z0-9_])(?:" + "|".join(WORDS) + r")(?![A-Za-z0-9_])"
FIGURE = re.compile(FIGURE_PATTERN)
VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
RAW = frozenset(("script", "style"))


class _Scan(HTMLParser):
    """Collects (region, text) for every text or seen attribute inside a region and outside any mark."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []  # [(tag, region name or None, is mark)]
        self.found = []  # [(region, text)]
        self.regions = []  # region names in page order

    def _where(self):
        region, marked, raw = None, False, False
        for tag, name, mark in self.stack:
            region = name or region
            marked = marked or mark
            raw = raw or tag in RAW
        return region, marked, raw

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        name = a.get(REGION)
        if name is not None:
            self.regions.append(name or "(unnamed)")
        mark = any(m in a for m in MARKS)
        region, marked, _ = self._where()
        region = (name or "(unnamed)") if name is not None else region
        if region is not None and not (marked or mark):
            for key in SEEN_ATTRS:
                if a.get(key) and FIGURE.search(a[key]):
                    self.found.append((region, f'{key}="{a[key]}"'))
        if tag not in VOID:
            self.stack.append((tag, (name or "(unnamed)") if name is not None else None, mark))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID and self.stack and self.stack[-1][0] == tag:
            self.stack.pop()

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):  # close up to the matching open tag
            if self.stack[i][0] == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        region, marked, raw = self._where()
        if region is not None and not marked and not raw and FIGURE.search(data):
            self.found.append((region, data))


def unmarked(html: str) -> tuple:
    """([(region, text)] figures outside a mark inside a region, [region names]) of a rendered page."""
    scan = _Scan()
    scan.feed(html)
    scan.close()
    return scan.found, scan.regions


def snippet(text: str, limit: int = 80) -> str:
    """The text on one line, cut around its first figure."""
    line = " ".join(text.split())
    m = FIGURE.search(line)
    start = max(0, (m.start() if m else 0) - limit // 2)
    cut = line[start : start + limit]
    return ("…" if start else "") + cut + ("…" if start + limit < len(line) else "")


def check_page(page: str, html: str) -> None:
    """Refuse a page whose verifiable region shows a figure outside a mark (one line: the page and the text)."""
    found, _ = unmarked(html)
    if found:
        region, text = found[0]
        more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
        raise SiteInputError(
            f'{page}: verifiable region "{region}" shows "{snippet(text)}" outside a figure mark{more}: '
            f"write it with the figure renderer (builders/site/figures.py) or move it out of the region"
        )
