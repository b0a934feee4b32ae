"""The MkDocs hook that turns runs/ into pages: the one place the site's
generated content comes from.

on_files adds the generated pages (register, run pages, attempts, transcripts),
the Parquet exports, leaderboard.json and .csv, the published records and the vendored runtime assets as
in-memory or copied files; nothing is written into docs_dir. on_page_markdown
fills the sections of written pages that are generated from the records (the
home page's status line and leaderboard, the Limitations page's status). on_page_context
escapes the page description, which the theme writes into an attribute as it
is. on_post_page refuses a page whose verifiable region shows a figure outside a
mark (marks.py); it and on_post_template add the CSP meta (404.html included) and
the Open Graph tags (og:image relative unless a site URL is configured);
on_post_build writes the header policy `_headers`, and drops the sitemap when
no site URL is configured (it would have no address to list).
Paths can be redirected for tests with FUNDBOOK_RUNS_DIR, FUNDBOOK_OG_DIR,
FUNDBOOK_ENGINE_DIR, FUNDBOOK_NODE_MODULES.
"""

import html
import logging
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # mkdocs runs from .venv/bin; the builders live in the repo
    sys.path.insert(0, str(ROOT))

from engine import InputError  # noqa: E402
from mkdocs.exceptions import PluginError  # noqa: E402
from mkdocs.structure.files import File  # noqa: E402

from builders.site import csp, escape, leaderboard, marks, og_paths, overview, pages, parquet, records, vendor  # noqa: E402

log = logging.getLogger("mkdocs.plugins.fundbook")
_state = {}


def paths() -> dict:
    env = os.environ.get
    return {
        "runs": Path(env("FUNDBOOK_RUNS_DIR") or ROOT / "runs"),
        "og": Path(env("FUNDBOOK_OG_DIR") or ROOT / "build" / "og"),
        "engine": Path(env("FUNDBOOK_ENGINE_DIR") or ROOT / "build" / "engine"),
        "node_modules": Path(env("FUNDBOOK_NODE_MODULES") or ROOT / "node_modules"),
    }


def on_config(config):
    _state.clear()
    _state["scripts"] = csp.ThemeScripts(config)
    return config


def on_files(files, config):
    p = paths()
    try:
        pub = records.load_publication(p["runs"])
        pub.verify_js = (Path(config["docs_dir"]) / "assets" / "desk" / "verify.js").is_file()
        generated = pages.generated_pages(pub)
        tables = parquet.exports(pub)
        tables.update(leaderboard.files(pub))  # leaderboard.json and .csv: the home page's rows, published
        # practitioner records: a page each (with its verify box) and their files (builders/site/practitioner_page.py);
        # a record that fails the importer's own checks is refused here, in one line
        from builders.site.practitioner_page import site_files as practitioner_files

        practitioner = practitioner_files(p["runs"])
        generated.update({uri: data for uri, data in practitioner.items() if uri.endswith(".md")})
        tables.update({uri: data for uri, data in practitioner.items() if not uri.endswith(".md")})
        for uri, text in generated.items():  # no record value sets front matter, whichever generator wrote the page
            problem = escape.front_matter_problem(text) if uri.endswith(".md") else None
            if problem:
                raise records.SiteInputError(f"generated page {uri}: {problem}")
    except (records.SiteInputError, InputError) as exc:
        raise PluginError(str(exc)) from None
    _state.update(pub=pub, og=p["og"], descriptions={})
    for uri, text in generated.items():
        files.append(File.generated(config, uri, content=text))
    for uri, data in tables.items():
        files.append(File.generated(config, uri, content=data))
    for rel in pub.extra_files():
        files.append(File.generated(config, f"runs/{rel}", abs_src_path=str(pub.runs_dir / rel)))
    copied, missing = vendor.vendored(ROOT, p["node_modules"], p["engine"], p["og"])
    for uri, src in copied:
        files.append(File.generated(config, uri, abs_src_path=str(src)))
    for what in missing:
        log.warning(f"fundbook: missing {what}")
    return files


def on_page_markdown(markdown, page, config, files):
    if "env" not in _state:
        _state["env"] = pages.environment()
    try:
        return overview.fill(markdown, page.file.src_uri, _state["pub"], _state["env"], "../" * page.url.count("/"))
    except records.SiteInputError as exc:
        raise PluginError(str(exc)) from None


def on_page_context(context, page, config, nav):
    # The theme writes page.meta.description (and a meta title) into the page
    # unescaped; generated pages set them from records. Escape them here, once,
    # and keep the plain text for the Open Graph tags.
    description = page.meta.get("description")
    if isinstance(description, str):
        _state["descriptions"][page.file.src_uri] = escape.plain(description)
        page.meta["description"] = html.escape(escape.plain(description), quote=True)
    title = page.meta.get("title")
    if isinstance(title, str) and any(c in title for c in "<>&\"'"):
        raise PluginError(
            f"{page.file.src_uri}: front matter `title` must not contain <, >, &, \" or ' "
            f"(the theme writes it into the page as it is)"
        )
    return context


def on_post_page(output, page, config):
    try:  # a verifiable region shows figures only as marks (marks.py): anything else stops the build, in one line
        marks.check_page(page.file.src_uri, output)
    except records.SiteInputError as exc:
        raise PluginError(str(exc)) from None
    card = og_paths.card_for(page.file.src_uri)
    if not (_state["og"] / card).is_file():
        log.warning(f"fundbook: no OG card {_state['og'] / card} for {page.file.src_uri} (run `make build-og`)")
    depth = page.url.count("/")
    image = "../" * depth + "og/" + card
    if config.get("site_url"):
        image = config["site_url"].rstrip("/") + "/og/" + card
    title = html.escape(escape.plain(f"{page.title} · {config['site_name']}"), quote=True)
    plain = _state["descriptions"].get(page.file.src_uri) or config.get("site_description") or ""
    desc = html.escape(plain, quote=True)
    meta = (
        f'<meta property="og:type" content="website">\n'
        f'<meta property="og:title" content="{title}">\n'
        f'<meta property="og:description" content="{desc}">\n'
        f'<meta property="og:image" content="{html.escape(image, quote=True)}">\n'
        f'<meta property="og:image:width" content="1200">\n<meta property="og:image:height" content="630">\n'
        f'<meta name="twitter:card" content="summary_large_image">\n'
    )
    output = output.replace("</head>", meta + "</head>", 1)
    return csp.with_csp(output, _state["scripts"].hashes(csp.page_base_url(page.url)))


def on_post_template(output_content, template_name, config):
    if template_name.endswith(".html"):  # 404.html: served at any depth, with absolute links
        return csp.with_csp(output_content, _state["scripts"].hashes(csp.error_base_url(config)))
    return output_content


def on_post_build(config):
    site = Path(config["site_dir"])
    (site / csp.HEADERS_FILE).write_text(csp.headers_file(_state["scripts"].all_hashes()), encoding="utf-8")
    if not config.get("site_url"):
        # A sitemap lists absolute URLs: without a configured site URL there is none to give (the
        # theme's would name paths on whatever host serves it), so none is published.
        for name in ("sitemap.xml", "sitemap.xml.gz"):
            (site / name).unlink(missing_ok=True)
