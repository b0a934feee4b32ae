"""Escaping record text for the pages it lands on.

Generated pages are Markdown with raw HTML blocks, read by MkDocs, and the
theme then writes some values (the page description) into attributes without
escaping them. So one escape serves every place a template puts a value (HTML
text, a quoted attribute, Markdown around raw HTML): the HTML specials, the
characters Markdown or its attr_list extension would act on, and line breaks
(so a value can never end a raw HTML block or start a Markdown line) all
become numeric character references, which every one of those readers shows
as the character itself.

Characters a reader cannot see (bidi overrides, zero-width and other format
or control characters, lone surrogates) are shown by their code point,
"⟨U+202E⟩", so that text cannot pretend to be something else on the page.
The in-browser verify applies the same rule (site/assets/desk/checks.js
`visible`) before comparing what a page shows with the record.
"""

import json
import unicodedata

from markupsafe import Markup

# What `escape` turns into a character reference. "_", "-", "." and "#" are
# left alone: run ids use them, and they only act at a line start or around
# words, which an escaped value (no line breaks) never is inside raw HTML.
SPECIAL = {c: f"&#{ord(c)};" for c in "&<>\"'`*[]\\{}!|\n\r"}
SHOWN_BY_CODE_POINT = {"Cc", "Cf", "Cs", "Zl", "Zp"}
KEPT_CONTROLS = {"\n", "\t", "\r"}


def visible(text: str) -> str:
    """`text` with every invisible or bidi-changing character shown as ⟨U+XXXX⟩."""
    out = []
    for ch in text:
        if ch not in KEPT_CONTROLS and unicodedata.category(ch) in SHOWN_BY_CODE_POINT:
            out.append(f"⟨U+{ord(ch):04X}⟩")
        else:
            out.append(ch)
    return "".join(out)


def escape(value) -> Markup:
    """Any value as inert text for an HTML text node, a quoted attribute or Markdown."""
    if isinstance(value, Markup):
        return value
    text = visible(value if isinstance(value, str) else str(value))
    return Markup("".join(SPECIAL.get(c, c) for c in text))


def finalize(value):
    """Jinja `finalize`: every `{{ }}` goes through `escape` (None prints as an empty string)."""
    return "" if value is None else escape(value)


def json_island(value) -> Markup:
    """JSON for a <script type="application/json"> data island.

    The island is raw text to the HTML parser (no entity decoding), so the
    characters that could end it or open a comment are JSON-escaped instead
    (ASCII only, so a lone surrogate stays an escape and the page valid UTF-8)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Markup(text)


def plain(value) -> str:
    """`visible` text with lone surrogates replaced, for metadata MkDocs writes itself."""
    return visible(value if isinstance(value, str) else str(value))


# Front matter: what a generated page may set. A record value that reached
# front matter unescaped (a newline, a quote) would set keys of its own
# (`template: 404.html` replaces the page); the build refuses any page whose
# front matter is not exactly what a generator writes (hooks.on_files).
FRONT_MATTER_KEYS = frozenset({"title", "description", "hide"})


def front_matter(meta: dict) -> str:
    """`meta` as a YAML front-matter block, written by a YAML writer: every value is one scalar, quoted and
    escaped as YAML needs (newlines, quotes, control characters, lone surrogates), whatever a record holds."""
    import yaml

    unknown = sorted(set(meta) - FRONT_MATTER_KEYS)
    if unknown:
        raise ValueError(f"front matter key {unknown[0]!r} is not one a generated page sets")
    # Invisible characters and lone surrogates as their code points (as on_page_context shows them anyway): a
    # YAML reader refuses a lone surrogate, escaped or not.
    meta = {k: plain(v) if isinstance(v, str) else v for k, v in meta.items()}
    text = yaml.safe_dump(meta, sort_keys=False, allow_unicode=False, width=float("inf"), default_flow_style=False)
    return f"---\n{text}---\n"


def front_matter_problem(markdown: str):
    """None, or why the front matter of a generated page is not one a generator writes: it does not parse as
    MkDocs reads it, sets a key outside FRONT_MATTER_KEYS, or gives title/description as anything but text."""
    import yaml
    from mkdocs.utils import meta as mkdocs_meta

    if not markdown.startswith("---\n"):
        return "expected a page opening with its front matter"
    try:
        _, data = mkdocs_meta.get_data(markdown)
    except yaml.YAMLError as exc:
        return f"front matter does not parse ({' '.join(str(exc).split())[:120]})"
    if not data:
        return "front matter does not parse as a mapping of title and description"
    unknown = sorted(set(data) - FRONT_MATTER_KEYS, key=str)
    if unknown:
        return (
            f"front matter sets `{str(unknown[0])[:40]}`, which no generator writes (a record value in it unescaped?)"
        )
    for key in ("title", "description"):
        if key in data and not isinstance(data[key], str):
            return f"front matter `{key}` is not one line of text"
    return None
