"""The MkDocs hook that turns runs/ into pages: the one place the site's
generated content comes from.

on_files adds the generated pages (register, run pages, attempts, transcripts),
the Parquet exports, the published records and the vendored runtime assets as
in-memory or copied files; nothing is written into docs_dir. on_post_page adds
the CSP meta and the Open Graph tags. Paths can be redirected for tests with
FUNDBOOK_RUNS_DIR, FUNDBOOK_OG_DIR, FUNDBOOK_ENGINE_DIR, FUNDBOOK_NODE_MODULES.
"""

import html
import logging
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # mkdocs runs from .venv/bin; the builders live in the repo
    sys.path.insert(0, str(ROOT))

from mkdocs.exceptions import PluginError  # noqa: E402
from mkdocs.structure.files import File  # noqa: E402

from builders.site import csp, og_paths, pages, parquet, records, vendor  # noqa: E402

log = logging.getLogger("mkdocs.plugins.fundbook")
_state = {}


def paths() -> dict:
    env = os.environ.get
    return {"runs": Path(env("FUNDBOOK_RUNS_DIR") or ROOT / "runs"),
            "og": Path(env("FUNDBOOK_OG_DIR") or ROOT / "build" / "og"),
            "engine": Path(env("FUNDBOOK_ENGINE_DIR") or ROOT / "build" / "engine"),
            "node_modules": Path(env("FUNDBOOK_NODE_MODULES") or ROOT / "node_modules")}


def on_files(files, config):
    p = paths()
    try:
        pub = records.load_publication(p["runs"])
    except records.SiteInputError as exc:
        raise PluginError(str(exc)) from None
    pub.verify_js = (Path(config["docs_dir"]) / "assets" / "desk" / "verify.js").is_file()
    _state.update(pub=pub, og=p["og"])
    try:
        generated = pages.generated_pages(pub)
    except records.SiteInputError as exc:
        raise PluginError(str(exc)) from None
    for uri, text in generated.items():
        files.append(File.generated(config, uri, content=text))
    for uri, data in parquet.exports(pub).items():
        files.append(File.generated(config, uri, content=data))
    for rel in pub.extra_files():
        files.append(File.generated(config, f"runs/{rel}", abs_src_path=str(pub.runs_dir / rel)))
    copied, missing = vendor.vendored(ROOT, p["node_modules"], p["engine"], p["og"])
    for uri, src in copied:
        files.append(File.generated(config, uri, abs_src_path=str(src)))
    for what in missing:
        log.warning(f"fundbook: missing {what}")
    return files


def on_post_page(output, page, config):
    card = og_paths.card_for(page.file.src_uri)
    if not (_state["og"] / card).is_file():
        log.warning(f"fundbook: no OG card {_state['og'] / card} for {page.file.src_uri} (run `make build-og`)")
    depth = page.url.count("/")
    image = "../" * depth + "og/" + card
    if config.get("site_url"):
        image = config["site_url"].rstrip("/") + "/og/" + card
    title = html.escape(f"{page.title} · {config['site_name']}", quote=True)
    desc = html.escape(page.meta.get("description") or config.get("site_description") or "", quote=True)
    meta = (f'<meta property="og:type" content="website">\n'
            f'<meta property="og:title" content="{title}">\n'
            f'<meta property="og:description" content="{desc}">\n'
            f'<meta property="og:image" content="{html.escape(image, quote=True)}">\n'
            f'<meta property="og:image:width" content="1200">\n<meta property="og:image:height" content="630">\n'
            f'<meta name="twitter:card" content="summary_large_image">\n')
    output = output.replace("</head>", meta + "</head>", 1)
    return csp.with_csp(output)
