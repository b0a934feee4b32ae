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
"""

import json
import os
import sqlite3
import urllib.parse

from engine import canonical_json

from ._errors import CacheMiss, InputError
from ._jsonfile import read_head
from ._sampling import Completion, Prepared, cache_key, request_sha256

SCHEMA = """CREATE TABLE IF NOT EXISTS answers (
  cache_key TEXT NOT NULL, sampling TEXT NOT NULL, model TEXT NOT NULL, text TEXT NOT NULL,
  tokens_in INTEGER NOT NULL, tokens_out INTEGER NOT NULL, cache_hit_tokens INTEGER NOT NULL,
  stop_reason TEXT NOT NULL, PRIMARY KEY (cache_key, sampling))"""


COLUMNS = ("cache_key", "sampling", "model", "text", "tokens_in", "tokens_out", "cache_hit_tokens", "stop_reason")


def _settings(sampling) -> str:
    return canonical_json(sampling).decode("utf-8")


def _refuse_other_files(path):
    """An existing file is a decision cache (an SQLite database holding only the answers table) or it is refused:
    nothing else -- a desk history, a record, a FIFO, an empty file -- is silently turned into one."""
    if not os.path.lexists(path):
        return
    head = read_head(path, 16)
    if head is None:
        raise InputError(f"--cache {path}: not a regular file (a decision cache is an SQLite file)")
    if head != b"SQLite format 3\x00":
        raise InputError(f"--cache {path}: exists and is not an SQLite database (refusing to turn it into a decision "
                         f"cache: name a new file, or an existing cache)")
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
        raise InputError(f"--cache {path}: an SQLite database that is not a decision cache (tables: "
                         f"{', '.join(sorted(tables)) or 'none'})")


def open_store(path, must_exist=False):
    """Open (or create) the cache file and its table; a one-line InputError if it cannot be used."""
    path = str(path)
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
        self.path = open_store(path, must_exist=inner is None)
        self.inner = inner
        self.model_id = inner.model_id if inner is not None else model_id
        self.provider = inner.provider if inner is not None else "cache"
        if inner is not None:
            self.sampling = dict(inner.sampling)
        else:
            self.sampling = dict(sampling) if sampling is not None else None  # None: adopt the recording's
        self.hits = 0

    def _rows(self, key):
        conn = sqlite3.connect(self.path)
        try:
            return conn.execute("SELECT sampling, text, tokens_in, tokens_out, cache_hit_tokens, stop_reason "
                                "FROM answers WHERE cache_key = ? ORDER BY sampling", (key,)).fetchall()
        finally:
            conn.close()

    def _put(self, key, c: Completion):
        conn = sqlite3.connect(self.path)
        try:
            with conn:
                conn.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                             (key, _settings(self.sampling), self.model_id, c.text, c.tokens_in, c.tokens_out,
                              c.cache_hit_tokens, c.stop_reason))
        finally:
            conn.close()

    def prepare(self, messages, max_tokens) -> Prepared:
        key = cache_key(self.model_id, messages, max_tokens)
        rows = self._rows(key)
        if self.sampling is None and len({r[0] for r in rows}) == 1:
            self.sampling = json.loads(rows[0][0])  # the recording's settings, checked on every later hit
        want = _settings(self.sampling) if self.sampling is not None else None
        row = next((r for r in rows if r[0] == want), None)
        if row is not None:
            return Prepared(request_sha256(self.model_id, messages, max_tokens, self.sampling), row[2], max_tokens,
                            messages, cached=True, cache_key=key, hit=row)
        if self.inner is None:
            if not rows:
                raise CacheMiss(f"{self.path}: no cached answer for request {key[:12]} (a cache-only replay never "
                                f"makes a paid call)")
            if self.sampling is None:
                raise CacheMiss(f"{self.path}: request {key[:12]} was recorded under {len(rows)} sampling settings; "
                                f"name the recorded attempt with --replay-of")
            raise CacheMiss(f"{self.path}: request {key[:12]} was recorded with sampling {rows[0][0]}, this replay "
                            f"uses {want}")
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
        return completion

    def close(self, status, detail=None):
        if self.inner is not None and hasattr(self.inner, "close"):
            return self.inner.close(status, detail)
        return None

    def service_info(self):
        return self.inner.service_info() if self.inner is not None and hasattr(self.inner, "service_info") else None
