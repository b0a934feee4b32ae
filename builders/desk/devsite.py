"""A minimal stand-in for the built site, for the desk's tests when public/ is not built.

It has the layout the site build produces -- /vendor/pyodide/, /engine/ (the
real bundle from `make build-engine`), /assets/desk/, /desk/,
/runs/<run-id>.json and a run page per record -- so the same JavaScript runs
unchanged against either. The desk page is the real site/desk/index.md
rendered by Python-Markdown. Run records are the committed ones in runs/;
where one is missing, the host engine makes it through the same
`engine_fields` the builders use, with placeholders for what only the build
knows (command, outputs). Nothing here is published.
"""

import json
import os
import re
import shutil
from pathlib import Path

import markdown

import engine
from builders.site.csp import with_csp

ROOT = Path(__file__).resolve().parents[2]

# The built site's Content-Security-Policy is added to every page (with_csp), so
# the desk is tested under the same policy it is published with.
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="{base}assets/desk/desk.css">{head}</head>
<body><main>{body}</main></body></html>
"""


def _link(src: Path, dst: Path, copy=False):
    """dst -> src as a symbolic link, or (copy) as a copy a precompressed site can write twins into."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    if dst.exists() or dst.is_symlink():
        dst.unlink() if dst.is_symlink() or dst.is_file() else shutil.rmtree(dst)
    if not copy:
        os.symlink(src, dst)
    elif src.is_dir():
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("*.br", "*.gz", "*.tmp"))
    else:
        shutil.copyfile(src, dst)


def record_for(spec: dict, bundle: dict) -> dict:
    """A run record shaped like the builders' (fundbook.run/1), from the host engine."""
    execution = engine.execute_fixture(spec)
    content = {
        "schema_version": engine.RUN_SCHEMA_VERSION,
        **engine.engine_fields(execution),
        "engine": {**bundle, "engine_version": engine.ENGINE_VERSION},
        "execution_path": "host reference",
        "command": {"argv": ["devsite"], "env": {}},
        "outputs": {},
    }
    return {
        "schema": engine.RUN_SCHEMA,
        "content": content,
        "content_sha256": engine.content_sha256(content),
        "volatile": {},
    }


def public_is_current(public: Path) -> bool:
    """`public` is a built site carrying this checkout's desk code (not a stale copy)."""
    needed = (
        "desk/index.html",
        "engine/manifest.json",
        "engine/provenance.json",
        "vendor/pyodide/pyodide.mjs",
        "assets/desk/desk.js",
    )
    if not all((public / p).exists() for p in needed):
        return False
    built = public / "assets" / "desk"
    return all(
        (built / f.name).is_file() and (built / f.name).read_bytes() == f.read_bytes()
        for f in (ROOT / "site" / "assets" / "desk").glob("*.js")
    )


def verify_page(root: Path, run_id: str) -> str:
    """The site-relative path of the page holding the run's verify box (not the register row)."""
    box = re.compile(r'<div\b[^>]*\bclass="fb-verify"[^>]*\bdata-run-id="%s"' % re.escape(run_id))
    for page in sorted(root.rglob("*.html")):
        if box.search(page.read_text(errors="replace")):
            return page.relative_to(root).as_posix()
    raise LookupError(f"no page under {root} holds the verify box of {run_id}")


def run_page(run_id: str) -> str:
    body = (
        f'<h1>{run_id}</h1>\n<div class="fb-verify" data-run-id="{run_id}" '
        f'data-record-url="../{run_id}.json"></div>\n'
        '<script type="module" src="../../assets/desk/verify.js"></script>'
    )
    return with_csp(PAGE.format(title=run_id, base="../../", body=body, head=""))


def fresh_bundle(directory: Path) -> bool:
    """`directory` holds a bundle of exactly the current engine sources."""
    from builders.bundle import engine_sources

    try:
        manifest = json.loads((directory / "manifest.json").read_text())
        listed = {f["path"]: f["sha256"] for f in manifest["files"] if not f["path"].endswith(".pyc")}
        return (directory / "provenance.json").exists() and listed == {
            f["path"]: f["sha256"] for f in engine_sources(str(ROOT))
        }
    except (OSError, ValueError, KeyError):
        return False


def engine_bundle(tmp: Path) -> Path:
    """build/engine when it matches the sources, else a fresh build-engine into `tmp`/engine."""
    built = ROOT / "build" / "engine"
    if fresh_bundle(built):
        return built
    from builders.bundle import build_engine

    os.environ.setdefault("SOURCE_DATE_EPOCH", "1788739200")
    build_engine(str(tmp / "engine"), root=str(ROOT))
    return tmp / "engine"


