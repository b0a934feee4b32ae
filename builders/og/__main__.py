"""`python -m builders.og [--out build/og] [--runs runs] [--docs site]`: write
the OG cards for every article, every generated page and every run.

Cards go to a temporary folder that replaces the output only when every card
was drawn, so a failed build never leaves a half-written set."""

import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

import click

from builders.og.cards import card
from builders.site import fmt, leaderboard, og_paths, pages, records

ROOT = Path(__file__).resolve().parents[2]


def _front(text: str, key: str):
    if not text.startswith("---"):
        return None
    m = re.search(rf"^{key}:\s*(.+)$", text.split("\n---", 1)[0], re.M)
    return m.group(1).strip().strip("'\"") if m else None


def _article_title(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    title = _front(text, "title")
    if title:
        return title
    m = re.search(r"^#\s+(.+)$", text, re.M)
    return m.group(1).strip() if m else path.stem.replace("-", " ").capitalize()


def _figures(pub) -> list:
    """Publication-wide key figures for article cards, the status first."""
    status = leaderboard.board(pub)["status"]
    passed = [r for r in pub.runs if r.content.get("kind") == "adversarial" and r.content.get("passed")]
    adversarial = [r for r in pub.runs if r.content.get("kind") == "adversarial"]
    results = status["model_results"]
    return [
        f"{results} real-model result{'s' if results != 1 else ''}" if results else "no real-model result yet",
        f"{status['baseline_runs']} baseline runs",
        f"{len(passed)}/{len(adversarial)} adversarial as expected",
        f"{status['machinery_attempts']} mock (machinery) attempt{'s' if status['machinery_attempts'] != 1 else ''}",
    ]


def all_cards(docs: Path, pub) -> dict:
    """{card path: png bytes}."""
    out = {}
    figures = _figures(pub)
    for path in sorted(docs.rglob("*.md")):
        uri = path.relative_to(docs).as_posix()
        blurb = _front(path.read_text(encoding="utf-8"), "description") or ""
        out[og_paths.card_for(uri)] = card(
            _article_title(path), figures, "a back-to-back funding desk evaluation", blurb=blurb
        )
    for uri, (title, figures) in pages.page_titles(pub).items():
        out[og_paths.card_for(uri)] = card(title, figures, "fundbook publication")
    for run in pub.runs:
        c = run.content
        figures = [
            c["status"],
            c.get("verdict") or "no verdict",
            fmt.score_text(c.get("score")),
            f"fixture {fmt.short(c.get('fixture_sha256'))}",
        ]
        series = [d["cash"] for d in c.get("days") or [] if d.get("cash") is not None]
        out[og_paths.card_for(f"runs/{run.run_id}/index.md")] = card(
            run.run_id, figures, f"{c['kind']} run · {fmt.fixture_label(c.get('fixture'))}", series
        )
    return out


@click.command()
@click.option("--out", type=click.Path(path_type=Path), default=ROOT / "build" / "og", show_default=True)
@click.option(
    "--runs", type=click.Path(path_type=Path), default=lambda: os.environ.get("FUNDBOOK_RUNS_DIR") or ROOT / "runs"
)
@click.option("--docs", type=click.Path(path_type=Path), default=ROOT / "site", show_default=True)
def main(out: Path, runs: Path, docs: Path):
    """Write one PNG card per page and per run."""
    try:
        pub = records.load_publication(runs)
    except records.SiteInputError as exc:
        raise click.ClickException(str(exc)) from None
    cards = all_cards(docs, pub)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".og-", dir=out.parent))
    try:
        for rel, data in cards.items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_bytes(data)
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    click.echo(f"build-og: {len(cards)} cards in {out}")


if __name__ == "__main__":
    sys.exit(main())
