"""What the three HTTP API samplers share (openai, anthropic, openai-compatible).

- The request: the compact prompt (worker/prompt.py, one call a checkpoint),
  and the answer's JSON Schema built from the day's desk view by
  launchers/_grammar.py, made portable for the providers' strict modes
  (`portable_schema`). The prompt tokens reserved before a call are the
  prompt's UTF-8 bytes plus a per-message allowance: no tokenizer is at
  hand, and a token is never shorter than a byte, so the reservation never
  understates; the charge comes from the provider's own usage counts.
- The key: read from one environment variable only, checked for presence and
  shape before a claim is consumed (`check_key`), never recorded or printed.
- The base URL: recorded without credentials, query or fragment (`recorded_url`).
- The errors, mapped once: a capacity refusal (HTTP 429, 503, 529, or an
  "overloaded" error) is a CapacityError the controller backs off on its
  recorded schedule; a timeout a CallTimeout; anything else one line. The SDKs'
  own retries are off (max_retries=0): every wait is the controller's, journaled.
- A preflight before the claim is consumed (`preflight`): the provider's model
  endpoint, which costs nothing, so a refused key or an unknown model is one
  line and nothing is spent.
"""

import hashlib
import importlib.metadata
import re
import urllib.parse

from engine import canonical_json

from . import _grammar
from ._errors import CallTimeout, CapacityError, InputError, SamplerError
from ._provider import Provider
from ._sampling import Prepared, request_sha256
from .worker import prompt

CAPACITY_STATUS = (429, 503, 529)  # rate limited, unavailable, overloaded
MESSAGE_TOKENS = 16  # per message: role and template markers (a generous allowance)
SCHEMA_VERSION = "fundbook.portable-schema/2"  # bump with any change to portable_schema (2: from grammar 2)
SHAPE_ERRORS = (AttributeError, IndexError, KeyError, TypeError, ValueError)  # reading an answer of another shape
KEY_TEXT = re.compile(r"[\x21-\x7e]{1,4096}")  # printable ASCII, no space: what an HTTP header can carry


def reserve_tokens(messages) -> int:
    """An upper bound on a conversation's prompt tokens: its UTF-8 bytes plus MESSAGE_TOKENS a message."""
    return sum(len(m["content"].encode("utf-8")) + MESSAGE_TOKENS for m in messages)


