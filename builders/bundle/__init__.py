"""build-engine: compile the engine under the pinned Pyodide into one
deterministic bundle, with its manifest and provenance.

    python -m builders.bundle build [--out build/engine]

Writes fundbook-engine.zip (sources beside unchecked-hash .pyc, manifest.json
inside), manifest.json and provenance.json. See `_build.py`.
"""

from ._build import BUNDLE, MANIFEST, PROVENANCE, build_engine, engine_sources, read_bundle, verify_bundle

__all__ = ["BUNDLE", "MANIFEST", "PROVENANCE", "build_engine", "engine_sources", "read_bundle", "verify_bundle"]
