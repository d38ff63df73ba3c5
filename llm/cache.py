"""The on-disk response cache: a study re-runs offline exactly, and processes share answers safely."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from webarena_gym.llm.messages import Message
from webarena_gym.llm.redaction import redact


class ResponseCache:
    """On-disk response cache shared safely by several processes (SQLite in WAL mode)."""

    def __init__(self, directory: str | os.PathLike[str]):
        self.path = Path(directory) / "llm_cache.sqlite"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._conn() as conn:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, text TEXT, "
                "prompt_tokens INTEGER, completion_tokens INTEGER, cost REAL, created REAL)"
            )

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._local.conn = conn
        return conn

    def get(self, key: str) -> tuple[str, int, int, float | None] | None:
        row = (
            self._conn()
            .execute("SELECT text, prompt_tokens, completion_tokens, cost FROM responses WHERE key=?", (key,))
            .fetchone()
        )
        return None if row is None else (row[0], row[1], row[2], row[3])

    def put(
        self, key: str, model: str, text: str, prompt_tokens: int, completion_tokens: int, cost: float | None
    ) -> None:
        # First writer wins, so concurrent processes agree on one answer per key. A key a provider echoed
        # in its answer is not kept (the replay then shows it redacted, as the trajectory does).
        self._conn().execute(
            "INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)",
            (key, redact(model), redact(text), prompt_tokens, completion_tokens, cost, time.time()),
        )

    def __len__(self) -> int:
        return self._conn().execute("SELECT COUNT(*) FROM responses").fetchone()[0]


def cache_key(model: str, messages: list[Message], params: dict[str, Any], sample: int, scripted: bool) -> str:
    """Stable hash of a request; scripted answers never collide with real ones.

    ``messages`` must already have their images replaced by hashes (:func:`llm.messages.with_image_refs`),
    so a request is keyed by its images' bytes, not by their base64 text.
    """
    blob = json.dumps(
        {"model": model, "messages": messages, "params": params, "sample": sample, "scripted": scripted},
        sort_keys=True,
        default=str,
        ensure_ascii=False,
    )
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()  # a page may hold lone surrogates
