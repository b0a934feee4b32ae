"""The world commitment: how a run binds itself to a world it does not show.

A desk sees the receipts of its run, so their hashes must not commit to
anything it may not know yet. The chain therefore starts from a salted
commitment to the world instead of the world's hash:

    world_commitment = sha256(canonical_json({"fixture_sha256": F, "salt": S}))

With a secret salt S (32 random bytes, hex) the commitment tells nothing about
the world; the FINAL receipt reveals S and F, so after the run anyone holding
the world can recompute F, then the commitment, then every receipt hash.

Published fixtures and practice sessions hide nothing (their worlds are
public), so they use the public salt derived from F, which keeps their
records reproducible byte for byte. A desk runtime history gets a fresh
secret salt at `init` unless one is given (to reproduce a recorded attempt).
"""

import re

from ._canon import content_sha256, sha256_hex
from ._errors import InputError

_SALT = re.compile(r"[0-9a-f]{64}")


def public_salt(fixture_sha256: str) -> str:
    """The salt of runs whose world is public: derived, so anyone can recompute it."""
    return sha256_hex(b"fundbook/public-salt/" + fixture_sha256.encode("ascii"))


def new_salt() -> str:
    """A secret salt for a history whose world the desk must not learn early."""
    import os  # host-side only: the runtime's init, never the graded path
    return os.urandom(32).hex()


def check_salt(salt, where="salt") -> str:
    if not isinstance(salt, str) or not _SALT.fullmatch(salt):
        raise InputError(f"{where}: expected 64 lowercase hexadecimal characters (32 bytes)")
    return salt


def world_commitment(fixture_sha256: str, salt: str) -> str:
    return content_sha256({"fixture_sha256": fixture_sha256, "salt": salt})
