"""Reuse of local site instances within a process: a closed environment's server is parked in the pool
and leased by the next environment of the same sites, exclusively, pristine and healthy, and nothing
outlives the pool. Real server processes and HTTP; one test drives real environments in Chromium."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from webarena_gym.envs.local.host import LocalSiteHost
from webarena_gym.envs.local.launcher import POOL, REUSE_ENV_VAR, LocalSites, SitesPool

SITES = ("map",)  # one small site (plus the homepage every instance serves)
PLACE = "Pool Test Café"


@pytest.fixture(autouse=True)
def empty_pool(monkeypatch):
    """Every test starts and ends with no parked instance (and reuse on, whatever the caller's env says)."""
    monkeypatch.delenv(REUSE_ENV_VAR, raising=False)
    POOL.shutdown()
    yield
    POOL.shutdown()


def started(sites=SITES) -> LocalSiteHost:
    host = LocalSiteHost(sites)
    host.prepare()
    return host


def server_pid(host: LocalSiteHost) -> int:
    return host.local._proc.pid  # type: ignore[union-attr]


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_gone(pids: set[int], timeout: float = 10) -> set[int]:
    deadline = time.monotonic() + timeout
    while any(running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return {p for p in pids if running(p)}


def add_place(host: LocalSiteHost) -> None:
    with sqlite3.connect(host.local.db_path) as conn:
        conn.execute(
            "INSERT INTO map_place (name, kind, town, address, lat, lon, node_id, postcode) "
            "VALUES (?, 'cafe', 'Kingston', '1 Test Street, Kingston', 40.44, -79.94, 1, '15101')",
            (PLACE,),
        )
    conn.close()


def has_place(host: LocalSiteHost) -> bool:
    with sqlite3.connect(host.local.db_path) as conn:
        found = conn.execute("SELECT COUNT(*) FROM map_place WHERE name = ?", (PLACE,)).fetchone()[0] > 0
    conn.close()
    return found


def test_a_closed_host_instance_is_leased_again_pristine_with_its_cookies():
    first = started()
    pid, urls = server_pid(first), first.urls()
    first.local.login_cookies["map"] = [{"name": "session", "value": "x", "url": urls["map"]}]
    add_place(first)
    first.close()
    assert POOL.idle() == 1 and running(pid)

    begin = time.perf_counter()
    second = started()
    lease_s = time.perf_counter() - begin
    assert server_pid(second) == pid and second.urls() == urls
    assert lease_s < 0.5, f"leasing took {lease_s:.2f} s"
    assert not has_place(second), "a parked instance must come back in pristine state"
    assert "map" in second.local.login_cookies  # same secret: cached logins stay valid
    assert POOL.idle() == 0
    second.close()


def test_a_reset_copies_the_pristine_database_only_when_something_wrote(monkeypatch):
    from webarena_gym.envs.local import data

    copies = []
    copy_db = data.copy_db
    monkeypatch.setattr(data, "copy_db", lambda *args: (copies.append(args), copy_db(*args)))
    host = started()
    copies.clear()  # the instance's own copy at start
    host.reset_state()  # nothing has written since the instance was made from the pristine copy
    assert copies == []
    add_place(host)
    host.reset_state()
    assert not has_place(host) and len(copies) == 1
    token = host.snapshot_state()
    add_place(host)
    host.restore_state(token)  # a restored database is not the pristine one, even if it matches it
    host.reset_state()
    assert not has_place(host) and len(copies) == 2
    host.close()  # parked: pristine already, so the park copies nothing
    assert len(copies) == 2
    second = started()
    add_place(second)  # a lessee writing before its first reset
    second.reset_state()
    assert not has_place(second)
    second.close()


def test_a_restore_writes_the_database_only_when_it_no_longer_holds_the_token(monkeypatch):
    import pickle

    from webarena_gym.envs.local import data

    loads = []
    load = data.load
    monkeypatch.setattr(data, "load", lambda *args: (loads.append(args), load(*args)))
    host = started()
    token = host.snapshot_state()
    host.restore_state(token)  # nothing wrote since the snapshot
    host.restore_state(pickle.loads(pickle.dumps(token)))  # the same content, come back from a worker
    assert loads == []
    add_place(host)
    host.restore_state(token)
    assert not has_place(host) and len(loads) == 1
    host.restore_state(token)  # restored, and nothing wrote since
    assert len(loads) == 1
    add_place(host)
    with_place = host.snapshot_state()
    host.restore_state(token)
    assert not has_place(host) and len(loads) == 2
    host.restore_state(with_place)
    assert has_place(host) and len(loads) == 3
    host.reset_state()  # the database holds a token, not the pristine copy
    assert not has_place(host)
    host.close()


def test_a_database_in_wal_mode_is_always_written_back(tmp_path):
    """WAL commits leave the main file's change counter alone, so it cannot stand for "unchanged"."""
    from webarena_gym.envs.local import data

    db = tmp_path / "wal.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    assert data.change_counter(db) is not None
    conn.execute("PRAGMA journal_mode=wal")
    conn.close()
    assert data.change_counter(db) is None


def test_simultaneously_open_hosts_never_share_an_instance():
    a, b = started(), started()
    parked = {server_pid(a), server_pid(b)}
    assert server_pid(a) != server_pid(b) and a.local.db_path != b.local.db_path
    add_place(a)
    assert has_place(a) and not has_place(b)
    a.close()
    b.close()
    assert POOL.idle() == 2
    c, d = started(), started()  # both parked instances are handed out, each to one host
    assert {server_pid(c), server_pid(d)} == parked
    c.close()
    d.close()


def test_other_site_sets_start_their_own_instance():
    map_host = started()
    pid = server_pid(map_host)
    map_host.close()
    other = started(("wikipedia",))
    assert server_pid(other) != pid
    assert POOL.idle() == 1  # the map instance is still parked
    other.close()


def test_a_dead_parked_instance_is_not_handed_out():
    first = started()
    local = first.local
    dead_pid = server_pid(first)
    first.close()
    local._proc.kill()  # type: ignore[union-attr]
    local._proc.wait()  # type: ignore[union-attr]
    second = started()
    assert server_pid(second) != dead_pid and second.local is not local
    assert second.local.is_alive()
    assert local._dir is None, "the dead instance must be closed (its files removed)"
    second.close()


def test_the_pool_keeps_at_most_max_idle_and_closes_the_rest():
    pool = SitesPool(max_idle=2)
    instances = [LocalSites(["homepage"]) for _ in range(3)]
    for instance in instances:
        instance.start()
    pids = {i._proc.pid for i in instances}  # type: ignore[union-attr]
    oldest = instances[0]._proc.pid  # type: ignore[union-attr]
    for instance in instances:
        pool.release(instance)
    assert pool.idle() == 2
    assert wait_gone({oldest}) == set()
    pool.shutdown()
    assert pool.idle() == 0 and wait_gone(pids) == set()


def test_reuse_off_stops_the_server_at_close(monkeypatch):
    monkeypatch.setenv(REUSE_ENV_VAR, "0")
    host = started()
    pid = server_pid(host)
    host.close()
    assert POOL.idle() == 0 and wait_gone({pid}) == set()


def test_nothing_is_left_after_close_and_pool_shutdown():
    hosts = [started(), started(), started(("wikipedia",))]
    pids = {server_pid(b) for b in hosts}
    dirs = [b.local.db_path.parent for b in hosts]
    for host in hosts:
        host.close()
    POOL.shutdown()
    assert wait_gone(pids) == set()
    assert not any(d.exists() for d in dirs)


def test_parked_instances_are_closed_at_interpreter_exit():
    code = (
        "from webarena_gym.envs.local.host import LocalSiteHost\n"
        "b = LocalSiteHost(('map',)); b.prepare()\n"
        "print(b.local._proc.pid, b.local.db_path.parent, flush=True)\n"
        "b.close()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[1],
        env=dict(os.environ),
    )
    assert out.returncode == 0, out.stderr
    pid, directory = out.stdout.split()
    assert wait_gone({int(pid)}) == set()
    assert not Path(directory).exists(), "atexit must close the parked instance (its files removed)"


@pytest.mark.browser
def test_a_second_environment_reuses_the_server_and_starts_faster():
    from webarena_gym import envs

    timings, pids = [], []
    for _ in range(2):
        begin = time.perf_counter()
        env = envs.make("webarena/local.200", judge_mock="correct")  # reddit: a site with a login
        try:
            env.reset(seed=0)
            timings.append(time.perf_counter() - begin)
            pids.append(server_pid(env.unwrapped.host))
            assert "reddit" in env.unwrapped.host.local.login_cookies
        finally:
            env.close()
    assert pids[0] == pids[1]
    assert timings[1] < timings[0], f"reused environment was not faster: {timings}"
