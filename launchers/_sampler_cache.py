"""The decision cache: SQLite, an answer keyed by what the caller knows before
any entry is read (model, messages, max_tokens), with the sampling settings it
was recorded under kept in the entry.

With an inner sampler it records every answer it fetches (write-through) and
reuses one only if it was recorded under the inner sampler's own settings.
Without one it is a replay library: it adopts the settings of the recording
(or is told them by `--replay-of`), checks them on every hit, and a miss is
an error raised before anything is reserved -- never a paid call, never debt.
Hits are counted so an attempt can report that a replay was served entirely
from the cache (cache_hits == calls).

An attempt exports the answers it used (hits and new ones) as canonical JSONL
beside its record (`cache.jsonl`, hashed there): SQLite's bytes are not
deterministic, this text is, and a replay reads it directly (`--cache
DIR/cache.jsonl`, the default of `--replay-of DIR` when the file is there).
"""

import json
import os
import sqlite3
import urllib.parse

from engine import canonical_json

from ._errors import CacheMiss, InputError
from ._jsonfile import read_head
from ._provider import Provider
from ._sampling import Completion, Prepared, cache_key, request_sha256

SCHEMA = """CREATE TABLE IF NOT EXISTS answers (
  cache_key TEXT NOT NULL, sampling TEXT NOT NULL, model TEXT NOT NULL, text TEXT NOT NULL,
  tokens_in INTEGER NOT NULL, tokens_out INTEGER NOT NULL, cache_hit_tokens INTEGER NOT NULL,
  stop_reason TEXT NOT NULL, PRIMARY KEY (cache_key, sampling))"""


CACHE_EXPORT = "cache.jsonl"
EXPORT_KEYS = ("cache_hit_tokens", "cache_key", "model", "sampling", "stop_reason", "text", "tokens_in", "tokens_out")
MAX_EXPORT_BYTES = 64 * 1024 * 1024
COLUMNS = ("cache_key", "sampling", "model", "text", "tokens_in", "tokens_out", "cache_hit_tokens", "stop_reason")


def _settings(sampling) -> str:
    return canonical_json(sampling).decode("utf-8")


def _is_jsonl(path) -> bool:
    return str(path).endswith(".jsonl")


def _export_line(row) -> bytes:
    key, sampling, model, text, tokens_in, tokens_out, hit_tokens, stop = row
    return (
        canonical_json(
            {
                "cache_key": key,
                "sampling": json.loads(sampling),
                "model": model,
                "text": text,
                "tokens_in": tokens_in,
                "tokens_out": tokens_out,
                "cache_hit_tokens": hit_tokens,
                "stop_reason": stop,
            }
        )
        + b"\n"
    )


