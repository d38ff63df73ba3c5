"""The local suite's framework: pristine database, server process, reset/snapshot/restore, isolation,
restarts, the task registry and the solution-step resolver. Real server processes, real HTTP, no browser."""

from __future__ import annotations

import json
import re
import socket
import sqlite3
import urllib.error
import urllib.request

import pytest

from webarena_gym.envs.local import data, registry
from webarena_gym.envs.local.framework import session_cookie_name
from webarena_gym.envs.local.launcher import LocalSites, LocalSitesError
from webarena_gym.envs.local.reference import SolutionStepError, find_bid, to_browsergym
from webarena_gym.envs.local.sites import SITE_NAMES, UnknownSiteError, available_sites, load_site

SITES = ["map", "homepage"]
EXTRA_PLACE = "Snapshot Test Café"


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def add_place(sites: LocalSites, name: str = EXTRA_PLACE) -> None:
    """A write done behind the server's back, as a site's form would do it."""
    with sqlite3.connect(sites.db_path) as conn:
        conn.execute(
            "INSERT INTO map_place (name, kind, town, address, lat, lon, node_id, postcode) "
            "VALUES (?, 'cafe', 'Kingston', '1 Test Street, Kingston', 40.44, -79.94, 1, '15101')",
            (name,),
        )
    conn.close()


def content(blob: bytes) -> list[str]:
    """A snapshot's SQL content (the header's change counter differs between equal databases)."""
    conn = sqlite3.connect(":memory:")
    conn.deserialize(blob)
    try:
        return list(conn.iterdump())
    finally:
        conn.close()


def search(sites: LocalSites, text: str) -> str:
    return fetch(sites.urls["map"] + "/search?query=" + urllib.request.quote(text))


@pytest.fixture(scope="module")
def sites():
    with LocalSites(SITES) as local:
        yield local


@pytest.fixture(scope="module")
def other():
    with LocalSites(SITES) as local:
        yield local


def test_servers_listen_on_loopback_only_with_their_own_ports(sites):
    urls = sites.urls
    assert sorted(urls) == sorted(SITES)
    ports = set()
    for url in urls.values():
        host, port = re.fullmatch(r"http://(127\.0\.0\.1):(\d+)", url).groups()
        ports.add(int(port))
        assert json.loads(fetch(url + "/__health"))["status"] == "ok"
    assert len(ports) == len(SITES)
    home = fetch(urls["homepage"] + "/")
    assert urls["map"] + "/" in home and "(not running)" in home  # links to running sites only


def test_pristine_database_is_deterministic_and_cached(tmp_path):
    mine = ["wikipedia", "map", "homepage"]
    data.build(tmp_path / "a.sqlite", mine)
    data.build(tmp_path / "b.sqlite", mine)
    assert content(data.dump(tmp_path / "a.sqlite")) == content(data.dump(tmp_path / "b.sqlite"))
    first = data.pristine_db()
    assert data.pristine_db() == first and first.exists()
    with sqlite3.connect(first) as conn:
        assert conn.execute("SELECT COUNT(*) FROM wiki_article").fetchone()[0] >= 400
        assert conn.execute("SELECT COUNT(*) FROM map_node").fetchone()[0] >= 300
    conn.close()


def test_reset_and_restore_are_exact_and_seen_at_once(sites):
    pristine = sites.snapshot()
    assert EXTRA_PLACE not in search(sites, "Snapshot")
    add_place(sites)
    assert EXTRA_PLACE in search(sites, "Snapshot")  # per-request connections see the write
    changed = sites.snapshot()
    sites.reset_state()
    assert content(sites.snapshot()) == content(pristine) and EXTRA_PLACE not in search(sites, "Snapshot")
    sites.restore(changed)
    assert content(sites.snapshot()) == content(changed) and EXTRA_PLACE in search(sites, "Snapshot")
    sites.restore(pristine)
    assert EXTRA_PLACE not in search(sites, "Snapshot")


