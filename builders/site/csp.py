"""The Content-Security-Policy of the built site.

Remote origins are forbidden outright; scripts come from files on the site
itself. The only inline scripts allowed are the theme's own, each by its
sha256 computed from the theme's template source (MkDocs Material's
partials/javascripts/*.html rendered with this site's configuration and the
page's base URL): nothing found in a generated page is ever hashed, so text
that escaped its escaping still could not run. Pyodide needs
'wasm-unsafe-eval' and a worker from 'self' or blob:.

Every page carries the policy in a meta element (404.html included); the
static host should also send it as a header, with `frame-ancestors 'none'`,
which a meta element cannot carry. The build writes that header set to
`_headers` (the format static hosts read) and `make preview` sends it.
"""

import base64
import hashlib
import re
from urllib.parse import urlsplit

THEME_SCRIPTS = "partials/javascripts/"
INLINE_SCRIPT = re.compile(r"<script>(?P<body>.*?)</script>", re.S)
HEADERS_FILE = "_headers"
HEADER_ONLY = ["frame-ancestors 'none'"]
OTHER_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"}


def _sha256(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def policy(script_hashes=(), extra=()) -> str:
    hashes = " ".join(f"'sha256-{h}'" for h in sorted(set(script_hashes)))
    return "; ".join(
        [
            "default-src 'self'",
            f"script-src 'self' 'wasm-unsafe-eval' {hashes}".rstrip(),
            "style-src 'self' 'unsafe-inline'",
            "img-src 'self' data: blob:",
            "font-src 'self' data:",
            "connect-src 'self' blob: data:",
            "worker-src 'self' blob:",
            "child-src 'self' blob:",
            "frame-src 'self'",
            "media-src 'self'",
            "manifest-src 'self'",
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'self'",
            *extra,
        ]
    )


class ThemeScripts:
    """sha256 of every inline script the theme's templates write, per base URL."""

    def __init__(self, config):
        self.config = config
        self.env = config.theme.get_env()
        self.names = sorted(n for n in self.env.list_templates() if n.startswith(THEME_SCRIPTS) and n.endswith(".html"))
        self.seen = {}

    def hashes(self, base_url: str) -> list:
        if base_url not in self.seen:
            features = self.config.theme.get("features") or []
            out = []
            for name in self.names:
                source = self.env.get_template(name).render(config=self.config, base_url=base_url, features=features)
                out.extend(_sha256(m.group("body")) for m in INLINE_SCRIPT.finditer(source))
            self.seen[base_url] = sorted(set(out))
        return self.seen[base_url]

    def all_hashes(self) -> list:
        """Every hash for every base URL used so far: the site-wide header policy."""
        return sorted({h for hs in self.seen.values() for h in hs})


def page_base_url(page_url: str) -> str:
    """MkDocs' base_url for a page (mkdocs.utils.get_relative_url('.', page.url))."""
    from mkdocs.utils import get_relative_url

    return get_relative_url(".", page_url)


def error_base_url(config) -> str:
    """MkDocs' base_url for 404.html (absolute: it is served at any depth)."""
    return urlsplit(config.get("site_url") or "/").path


def with_csp(html: str, script_hashes=()) -> str:
    meta = f'<meta http-equiv="Content-Security-Policy" content="{policy(script_hashes)}">'
    # As early as possible in <head>: a meta CSP governs only what follows it.
    return re.sub(
        r"(<head[^>]*>\s*(?:<meta charset=[^>]*>)?)", lambda m: m.group(1) + "\n    " + meta, html, count=1, flags=re.I
    )


def headers_file(script_hashes) -> str:
    """`_headers` for the whole site: the policy with frame-ancestors, and nosniff."""
    lines = ["/*", f"  Content-Security-Policy: {policy(script_hashes, HEADER_ONLY)}"]
    lines += [f"  {k}: {v}" for k, v in OTHER_HEADERS.items()]
    return "\n".join(lines) + "\n"


def read_headers(text: str) -> list:
    """[(name, value)] for every path of a `_headers` file (this site writes only "/*")."""
    out = []
    for line in text.splitlines():
        if line.startswith((" ", "\t")) and ":" in line:
            name, value = line.strip().split(":", 1)
            out.append((name.strip(), value.strip()))
    return out