def read_export(path) -> list:
    """The rows of a cache.jsonl, strictly read: a one-line InputError naming the file, the line and the field."""
    path = str(path)
    try:
        if not os.path.lexists(path):
            raise InputError(f"--cache {path}: no such file (a replay reads a recorded cache)")
        if not os.path.isfile(path):
            raise InputError(f"--cache {path}: not a regular file (a decision-cache export is a cache.jsonl file)")
        if os.path.getsize(path) > MAX_EXPORT_BYTES:
            raise InputError(f"--cache {path}: over {MAX_EXPORT_BYTES} bytes (not a decision-cache export)")
        with open(path, "rb") as fh:
            data = fh.read(MAX_EXPORT_BYTES + 1)
    except OSError as exc:
        raise InputError(f"--cache {path}: cannot read ({exc.strerror or exc})")
    rows, seen = [], set()
    lines = data.split(b"\n")
    if data.endswith(b"\n") or not data:  # an empty export holds no answer (an attempt stopped before its first)
        lines = lines[:-1]
    for number, raw in enumerate(lines, 1):
        where = f"--cache {path}: line {number}"
        try:
            obj = json.loads(raw.decode("utf-8"), parse_constant=lambda c: float("nan"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise InputError(f"{where}: not a JSON object in UTF-8")
        if not isinstance(obj, dict) or tuple(sorted(obj)) != EXPORT_KEYS:
            raise InputError(f"{where}: expected an object with exactly {', '.join(EXPORT_KEYS)}")
        for name in ("cache_key", "model", "text", "stop_reason"):
            if not isinstance(obj[name], str):
                raise InputError(f"{where}: {name}: expected a string")
        for name in ("tokens_in", "tokens_out", "cache_hit_tokens"):
            if type(obj[name]) is not int or not 0 <= obj[name] <= 2**53 - 1:
                raise InputError(f"{where}: {name}: expected a non-negative integer")
        if not isinstance(obj["sampling"], dict):
            raise InputError(f"{where}: sampling: expected an object")
        try:
            sampling = _settings(obj["sampling"])
            line = canonical_json(obj) + b"\n"
        except ValueError as exc:
            raise InputError(f"{where}: not canonical JSON ({exc})")
        if line != raw + b"\n":
            raise InputError(f"{where}: not the canonical JSON an export writes (sorted keys, no spaces)")
        if (obj["cache_key"], sampling) in seen:
            raise InputError(f"{where}: a second answer for request {obj['cache_key'][:12]} under the same settings")
        seen.add((obj["cache_key"], sampling))
        rows.append(
            (
                obj["cache_key"],
                sampling,
                obj["model"],
                obj["text"],
                obj["tokens_in"],
                obj["tokens_out"],
                obj["cache_hit_tokens"],
                obj["stop_reason"],
            )
        )
    return rows


def _refuse_other_files(path):
    """An existing file is a decision cache (an SQLite database holding only the answers table) or it is refused:
    nothing else -- a desk history, a record, a FIFO, an empty file -- is silently turned into one."""
    if not os.path.lexists(path):
        return
    head = read_head(path, 16)
    if head is None:
        raise InputError(f"--cache {path}: not a regular file (a decision cache is an SQLite file)")
    if head != b"SQLite format 3\x00":
        raise InputError(
            f"--cache {path}: exists and is not an SQLite database (refusing to turn it into a decision "
            f"cache: name a new file, or an existing cache)"
        )
    try:
        conn = sqlite3.connect(f"file:{urllib.parse.quote(os.path.abspath(path))}?mode=ro", uri=True)
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            columns = [r[1] for r in conn.execute("PRAGMA table_info(answers)")]
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise InputError(f"--cache {path}: cannot read the decision cache ({exc})") from None
    if tables - {"answers"} or (tables and columns != list(COLUMNS)):
        raise InputError(
            f"--cache {path}: an SQLite database that is not a decision cache (tables: "
            f"{', '.join(sorted(tables)) or 'none'})"
        )


def open_store(path, must_exist=False):
    """Open (or create) the cache file and its table; a one-line InputError if it cannot be used.
    A `.jsonl` path is an export: read (and checked) whole, never written."""
    path = str(path)
    if _is_jsonl(path):
        if not must_exist:
            raise InputError(
                f"--cache {path}: a .jsonl cache is an attempt's export, read-only (record into a SQLite file)"
            )
        read_export(path)
        return path
    if must_exist and not os.path.isfile(path):
        raise InputError(f"--cache {path}: no such file (a replay reads a recorded cache)")
    _refuse_other_files(path)
    try:
        conn = sqlite3.connect(path)
        try:
            with conn:
                conn.execute(SCHEMA)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise InputError(f"--cache {path}: cannot open the decision cache ({exc})")
    return path


class CacheSampler:
    def __init__(self, path, model_id, inner=None, sampling=None):
        """`path`: a SQLite file, a `.jsonl` export (replay only), or None for a store in memory that lives as
        long as the attempt (its answers reach the record through `export_jsonl`)."""
        if path is None and inner is None:
            raise InputError("--cache: a replay reads a recorded cache (a SQLite file or an attempt's cache.jsonl)")
        self.path = open_store(path, must_exist=inner is None) if path is not None else ":memory:"
        self.inner = inner
        self.model_id = inner.model_id if inner is not None else model_id
        self.provider = inner.provider if inner is not None else "cache"
        if inner is not None:
            self.sampling = dict(inner.sampling)
        else:
            self.sampling = dict(sampling) if sampling is not None else None  # None: adopt the recording's
        self.hits = 0
        self.used = []  # (cache_key, sampling) of every answer this attempt read or wrote, in order
        self._memory = None
        if path is None or _is_jsonl(self.path):  # in memory: an export (never written), or this attempt's own
            self._memory = sqlite3.connect(":memory:", check_same_thread=False)
            with self._memory:
                self._memory.execute(SCHEMA)
                if path is not None:
                    self._memory.executemany(
                        "INSERT INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?)", read_export(self.path)
                    )

    def _connect(self):
        return self._memory if self._memory is not None else sqlite3.connect(self.path)

    def _done(self, conn):
        if conn is not self._memory:
            conn.close()

    def _rows(self, key):
        conn = self._connect()
        try:
            return conn.execute(
                "SELECT sampling, text, tokens_in, tokens_out, cache_hit_tokens, stop_reason "
                "FROM answers WHERE cache_key = ? ORDER BY sampling",
                (key,),
            ).fetchall()
        finally:
            self._done(conn)

    def _put(self, key, c: Completion):
        conn = self._connect()
        try:
            with conn:
                conn.execute(
                    "INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        key,
                        _settings(self.sampling),
                        self.model_id,
                        c.text,
                        c.tokens_in,
                        c.tokens_out,
                        c.cache_hit_tokens,
                        c.stop_reason,
                    ),
                )
        finally:
            self._done(conn)

    def export_jsonl(self, path):
        """Write the answers this attempt used as canonical JSONL (one object a line, sorted by request and
        settings): the same answers give the same bytes. Written to a temporary name, then renamed."""
        wanted = sorted(set(self.used))
        conn = self._connect()
        try:
            lines = []
            for key, sampling in wanted:
                row = conn.execute(
                    "SELECT cache_key, sampling, model, text, tokens_in, tokens_out, cache_hit_tokens, "
                    "stop_reason FROM answers WHERE cache_key = ? AND sampling = ?",
                    (key, sampling),
                ).fetchone()
                if row is not None:
                    lines.append(_export_line(row))
        finally:
            self._done(conn)
        with open(path + ".tmp", "wb") as fh:
            fh.write(b"".join(lines))
        os.replace(path + ".tmp", path)
        return len(lines)

    def prepare(self, messages, max_tokens) -> Prepared:
        key = cache_key(self.model_id, messages, max_tokens)
        rows = self._rows(key)
        if self.sampling is None and len({r[0] for r in rows}) == 1:
            self.sampling = json.loads(rows[0][0])  # the recording's settings, checked on every later hit
        want = _settings(self.sampling) if self.sampling is not None else None
        row = next((r for r in rows if r[0] == want), None)
        if row is not None:
            self.used.append((key, want))
            return Prepared(
                request_sha256(self.model_id, messages, max_tokens, self.sampling),
                row[2],
                max_tokens,
                messages,
                cached=True,
                cache_key=key,
                hit=row,
            )
        if self.inner is None:
            if not rows:
                raise CacheMiss(
                    f"{self.path}: no cached answer for request {key[:12]} (a cache-only replay never "
                    f"makes a paid call)"
                )
            if self.sampling is None:
                raise CacheMiss(
                    f"{self.path}: request {key[:12]} was recorded under {len(rows)} sampling settings; "
                    f"name the recorded attempt with --replay-of"
                )
            raise CacheMiss(
                f"{self.path}: request {key[:12]} was recorded with sampling {rows[0][0]}, this replay uses {want}"
            )
        prepared = self.inner.prepare(messages, max_tokens)
        prepared.cache_key = key
        return prepared

    def sample(self, prepared: Prepared, deadline_s) -> Completion:
        if prepared.cached:
            self.hits += 1
            _, text, tokens_in, tokens_out, hit_tokens, stop = prepared.hit
            return Completion(text, tokens_in, tokens_out, stop, cached=True, cache_hit_tokens=hit_tokens)
        completion = self.inner.sample(prepared, deadline_s)
        self._put(prepared.cache_key, completion)
        self.used.append((prepared.cache_key, _settings(self.sampling)))
        return completion

    def close(self, status, detail=None):
        if self.inner is not None and hasattr(self.inner, "close"):
            return self.inner.close(status, detail)
        return None

    def service_info(self):
        return self.inner.service_info() if self.inner is not None and hasattr(self.inner, "service_info") else None


class Cache(Provider):
    """`--sampler cache`: a cache-only replay; a miss is an error, every answer costs nothing."""

    name = "cache"
    LABEL = "cached replay"
    FREE = True

    def _setup(self):
        if self.options.cache_path:
            open_store(self.options.cache_path, must_exist=True)
        replay = self.options.replay_sampling
        return dict(replay) if replay is not None else {}

    def build(self, model):
        return CacheSampler(self.options.cache_path, model, sampling=self.options.replay_sampling)
