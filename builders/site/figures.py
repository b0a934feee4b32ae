"""Figures: the numbers and words a page shows from a record, marked so that
the in-browser verify can read each one back and compare it with the record
it re-derived.

`Figures(roots)(path, format)` renders one figure: its text (fmt.figure_text)
inside an element carrying data-fb-path (the path from a root -- content,
record, entry, index or receipts -- as "/"-separated, percent-encoded
segments: "content/days/3/cash") and data-fb-format (absent for "text").
The value is looked up by that path here, so the mark and the text cannot
disagree on the page that is built; verify then checks that they still agree
with the re-executed record in the reader's browser
(site/assets/desk/checks.js figureProblems).
"""

from urllib.parse import quote

from markupsafe import Markup

from . import fmt
from .escape import escape


def resolve(roots: dict, path) -> object:
    """The value at `path`, or None where the path leaves the record (checks.js reads it alike)."""
    value = roots
    for part in path:
        if isinstance(value, dict) and isinstance(part, str) and part in value:
            value = value[part]
        elif isinstance(value, list) and isinstance(part, int) and not isinstance(part, bool) \
                and 0 <= part < len(value):
            value = value[part]
        else:
            return None
    return value


def path_attr(path) -> str:
    """["content", "days", 3, "cash"] -> "content/days/3/cash" (each segment percent-encoded)."""
    return "/".join(quote(str(p), safe="") for p in path)


class Figures:
    """Bound to one run's roots; called from templates as `fig(path, format, ...)`."""

    def __init__(self, roots: dict, run_id: str | None = None):
        self.roots, self.run_id = roots, run_id

    def value(self, path):
        return resolve(self.roots, path)

    def __call__(self, path, format="text", cls=None, tag="span", title=None) -> Markup:
        path = list(path)
        text = fmt.figure_text(self.value(path), format)
        attrs = [f'data-fb-path="{path_attr(path)}"']
        if format != "text":
            attrs.append(f'data-fb-format="{format}"')
        if self.run_id is not None:
            attrs.append(f'data-fb-run="{escape(self.run_id)}"')
        if cls:
            attrs.append(f'class="{escape(cls)}"')
        if title is not None:
            attrs.append(f'title="{escape(title)}"')
        return Markup(f"<{tag} {' '.join(attrs)}>{escape(text)}</{tag}>")
