"""Credentials, checked before a claim is consumed (or a sandbox created): present, and of the right shape.

Nothing here contacts a service, and no credential value is ever recorded or
printed. It mirrors where each SDK looks, in its order:

- tinker: `TINKER_API_KEY` (a key starts `tml-`; a JWT starts `eyJ`), else
  `TINKER_CREDENTIAL_CMD` (a command the SDK runs for a fresh credential),
  else the key stored by `tinker auth login` (~/.tinker/credentials.json);
- modal: `MODAL_TOKEN_ID` and `MODAL_TOKEN_SECRET` (both; `ak-...` and
  `as-...`), else the OAuth variables (`MODAL_OAUTH_REFRESH_TOKEN`,
  `MODAL_OAUTH_CLIENT_ID` and `MODAL_OAUTH_CLIENT_SECRET` or
  `MODAL_OAUTH_JWT_KEY`), else the active profile of `~/.modal.toml`
  (`MODAL_CONFIG_PATH`, `MODAL_PROFILE`) with its token id and secret.

A missing or malformed credential is an InputError in one line naming the
variable or file: a paid attempt that would fail at its first call is refused
while refusing costs nothing.
"""

import os
import re
import tomllib

from ._errors import InputError
from ._jsonfile import read_bytes

TINKER_KEY = re.compile(r"(tml-|eyJ)[A-Za-z0-9_.\-]{8,4096}")
MODAL_ID = re.compile(r"ak-[A-Za-z0-9]{8,128}")
MODAL_SECRET = re.compile(r"as-[A-Za-z0-9]{8,128}")


def home(environ=None):
    environ = os.environ if environ is None else environ
    return environ.get("HOME") or os.path.expanduser("~")


def tinker_stored_path(environ=None):
    return os.path.join(home(environ), ".tinker", "credentials.json")


def modal_config_path(environ=None):
    environ = os.environ if environ is None else environ
    return environ.get("MODAL_CONFIG_PATH") or os.path.join(home(environ), ".modal.toml")


def check_tinker(environ=None) -> str:
    """Where the tinker SDK will find its credential ("TINKER_API_KEY", ...); InputError if nowhere."""
    environ = os.environ if environ is None else environ
    key = environ.get("TINKER_API_KEY")
    if key:
        if not TINKER_KEY.fullmatch(key):
            raise InputError(
                "TINKER_API_KEY: not a tinker key (expected 'tml-' followed by letters and digits, or a "
                "JWT starting 'eyJ')"
            )
        return "TINKER_API_KEY"
    if (environ.get("TINKER_CREDENTIAL_CMD") or "").strip():
        return "TINKER_CREDENTIAL_CMD"
    stored = tinker_stored_path(environ)
    if os.path.isfile(stored) and os.path.getsize(stored) > 0:
        return stored
    raise InputError(
        "TINKER_API_KEY: not set, nor TINKER_CREDENTIAL_CMD, nor a key stored by `tinker auth login` "
        f"({stored}): the tinker sampler has no credential (checked before the claim is spent)"
    )


def _token_pair(token_id, secret, where):
    if not token_id or not secret:
        raise InputError(f"{where}: set both the modal token id and its secret (one of them is missing)")
    if not MODAL_ID.fullmatch(token_id):
        raise InputError(f"{where}: the modal token id is not of the shape 'ak-' followed by letters and digits")
    if not MODAL_SECRET.fullmatch(secret):
        raise InputError(f"{where}: the modal token secret is not of the shape 'as-' followed by letters and digits")


def check_modal(environ=None) -> str:
    """Where the modal SDK will find its credentials; InputError if nowhere or malformed."""
    environ = os.environ if environ is None else environ
    token_id, secret = environ.get("MODAL_TOKEN_ID"), environ.get("MODAL_TOKEN_SECRET")
    oauth = [environ.get(k) for k in ("MODAL_OAUTH_REFRESH_TOKEN", "MODAL_OAUTH_CLIENT_ID")]
    oauth_secret = environ.get("MODAL_OAUTH_CLIENT_SECRET") or environ.get("MODAL_OAUTH_JWT_KEY")
    if token_id or secret:
        if any(oauth) or oauth_secret:
            raise InputError("MODAL_TOKEN_ID/MODAL_OAUTH_*: modal token and OAuth credentials cannot both be set")
        _token_pair(token_id, secret, "MODAL_TOKEN_ID/MODAL_TOKEN_SECRET")
        return "MODAL_TOKEN_ID"
    if any(oauth) or oauth_secret:
        if not all(oauth) or not oauth_secret:
            raise InputError(
                "MODAL_OAUTH_*: incomplete (the refresh token, the client id and a client secret or JWT "
                "key are all needed)"
            )
        return "MODAL_OAUTH_REFRESH_TOKEN"
    path = modal_config_path(environ)
    if not os.path.exists(path):
        raise InputError(
            f"MODAL_TOKEN_ID: not set, and no {path} (`modal token set`): the modal sandbox has no "
            f"credentials (checked before anything is spent)"
        )
    try:
        config = tomllib.loads(read_bytes(path, "option", 1 << 20).decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"{path}: not a modal configuration file ({' '.join(str(exc).split())[:120]})") from None
    profiles = {k: v for k, v in config.items() if isinstance(v, dict)}
    name = environ.get("MODAL_PROFILE") or next((k for k, v in profiles.items() if v.get("active") is True), "default")
    profile = profiles.get(name)
    if profile is None:
        raise InputError(f"{path}: no profile [{name}] (MODAL_PROFILE or the active one)")
    token_id, secret = profile.get("token_id"), profile.get("token_secret")
    _token_pair(
        token_id if isinstance(token_id, str) else None, secret if isinstance(secret, str) else None, f"{path} [{name}]"
    )
    return path


def check_api(sampler_name, environ=None):
    """An HTTP API sampler's key: OPENAI_API_KEY ('sk-...'), ANTHROPIC_API_KEY ('sk-ant-...'), or the optional
    FUNDBOOK_OPENAI_COMPATIBLE_API_KEY of an OpenAI-compatible server (printable, no spaces). Its variable's name,
    or None for a server without a key."""
    from . import _sampler_anthropic, _sampler_api, _sampler_openai, _sampler_openai_compatible

    environ = os.environ if environ is None else environ
    mod = {"openai": _sampler_openai, "anthropic": _sampler_anthropic, "openai-compatible": _sampler_openai_compatible}[
        sampler_name
    ]
    value = _sampler_api.check_key(
        environ,
        mod.KEY_VARIABLE,
        sampler_name,
        getattr(mod, "KEY_SHAPE", None),
        required=sampler_name != "openai-compatible",
    )
    return mod.KEY_VARIABLE if value else None


def check(sampler_name, sandbox_name, environ=None) -> dict:
    """Every credential the attempt will need: {"sampler": source, "sandbox": source} (sources, never values)."""
    found = {}
    if sampler_name == "tinker":
        found["sampler"] = check_tinker(environ)
    if sampler_name in ("openai", "anthropic", "openai-compatible"):
        found["sampler"] = check_api(sampler_name, environ)
    if sandbox_name == "modal":
        found["sandbox"] = check_modal(environ)
    return found
