"""The pristine database: built once from every site's deterministic seed, cached on disk, copied per reset.

The cache key hashes every Python file of the local suite, so editing a seed (or the shared world)
rebuilds the database while unchanged sources reuse it across processes and runs.
A file lock makes concurrent environments build it only once.
"""

from __future__ import annotations

import hashlib
import os
import random
import sqlite3
import time
from pathlib import Path

from filelock import FileLock

from webarena_gym.envs.local.framework import LOCAL_DIR, create_schema
from webarena_gym.envs.local.sites import available_sites, load_site

CACHE_ENV_VAR = "WEBARENA_GYM_CACHE"
SEED_PREFIX = "webarena-gym-local-v1"


def cache_dir() -> Path:
    root = os.environ.get(CACHE_ENV_VAR) or os.path.join(os.path.expanduser("~"), ".cache", "webarena-gym")
    path = Path(root) / "local"
    path.mkdir(parents=True, exist_ok=True)
    return path


def site_rng(site: str) -> random.Random:
    """The fixed random stream a site's seed draws from (string seeds are hashed deterministically)."""
    return random.Random(f"{SEED_PREFIX}:{site}")


def sources_hash(sites: list[str]) -> str:
    """Hash of the site list and of every Python file of the local suite (seeds, shared world data)."""
    digest = hashlib.sha256(",".join(sites).encode())
    for path in sorted(LOCAL_DIR.rglob("*.py")):
        digest.update(str(path.relative_to(LOCAL_DIR)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def build(path: str | Path, sites: list[str]) -> None:
    """Create the schema of every site, then seed each site in order, into a fresh file at ``path``."""
    path = Path(path)
    path.unlink(missing_ok=True)
    conn = sqlite3.connect(path)
    try:
        modules = [load_site(site) for site in sites]
        create_schema(conn, (getattr(module, "SCHEMA", "") for module in modules))
        for site, module in zip(sites, modules, strict=True):
            seed = getattr(module, "seed", None)
            if seed is not None:
                seed(conn, site_rng(site))
                conn.commit()
        conn.execute("VACUUM")
        conn.commit()
    finally:
        conn.close()


def pristine_db() -> Path:
    """Path of the cached pristine database for all available sites, building it if needed."""
    sites = available_sites()
    target = cache_dir() / f"pristine-{sources_hash(sites)}.sqlite"
    if target.exists():
        return target
    with FileLock(str(target) + ".lock"):
        if not target.exists():
            tmp = target.with_suffix(f".tmp{os.getpid()}")
            build(tmp, sites)
            os.replace(tmp, target)
            _prune(keep=target)
    return target


def _prune(keep: Path, max_age_s: float = 86400.0) -> None:
    """Drop pristine builds of older sources, once they have not been built for a day."""
    now = time.time()
    for old in keep.parent.glob("pristine-*.sqlite"):
        if old != keep and now - old.stat().st_mtime > max_age_s:
            old.unlink(missing_ok=True)
            Path(str(old) + ".lock").unlink(missing_ok=True)


def copy_db(src: str | Path, dst: str | Path) -> None:
    """Copy ``src`` over ``dst`` page by page with SQLite's backup API (safe while readers are open)."""
    source = sqlite3.connect(src)
    target = _scratch_target(dst)
    try:
        source.backup(target)
    finally:
        source.close()
        target.close()


def _scratch_target(path: str | Path) -> sqlite3.Connection:
    """A connection for overwriting an instance database: it lives in a temp dir, so skip the fsyncs."""
    conn = sqlite3.connect(path, timeout=10)
    conn.execute("PRAGMA synchronous = OFF")
    return conn


def change_counter(db_path: str | Path) -> bytes | None:
    """The database file's change counter (header bytes 24-27), which every committed write transaction
    changes in the rollback-journal mode the sites use. None for a database in WAL mode (header bytes
    18-19 are 2), whose commits leave the main file's counter alone: nothing can be told from it."""
    with open(db_path, "rb") as db:
        header = db.read(28)
    return header[24:28] if header[18:20] == b"\x01\x01" else None


def dump(db_path: str | Path) -> bytes:
    """The database's full content as bytes (an opaque, picklable snapshot token)."""
    conn = sqlite3.connect(db_path, timeout=10)
    try:
        return conn.serialize()
    finally:
        conn.close()


def load(db_path: str | Path, blob: bytes) -> None:
    """Overwrite the database at ``db_path`` with a :func:`dump` result."""
    mem = sqlite3.connect(":memory:")
    target = _scratch_target(db_path)
    try:
        mem.deserialize(blob)
        mem.backup(target)
    finally:
        mem.close()
        target.close()
