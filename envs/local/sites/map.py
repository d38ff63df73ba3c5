"""map: place search and directions over a fixed road graph (like WebArena's OpenStreetMap site).

The road graph is generated from the shared world: every mapped town has a centre and a ring of
street junctions, places hang off their nearest junction, towns are joined by motorways, primary and
secondary routes, and some by foot/cycle trails; a real-geography region (Pittsburgh, the roads east
to Philadelphia and Boston, US states and their borders: :mod:`map_region`) comes after them.
Directions run Dijkstra on travel time for the chosen mode (each mode has its own speeds and may not
use some road kinds), so distance and time are exact and reproducible. The query lives in the URL
(``/search?query=``, ``/directions?from=&to=&mode=``) so url_match tasks work; ``/search?query=<kind>
near <place>`` lists that kind of place by distance.

The pages keep the structure WebArena's OpenStreetMap checks read: everything sits in ``div#content``,
the sidebar's content in ``#sidebar_content``, the directions form has the ``route_from``/``route_to``
inputs (holding the full place label after a search) and a ``select.routing_engines`` whose options run
bicycle, car, foot as on OpenStreetMap (so ``selectedIndex`` 1 is driving, 2 walking).
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from flask import Flask, abort, redirect, render_template, request, url_for

from webarena_gym.envs.local.framework import SiteContext, make_app, paginate, query, query_one
from webarena_gym.envs.local.sites import map_region
from webarena_gym.envs.local.world import CENTRE_LAT, CENTRE_LON, Town, build_world, haversine_km, offset

SCHEMA = """
CREATE TABLE map_node (id INTEGER PRIMARY KEY, lat REAL NOT NULL, lon REAL NOT NULL, town TEXT NOT NULL);
CREATE TABLE map_edge (
    id INTEGER PRIMARY KEY, a INTEGER NOT NULL REFERENCES map_node(id), b INTEGER NOT NULL REFERENCES map_node(id),
    road TEXT NOT NULL, kind TEXT NOT NULL, length_m INTEGER NOT NULL
);
CREATE TABLE map_place (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, town TEXT NOT NULL,
    address TEXT NOT NULL, lat REAL NOT NULL, lon REAL NOT NULL, node_id INTEGER NOT NULL REFERENCES map_node(id),
    postcode TEXT NOT NULL, phone TEXT, opening_hours TEXT, website TEXT
);
CREATE TABLE map_border (state TEXT NOT NULL, neighbour TEXT NOT NULL, PRIMARY KEY (state, neighbour));
CREATE INDEX map_edge_a ON map_edge(a);
CREATE INDEX map_edge_b ON map_edge(b);
"""

# km/h per road kind; a kind missing from a mode's table cannot be used in that mode. The order is
# OpenStreetMap's routing-engine order (bicycle, car, foot), which WebArena's checks read by index.
SPEEDS: dict[str, dict[str, float]] = {
    "cycling": {"primary": 18.0, "secondary": 18.0, "residential": 16.0, "trail": 14.0},
    "driving": {"motorway": 100.0, "primary": 70.0, "secondary": 55.0, "residential": 30.0},
    "walking": {"primary": 5.0, "secondary": 5.0, "residential": 5.0, "trail": 4.5},
}
MODES = tuple(SPEEDS)
ENGINE_LABELS = {
    "cycling": "Cycling (bicycle, OSRM)",
    "driving": "Driving (car, OSRM)",
    "walking": "Walking (foot, OSRM)",
}
# Kinds as people type them in "<kind> near <place>" searches (plural or singular) -> the stored kind.
KIND_WORDS = {
    "cafes": "cafe",
    "coffee shops": "cafe",
    "restaurants": "restaurant",
    "hotels": "hotel",
    "pharmacies": "pharmacy",
    "bakeries": "bakery",
    "parks": "park",
    "bookshops": "bookshop",
    "libraries": "library",
    "hospitals": "hospital",
    "museums": "museum",
    "schools": "school",
    "stadiums": "stadium",
    "airports": "airport",
    "fire stations": "fire station",
    "post offices": "post office",
    "train stations": "train station",
    "universities": "university",
    "markets": "marketplace",
    "supermarkets": "supermarket",
    "police stations": "police",
    "government offices": "government office",
}
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

    # Added after the original places, nodes and edges (and from their own random stream) so every earlier
    # id, route and answer stays as it was: each town as a searchable place at its centre, airports and
    # national parks on dead-end roads (no shortcut between towns).
    extra = random.Random("webarena-gym-map-extras-v1")
    for town, centre in zip(towns, centres, strict=True):
        places.append((town.name, "town", town.name, f"Town centre, {town.name}", town.lat, town.lon, centre))
    for (name, kind, km), k in zip(OUTLYING, OUTLYING_TOWNS, strict=True):
        angle = extra.uniform(0, math.tau)
        lat, lon = offset(towns[k].lat, towns[k].lon, km * math.sin(angle), km * math.cos(angle))
        node = add_node(lat, lon, towns[k].name)
        road = f"{name.split(' ')[0]} {'Airport Road' if kind == 'airport' else 'Park Road'}"
        add_edge(centres[k], node, road, "secondary", 1.25)
        places.append((name, kind, towns[k].name, f"1 {road}, {towns[k].name}", lat, lon, node))

    postcodes = {town.name: f"{15101 + 4 * k}" for k, town in enumerate(towns)}
    rows = [(*p, postcodes[p[2]], *_contact(extra, p[0], p[1])) for p in places]
    rows += _seed_region(nodes, centres, add_node, add_edge)
    conn.executemany("INSERT INTO map_node (lat, lon, town) VALUES (?, ?, ?)", nodes)
    conn.executemany("INSERT INTO map_edge (a, b, road, kind, length_m) VALUES (?, ?, ?, ?, ?)", edges)
    conn.executemany(
        "INSERT INTO map_place (name, kind, town, address, lat, lon, node_id, postcode, phone, opening_hours, website) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    conn.executemany(
        "INSERT INTO map_border (state, neighbour) VALUES (?, ?)",
        [(state, n) for state, (_, _, borders) in map_region.STATES.items() for n in borders],
    )


def _seed_region(
    nodes: list[tuple[float, float, str]],
    centres: list[int],
    add_node: Callable[[float, float, str], int],
    add_edge: Callable[..., None],
) -> list[tuple[Any, ...]]:
    """Nodes, roads and place rows of the real-geography region (fixed data, no random draw)."""

    def nearest(candidates: Iterable[int], lat: float, lon: float) -> int:
        return min(candidates, key=lambda n: haversine_km(lat, lon, nodes[n - 1][0], nodes[n - 1][1]))

    junction = {name: add_node(lat, lon, town) for name, (lat, lon, town) in map_region.JUNCTIONS.items()}
    for a, b, road, kind in map_region.ROADS:
        add_edge(junction[a], junction[b], road, kind, 1.0 if kind == "motorway" else 1.2)
    end, road = map_region.BRIDGE
    lat, lon, _ = map_region.JUNCTIONS[end]
    add_edge(junction[end], nearest(centres, lat, lon), road, "primary")
    rows: list[tuple[Any, ...]] = []
    for name in map_region.CITIES:
        lat, lon, town = map_region.JUNCTIONS[name]
        rows.append((town, "city", town, f"City centre, {town}", lat, lon, junction[name], map_region.POSTCODES[town]))
    for name, kind, street, at, lat, lon in map_region.PLACES:
        town = map_region.JUNCTIONS[at][2]
        node = add_node(lat, lon, town)
        add_edge(junction[at], node, street.lstrip("0123456789 "), "residential")
        postcode = map_region.POSTCODES[town]
        rows.append((name, kind, town, f"{street}, {town}", lat, lon, node, postcode))
    for state, (lat, lon, _) in map_region.STATES.items():  # a boundary: routes to it end at the nearest junction
        rows.append((state, "state", state, "United States", lat, lon, nearest(junction.values(), lat, lon), ""))
    return [(*row, None, None, None) for row in rows]


# (name, kind, km from its town's centre) and the index of that town among the mapped towns.
OUTLYING = (
    ("Kingston International Airport", "airport", 9.0),
    ("Glenbury Regional Airport", "airport", 6.5),
    ("Kingshaven Airfield", "airport", 5.0),
    ("Hartmoor National Park", "national park", 7.0),
    ("Silverpine National Park", "national park", 8.0),
    ("Redcliff Gorge National Park", "national park", 6.0),
)
OUTLYING_TOWNS = (0, 1, 23, 31, 12, 38)
INFO_PAGES = (
    "edit",
    "history",
    "export",
    "traces",
    "diaries",
    "communities",
    "copyright",
    "help",
    "about",
    "login",
    "signup",
    "notes",
    "donate",
    "terms",
    "nominatim",
)
HOURS = ("Mo-Fr 08:00-18:00; Sa 09:00-13:00", "Mo-Su 07:00-22:00", "Tu-Su 10:00-17:00", "Mo-Sa 09:00-19:00")
OVERVIEW_KM = 60  # the overview map shows the home region, not the roads east to Philadelphia and Boston
NO_PHONE = {"town", "park", "national park", "marketplace"}


def _contact(rng: random.Random, name: str, kind: str) -> tuple[str | None, str | None, str | None]:
    """(phone, opening hours, website): public places list them, a third of the small businesses do not."""
    listed = kind not in NO_PHONE and (kind not in ("cafe", "bakery", "bookshop") or rng.random() < 0.66)
    phone = f"+1 412 555 {rng.randint(1000, 9999)}" if listed else None
    hours = rng.choice(HOURS) if listed and kind not in ("town hall", "fire station", "school") else None
    site = "https://www." + "".join(ch for ch in name.lower() if ch.isalnum()) + ".example" if listed else None
    return phone, hours, site


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
    """Best place for a typed name: exact name, then name prefix, then any field containing it; a full
    label as the directions form shows it ("Name, address, postcode") finds its place by the name."""
    text = text.strip()
    if not text:
        return None
    like = f"%{text}%"
    row = query_one(
        "SELECT *, (CASE WHEN lower(name) = lower(?) THEN 0 WHEN name LIKE ? THEN 1 WHEN name LIKE ? THEN 2 "
        "ELSE 3 END) AS rank FROM map_place WHERE name LIKE ? OR address LIKE ? "
        "ORDER BY rank, length(name), name LIMIT 1",
        (text, f"{text}%", like, like, like),
    )
    if row is None and "," in text:
        return find_place(text.split(",", 1)[0])
    return row


def label(place: sqlite3.Row) -> str:
    """A place's full label, as OpenStreetMap writes search results and route ends."""
    if place["kind"] in ("town", "city"):
        return f"{place['name']}, {place['postcode']}"
    if place["kind"] == "state":
        return f"{place['name']}, {place['address']}"
    return f"{place['name']}, {place['address']}, {place['postcode']}"


