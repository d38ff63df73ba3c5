"""map: place search and directions over a fixed road graph (like WebArena's OpenStreetMap site).

The road graph is generated from the shared world: every mapped town has a centre and a ring of
street junctions, places hang off their nearest junction, towns are joined by motorways, primary and
secondary routes, and some by foot/cycle trails. Directions run Dijkstra on travel time for the chosen
mode (each mode has its own speeds and may not use some road kinds), so distance and time are exact
and reproducible. The query lives in the URL (``/search?query=``, ``/directions?from=&to=&mode=``) so
url_match tasks work.
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
import sqlite3
from dataclasses import dataclass
from typing import Any

from flask import Flask, abort, redirect, render_template, request, url_for

from envs.local.framework import SiteContext, make_app, paginate, query, query_one
from envs.local.world import Town, build_world, haversine_km, offset

SCHEMA = """
CREATE TABLE map_node (id INTEGER PRIMARY KEY, lat REAL NOT NULL, lon REAL NOT NULL, town TEXT NOT NULL);
CREATE TABLE map_edge (
    id INTEGER PRIMARY KEY, a INTEGER NOT NULL REFERENCES map_node(id), b INTEGER NOT NULL REFERENCES map_node(id),
    road TEXT NOT NULL, kind TEXT NOT NULL, length_m INTEGER NOT NULL
);
CREATE TABLE map_place (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, town TEXT NOT NULL,
    address TEXT NOT NULL, lat REAL NOT NULL, lon REAL NOT NULL, node_id INTEGER NOT NULL REFERENCES map_node(id)
);
CREATE INDEX map_edge_a ON map_edge(a);
CREATE INDEX map_edge_b ON map_edge(b);
"""

# km/h per road kind; a kind missing from a mode's table cannot be used in that mode.
SPEEDS: dict[str, dict[str, float]] = {
    "driving": {"motorway": 100.0, "primary": 70.0, "secondary": 55.0, "residential": 30.0},
    "cycling": {"primary": 18.0, "secondary": 18.0, "residential": 16.0, "trail": 14.0},
    "walking": {"primary": 5.0, "secondary": 5.0, "residential": 5.0, "trail": 4.5},
}
MODES = tuple(SPEEDS)
RING_STREETS = ("North Street", "East Road", "South Avenue", "West Lane", "Mill Road", "Church Way")


# -- seed --------------------------------------------------------------------------------------------


def _length_m(a: tuple[float, float], b: tuple[float, float], winding: float) -> int:
    return max(30, round(haversine_km(a[0], a[1], b[0], b[1]) * 1000 * winding))


def _town_links(towns: list[Town]) -> list[tuple[int, int, str]]:
    """Inter-town roads: a spanning tree plus each town's two nearest neighbours, a motorway and trails."""

    def dist(i: int, j: int) -> float:
        return haversine_km(towns[i].lat, towns[i].lon, towns[j].lat, towns[j].lon)

    links: dict[tuple[int, int], str] = {}
    n = len(towns)
    in_tree, best = {0}, {j: (dist(0, j), 0) for j in range(1, n)}
    while best:  # Prim's spanning tree keeps the road network connected
        j = min(best, key=lambda k: best[k][0])
        _, i = best.pop(j)
        in_tree.add(j)
        links[(min(i, j), max(i, j))] = "primary"
        for k in best:
            if dist(j, k) < best[k][0]:
                best[k] = (dist(j, k), j)
    for i in range(n):
        near = sorted((j for j in range(n) if j != i), key=lambda j: dist(i, j))
        for j in near[:2]:
            links.setdefault((min(i, j), max(i, j)), "secondary")
        trail = near[3]
        links.setdefault((min(i, trail), max(i, trail)), "trail")
    big = sorted(range(n), key=lambda i: -towns[i].population)[:8]
    big.sort(key=lambda i: math.atan2(towns[i].lat - towns[0].lat, towns[i].lon - towns[0].lon))
    for i, j in itertools.pairwise(big):
        links[(min(i, j), max(i, j))] = "motorway"
    return [(i, j, kind) for (i, j), kind in sorted(links.items())]


