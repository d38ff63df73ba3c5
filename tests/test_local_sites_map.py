"""The map site: place search, place pages, directions by mode over the fixed road graph (checked
against an independent shortest-path computation), canonical URLs for url_match, and clear errors."""

from __future__ import annotations

import math
import re
import sqlite3

import pytest

from webarena_gym.envs.local import data
from webarena_gym.envs.local.framework import SiteContext
from webarena_gym.envs.local.sites import map as site
from webarena_gym.envs.local.sites import map_region


@pytest.fixture(scope="module")
def db_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("map") / "sites.sqlite"
    data.build(path, ["map"])
    return path


@pytest.fixture(scope="module")
def client(db_path):
    return site.create_app(SiteContext("map", str(db_path), {})).test_client()


def summary(html: str) -> tuple[str, str] | None:
    found = re.search(r"Distance: ([\d.]+ km) · Time: ([^<]+)<", html)
    return (found.group(1), found.group(2).strip()) if found else None


def directions(client, start: str, end: str, mode: str):
    return client.get("/directions", query_string={"from": start, "to": end, "mode": mode})


def test_graph_is_a_few_hundred_nodes_and_connected_for_walking(db_path):
    conn = sqlite3.connect(db_path)
    nodes = [r[0] for r in conn.execute("SELECT id FROM map_node")]
    edges = conn.execute("SELECT a, b FROM map_edge").fetchall()
    conn.close()
    assert 300 <= len(nodes) <= 1500
    neighbours: dict[int, set[int]] = {}
    for a, b in edges:
        neighbours.setdefault(a, set()).add(b)
        neighbours.setdefault(b, set()).add(a)
    seen, todo = {nodes[0]}, [nodes[0]]
    while todo:
        for nxt in neighbours.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    assert seen == set(nodes)


def bellman_ford_seconds(db_path, start: int, goal: int, mode: str) -> float:
    """Independent check of Dijkstra: relax every edge until nothing changes."""
    conn = sqlite3.connect(db_path)
    edges = conn.execute("SELECT a, b, kind, length_m FROM map_edge").fetchall()
    conn.close()
    speeds = site.SPEEDS[mode]
    best = {start: 0.0}
    changed = True
    while changed:
        changed = False
        for a, b, kind, length in edges:
            if kind not in speeds:
                continue
            cost = length / 1000 / speeds[kind] * 3600
            for u, v in ((a, b), (b, a)):
                if u in best and best[u] + cost < best.get(v, math.inf) - 1e-9:
                    best[v] = best[u] + cost
                    changed = True
    return best.get(goal, math.inf)


@pytest.mark.parametrize("mode", site.MODES)
def test_directions_are_the_fastest_route_for_the_mode(client, db_path, mode):
    conn = sqlite3.connect(db_path)
    conn.row_factory = sqlite3.Row
    src = conn.execute("SELECT * FROM map_place WHERE name = 'Kingston Town Hall'").fetchone()
    dst = conn.execute("SELECT * FROM map_place WHERE name = 'Glenbury Town Hall'").fetchone()
    route = site.shortest_route(conn.execute("SELECT * FROM map_edge").fetchall(), src["node_id"], dst["node_id"], mode)
    conn.close()
    assert route is not None
    assert route.seconds == pytest.approx(bellman_ford_seconds(db_path, src["node_id"], dst["node_id"], mode))
    shown = summary(directions(client, "Kingston Town Hall", "Glenbury Town Hall", mode).data.decode())
    assert shown == (route.distance_km, route.duration)


def test_modes_differ_and_the_island_has_no_driving_route(client):
    times = {
        m: summary(directions(client, "Kingston Town Hall", "Glenbury Town Hall", m).data.decode()) for m in site.MODES
    }
    assert len({t[1] for t in times.values()}) == 3
    html = directions(client, "Larkridge Town Hall", "Larkridge Island Lighthouse", "driving").data.decode()
    assert "No driving route found" in html and summary(html) is None
    assert summary(directions(client, "Larkridge Town Hall", "Larkridge Island Lighthouse", "walking").data.decode())


def test_typed_names_redirect_to_the_canonical_directions_url(client):
    response = directions(client, "kingston town hall", "Glenbury Town", "cycling")
    assert response.status_code == 302
    assert response.headers["Location"] == ("/directions?from=Kingston+Town+Hall&to=Glenbury+Town+Hall&mode=cycling")


def test_bad_directions_input_gives_clear_errors(client):
    response = directions(client, "Nowhere At All", "Kingston Town Hall", "driving")
    assert response.status_code == 404
    assert "Could not find a place matching &#39;Nowhere At All&#39;" in response.data.decode()
    html = directions(client, "Kingston Town Hall", "Glenbury Town Hall", "teleport").data.decode()
    assert "Unknown travel mode &#39;teleport&#39;" in html
    assert client.get("/place/999999").status_code == 404