def recorded_url(url, where) -> str:
    """scheme://host[:port]/path of an http(s) URL: no user, password, query or fragment (never recorded)."""
    if not isinstance(url, str) or not url or len(url) > 2048 or any(c in url for c in "\r\n\t "):
        raise InputError(f"{where}: expected an http(s) URL")
    try:
        parts = urllib.parse.urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise InputError(f"{where}: not a URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InputError(f"{where}: expected an http(s) URL with a host, got {parts.scheme or 'no scheme'}://…")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}{f':{port}' if port else ''}{parts.path.rstrip('/')}"


def check_key(environ, var, what, shape=None, required=True):
    """The key in `var`, present and well formed (`shape`: (regex, description)); None when optional and unset.
    A one-line InputError naming the variable, never its value."""
    value = environ.get(var)
    if not value:
        if not required:
            return None
        raise InputError(f"{var}: not set: the {what} sampler has no key (checked before the claim is spent)")
    if not KEY_TEXT.fullmatch(value):
        raise InputError(f"{var}: malformed (expected printable ASCII without spaces, at most 4096 characters)")
    if shape is not None and not shape[0].fullmatch(value):
        raise InputError(f"{var}: not {shape[1]}")
    return value


def sdk_version(dist) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def sdk(name):
    try:
        return __import__(name)
    except ImportError as exc:
        raise InputError(f"the {name} SDK is not installed ({exc}): `make venv`") from None


# -- the schema ------------------------------------------------------------------------------------------------


def _typed_const(value):
    if isinstance(value, bool):
        return {"type": "boolean", "enum": [value]}
    if isinstance(value, int):
        return {"type": "integer", "enum": [value]}
    if isinstance(value, str):
        return {"type": "string", "enum": [value]}
    if value == []:
        return {"type": "array", "items": {"type": "string"}, "maxItems": 0}
    raise ValueError(f"no portable form for the constant {value!r}")


def _typed_enum(values):
    kinds = {type(v) for v in values}
    if kinds == {str}:
        return {"type": "string", "enum": list(values)}
    if kinds == {int}:
        return {"type": "integer", "enum": list(values)}
    raise ValueError(f"no portable form for the enum {values!r}")


def _is_prefix_array(node):
    return isinstance(node, dict) and node.get("type") == "array" and "prefixItems" in node


def _collapse_arrays(branches):
    """anyOf of `[]` and fixed-length arrays (`prefixItems`, the grammar's action lists a1..aN): one array of at
    most N items whose item is any variant of the longest list, its `id` any of a1..aN. Ids are then no longer
    unique by construction: the worker and the engine check them, as they check any batch."""
    longest = max((b for b in branches if _is_prefix_array(b)), key=lambda b: len(b["prefixItems"]))
    n = len(longest["prefixItems"])
    ids = [f"a{i + 1}" for i in range(n)]
    first = longest["prefixItems"][0]
    variants = first["anyOf"] if "anyOf" in first else [first]
    items = []
    for v in variants:
        v = dict(v, properties=dict(v["properties"], id={"enum": ids}))
        items.append(portable_schema(v, top=False))
    return {"type": "array", "items": items[0] if len(items) == 1 else {"anyOf": items}, "maxItems": n}


def portable_schema(node, top=True):
    """The grammar's JSON Schema in the subset the providers' strict modes accept (OpenAI `strict: true`,
    Anthropic's output format): every node typed, constants as one-value enums, no prefixItems, no `minimum`
    (integer bounds are the engine's to check), objects closed with every property required. Pure."""
    if isinstance(node, list):
        return [portable_schema(n, top=False) for n in node]
    if not isinstance(node, dict):
        return node
    if "const" in node:
        return _typed_const(node["const"])
    if "enum" in node and "type" not in node:
        return _typed_enum(node["enum"])
    if "anyOf" in node:
        branches = node["anyOf"]
        if any(_is_prefix_array(b) for b in branches) and all(
            _is_prefix_array(b) or b == {"const": []} for b in branches
        ):
            return _collapse_arrays(branches)
        return {"anyOf": [portable_schema(b, top=False) for b in branches]}
    out = {}
    for key, value in node.items():
        if key in ("$schema", "minimum", "minItems") or (key == "title" and not top):
            continue
        if key == "properties":
            out[key] = {k: portable_schema(v, top=False) for k, v in value.items()}
        elif key == "items" and value is False:
            continue
        else:
            out[key] = portable_schema(value, top=False)
    return out


def answer_schema(messages):
    """(grammar schema, portable schema) of a compact conversation's desk view, or (None, None)."""
    view = prompt.view_in(messages)
    if view is None:
        return None, None
    try:
        schema = _grammar.batch_schema(view)
        return schema, portable_schema(schema)
    except ValueError:
        return None, None


def prompt_cache_key(messages) -> str:
    """The provider's prompt-cache key: the system prompt's sha256 (a prompt's calls share it; never secret)."""
    system = next((m["content"] for m in messages if m.get("role") == "system"), "")
    return "fundbook-" + hashlib.sha256(system.encode("utf-8")).hexdigest()[:24]


def schema_name(schema) -> str:
    return "fundbook_batch_" + _grammar.schema_sha256(schema)[:12]


def split_system(messages):
    """(system text, the other messages): the system prompt apart, as Anthropic's Messages API takes it."""
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    return system, [{"role": m["role"], "content": m["content"]} for m in messages if m["role"] != "system"]


# -- the sampler ------------------------------------------------------------------------------------------------


def one_line(exc, limit=240) -> str:
    text = " ".join(str(exc).split())
    return text[:limit]


KEY_LIKE = re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_*-]{6,}")  # what a provider's error may echo of a key


def without_key(text, secret) -> str:
    """`text` with the key itself replaced by [key] (a server's answer that echoes it keeps everything else)."""
    return text.replace(secret, "[key]") if secret and len(secret) >= 8 else text


def redact(text, secret) -> str:
    """`text` with the key (`secret`) and anything shaped like a key replaced by [key]: a provider's error that
    echoes the key never reaches a message, the ledger or a record."""
    return KEY_LIKE.sub("[key]", without_key(text, secret))


def client_key(client):
    """The key a client sends (None without one); only ever used to keep it out of what is written."""
    key = getattr(client, "api_key", None)
    return key if isinstance(key, str) else None


