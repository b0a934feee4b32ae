"""`--env-file PATH`: provider keys from a file the command line reads when told to, never from a file it finds.

A strict parser: one `KEY=VALUE` a line (no spaces around `=`, no quotes, no `export`, no interpolation),
blank lines and lines starting `#` skipped, a key at most once, UTF-8, at most 64 KiB. Only the variables the
HTTP providers read from the environment they are given may be set (`ALLOWED`): the values go into that
environment (the provider's client and the credential check) and nowhere else -- never os.environ, a record,
a journal, a ledger, a log or a message. A bad line is one InputError naming the file and the line number,
never the line's text (it may hold a key).
"""

import re

from ._errors import InputError

ALLOWED = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "FUNDBOOK_OPENAI_COMPATIBLE_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_BASE_URL",
    "FUNDBOOK_OPENAI_BASE_URL",
)
MAX_BYTES = 64 * 1024
LINE = re.compile(r"([A-Z_][A-Z0-9_]{0,127})=([!#-&(-~]{1,4096})")  # printable ASCII but space and quotes


def read_env_file(path) -> dict:
    """{variable: value} of the file at `path`, checked line by line."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except OSError as exc:
        raise InputError(f"--env-file {path}: cannot read it ({exc.strerror})") from None
    if len(data) > MAX_BYTES:
        raise InputError(f"--env-file {path}: larger than {MAX_BYTES} bytes (an env file holds a few keys)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(f"--env-file {path}: line {line}: not UTF-8 text") from None
    out = {}
    for number, line in enumerate(text.split("\n"), 1):
        line = line.removesuffix("\r")
        if not line.strip() or line.startswith("#"):
            continue
        m = LINE.fullmatch(line)
        if not m:
            raise InputError(
                f"--env-file {path}: line {number}: expected KEY=VALUE (a name of capitals, digits and "
                f"'_', then printable ASCII without spaces or quotes)"
            )
        key, value = m.groups()
        if key not in ALLOWED:
            raise InputError(
                f"--env-file {path}: line {number}: {key} is not a provider variable (expected one of "
                f"{', '.join(ALLOWED)})"
            )
        if key in out:
            raise InputError(f"--env-file {path}: line {number}: {key} is set twice")
        out[key] = value
    return out


def environment(path, base=None) -> dict:
    """The environment a provider reads: `base` (default os.environ) with the file's variables over it; None
    without a file (the provider reads os.environ itself)."""
    import os

    if path is None:
        return None
    return dict(os.environ if base is None else base, **read_env_file(path))
