"""The published JSON Schemas (builders/schemas/, copied to runs/schemas/)
and validation against them before anything is written."""

import json
import os

import jsonschema

from .._errors import BuildError
from .._files import ROOT

SCHEMA_DIR = os.path.join(ROOT, "builders", "schemas")
NAMES = ("run", "index", "trace", "receipts", "input", "manifest", "provenance")


def schema_files() -> dict:
    """{"run.schema.json": bytes, ...}"""
    out = {}
    for name in NAMES:
        with open(os.path.join(SCHEMA_DIR, f"{name}.schema.json"), "rb") as fh:
            out[f"{name}.schema.json"] = fh.read()
    return out


_cache = {}


def validate(name, doc, label):
    if name not in _cache:
        schema = json.loads(schema_files()[f"{name}.schema.json"])
        jsonschema.Draft202012Validator.check_schema(schema)
        _cache[name] = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(_cache[name].iter_errors(doc))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        raise BuildError(f"{label}: {where}: {error.message} (schema {name}.schema.json)")
