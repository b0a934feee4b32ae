"""A local model's file and name: the file's sha256, a chat template fundbook supplies for a GGUF that ships
none, a packaged model's file, and the model id an attempt runs under.
"""

import hashlib
import os
import re

from ._errors import InputError


def file_sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


MAX_TEMPLATE_BYTES = 64 * 1024  # a chat template file: Jinja text, far smaller than this


def _template_file(path):
    """(text, source) of a chat template fundbook supplies for a GGUF that ships none; a one-line InputError."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_TEMPLATE_BYTES + 1)
        text = data.decode("utf-8")
    except OSError as exc:
        raise InputError(f"--chat-template {path}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise InputError(f"--chat-template {path}: not UTF-8 text") from None
    if not text.strip() or len(data) > MAX_TEMPLATE_BYTES:
        raise InputError(
            f"--chat-template {path}: expected a Jinja chat template of at most {MAX_TEMPLATE_BYTES} bytes"
        )
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    shown = (
        os.path.relpath(os.path.abspath(path), here)
        if os.path.abspath(path).startswith(here + os.sep)
        else os.path.basename(path)
    )
    return text, f"fundbook {shown} (the GGUF ships no chat template)"


def packaged_model(name=None) -> str:
    """The GGUF file of a packaged model (launchers/_packaged.py; default SmolLM2-135M-Instruct)."""
    from . import _packaged

    return _packaged.model_path(name or _packaged.DEFAULT)


# A local model's id is what the operator (or the file's name) says: it lands in claims, records, page titles and
# table cells, so it is a plain token -- no control character, no markup, no space.
MODEL_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/+@-]{0,159}", re.ASCII)


def check_model_id(model, where="--model"):
    if not isinstance(model, str) or not MODEL_ID.fullmatch(model):
        raise InputError(
            f"{where} {str(model)[:80]!r}: expected a model id of letters, digits and . _ : / + @ - "
            f"(at most 160 characters, starting with a letter or digit)"
        )
    return model


def local_model_id(model, built, model_file):
    """The id a local attempt runs under: --model when given (a plain token), else the file's name."""
    if model is None and built.model_id is None:
        raise InputError(f"--model-file {model_file}: its name is not a model id: name the model with --model")
    return check_model_id(model) if model is not None else built.model_id


def default_model_id(identity):
    """The file's name without .gguf, when that is a model id (else None: the operator names it with --model)."""
    name = identity["name"]
    name = name[:-5] if name.lower().endswith(".gguf") else name
    return name if MODEL_ID.fullmatch(name) else None
