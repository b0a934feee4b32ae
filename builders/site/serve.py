"""`python -m builders.site.serve [--dir public] [--port 8000]`: serve the built
site on 127.0.0.1 only, as a static host should serve it: .wasm as
application/wasm (Pyodide compiles it while it streams), .mjs as JavaScript,
long cache lifetimes on the vendored runtime and the engine bundle, and the
headers the build wrote to `_headers` (the Content-Security-Policy with
`frame-ancestors 'none'`, nosniff) on every response, and a file's
precompressed twin (`x.br`, `x.gz`, written by builders/desk/precompress.py)
with its Content-Encoding when the browser accepts it, as static hosts do. The one static server
of the project: `make preview`, the site and desk tests and the desk
benchmark all use it. `overlay` maps extra URL paths to HTML bytes (the
benchmark's bare page) without writing into the site."""

import functools
import http.server
import os
import sys
import threading
from pathlib import Path

import click

from builders.site.csp import HEADERS_FILE, read_headers

TYPES = {
    ".wasm": "application/wasm",
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".json": "application/json",
    ".zip": "application/zip",
    ".parquet": "application/vnd.apache.parquet",
    ".html": "text/html; charset=utf-8",
    ".css": "text/css",
    ".svg": "image/svg+xml",
    ".map": "application/json",
}
LONG_CACHE = ("/vendor/", "/engine/")


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **TYPES}
    overlay: dict = {}
    site_headers: list = []

    def do_GET(self):
        body = self.overlay.get(self.path.split("?", 1)[0])
        if body is None:
            return super().do_GET()
        self.in_overlay = True  # not a page of the site: its policy does not apply
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def send_head(self):
        twin = self._precompressed()
        if twin is None:
            return super().send_head()
        path, encoding = twin
        f = open(path, "rb")
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(self.translate_path(self.path)))
        self.send_header("Content-Encoding", encoding)
        self.send_header("Content-Length", str(os.fstat(f.fileno()).st_size))
        self.send_header("Vary", "Accept-Encoding")
        self.end_headers()
        return f

    def _precompressed(self):
        """(path of the twin, encoding) for a file with a .br or .gz twin the client accepts, else None."""
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            return None
        accepted = {part.split(";")[0].strip().lower() for part in self.headers.get("Accept-Encoding", "").split(",")}
        for suffix, encoding in ((".br", "br"), (".gz", "gzip")):
            if encoding in accepted and os.path.isfile(path + suffix):
                return path + suffix, encoding
        return None

    def end_headers(self):
        for name, value in [] if getattr(self, "in_overlay", False) else self.site_headers:
            self.send_header(name, value)
        if self.path.startswith(LONG_CACHE):
            self.send_header("Cache-Control", "public, max-age=31536000, immutable")
        super().end_headers()

    def log_message(self, format, *args):  # quiet: tests and preview print their own lines
        pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A browser that navigates away mid-download resets the connection: not an error of the site.
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


def _server(directory, port=0, overlay=None):
    headers = Path(directory) / HEADERS_FILE
    site_headers = read_headers(headers.read_text(encoding="utf-8")) if headers.is_file() else []
    handler = type("SiteHandler", (Handler,), {"overlay": dict(overlay or {}), "site_headers": site_headers})
    return Server(("127.0.0.1", port), functools.partial(handler, directory=str(directory)))


def serve(directory: Path, port: int = 0, overlay=None) -> http.server.ThreadingHTTPServer:
    """Start a server in a daemon thread; `server.server_address[1]` is the port."""
    server = _server(directory, port, overlay)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class Serving:
    """`with Serving(root) as url:` serves `root` on 127.0.0.1 at a free port."""

    def __init__(self, root: Path, overlay=None):
        self.root, self.overlay = root, overlay

    def __enter__(self):
        self.server = serve(self.root, 0, self.overlay)
        return f"http://127.0.0.1:{self.server.server_address[1]}/"

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


@click.command()
@click.option("--dir", "directory", type=click.Path(exists=True, file_okay=False, path_type=Path), default="public")
@click.option("--port", type=int, default=8000, show_default=True)
def main(directory: Path, port: int):
    """Serve the built site until interrupted."""
    with _server(directory, port) as server:
        click.echo(f"serving {directory} on http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
