"""A local static server for the built site, as a static host should serve it.

.wasm as application/wasm (so Pyodide can compile it while it streams),
.mjs/.js as JavaScript, long cache lifetimes on the vendored runtime and the
engine bundle. `overlay` maps extra URL paths to bytes (the benchmark's bare
page) without writing into the site.
"""

import functools
import http.server
import threading
from pathlib import Path

TYPES = {".wasm": "application/wasm", ".mjs": "text/javascript", ".js": "text/javascript",
         ".json": "application/json", ".zip": "application/zip", ".html": "text/html; charset=utf-8",
         ".css": "text/css", ".svg": "image/svg+xml", ".map": "application/json"}
LONG_CACHE = ("/vendor/", "/engine/")


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **TYPES}
    overlay: dict = {}

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        body = self.overlay.get(path)
        if body is None:
            return super().do_GET()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def end_headers(self):
        if self.path.startswith(LONG_CACHE):
            self.send_header("Cache-Control", "public, max-age=31536000, immutable")
        super().end_headers()

    def log_message(self, *args):  # quiet: tests and the bench print their own lines
        pass


class Server:
    """`with Server(root) as url:` serves `root` on 127.0.0.1 at a free port."""

    def __init__(self, root: Path, overlay=None):
        handler = type("Handler", (_Handler,), {"overlay": dict(overlay or {})})
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                                     functools.partial(handler, directory=str(root)))
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self.url

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