def near_query(text: str) -> tuple[str, sqlite3.Row] | None:
    """("kind", anchor place) for a "<kind> near <place>" search, else None."""
    what, sep, where = text.partition(" near ")
    if not sep:
        return None
    what = what.strip().lower()
    kind = KIND_WORDS.get(what) or (what if what in KIND_WORDS.values() else None)
    anchor = find_place(where)
    return (kind, anchor) if kind and anchor is not None else None


def plural(kind: str) -> str:
    return next((word for word, k in KIND_WORDS.items() if k == kind), kind + "s")


def by_distance(kind: str, anchor: sqlite3.Row, limit: int = 10) -> list[tuple[float, sqlite3.Row]]:
    """Places of ``kind`` nearest to ``anchor`` (straight-line), nearest first, in the anchor's region (the
    fictional towns and the real region overlap on the ground)."""
    real = anchor["town"] in map_region.TOWNS
    rows = [
        r
        for r in query("SELECT * FROM map_place WHERE kind = ? AND id != ?", (kind, anchor["id"]))
        if (r["town"] in map_region.TOWNS) == real
    ]
    ranked = sorted(
        ((haversine_km(anchor["lat"], anchor["lon"], r["lat"], r["lon"]), r) for r in rows), key=lambda x: x[0]
    )
    return ranked[:limit]


