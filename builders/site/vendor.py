"""Files copied into the built site from outside docs_dir: the Pyodide runtime
and chart libraries from node_modules, the engine bundle from build/engine,
the published records from runs/ and the OG cards from build/og. Copied, never
linked to a CDN: the site must work with the network cut."""

from pathlib import Path

VEGA = [
    ("vega/build/vega.min.js", "vega.min.js"),
    ("vega-lite/build/vega-lite.min.js", "vega-lite.min.js"),
    ("vega-embed/build/vega-embed.min.js", "vega-embed.min.js"),
    ("vega/LICENSE", "LICENSE-vega.txt"),
    ("vega-lite/LICENSE", "LICENSE-vega-lite.txt"),
    ("vega-embed/LICENSE", "LICENSE-vega-embed.txt"),
]
PYODIDE_SKIP = {".map", ".d.ts", ".html", ".md"}


def _files(root: Path):
    return sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith("."))


def vendored(root: Path, node_modules: Path, engine_dir: Path, og_dir: Path) -> tuple[list, list]:
    """([(site path, absolute source)], [missing description]) for everything copied in."""
    out, missing = [], []
    pyodide = node_modules / "pyodide"
    if pyodide.is_dir():
        for p in _files(pyodide):
            if not any(p.name.endswith(s) for s in PYODIDE_SKIP):
                out.append((f"vendor/pyodide/{p.relative_to(pyodide).as_posix()}", p))
    else:
        missing.append(f"{pyodide}: the Pyodide runtime (run `npm ci`)")
    for src, name in VEGA:
        p = node_modules / src
        if p.is_file():
            out.append((f"vendor/vega/{name}", p))
        else:
            missing.append(f"{p}: chart library (run `npm ci`)")
    if engine_dir.is_dir() and any(engine_dir.iterdir()):
        out.extend((f"engine/{p.relative_to(engine_dir).as_posix()}", p) for p in _files(engine_dir))
    else:
        missing.append(f"{engine_dir}: the engine bundle (run `make build-engine`)")
    if og_dir.is_dir():
        out.extend((f"og/{p.relative_to(og_dir).as_posix()}", p) for p in _files(og_dir) if p.suffix == ".png")
    return out, missing
