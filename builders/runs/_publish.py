"""Writing runs/: everything goes to a staging directory beside it first; only
when every file is written and checked are the pieces renamed into place, the
index last. runs/attempts/ (the launchers') is never touched."""

import os
import shutil

from .._files import replace_dir, staging_dir, write_bytes

SUBDIRS = ("receipts", "traces", "inputs", "schemas", "engine")
TOP_FILES = ("register.parquet", "days.parquet")
INDEX = "index.json"


def stage(out) -> str:
    return staging_dir(out)


def put(staged, relpath, data: bytes):
    write_bytes(os.path.join(staged, relpath), data)


def swap_in(staged, out, run_ids):
    """Move a complete staging tree into `out`; stale run records are removed."""
    os.makedirs(out, exist_ok=True)
    for sub in SUBDIRS:
        if os.path.isdir(os.path.join(staged, sub)):
            replace_dir(os.path.join(staged, sub), os.path.join(out, sub))
    keep = {f"{rid}.json" for rid in run_ids} | {INDEX}
    for name in sorted(os.listdir(staged)):
        if name != INDEX and os.path.isfile(os.path.join(staged, name)):
            os.replace(os.path.join(staged, name), os.path.join(out, name))
    for name in os.listdir(out):
        if name.endswith(".json") and name not in keep and os.path.isfile(os.path.join(out, name)):
            os.remove(os.path.join(out, name))
    os.replace(os.path.join(staged, INDEX), os.path.join(out, INDEX))
    shutil.rmtree(staged)


def discard(staged):
    shutil.rmtree(staged, ignore_errors=True)