def coords(lat: float, lon: float) -> str:
    return f"{lat:.4f}, {lon:.4f}"


# -- app ---------------------------------------------------------------------------------------------


def create_app(ctx: SiteContext) -> Flask:
    app = make_app(ctx, __name__)
    app.jinja_env.globals.update(coords=coords, modes=MODES, engine_labels=ENGINE_LABELS, label=label)

    @app.get("/")
    def index() -> str:
        towns = query("SELECT town, COUNT(*) AS n FROM map_place GROUP BY town ORDER BY town")
        return render_template("index.html", towns=towns, svg=_svg())

    @app.get("/search")
    def search() -> Any:
        text = (request.args.get("query") or "").strip()
        results, near = None, near_query(text)
        if near is not None:
            kind, anchor = near
            canonical = f"{plural(kind)} near {anchor['name']}"
            if text != canonical:  # one URL per question, whatever the capitalisation or plural typed
                return redirect(url_for("search", query=canonical))
            return render_template("search.html", text=text, near=by_distance(kind, anchor), anchor=anchor)
        if text:
            like = f"%{text}%"
            results = paginate(
                "SELECT *, (CASE WHEN lower(name) = lower(?) THEN 0 WHEN name LIKE ? THEN 1 ELSE 2 END) AS rank "
                "FROM map_place WHERE name LIKE ? OR address LIKE ? OR kind LIKE ? OR town LIKE ? "
                "ORDER BY rank, name",
                (text, f"{text}%", like, like, like, like),
                per_page=10,
            )
        return render_template("search.html", text=text, results=results)

    @app.get(f"/info/<any({', '.join(INFO_PAGES)}):page>")
    def info(page: str) -> str:
        """The header's and map controls' links: parts of OpenStreetMap this offline copy does not have."""
        return render_template("info.html", page=page)

    @app.get("/place/<int:place_id>")
    def place(place_id: int) -> str:
        row = query_one("SELECT * FROM map_place WHERE id = ?", (place_id,))
        if row is None:
            abort(404)
        others = query("SELECT * FROM map_place WHERE id != ? AND town = ?", (place_id, row["town"]))
        nearby = sorted(
            ((haversine_km(row["lat"], row["lon"], o["lat"], o["lon"]), o) for o in others), key=lambda x: x[0]
        )
        borders = query(
            "SELECT b.neighbour, p.id FROM map_border b "
            "LEFT JOIN map_place p ON p.name = b.neighbour AND p.kind = 'state' WHERE b.state = ? ORDER BY b.neighbour",
            (row["name"],),
        )
        return render_template("place.html", p=row, nearby=nearby[:10], borders=borders)

    @app.get("/directions")
    def directions() -> Any:
        # The form posts route_from/route_to (OpenStreetMap's field names); links and the canonical URL use from/to.
        src_text = request.args.get("from") or request.args.get("route_from", "")
        dst_text = request.args.get("to") or request.args.get("route_to", "")
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
        canonical = {"from": src["name"], "to": dst["name"], "mode": mode}
        if "route_from" in request.args or (src["name"], dst["name"]) != (src_text, dst_text):
            return redirect(url_for("directions", **canonical))  # canonical URL: the places' full names
        route = shortest_route(query("SELECT * FROM map_edge"), src["node_id"], dst["node_id"], mode)
        form = {"from": label(src), "to": label(dst), "mode": mode}
        return render_template("directions.html", form=form, src=src, dst=dst, route=route, mode=mode)

    return app


