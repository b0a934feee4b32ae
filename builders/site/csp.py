"""The Content-Security-Policy meta every built page carries.

Remote origins are forbidden outright. Scripts come from the site itself; the
few inline scripts the theme writes into the page chrome are allowed by their
sha256, computed from the built page. Inline scripts inside the article (where
generated and model-written content lives) are never hashed, so even a failure
of escaping could not run one. Pyodide needs 'wasm-unsafe-eval' and a worker
from 'self' or blob:.
"""

import base64
import hashlib
import re

SCRIPT = re.compile(r"<script(?P<attrs>[^>]*)>(?P<body>.*?)</script>", re.S | re.I)
ARTICLE = re.compile(r"<article\b.*?</article>", re.S | re.I)
NON_EXEC = re.compile(r"""type\s*=\s*["']?(application/json|application/ld\+json|text/template)""", re.I)


def policy(script_hashes) -> str:
    hashes = " ".join(f"'sha256-{h}'" for h in sorted(set(script_hashes)))
    return "; ".join([
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
    ])


def chrome_script_hashes(html: str) -> list:
    article = [(m.start(), m.end()) for m in ARTICLE.finditer(html)]
    out = []
    for m in SCRIPT.finditer(html):
        attrs = m.group("attrs")
        if "src=" in attrs.lower() or NON_EXEC.search(attrs) or not m.group("body").strip():
            continue
        if any(a <= m.start() < b for a, b in article):
            continue
        digest = hashlib.sha256(m.group("body").encode("utf-8")).digest()
        out.append(base64.b64encode(digest).decode("ascii"))
    return out


def with_csp(html: str) -> str:
    meta = f'<meta http-equiv="Content-Security-Policy" content="{policy(chrome_script_hashes(html))}">'
    # As early as possible in <head>: a meta CSP governs only what follows it.
    return re.sub(r"(<head[^>]*>\s*(?:<meta charset=[^>]*>)?)", lambda m: m.group(1) + "\n    " + meta, html,
                  count=1, flags=re.I)