def test_two_instances_never_share_state(sites, other):
    assert sites.db_path != other.db_path and sites.urls["map"] != other.urls["map"]
    add_place(sites, "Only In The First Instance")
    try:
        assert "Only In The First Instance" in search(sites, "Only In")
        assert "Only In The First Instance" not in search(other, "Only In")
    finally:
        sites.reset_state()


def test_a_dead_server_is_restarted_on_the_same_ports(sites):
    before = sites.urls
    sites._proc.kill()
    sites._proc.wait()
    with pytest.raises(urllib.error.URLError):
        fetch(before["map"] + "/__health")
    sites.reset_state()  # the next reset notices and restarts
    assert sites.urls == before
    assert "Kingston" in fetch(before["map"] + "/")


def test_a_port_clash_falls_back_to_a_free_port():
    with LocalSites(["homepage"]) as local:
        port = int(local.urls["homepage"].rsplit(":", 1)[1])
        local._stop_process()
        blocker = socket.socket()
        blocker.bind(("127.0.0.1", port))
        blocker.listen()
        try:
            local.ensure_running()
            assert local.urls["homepage"] != f"http://127.0.0.1:{port}"
            assert "Welcome" in fetch(local.urls["homepage"] + "/")
        finally:
            blocker.close()


def test_close_stops_the_server_and_removes_its_files():
    local = LocalSites(["homepage"])
    local.start()
    url, directory = local.urls["homepage"], local.db_path.parent
    local.close()
    local.close()  # idempotent
    assert not directory.exists()
    with pytest.raises(urllib.error.URLError):
        fetch(url + "/__health")


def test_unknown_sites_are_rejected_clearly():
    with pytest.raises(LocalSitesError, match="not available: nosuch"):
        LocalSites(["nosuch"])
    with pytest.raises(UnknownSiteError):
        load_site("nosuch")
    assert set(available_sites()) <= set(SITE_NAMES) and {"map", "wikipedia", "homepage"} <= set(available_sites())


def test_serve_command_rejects_unknown_sites(capsys):
    from webarena_gym.envs.local.serve import main

    assert main(["nosuch"]) == 2
    assert "not available: nosuch" in capsys.readouterr().err


def test_each_site_has_its_own_session_cookie():
    assert len({session_cookie_name(site) for site in SITE_NAMES}) == len(SITE_NAMES)


# -- tasks and solutions ------------------------------------------------------------------------------

# A site whose first hundred ids filled up continues in a second range above 700.
ID_RANGES = {
    "shopping": (range(0, 100), range(750, 800)),
    "shopping_admin": (range(100, 200), range(800, 850)),
    "reddit": (range(200, 300),),
    "gitlab": (range(300, 400), range(700, 750)),
    "map": (range(400, 500),),
    "wikipedia": (range(500, 600),),
    "multi_site": (range(600, 700),),
}


def test_every_task_has_webarena_keys_a_solution_and_an_id_in_its_range():
    tasks, solutions = registry.load_tasks(), registry.load_solutions()
    assert len(tasks) >= 30
    for path in sorted(registry.TASKS_DIR.glob("*.json")):
        ranges = ID_RANGES[path.stem]
        for task in json.loads(path.read_text()):
            assert set(task) == registry.TASK_KEYS, task["task_id"]
            assert set(task["eval"]) <= registry.EVAL_KEYS
            template = registry.webarena_template_id(task)
            assert any(task["task_id"] in ids for ids in ranges), task["task_id"]
            local_id = task["intent_template_id"] - registry.LOCAL_TEMPLATE_BASE
            assert template is not None or any(local_id in ids for ids in ranges)
            intent = task["intent_template"]
            for key, value in task["instantiation_dict"].items():
                intent = intent.replace("{{" + key + "}}", str(value))
            assert intent == task["intent"]
            assert solutions[task["task_id"]], f"task {task['task_id']} has no reference solution"
    assert set(registry.load_solutions()) == {t["task_id"] for t in tasks}