def _desk_page(source_md: Path, target: Path, base: str):
    """A desk page (the practice desk, its study mode) rendered as the site renders it, under the site's CSP."""
    source = source_md.read_text()
    front = re.match(r"\A---\n(.*?)\n---\n", source, flags=re.S)
    text = source[front.end() :] if front else source
    # as site/overrides/main.html: `engine: early` starts the worker from <head>
    early = bool(front and re.search(r"^engine: early\b", front.group(1), flags=re.M))
    head = f'<script async src="{base}assets/desk/early.js"></script>' if early else ""
    body = markdown.markdown(text, extensions=["md_in_html", "attr_list"])
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(with_csp(PAGE.format(title=source_md.stem, base=base, body=body, head=head)))


def build(out: Path, engine_dir: Path, run_ids=(), precompressed=False) -> Path:
    """Lay out the stand-in site in `out` around a built engine bundle directory.
    `precompressed`: copies instead of links, with .br/.gz twins as `make build` writes them
    (the benchmark measures what a static host transfers)."""
    out.mkdir(parents=True, exist_ok=True)
    _link(ROOT / "node_modules" / "pyodide", out / "vendor" / "pyodide", precompressed)
    _link(ROOT / "site" / "assets" / "desk", out / "assets" / "desk", precompressed)
    # the desk's worker imports the decisions' recompute (assets/fundbook/decisions-worker.js) beside its own
    _link(ROOT / "site" / "assets" / "fundbook", out / "assets" / "fundbook", precompressed)
    _link(engine_dir, out / "engine", precompressed)
    subjects = {
        s["name"]: s["digest"]["sha256"] for s in json.loads((engine_dir / "provenance.json").read_text())["subject"]
    }
    bundle = {"bundle_sha256": subjects["fundbook-engine.zip"], "manifest_sha256": subjects["manifest.json"]}
    for page, html, base in (("index.md", "desk/index.html", "../"), ("study.md", "desk/study/index.html", "../../")):
        _desk_page(ROOT / "site" / "desk" / page, out / html, base)
    specs = {s["run_id"]: s for s in engine.fixture_specs()}
    published_pages = _published_run_pages(run_ids)
    if published_pages:  # verify checks the record against the index, so the index comes too
        from builders.site.vendor import VEGA

        for src, name in VEGA:
            if (ROOT / "node_modules" / src).is_file():
                _link(ROOT / "node_modules" / src, out / "vendor" / "vega" / name)
        (out / "runs").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / "runs" / "index.json", out / "runs" / "index.json")
    for run_id in run_ids:
        (out / "runs" / run_id).mkdir(parents=True, exist_ok=True)
        published = ROOT / "runs" / f"{run_id}.json"
        if published.is_file():  # the committed record, as the site publishes it
            shutil.copyfile(published, out / "runs" / f"{run_id}.json")
        else:
            spec = {k: v for k, v in specs[run_id].items() if k != "run_id"}
            (out / "runs" / f"{run_id}.json").write_text(json.dumps(record_for(spec, bundle), sort_keys=True, indent=1))
        (out / "runs" / run_id / "index.html").write_text(published_pages.get(run_id) or run_page(run_id))
    if precompressed:
        from builders.desk.precompress import precompress

        precompress(out)
    return out


def _published_run_pages(run_ids) -> dict:
    """{run id: the site's own run page}, rendered from the committed runs/ (verify checks every
    figure a run page shows, so a stand-in page without them cannot match); {} without runs/."""
    from builders.site import pages, records

    try:
        pub = records.load_publication(ROOT / "runs")
    except records.SiteInputError:
        return {}
    pub.verify_js = True
    env, out = pages.environment(), {}
    for run in pub.runs:
        if run.run_id in run_ids:
            text = pages.run_page(env, pub, run).split("\n---\n", 1)[1]  # without the front matter
            body = markdown.markdown(text, extensions=["md_in_html", "attr_list", "tables"])
            out[run.run_id] = with_csp(PAGE.format(title=run.run_id, base="../../", body=body, head=""))
    return out


def practitioner_pages(out: Path, runs_dir: Path) -> list:
    """The practitioner record pages and files of `runs_dir` in the stand-in site, as the site publishes
    them (builders/site/practitioner_page.py); returns their site paths."""
    from builders.site.practitioner_page import site_files

    pages = []
    for uri, data in site_files(runs_dir).items():
        target = out / uri
        target.parent.mkdir(parents=True, exist_ok=True)
        if uri.endswith(".md"):
            text = data.split("\n---\n", 1)[1]  # without the front matter
            body = markdown.markdown(text, extensions=["md_in_html", "attr_list", "tables"])
            target = target.with_name("index.html")
            target.write_text(with_csp(PAGE.format(title="Practitioner attempt", base="../../", body=body, head="")))
            pages.append(target.relative_to(out).parent.as_posix() + "/")
        else:
            target.write_bytes(data)
    return pages
