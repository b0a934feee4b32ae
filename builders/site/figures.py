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
        elif (
            isinstance(value, list) and isinstance(part, int) and not isinstance(part, bool) and 0 <= part < len(value)
        ):
            value = value[part]
        else:
            return None
    return value


def path_attr(path) -> str:
    """["content", "days", 3, "cash"] -> "content/days/3/cash" (each segment percent-encoded)."""
    return "/".join(quote(str(p), safe="") for p in path)


class Figures:
    """Bound to one run's roots; called from templates as `fig(path, format, ...)`."""

    def __init__(self, roots: dict, run_id: str | None = None, of: str | None = None):
        self.roots, self.run_id, self.of = roots, run_id, of

    def value(self, path):
        return resolve(self.roots, path)

    def __call__(self, path, format="text", cls=None, tag="span", title=None, label=None) -> Markup:
        path = list(path)
        text = fmt.figure_text(self.value(path), format)
        attrs = [f'data-fb-path="{path_attr(path)}"']
        if format != "text":
            attrs.append(f'data-fb-format="{format}"')
        if self.run_id is not None:
            attrs.append(f'data-fb-run="{escape(self.run_id)}"')
        if self.of is not None:  # a page of several studies: whose figure this is (study.js reads it)
            attrs.append(f'data-fb-of="{escape(self.of)}"')
        if cls:
            attrs.append(f'class="{escape(cls)}"')
        if title is not None:
            attrs.append(f'title="{escape(title)}"')
        if label is not None:  # a table cell's column, for the phone's cards (data-label)
            attrs.append(f'data-label="{escape(label)}"')
        return Markup(f"<{tag} {' '.join(attrs)}>{escape(text)}</{tag}>")


class DecisionFigures:
    """A decision page's figures: `dfig(keys)` writes the decision's value at `keys` (a "."-path or a list of
    keys into decision.json) inside an element carrying data-fb-decision, so the text and the mark come from one
    place; site/assets/fundbook/decisions.js reads each one back and compares it with the decision recomputed
    from its evidence (decision.json itself, hash-checked, for the fields the rules do not recompute).
    `places` rounds a decimal string as fmt.decimal does (data-fb-places, data-fb-round); format "list" joins a
    list with ", "; `none` is what a missing value reads as (it must open with "("). A key "@direction" is the
    reading reading.reading derives from the arms and the estimate (decisions.js derives it alike). `of`
    names the comparison on a page that shows several (the Studies page)."""

    def __init__(self, decision: dict, of: str | None = None):
        self.d, self.of = decision, of

    def value(self, keys):
        if keys == "@direction":
            from .reading import reading

            return reading(self.d)["direction"]
        value = self.d
        for k in keys.split(".") if isinstance(keys, str) else keys:
            if isinstance(value, dict):
                value = value.get(k)
            elif isinstance(value, list) and isinstance(k, int) and 0 <= k < len(value):
                value = value[k]
            else:
                return None
        return value

    def __call__(
        self, keys, places=None, rounding="half-even", format=None, none="(none)", tag="span", cls=None, upper=False
    ) -> Markup:
        value = self.value(keys)
        if value is None:
            text = none
        elif format == "list":
            text = ", ".join(str(x) for x in value) if isinstance(value, list) else str(value)
        elif places is not None and isinstance(value, str):
            text = fmt.decimal(value, places, rounding)
        else:
            text = str(value)
        if upper:
            text = text.upper()
        key = keys if isinstance(keys, str) else __import__("json").dumps(list(keys))
        attrs = [f'data-fb-decision="{escape(key)}"']
        if places is not None and isinstance(value, str):
            attrs.append(f'data-fb-places="{int(places)}"')
            if rounding != "half-even":
                attrs.append(f'data-fb-round="{escape(rounding)}"')
        if format:
            attrs.append(f'data-fb-format="{escape(format)}"')
        if self.of:
            attrs.append(f'data-fb-of="{escape(self.of)}"')
        if cls:
            attrs.append(f'class="{escape(cls)}"')
        return Markup(f"<{tag} {' '.join(attrs)}>{escape(text)}</{tag}>")