def test_my_task_files_cover_every_eval_kind():
    mine = [t for t in registry.load_tasks() if 400 <= t["task_id"] < 700]
    for lo, hi, n_tasks, n_templates in (
        (400, 500, 8, 3),  # map
        (500, 600, 8, 3),  # wikipedia
        (600, 700, 6, 2),  # cross-site
    ):
        group = [t for t in mine if lo <= t["task_id"] < hi]
        assert len(group) >= n_tasks and len({t["intent_template_id"] for t in group}) >= n_templates
    kinds = {k for t in mine for k in (t["eval"]["reference_answers"] or {})}
    assert kinds == {"exact_match", "must_include", "fuzzy_match"}
    assert {"string_match", "url_match"} <= {e for t in mine for e in t["eval"]["eval_types"]}
    assert any(t["eval"]["reference_answers"] == {"fuzzy_match": "N/A"} and t["eval"]["string_note"] for t in mine)
    assert any(len(t["sites"]) > 1 for t in mine) and any("__HOMEPAGE__" in t["start_url"] for t in mine)


def test_registry_filters_by_site_and_template():
    assert set(registry.task_ids(site="map")) >= set(range(400, 415))
    assert 602 in registry.task_ids(site="map") and 602 in registry.task_ids(site="wikipedia")
    assert registry.task_ids(template=10501) == [503, 504]
    assert registry.task_ids(site="map", template=10501) == []


def _node(bid: str, role: str, name: str, ignored: bool = False) -> dict:
    return {"browsergym_id": bid, "role": {"value": role}, "name": {"value": name}, "ignored": ignored}


AXTREE = {
    "nodes": [
        _node("1", "link", "Kingston"),
        _node("2", "link", "Kingston  Town Hall"),
        _node("3", "button", "Go"),
        _node("4", "button", "Go"),
        _node("5", "searchbox", "Search"),
        _node("6", "link", "Hidden", ignored=True),
        {"role": {"value": "StaticText"}, "name": {"value": "Kingston"}},
    ]
}
OBS = {"axtree_object": AXTREE, "url": "http://127.0.0.1:5000/search?query=x"}


def test_targets_resolve_by_role_and_name_exactly_then_by_substring():
    assert find_bid(AXTREE, "link", "Kingston") == "1"
    assert find_bid(AXTREE, "link", "Kingston Town Hall") == "2"  # whitespace collapsed
    assert find_bid(AXTREE, "link", "town hall") == "2"  # no exact match: substring
    assert find_bid(AXTREE, "button", "Go", 1) == "4"
    with pytest.raises(SolutionStepError, match="no link named 'Hidden'"):
        find_bid(AXTREE, "link", "Hidden")


def test_steps_become_browsergym_actions():
    urls = {"map": "http://127.0.0.1:5000", "wikipedia": "http://127.0.0.1:6000"}
    step = {"action": "fill", "target": {"role": "searchbox", "name": "Search"}, "value": "O'Hara's \"pub\""}
    assert to_browsergym(step, OBS) == "fill('5', 'O\\'Hara\\'s \"pub\"')"
    assert to_browsergym({"action": "click", "target": {"role": "button", "name": "Go", "nth": 1}}, OBS) == "click('4')"
    assert (
        to_browsergym({"action": "press", "target": {"role": "searchbox", "name": "Search"}, "value": "Enter"}, OBS)
        == "press('5', 'Enter')"
    )
    assert (
        to_browsergym({"action": "goto", "url": "__WIKIPEDIA__/wiki/X"}, OBS, urls)
        == "goto('http://127.0.0.1:6000/wiki/X')"
    )
    assert to_browsergym({"action": "goto", "url": "/place/3"}, OBS) == "goto('http://127.0.0.1:5000/place/3')"
    assert to_browsergym({"action": "send_msg_to_user", "text": "12 min"}, OBS) == "send_msg_to_user('12 min')"
    assert to_browsergym({"action": "report_infeasible", "text": ""}, OBS) == "report_infeasible('')"
    with pytest.raises(SolutionStepError, match="unknown solution action"):
        to_browsergym({"action": "exec", "text": "import os"}, OBS)