def _svg() -> dict[str, Any]:
    """Road lines scaled into a 800x600 box for the overview map (nodes within ``OVERVIEW_KM`` of the centre)."""
    nodes = {
        r["id"]: (r["lat"], r["lon"])
        for r in query("SELECT id, lat, lon FROM map_node")
        if haversine_km(CENTRE_LAT, CENTRE_LON, r["lat"], r["lon"]) < OVERVIEW_KM
    }
    lat_lo, lat_hi = min(p[0] for p in nodes.values()), max(p[0] for p in nodes.values())
    lon_lo, lon_hi = min(p[1] for p in nodes.values()), max(p[1] for p in nodes.values())

    def xy(node: int) -> tuple[float, float]:
        lat, lon = nodes[node]
        return (
            round((lon - lon_lo) / (lon_hi - lon_lo) * 780 + 10, 1),
            round((lat_hi - lat) / (lat_hi - lat_lo) * 580 + 10, 1),
        )

    edges = query("SELECT a, b, kind FROM map_edge")
    roads = [(*xy(e["a"]), *xy(e["b"]), e["kind"]) for e in edges if e["a"] in nodes and e["b"] in nodes]
    towns = [
        t
        for t in query("SELECT town, AVG(lat) AS lat, AVG(lon) AS lon, MIN(id) AS id FROM map_node GROUP BY town")
        if t["id"] in nodes
    ]
    labels = [(*xy(t["id"]), t["town"]) for t in towns]
    return {"roads": roads, "labels": labels}
