"""`python -m builders.site.serve [--dir public] [--port 8000]`: serve the built
site on 127.0.0.1 only, with .wasm as application/wasm (needed by Pyodide's
streaming compile) and .mjs as JavaScript. Used by `make preview` and the
browser tests."""

import functools
import http.server
import sys
import threading
from pathlib import Path

import click

TYPES = {".wasm": "application/wasm", ".mjs": "text/javascript", ".js": "text/javascript",
         ".json": "application/json", ".zip": "application/zip", ".parquet": "application/vnd.apache.parquet"}


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **TYPES}

    def log_message(self, format, *args):  # quiet: tests and preview print their own lines
        pass


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A browser that navigates away mid-download resets the connection: not an error of the site.
        if not isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            super().handle_error(request, client_address)


def serve(directory: Path, port: int = 0) -> http.server.ThreadingHTTPServer:
    """Start a server in a daemon thread; `server.server_address[1]` is the port."""
    handler = functools.partial(Handler, directory=str(directory))
    server = Server(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@click.command()
@click.option("--dir", "directory", type=click.Path(exists=True, file_okay=False, path_type=Path), default="public")
@click.option("--port", type=int, default=8000, show_default=True)
def main(directory: Path, port: int):
    """Serve the built site until interrupted."""
    handler = functools.partial(Handler, directory=str(directory))
    with Server(("127.0.0.1", port), handler) as server:
        click.echo(f"serving {directory} on http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
