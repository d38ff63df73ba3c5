"""Where the pipeline keeps what it made: append-only JSONL files of keyed records, and a page store.

Every generated item is one JSON line with a stable ``key``; an item is never generated twice because a
run first reads the keys already present (``--resume``). Lines are appended under an exclusive lock and
fsync'ed. Records that one teacher call produced together (ten queries, ten plan pairs) carry the same
``batch`` and its ``batch_size`` and are written in one append; on reading, a batch with lines missing
(a torn write) is dropped as a whole and the file is rewritten without it, so the batch is generated
again instead of surviving half.

Pages (the simplified HTML an executor saw, several kilobytes each and shared by many records) are
stored once under ``pages/<sha256>.html`` and referenced by their hash.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from webarena_gym.llm.files import write_atomic
from webarena_gym.llm.redaction import redacted_json


class JsonlStore:
    """One append-only JSONL file of records keyed by ``key`` (see the module docstring)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def load(self) -> list[dict[str, Any]]:
        """The complete records, in file order. Torn lines, incomplete batches and repeated keys are
        dropped, and the file is rewritten without them when there were any."""
        if not self.path.exists():
            return []
        lines = self.path.read_text(encoding="utf-8").splitlines()
        records: list[dict[str, Any]] = []
        for line in lines:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and isinstance(record.get("key"), str):
                records.append(record)
        sizes = Counter(r["batch"] for r in records if "batch_size" in r)
        seen: set[str] = set()
        kept = []
        for r in records:
            if r["key"] in seen or ("batch_size" in r and sizes[r["batch"]] != r["batch_size"]):
                continue
            seen.add(r["key"])
            kept.append(r)
        if len(kept) != len(lines):
            self._rewrite(kept)
        return kept

    def keys(self) -> set[str]:
        return {r["key"] for r in self.load()}

    def append(self, records: Iterable[dict[str, Any]]) -> None:
        """Append ``records`` in one write (a batch lands whole or is dropped as a whole on reading)."""
        text = "".join(redacted_json(r, sort_keys=True) + "\n" for r in records)
        if not text:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a+b") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            try:
                if fh.seek(0, os.SEEK_END) and (fh.seek(-1, os.SEEK_END), fh.read(1))[1] != b"\n":
                    text = "\n" + text  # a killed writer left a torn line: never glue a record onto it
                fh.write(text.encode("utf-8"))
                fh.flush()
                os.fsync(fh.fileno())
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)

    def _rewrite(self, records: list[dict[str, Any]]) -> None:
        write_atomic(self.path, "".join(redacted_json(r, sort_keys=True) + "\n" for r in records))


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class PageStore:
    """Pages stored once by content hash (``pages/<sha256>.html``)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def put(self, page: str) -> str:
        digest = sha256(page)
        path = self.root / f"{digest}.html"
        if not path.exists():
            self.root.mkdir(parents=True, exist_ok=True)
            write_atomic(path, page)
        return digest

    def get(self, digest: str) -> str:
        path = self.root / f"{digest}.html"
        if not path.exists():
            raise FileNotFoundError(f"page {digest} is missing from the page store {self.root.name}/")
        return path.read_text(encoding="utf-8")