class ApiSampler:
    """The seam: prepare (no network) and sample (one HTTP request under the call's deadline)."""

    provider = None

    def __init__(self, model_id, sampling, client, config):
        self.model_id = model_id
        self.sampling = dict(sampling)
        self.client = client
        self.config = dict(config)  # base_url (as recorded), key_variable, sdk version
        self.reported = []  # the model ids the provider's answers named, in order of first sight

    def prepare(self, messages, max_tokens) -> Prepared:
        schema, portable = answer_schema(messages)
        sha = request_sha256(self.model_id, messages, max_tokens, self.sampling)
        retry = any(m.get("role") == "assistant" for m in messages)
        return Prepared(
            sha,
            reserve_tokens(messages),
            max_tokens,
            messages,
            payload={"schema": schema, "portable": portable, "retry": retry},
        )

    def _note_model(self, reported):
        if isinstance(reported, str) and reported and reported not in self.reported:
            self.reported.append(reported[:200])

    def sample(self, prepared, deadline_s):
        if prepared.payload["schema"] is None:
            raise SamplerError(
                f"{self.provider}: the request holds no desk view to build the answer's schema from "
                f"(the worker must use the {prompt.PROMPT_VERSION} prompt)"
            )
        module = self.sdk
        secret = client_key(self.client)
        try:
            completion = checked(self.provider, self.request(prepared, max(0.001, deadline_s)))
            completion.text = without_key(completion.text, secret)  # a server that echoes the key
            return completion
        except SHAPE_ERRORS as exc:
            # The SDKs build answers without validating them: a server that answers 200 with another shape
            # (no choices, no usage, an HTML page, a number for the text) fails here, not in the ledger.
            raise SamplerError(
                f"{self.provider}: the answer is not the API's shape ({type(exc).__name__}: "
                f"{one_line(redact(str(exc), secret), 160)})"
            ) from None
        except module.APITimeoutError:
            raise CallTimeout(f"{self.provider}: no answer within {deadline_s:.0f} s") from None
        except module.APIStatusError as exc:
            raise classify(self.provider, exc, secret) from None
        except module.APIConnectionError as exc:
            raise SamplerError(
                f"{self.provider}: cannot reach {self.config['base_url']} ({one_line(redact(str(exc), secret))})"
            ) from None
        except module.APIError as exc:  # the SDK's others: an answer it could not read (APIResponseValidationError)
            raise SamplerError(
                f"{self.provider}: {type(exc).__name__} ({one_line(redact(str(exc), secret), 160)})"
            ) from None

    def service_info(self) -> dict:
        return dict(self.config, provider=self.provider, model_reported=list(self.reported))


MAX_ANSWER_TOKENS = 10**9  # a usage count above this is not a count (the ledger's figures stay sane)
MAX_ANSWER_CHARS = 1 << 20  # a day's batch is a few KiB: a larger answer would only bloat the journal and record


def checked(provider, completion):
    """The completion as the ledger may book it: text a string, every token count a whole number in
    0..MAX_ANSWER_TOKENS, cached prompt tokens at most the prompt's. A SamplerError otherwise: the call then ends
    call_failed and its reservation stays an unresolved liability (what was spent is not known)."""
    if not isinstance(completion.text, str):
        raise SamplerError(f"{provider}: the answer's text is {type(completion.text).__name__}, not a string")
    if len(completion.text) > MAX_ANSWER_CHARS:
        raise SamplerError(
            f"{provider}: the answer's text is {len(completion.text)} characters, over the "
            f"{MAX_ANSWER_CHARS} no desk answer comes near (not written to the record)"
        )
    counts = {
        "tokens_in": completion.tokens_in,
        "tokens_out": completion.tokens_out,
        "cached tokens": completion.cache_hit_tokens,
    }
    for name, value in counts.items():
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_ANSWER_TOKENS:
            raise SamplerError(
                f"{provider}: the answer's usage {name} is {str(value)[:40]!r}, not a count in 0..{MAX_ANSWER_TOKENS}"
            )
    if completion.cache_hit_tokens > completion.tokens_in:
        raise SamplerError(f"{provider}: the answer's usage has more cached tokens than prompt tokens")
    reasoning = completion.reasoning_tokens  # reported apart (seed 002), part of the output it is billed in
    if reasoning is not None and (
        isinstance(reasoning, bool) or not isinstance(reasoning, int) or not 0 <= reasoning <= completion.tokens_out
    ):
        completion.reasoning_tokens = None  # a breakdown that is not one of the output is not recorded; the bill stands
    if not isinstance(completion.stop_reason, str) or len(completion.stop_reason) > 64:
        completion.stop_reason = str(completion.stop_reason)[:64]
    return completion


