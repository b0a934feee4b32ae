"""What a log and each of its samples must be before anything is replayed: the log succeeded, nothing in it was
invalidated, edited afterwards, answered by a fallback or by a second model role; it is inspect_fundbook/desk at an
engine version whose bundle it names (as logged), its task arguments of the task's own types; each sample is a
published world named canonically, within the message limits. InputError (the log) or Refused (a sample) names
the field and what was expected."""

import datetime
import re

import engine
from engine import shown

from .._errors import InputError  # the launcher's: also the engine's InputError

from builders import inspect_format as F

from .. import _desk
from ._env import world_source
from ._replay import Refused

# The task version a log names: the engine version and the first 16 hex digits of the bundle the eval ran with.
# That bundle is as logged: every engine answer in the log is re-derived through *this* bundle, byte for byte, so
# a log run before an engine release that changed no answer still imports, and one whose answers differ is refused.
TASK_VERSION = re.compile(re.escape(engine.ENGINE_VERSION) + r"\+([0-9a-f]{16})")


def sid(sample) -> str:
    """A sample's id for a message: as given when it is a world id, else escaped (a log's id is any text)."""
    text = str(sample.id)
    return text if F.world_of(text) else shown(text, 60)


def created(label, value) -> str:
    """The eval's creation time in UTC (a world's tries order by it as text)."""
    try:
        when = value if isinstance(value, datetime.datetime) else datetime.datetime.fromisoformat(str(value))
        utc = when.astimezone(datetime.timezone.utc).isoformat() if when.tzinfo is not None else None
    except (ValueError, OverflowError):
        utc = None
    if utc is None or not F.CREATED.fullmatch(utc):
        raise InputError(f"{label}: eval.created: expected a time with its UTC offset, got {shown(str(value))}")
    return utc


def log_checks(label, log, version) -> dict:
    """The log's own facts -> {args, created, inspect_version}; InputError names the field."""

    def no(check, detail):
        raise InputError(f"{label}: {check}: {detail}")

    if log.status != "success":
        no("status", f"expected success, the log says {shown(log.status)}")
    if getattr(log, "invalidated", False):
        no("invalidated", "the log marks samples invalidated")
    if getattr(log, "log_updates", None) or getattr(log, "config_updates", None):
        no(
            "edits",
            f"the log was edited after the eval ({len(log.log_updates or [])} edit_eval_log update(s), "
            f"{len(log.config_updates or [])} config update(s)); import the original log",
        )
    ev = log.eval
    if ev.task != F.TASK_NAME:
        no("eval.task", f"expected {F.TASK_NAME}, got {shown(ev.task)}")
    if not TASK_VERSION.fullmatch(str(ev.task_version)):
        no(
            "eval.task_version",
            f"expected {engine.ENGINE_VERSION}+<16 hex digits of a bundle sha256> (this bundle's "
            f"is {version}), got {shown(str(ev.task_version))}",
        )
    args = F.task_args(ev.task_args, label, "eval.task_args")
    F.printable(ev.model, label, "eval.model", "Inspect's <provider>/<model>")
    if ev.model_roles:
        no(
            "eval.model_roles",
            f"expected none (the desk is answered by one model), got {shown(sorted(ev.model_roles))}",
        )
    F.url(ev.model_base_url, label, "eval.model_base_url")
    for key in ("eval_id", "run_id"):
        if not isinstance(getattr(ev, key), str) or not F.TOKEN.fullmatch(getattr(ev, key)):
            no(f"eval.{key}", f"expected Inspect's id (letters, digits, '_' or '-'), got {shown(getattr(ev, key))}")
    version_ = (ev.packages or {}).get("inspect_ai")
    if not isinstance(version_, str) or not F.VERSION.fullmatch(version_):
        no("eval.packages.inspect_ai", f"expected inspect-ai's version, got {shown(version_)}")
    used = sorted(((log.stats.model_usage if log.stats else None) or {}).keys())
    if used and used != [ev.model]:
        no(
            "stats.model_usage",
            f"the log's model is {shown(ev.model)}, its usage names {shown(used)} (a fallback or a second model)",
        )
    if not log.samples:
        no("samples", "the log holds no samples")
    return {"args": args, "created": created(label, ev.created), "inspect_version": version_}


