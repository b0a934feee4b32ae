"""Precompressed twins of a built site, as a static host serves them.

    python -m builders.desk.precompress public

Beside every text-like or binary asset of at least 1 KiB (the runtime's wasm
and scripts, the desk's snapshot, pages, styles, the search index) it writes
`x.br` and `x.gz` when each saves a tenth or more (builders/desk/precompress.mjs;
compressed outputs are cached in build/precompressed/ by the source's sha256).
builders/site/serve.py (`make preview`, the tests, the benchmark) sends a twin
with its Content-Encoding when the browser accepts it; a host that does not
serve twins sends the files as they are.
"""

import json
import os
import subprocess

import click

from builders._cli import StageCommand
from builders._errors import BuildError
from builders._files import ROOT, sha256_file
from builders._node import last_line, node_env, node_executable

SCRIPT = "builders/desk/precompress.mjs"
CACHE = os.path.join("build", "precompressed")
SUFFIXES = (".wasm", ".mjs", ".js", ".css", ".html", ".json", ".svg", ".txt", ".map", ".snapshot", ".xml")
MIN_BYTES = 1024


def candidates(directory) -> list:
    """[path] under `directory` worth a twin. Symbolic links are not followed (the tests'
    stand-in site links its assets to the sources: twins never land in the checkout)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            if (
                name.endswith(SUFFIXES)
                and not os.path.islink(path)
                and os.path.isfile(path)
                and os.path.getsize(path) >= MIN_BYTES
            ):
                out.append(path)
    return out


def precompress(directory, root=ROOT, paths=None) -> dict:
    """Write the twins; returns the facts line (files, bytes, br_bytes, gz_bytes, written, cached)."""
    paths = candidates(directory) if paths is None else paths
    request = {"files": [[os.path.abspath(p), sha256_file(p)] for p in paths], "cache": os.path.join(root, CACHE)}
    proc = subprocess.run(
        [node_executable(root), SCRIPT],
        cwd=root,
        env=node_env(),
        input=json.dumps(request),
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise BuildError(last_line(proc.stderr) or f"{SCRIPT} exited with {proc.returncode}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


@click.command(cls=StageCommand)
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
def main(directory):
    """Write .br and .gz twins beside the built site's assets."""
    facts = precompress(directory)
    click.echo(
        f"precompress: {facts['files']} files, {facts['bytes'] / 2**20:.1f} MiB -> "
        f"{facts['br_bytes'] / 2**20:.1f} MiB as Brotli, {facts['gz_bytes'] / 2**20:.1f} MiB as gzip "
        f"({facts['written']} compressed, {facts['cached']} from the cache)"
    )


if __name__ == "__main__":
    main()
