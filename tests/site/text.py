"""What a reader reads in a piece of generated page HTML: its text, tags dropped, character references read.
Figures are marks (spans with data-fb-path or data-fb-decision), so a sentence is checked as text."""

import html
import re

_TAG = re.compile(r"<[^>]*>")


def plain(markup: str) -> str:
    return html.unescape(_TAG.sub("", markup))
