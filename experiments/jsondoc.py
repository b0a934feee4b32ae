"""Reading the experiment layer's JSON documents and JSONL lines: strict, and
one line naming the file on anything hostile.

The same refusals as the engine's reader (engine._jsonin) -- text that is not
UTF-8, nesting deeper than MAX_DEPTH (checked before parsing, so the parser
never recurses into a hostile document), NaN and Infinity, a name given twice
in one object (two readers would see two documents), integers outside
+-(2^53-1) and lone surrogates -- except that floats are read: a sweep
manifest records its compute seconds. Hashed content still refuses floats
where it is checked (a comparison spec). `read_doc` reads a JSON object from a
file (within its limit, experiments/files.py); `pretty` is the bytes the layer
writes a document as.
"""

import json

from engine import MAX_DEPTH, MAX_SAFE_INTEGER
from engine import depth_ok as _depth_ok, unique_object as _object

from .errors import ExperimentError
from .files import read_file


def _constant(name):
    raise ValueError(f"{name} is not a JSON number")


def _check_values(value, where):
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, int) and not isinstance(v, bool) and not -MAX_SAFE_INTEGER <= v <= MAX_SAFE_INTEGER:
            raise ExperimentError(f"{where}: an integer outside +-(2^53-1)")
        elif isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                raise ExperimentError(f"{where}: a lone surrogate is not Unicode text") from None


def loads(data, where, what):
    """The JSON value of `data` (bytes or str); ExperimentError naming `where` and `what` otherwise."""
    if isinstance(data, (bytes, bytearray)):
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            raise ExperimentError(f"{where}: not UTF-8 text ({what} expected)") from None
    if not _depth_ok(data):
        raise ExperimentError(f"{where}: JSON nested deeper than {MAX_DEPTH} levels ({what} expected)")
    try:
        value = json.loads(data, parse_constant=_constant, object_pairs_hook=_object)
    except json.JSONDecodeError as exc:
        raise ExperimentError(
            f"{where}: not valid JSON at line {exc.lineno} column {exc.colno} ({exc.msg}; {what} expected)"
        ) from None
    except (ValueError, RecursionError) as exc:
        detail = str(exc)
        if "digits" in detail:  # CPython's int_max_str_digits guard
            detail = "an integer far outside +-(2^53-1)"
        raise ExperimentError(f"{where}: not valid JSON ({detail[:80]}; {what} expected)") from None
    _check_values(value, where)
    return value


def pretty(doc) -> bytes:
    return (json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=True, allow_nan=False) + "\n").encode()


def read_doc(path, what):
    data = read_file(path, what)
    doc = loads(data, path, what)
    if not isinstance(doc, dict):
        raise ExperimentError(f"{path}: expected a JSON object ({what})")
    return doc, data
