"""The decision cache: SQLite keyed by the request's sha256.

With an inner sampler it records every answer it fetches (write-through);
without one it is a replay library: a hit costs nothing, a miss is an error
(never a silent paid call). Hits are counted so an attempt can report that a
replay was served entirely from the cache (cache_hits == calls).
"""

import sqlite3

from ._errors import CacheMiss
from ._sampling import Completion, Prepared, approx_prompt_tokens, request_sha256

SCHEMA = """CREATE TABLE IF NOT EXISTS calls (
  request_sha256 TEXT PRIMARY KEY, model TEXT NOT NULL, text TEXT NOT NULL,
  tokens_in INTEGER NOT NULL, tokens_out INTEGER NOT NULL, stop_reason TEXT NOT NULL)"""


class CacheSampler:
    def __init__(self, path, model_id, inner=None, sampling=None):
        self.path = str(path)
        self.inner = inner
        self.model_id = inner.model_id if inner is not None else model_id
        self.provider = inner.provider if inner is not None else "cache"
        self.sampling = dict(inner.sampling if inner is not None else (sampling or {}))
        self.hits = 0
        conn = sqlite3.connect(self.path)
        with conn:
            conn.execute(SCHEMA)
        conn.close()

    def _get(self, key):
        conn = sqlite3.connect(self.path)
        try:
            return conn.execute("SELECT text, tokens_in, tokens_out, stop_reason FROM calls WHERE request_sha256 = ?",
                                (key,)).fetchone()
        finally:
            conn.close()

    def _put(self, key, c: Completion):
        conn = sqlite3.connect(self.path)
        try:
            with conn:
                conn.execute("INSERT OR REPLACE INTO calls VALUES (?, ?, ?, ?, ?, ?)",
                             (key, self.model_id, c.text, c.tokens_in, c.tokens_out, c.stop_reason))
        finally:
            conn.close()

    def prepare(self, messages, max_tokens) -> Prepared:
        key = request_sha256(self.model_id, messages, max_tokens, self.sampling)
        row = self._get(key)
        if row is not None:
            return Prepared(key, row[1], max_tokens, messages, cached=True)
        if self.inner is not None:
            inner = self.inner.prepare(messages, max_tokens)
            inner.request_sha256 = key
            return inner
        return Prepared(key, approx_prompt_tokens(messages), max_tokens, messages)

    def sample(self, prepared: Prepared, deadline_s) -> Completion:
        row = self._get(prepared.request_sha256)
        if row is not None:
            self.hits += 1
            return Completion(row[0], row[1], row[2], row[3], cached=True)
        if self.inner is None:
            raise CacheMiss(f"{self.path}: no cached answer for request {prepared.request_sha256[:12]} "
                            f"(a cache-only replay never makes a paid call)")
        completion = self.inner.sample(prepared, deadline_s)
        self._put(prepared.request_sha256, completion)
        return completion
