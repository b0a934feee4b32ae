"""Generated pages: the run register (register.py), one page per run, the
attempts record and one transcript page per attempt (transcript.py groups its
steps by checkpoint), rendered from runs/ with Jinja2 templates.

Every `{{ }}` goes through escape.finalize (HTML specials, Markdown and line
breaks as character references, invisible characters by code point), inside
raw HTML blocks that Markdown leaves alone: text written by a model (or anyone
else) is shown as text, never interpreted as HTML or Markdown. Figures a
reader relies on are rendered by figures.Figures, so that verify can check them.

This module holds the Jinja2 environment and assembles the generated pages; the
run pages are in run_pages.py, the attempt and transcript pages in attempt_pages.py.
"""

from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from . import comparisons, escape, fmt
from .attempt_pages import (  # noqa: F401  (re-exported: callers and tests import these from pages)
    _attempt_view,
    _counted_line,
    attempt_figures,
    attempts_page,
    counted_root,
    erratum_view,
    inspect_page,
    transcript_page,
)
from .run_pages import (  # noqa: F401  (re-exported: callers and tests import these from pages)
    EXPECTATION_NOTES,
    KIND_NOTES,
    _receipts,
    day_ranges,
    marked_day_ranges,
    register_page,
    run_page,
    run_roots,
)

TEMPLATES = Path(__file__).parent / "templates"


def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        finalize=escape.finalize,
    )
    env.globals.update(
        money=fmt.money,
        short=fmt.short,
        compact=fmt.compact,
        json_island=escape.json_island,
        article=article,
        usd=fmt.usd,
        count=fmt.count,
        decimal=fmt.decimal,
    )
    env.tests["list"] = lambda value: isinstance(value, list)
    return env


def article(word) -> str:
    """ "An" before a vowel sound as written ("an adversarial"), else "A"."""
    return "An" if str(word)[:1].lower() in "aeiou" and str(word)[:1] else "A"


def generated_pages(pub) -> dict:
    """{src_uri: markdown} for every page built from runs/."""
    env = environment()
    pages = {"runs/index.md": register_page(env, pub), "attempts/index.md": attempts_page(env, pub)}
    for run in pub.runs:
        pages[f"runs/{run.run_id}/index.md"] = run_page(env, pub, run)
    for attempt in pub.attempts:
        if attempt.transcript is not None:
            pages[f"attempts/{attempt.attempt_id}/index.md"] = transcript_page(env, pub, attempt)
    pages.update(comparisons.generated_pages(env, pub))
    from . import cards, outcomes, studies  # runs/studies/: pre-registered studies of real agents and their state

    pages["studies/index.md"] = studies.page(env, pub)
    pages.update(outcomes.generated_pages(env, pub))  # each study's outcomes per world
    pages.update(cards.generated_pages(env, pub))  # a model card per set of weights
    return pages


def page_titles(pub) -> dict:
    """{src_uri: (title, [key figures])} for generated pages, used by the OG cards."""
    titles = {
        "runs/index.md": ("Run register", [f"{len(pub.runs)} runs"]),
        "attempts/index.md": ("Attempts", [f"{len(pub.attempts)} retained attempts"]),
    }
    for attempt in pub.attempts:
        if attempt.transcript is not None:
            view = _attempt_view(attempt)
            titles[f"attempts/{attempt.attempt_id}/index.md"] = (
                f"Transcript {attempt.attempt_id}",
                [str(view["status"]), str(view["reason"]), view["score"]],
            )
    titles.update(comparisons.page_titles(pub))
    from . import cards, outcomes, studies

    titles.update(outcomes.titles(pub))
    titles.update(cards.titles(pub))
    found = studies.studies(pub.runs_dir, pub.attempts)
    titles["studies/index.md"] = (
        "Studies",
        [f"{len(found)} pre-registered", *(f"{s['name']}: {s['state']}, {s['worlds']} worlds" for s in found[:2])],
    )
    return titles
