"""The Content-Security-Policy allows only scripts the project or its theme
wrote, computed from their source: never from what a generated page holds."""

import base64
import hashlib
import re
import urllib.request
from pathlib import Path

import pytest

from builders.site import csp
from builders.site.serve import Serving

pytestmark = pytest.mark.xdist_group("site")
REPO = Path(__file__).resolve().parents[2]
META = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">')
SCRIPT = re.compile(r"<script(?P<attrs>[^>]*)>(?P<body>.*?)</script>", re.S)


def _inline_scripts(html):
    return [
        m.group("body")
        for m in SCRIPT.finditer(html)
        if "src=" not in m.group("attrs") and "application/json" not in m.group("attrs")
    ]


def _hashes(policy):
    return set(re.findall(r"'sha256-([^']+)'", policy))


def _sha(body):
    return base64.b64encode(hashlib.sha256(body.encode()).digest()).decode()


@pytest.fixture(scope="module")
def theme_scripts():
    from mkdocs.config import load_config

    return csp.ThemeScripts(load_config(str(REPO / "mkdocs.yml")))


def _policies(public: Path):
    out = {}
    for path in sorted(public.rglob("*.html")):
        html = path.read_text(encoding="utf-8")
        metas = META.findall(html)
        assert len(metas) == 1, path
        out[path] = (html, metas[0])
    return out


def test_every_page_and_404_carries_the_policy_from_the_theme_source(built_site, theme_scripts):
    public = built_site[0]
    for path, (html, policy) in _policies(public).items():
        assert (
            "default-src 'self'" in policy
            and "http" not in policy
            and "'unsafe-inline'" not in policy.split("script-src", 1)[1].split(";", 1)[0]
        ), path
        rel = path.relative_to(public).as_posix()
        base = (
            "/"
            if rel == "404.html"
            else csp.page_base_url(rel[: -len("index.html")] if rel.endswith("index.html") else rel)
        )
        # the allowed hashes are the theme's scripts rendered for this page's base URL, nothing else
        assert _hashes(policy) == set(theme_scripts.hashes(base)), path
        # and every inline script the page runs is one of them
        for body in _inline_scripts(html):
            assert _sha(body) in _hashes(policy), (path, body[:80])


def test_the_policy_does_not_depend_on_what_a_page_holds(built_site, hostile_site):
    clean = {
        p.relative_to(built_site[0]).parent.parent.as_posix(): m
        for p, (_, m) in _policies(built_site[0]).items()
        if p.parent.parent.name == "runs"
    }
    hostile = {
        p.relative_to(hostile_site[0]).parent.parent.as_posix(): m
        for p, (_, m) in _policies(hostile_site[0]).items()
        if p.parent.parent.name == "runs"
    }
    assert len(set(clean.values()) | set(hostile.values())) == 1  # every run page, clean or hostile: one policy


def test_an_injected_head_script_is_not_allowed(built_site, theme_scripts):
    html = (built_site[0] / "runs" / "index.html").read_text()
    injected = html.replace("</head>", "<script>window.__pwned = 1</script></head>", 1)
    out = csp.with_csp(re.sub(META, "", injected), theme_scripts.hashes(".."))
    assert _sha("window.__pwned = 1") not in _hashes(META.search(out).group(1))


def test_preview_sends_the_policy_as_a_header_with_frame_ancestors(built_site):
    public = built_site[0]
    assert (public / "_headers").is_file()
    with Serving(public, overlay={"/__bench/bare.html": b"<script>1</script>"}) as url:
        with urllib.request.urlopen(url + "runs/") as r:
            policy = r.headers["Content-Security-Policy"]
            assert "frame-ancestors 'none'" in policy and "default-src 'self'" in policy
            assert r.headers["X-Content-Type-Options"] == "nosniff"
            # the header allows what every page's meta allows
            meta = META.search(r.read().decode()).group(1)
            assert _hashes(meta) <= _hashes(policy)
        with urllib.request.urlopen(url + "404.html") as r:
            assert "frame-ancestors 'none'" in r.headers["Content-Security-Policy"]
        with urllib.request.urlopen(url + "__bench/bare.html") as r:  # not a page of the site
            assert r.headers["Content-Security-Policy"] is None


def test_headers_file_round_trips():
    text = csp.headers_file(["abc="])
    headers = dict(csp.read_headers(text))
    assert text.startswith("/*\n")
    assert headers["Content-Security-Policy"] == csp.policy(["abc="], ["frame-ancestors 'none'"])
    assert headers["X-Content-Type-Options"] == "nosniff"