def seed(conn: sqlite3.Connection, rng: random.Random) -> None:
    world = build_world()
    towns = [t for t in world.towns if t.mapped]
    nodes: list[tuple[float, float, str]] = []
    edges: list[tuple[int, int, str, str, int]] = []

    def add_node(lat: float, lon: float, town: str) -> int:
        nodes.append((lat, lon, town))
        return len(nodes)  # ids start at 1, in insertion order

    def add_edge(a: int, b: int, road: str, kind: str, winding: float = 1.15) -> None:
        edges.append((a, b, road, kind, _length_m(nodes[a - 1][:2], nodes[b - 1][:2], winding)))

    centres, rings = [], []
    for town in towns:
        centre = add_node(town.lat, town.lon, town.name)
        ring = []
        for k, street in enumerate(RING_STREETS):
            angle = k * math.tau / len(RING_STREETS) + rng.uniform(-0.3, 0.3)
            radius = rng.uniform(0.9, 1.6)
            ring.append(
                add_node(*offset(town.lat, town.lon, radius * math.sin(angle), radius * math.cos(angle)), town.name)
            )
            add_edge(centre, ring[-1], f"{town.name} {street}", "residential")
        for k in range(len(ring)):
            add_edge(ring[k], ring[(k + 1) % len(ring)], f"{town.name} Ring Road", "residential")
        centres.append(centre)
        rings.append(ring)

    route_no = iter(range(2, 200))
    for i, j, kind in _town_links(towns):
        a, b = towns[i].name, towns[j].name
        road = {"motorway": "Motorway M1", "trail": f"{a}–{b} Trail"}.get(kind) or f"Route {next(route_no)}"
        add_edge(centres[i], centres[j], road, kind, 1.0 if kind == "motorway" else 1.2)

    places = []
    for place in world.places:
        town_index = next(k for k, t in enumerate(towns) if t.name == place.town)
        node = add_node(place.lat, place.lon, place.town)
        if place.kind == "lighthouse":  # on an island: only the causeway trail reaches it
            add_edge(rings[town_index][0], node, "Causeway Trail", "trail")
        else:
            nearest = min(
                rings[town_index] + [centres[town_index]],
                key=lambda n: haversine_km(place.lat, place.lon, *nodes[n - 1][:2]),
            )
            add_edge(nearest, node, place.address.split(",")[0].lstrip("0123456789 "), "residential")
        places.append((place.name, place.kind, place.town, place.address, place.lat, place.lon, node))

    conn.executemany("INSERT INTO map_node (lat, lon, town) VALUES (?, ?, ?)", nodes)
    conn.executemany("INSERT INTO map_edge (a, b, road, kind, length_m) VALUES (?, ?, ?, ?, ?)", edges)
    conn.executemany(
        "INSERT INTO map_place (name, kind, town, address, lat, lon, node_id) VALUES (?, ?, ?, ?, ?, ?, ?)", places
    )


# -- routing -----------------------------------------------------------------------------------------


@dataclass
class Route:
    distance_m: int
    seconds: float
    steps: list[dict[str, Any]]  # {"road", "distance_m"} with consecutive edges of one road merged

    @property
    def distance_km(self) -> str:
        return f"{self.distance_m / 1000:.1f} km"

    @property
    def duration(self) -> str:
        return format_duration(self.seconds)


def format_duration(seconds: float) -> str:
    minutes = max(1, round(seconds / 60))
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60} min"


def shortest_route(edges: list[sqlite3.Row], start: int, goal: int, mode: str) -> Route | None:
    """Fastest route for ``mode`` (Dijkstra on travel time), or None when the mode cannot get there."""
    speeds = SPEEDS[mode]
    graph: dict[int, list[tuple[int, float, sqlite3.Row]]] = {}
    for e in edges:
        if e["kind"] in speeds:
            cost = e["length_m"] / 1000 / speeds[e["kind"]] * 3600
            graph.setdefault(e["a"], []).append((e["b"], cost, e))
            graph.setdefault(e["b"], []).append((e["a"], cost, e))
    best, back = {start: 0.0}, {}
    heap = [(0.0, start)]
    while heap:
        cost, node = heapq.heappop(heap)
        if node == goal:
            break
        if cost > best.get(node, math.inf):
            continue
        for nxt, step, edge in graph.get(node, []):
            if cost + step < best.get(nxt, math.inf):
                best[nxt], back[nxt] = cost + step, (node, edge)
                heapq.heappush(heap, (cost + step, nxt))
    if goal not in best:
        return None
    path, node = [], goal
    while node != start:
        node, edge = back[node]
        path.append(edge)
    path.reverse()
    steps: list[dict[str, Any]] = []
    for edge in path:
        if steps and steps[-1]["road"] == edge["road"]:
            steps[-1]["distance_m"] += edge["length_m"]
        else:
            steps.append({"road": edge["road"], "distance_m": edge["length_m"]})
    return Route(sum(e["length_m"] for e in path), best[goal], steps)


