"""The task's version: the engine bundle's sha256 (the bundle every import re-executes through)."""

import engine

from builders import BuildError
from builders.bundle import verify_bundle


def task_version(bundle_dir="build/engine"):
    """-> (version, bundle sha256): "<engine version>+<first 16 hex of the bundle>"; ValueError without a bundle."""
    try:
        verified = verify_bundle(bundle_dir)
    except BuildError as exc:
        raise ValueError(f"{exc.format_message()} (the task needs the engine bundle: run `make build-engine`)")
    sha = verified["bundle_sha256"]
    return f"{engine.ENGINE_VERSION}+{sha[:16]}", sha