def test_search_lists_ten_labelled_results_a_page_like_nominatim(client, db_path):
    html = client.get("/search?query=library").data.decode()
    conn = sqlite3.connect(db_path)
    n_libraries = conn.execute(
        "SELECT COUNT(*) FROM map_place WHERE kind = 'library' OR name LIKE '%library%'"
    ).fetchone()[0]
    lat, lon, address, postcode, phone = conn.execute(
        "SELECT lat, lon, address, postcode, phone FROM map_place WHERE name = 'Kingston Public Library'"
    ).fetchone()
    conn.close()
    assert "Results from" in html and "More results" in html and n_libraries > 30
    pages, seen, page = 0, set(), 1
    while True:
        html = client.get(f"/search?query=library&page={page}").data.decode()
        found = re.findall(r'href="/place/(\d+)"', html)
        assert len(found) <= 10
        seen |= set(found)
        pages += 1
        if "More results" not in html:
            break
        page += 1
    assert len(seen) == n_libraries and pages == -(-n_libraries // 10)
    exact = client.get("/search?query=Kingston+Public+Library").data.decode()
    assert f">Kingston Public Library, {address}, {postcode}</a>" in exact
    place_id = re.search(r'href="/place/(\d+)">Kingston Public Library,', exact).group(1)
    details = client.get(f"/place/{place_id}").data.decode()
    assert f"{lat:.4f}, {lon:.4f}" in details and postcode in details and phone in details
    assert "No results found" in client.get("/search?query=zzzz").data.decode()


def test_near_search_ranks_a_kind_by_distance_under_one_canonical_url(client, db_path):
    response = client.get("/search?query=Pharmacy+near+kingston+public+library")
    assert response.status_code == 302
    assert response.headers["Location"] == "/search?query=pharmacies+near+Kingston+Public+Library"
    html = client.get(response.headers["Location"]).data.decode()
    distances = [float(d) for d in re.findall(r"<small>([\d.]+) km from Kingston Public Library</small>", html)]
    conn = sqlite3.connect(db_path)
    n_pharmacies = conn.execute("SELECT COUNT(*) FROM map_place WHERE kind = 'pharmacy'").fetchone()[0]
    conn.close()
    assert len(distances) == min(10, n_pharmacies) and distances == sorted(distances)
    assert html.count("Pharmacy <a") == len(distances)


def test_directions_form_has_openstreetmaps_fields_and_engine_order(client):
    html = client.get("/directions?from=Kingston+Town+Hall&to=Glenbury+Town+Hall&mode=walking").data.decode()
    assert (
        'name="route_from" value="Kingston Town Hall, ' in html
        and 'name="route_to" value="Glenbury Town Hall, ' in html
    )
    options = re.findall(r'<option value="(\w+)"', html)
    assert options == ["cycling", "driving", "walking"] and 'class="routing_engines"' in html
    again = client.get("/directions?route_from=Kingston+Town+Hall%2C+x&route_to=Glenbury+Town+Hall&mode=driving")
    assert again.headers["Location"] == "/directions?from=Kingston+Town+Hall&to=Glenbury+Town+Hall&mode=driving"


def test_place_page_lists_nearby_places_by_distance(client):
    html = client.get("/search?query=Kingston+Town+Hall").data.decode()
    place_id = re.search(r'href="/place/(\d+)">Kingston Town Hall,', html).group(1)
    page = client.get(f"/place/{place_id}").data.decode()
    distances = [float(d) for d in re.findall(r"– ([\d.]+) km</li>", page)]
    assert len(distances) == 10 and distances == sorted(distances)


def test_a_state_page_lists_its_bordering_states(client):
    html = client.get("/search?query=Connecticut").data.decode()
    place_id = re.search(r'href="/place/(\d+)">Connecticut, United States</a>', html).group(1)
    page = client.get(f"/place/{place_id}").data.decode()
    borders = re.search(r'<ul class="borders"[^>]*>(.*?)</ul>', page, re.S).group(1)
    assert re.findall(r">([A-Z][\w ]+)</a>", borders) == ["Massachusetts", "New York", "Rhode Island"]


def test_the_real_region_routes_by_every_mode_and_keeps_its_near_searches(client, db_path):
    for mode in site.MODES:
        assert summary(directions(client, "Pittsburgh", "Massachusetts Institute of Technology", mode).data.decode())
    html = client.get("/search?query=hotels+near+Carnegie+Mellon+University").data.decode()
    conn = sqlite3.connect(db_path)
    hotels = conn.execute("SELECT name, town FROM map_place WHERE kind = 'hotel'").fetchall()
    conn.close()
    fictional = [name for name, town in hotels if town not in map_region.TOWNS]
    assert fictional and "Wyndham Pittsburgh University Center" in html and not any(n in html for n in fictional)
    html = client.get("/search?query=hotels+near+Kingston+Public+Library").data.decode()
    assert "Wyndham" not in html and "Hyatt" not in html