def find_place(text: str) -> sqlite3.Row | None:
    """Best place for a typed name: exact name, then name prefix, then any field containing it."""
    text = text.strip()
    if not text:
        return None
    like = f"%{text}%"
    return query_one(
        "SELECT *, (CASE WHEN lower(name) = lower(?) THEN 0 WHEN name LIKE ? THEN 1 WHEN name LIKE ? THEN 2 "
        "ELSE 3 END) AS rank FROM map_place WHERE name LIKE ? OR address LIKE ? "
        "ORDER BY rank, length(name), name LIMIT 1",
        (text, f"{text}%", like, like, like),
    )


def coords(lat: float, lon: float) -> str:
    return f"{lat:.4f}, {lon:.4f}"


# -- app ---------------------------------------------------------------------------------------------


def create_app(ctx: SiteContext) -> Flask:
    app = make_app(ctx, __name__)
    app.jinja_env.globals.update(coords=coords, modes=MODES)

    @app.get("/")
    def index() -> str:
        towns = query("SELECT town, COUNT(*) AS n FROM map_place GROUP BY town ORDER BY town")
        return render_template("index.html", towns=towns, svg=_svg())

    @app.get("/search")
    def search() -> str:
        text = (request.args.get("query") or "").strip()
        results = None
        if text:
            like = f"%{text}%"
            results = paginate(
                "SELECT *, (CASE WHEN lower(name) = lower(?) THEN 0 WHEN name LIKE ? THEN 1 ELSE 2 END) AS rank "
                "FROM map_place WHERE name LIKE ? OR address LIKE ? OR kind LIKE ? OR town LIKE ? "
                "ORDER BY rank, name",
                (text, f"{text}%", like, like, like, like),
                per_page=25,
            )
        return render_template("search.html", text=text, results=results)

    @app.get("/place/<int:place_id>")
    def place(place_id: int) -> str:
        row = query_one("SELECT * FROM map_place WHERE id = ?", (place_id,))
        if row is None:
            abort(404)
        others = query("SELECT * FROM map_place WHERE id != ? AND town = ?", (place_id, row["town"]))
        nearby = sorted(
            ((haversine_km(row["lat"], row["lon"], o["lat"], o["lon"]), o) for o in others), key=lambda x: x[0]
        )
        return render_template("place.html", p=row, nearby=nearby[:10])

    @app.get("/directions")
    def directions() -> Any:
        src_text, dst_text = request.args.get("from", ""), request.args.get("to", "")
        mode = request.args.get("mode", "driving")
        form = {"from": src_text, "to": dst_text, "mode": mode if mode in MODES else "driving"}
        if not src_text and not dst_text:
            return render_template("directions.html", form=form)
        errors = []
        if mode not in MODES:
            errors.append(f"Unknown travel mode '{mode}'. Choose driving, walking or cycling.")
        src, dst = find_place(src_text), find_place(dst_text)
        if src is None:
            errors.append(f"Could not find a place matching '{src_text}'.")
        if dst is None:
            errors.append(f"Could not find a place matching '{dst_text}'.")
        if errors or src is None or dst is None:
            return render_template("directions.html", form=form, errors=errors), 404
        if (src["name"], dst["name"]) != (src_text, dst_text):  # canonical URL: the places' full names
            return redirect(url_for("directions", **{"from": src["name"], "to": dst["name"], "mode": mode}))
        route = shortest_route(query("SELECT * FROM map_edge"), src["node_id"], dst["node_id"], mode)
        return render_template("directions.html", form=form, src=src, dst=dst, route=route, mode=mode)

    return app


def _svg() -> dict[str, Any]:
    """Road lines scaled into a 800x600 box for the overview map."""
    nodes = {r["id"]: (r["lat"], r["lon"]) for r in query("SELECT id, lat, lon FROM map_node")}
    lat_lo, lat_hi = min(p[0] for p in nodes.values()), max(p[0] for p in nodes.values())
    lon_lo, lon_hi = min(p[1] for p in nodes.values()), max(p[1] for p in nodes.values())

    def xy(node: int) -> tuple[float, float]:
        lat, lon = nodes[node]
        return (
            round((lon - lon_lo) / (lon_hi - lon_lo) * 780 + 10, 1),
            round((lat_hi - lat) / (lat_hi - lat_lo) * 580 + 10, 1),
        )

    roads = [(*xy(e["a"]), *xy(e["b"]), e["kind"]) for e in query("SELECT a, b, kind FROM map_edge")]
    towns = query("SELECT town, AVG(lat) AS lat, AVG(lon) AS lon, MIN(id) AS id FROM map_node GROUP BY town")
    labels = [(*xy(t["id"]), t["town"]) for t in towns]
    return {"roads": roads, "labels": labels}