def sample_source(sample, logged_version, days):
    meta = sample.metadata or {}
    world = F.world_of(str(sample.id))
    if world is None or str(sample.id) != meta.get("world"):
        raise Refused(
            "world",
            f"expected a published world FUND_0N-seed-S (ASCII digits, no leading zero) as the "
            f"sample id and metadata.world, got id {shown(str(sample.id))}, world "
            f"{shown(meta.get('world'))}",
        )
    family, seed = world
    source = world_source(family, seed, days)
    if meta.get("source") != source:
        raise Refused("world", f"metadata.source is not the world {meta.get('world')} over {days} days")
    instance = _desk.world(family, seed, days)
    fixture = engine.fixture_sha256(instance)
    if meta.get("fixture_sha256") != fixture:
        raise Refused(
            "fixture_sha256",
            f"expected {fixture} (the world {meta['world']}), got {shown(meta.get('fixture_sha256'), 70)}",
        )
    logged = TASK_VERSION.fullmatch(logged_version).group(1)
    if not (
        isinstance(meta.get("bundle_sha256"), str)
        and F.HEX64.fullmatch(meta["bundle_sha256"])
        and meta["bundle_sha256"].startswith(logged)
    ):
        raise Refused(
            "bundle_sha256",
            f"expected the sha256 of the bundle the task version names ({logged}...), got "
            f"{shown(meta.get('bundle_sha256'), 70)}",
        )
    return source


def sample_checks(sample, model, args):
    """What a sample must not hold, and the name its answers carry."""
    if type(sample.epoch) is not int or not 1 <= sample.epoch <= F.MAX_EPOCH:
        raise Refused("epoch", f"expected 1 to {F.MAX_EPOCH}, got {shown(sample.epoch)}")
    if getattr(sample, "invalidation", None) is not None:
        raise Refused("invalidation", "the sample was invalidated after the eval")
    if getattr(sample, "model_fallbacks", None):
        pairs = ", ".join(
            f"{f.model} -> {f.fallback_model}" if hasattr(f, "fallback_model") else str(f)
            for f in sample.model_fallbacks
        )
        raise Refused(
            "model_fallbacks",
            f"the sample records {len(sample.model_fallbacks)} fallback(s) "
            f"({shown(pairs, 80)}): one model answers throughout",
        )
    if sample.error is not None:
        raise Refused("error", f"the sample ended in an error ({shown(str(sample.error.message), 80)})")
    if len(sample.messages) > args["message_limit"]:
        raise Refused(
            "messages",
            f"{len(sample.messages)} messages, over the task's message_limit "
            f"{args['message_limit']} (Inspect stops a sample there)",
        )
    for i, m in enumerate(sample.messages):
        text = m.text
        if len(text) > F.MAX_MESSAGE_BYTES or len(text.encode("utf-8", "surrogatepass")) > F.MAX_MESSAGE_BYTES:
            raise Refused(
                "transcript",
                f"message {i}: over {F.MAX_MESSAGE_BYTES} bytes of text (no desk answer or model turn comes near)",
            )
    used = sorted((sample.model_usage or {}).keys())
    if used and used != [model]:
        raise Refused(
            "model",
            f"the log's model is {shown(model)}, the sample's usage names {shown(used)} (a fallback or a second model)",
        )
    answered = sorted({m.model for m in sample.messages if m.role == "assistant" and m.model})
    if len(answered) > 1:
        raise Refused("model", f"the sample's answers come from {len(answered)} models ({shown(answered, 80)})")
    if answered:
        try:
            F.printable(answered[0], "", "model", "a model name")
        except engine.InputError:
            raise Refused(
                "model",
                f"the answers' model name: expected 1 to {F.MAX_NAME} printable characters, got {shown(answered[0])}",
            ) from None
    return answered[0] if answered else None