def error_type(exc):
    """The error's type as the provider sent it, whichever way its SDK hands it over: anthropic keeps the whole
    JSON (`body` = {"type": "error", "error": {"type": ...}}); openai unwraps it (`body` is the inner error object,
    {"type": ..., "message": ...}, and `exc.type` repeats it); a bare server may send {"type": ...} alone."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, dict) and isinstance(inner.get("type"), str):
            return inner["type"]
        if isinstance(body.get("type"), str) and body["type"] != "error":
            return body["type"]
    kind = getattr(exc, "type", None)
    return kind if isinstance(kind, str) else None


def classify(provider, exc, secret=None):
    """A provider's HTTP error as the controller's: capacity (backed off), or a failed call (one line, the key
    and anything shaped like one redacted)."""
    status = getattr(exc, "status_code", None)
    kind = error_type(exc)
    kind = one_line(kind, 60) if isinstance(kind, str) else None  # a server's words: one line, bounded
    said = one_line(redact(str(getattr(exc, "message", exc)), secret), 160)  # redacted whole, then cut
    text = redact(f"{provider}: HTTP {status}{f' {kind}' if kind else ''} ({said})", secret)
    if status in CAPACITY_STATUS or kind in ("overloaded_error", "rate_limit_error"):
        return CapacityError(text)
    if status in (401, 403):
        return SamplerError(f"{text}: the key was refused")
    return SamplerError(text)


def preflight_error(provider, exc, module, key_variable, model, base_url, secret=None):
    """A preflight's failure as one InputError line (nothing has been consumed)."""
    if isinstance(exc, module.APITimeoutError):
        return InputError(f"{provider}: {base_url} did not answer the preflight in time; nothing was consumed")
    if isinstance(exc, module.APIConnectionError):
        return InputError(
            f"{provider}: cannot reach {base_url} ({one_line(redact(str(exc), secret), 160)}); nothing was consumed"
        )
    status = getattr(exc, "status_code", None)
    if status in (401, 403):
        who = key_variable or "the server"
        return InputError(f"{who}: the key was refused by {base_url} (HTTP {status}); nothing was consumed")
    if status == 404:
        return InputError(f"--model {model}: {base_url} does not serve this model (HTTP 404); nothing was consumed")
    return InputError(
        f"{provider}: the preflight at {base_url} failed ({classify(provider, exc, secret).format_message()}); "
        f"nothing was consumed"
    )


def settings_text(sampling) -> str:
    return canonical_json(sampling).decode("utf-8")


class ApiProvider(Provider):
    """An HTTP API sampler's provider. Checked when built, before a claim is consumed: the settings, the cache,
    the key (present and well formed), the base URL, and -- unless `offline` (a freeze: settings only) -- a free
    preflight at the provider (the key accepted, the model served). Every call goes through the decision cache
    (`cache_path`, or a store in memory exported beside the record), so `--replay-of` reproduces the attempt.
    A subclass names its module's `settings`, `config`, `client` and `preflight`, and its adapter class."""

    DEFAULT_TEMPERATURE = 0
    API = True
    ADAPTER = None
    # What an attempt is planned at when `budget --sampler` is given without figures: the compact prompt
    # (worker/prompt.py) opens a checkpoint with about 2,000 tokens (the published SmolLM2 attempt: 600 to 2,333),
    # one call a checkpoint when its answer is accepted; reasoning tokens count as output.
    PLAN = {"tokens_in": 2500, "tokens_out": 800, "calls_per_checkpoint": 1}

    def _setup(self):
        import os
        from ._sampler_cache import open_store

        o = self.options
        self.environ = os.environ if o.environ is None else o.environ
        if o.cache_path:
            open_store(o.cache_path)
        sampling = self.settings()
        self.url = self.base_url()
        self.client = None
        if not o.offline:
            self.config = self.service_config()
            self.client = self.make_client(
                environ=self.environ, http_client=o.http_client, deadline_s=o.call_deadline_s
            )
            if o.model is not None:
                where = self.config["base_url"]
                try:
                    found = self.preflight(o.model, where)
                except SHAPE_ERRORS as exc:  # a server that answers 200 with another shape: one line, nothing spent
                    raise InputError(
                        f"{self.name}: the preflight's answer from {where} is not the API's shape "
                        f"({type(exc).__name__}: {one_line(exc, 160)}); nothing was consumed"
                    ) from None
                self.config["model_preflight"] = found[:200] if isinstance(found, str) else None
        return sampling

    def base_url(self):
        return None

    def build(self, model):
        from ._sampler_cache import CacheSampler

        if self.options.offline:
            raise InputError(f"--sampler {self.name}: built for its settings only (a freeze makes no call)")
        inner = self.ADAPTER(model, self.sampling, self.client, self.config)
        return CacheSampler(self.options.cache_path or None, model, inner=inner)
