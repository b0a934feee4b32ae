"""A stand-in engine bundle for developing and testing the desk before the real one exists.

The real bundle (engine/ compiled by the pinned runtime, with its manifest) is
built by `make build-engine` into build/engine/. Until it is there, the desk's
tests need *a* zip of the same sources with a manifest beside it that carries
the zip's sha256, so the worker's integrity check has something to check.
This is never published: it holds sources only, no .pyc.
"""

import hashlib
import json
import os
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ZIP_NAME = "fundbook-engine.zip"
EPOCH = (1980, 1, 1, 0, 0, 0)


def _sources(root: Path):
    engine = root / "engine"
    for path in sorted(engine.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_dir() or "__pycache__" in rel or rel.startswith("engine/cli/") or path.suffix == ".pyc":
            continue
        yield rel, path.read_bytes()


def build(out: Path, root: Path = ROOT) -> dict:
    """Write <out>/fundbook-engine.zip and <out>/manifest.json; return the manifest."""
    out.mkdir(parents=True, exist_ok=True)
    files = {}
    tmp = out / (ZIP_NAME + ".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for rel, data in _sources(root):
            info = zipfile.ZipInfo(rel, EPOCH)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
            files[rel] = hashlib.sha256(data).hexdigest()
    digest = hashlib.sha256(tmp.read_bytes()).hexdigest()
    os.replace(tmp, out / ZIP_NAME)
    manifest = {"format": 1, "kind": "development stand-in (sources only)",
                "bundle": {"path": ZIP_NAME, "sha256": digest}, "files": files}
    (out / "manifest.json").write_text(json.dumps(manifest, sort_keys=True, indent=2) + "\n")
    return manifest


if __name__ == "__main__":
    import sys
    print(build(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "desk" / "dev-engine")["bundle"])
