"""wikipedia: an offline encyclopedia (like WebArena's kiwix mirror) about the shared fictional world.

About 500 articles (countries, towns, people, discoveries, universities) with infoboxes, sections,
internal links, references and categories, plus full-text search. Article text is generated from
sentence templates filled with the world's facts, so tasks can ask about those facts and the answers
are only on these pages. Internal links are written ``[[Title]]`` / ``[[Title|label]]`` in the
database and turned into links when rendered.
"""

from __future__ import annotations

import html
import json
import random
import re
import sqlite3
from typing import Any

from flask import Flask, abort, redirect, render_template, request, url_for
from markupsafe import Markup

from webarena_gym.envs.local.framework import SiteContext, make_app, paginate, query, query_one
from webarena_gym.envs.local.world import World, build_world

SCHEMA = """
CREATE TABLE wiki_article (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL UNIQUE,
    slug TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    summary TEXT NOT NULL,
    infobox TEXT NOT NULL,      -- JSON [[label, value], ...]; values may hold [[links]]
    sections TEXT NOT NULL,     -- JSON [{"heading": ..., "paragraphs": [...]}, ...]
    refs TEXT NOT NULL,         -- JSON [citation, ...]
    categories TEXT NOT NULL    -- JSON [category, ...]
);
CREATE INDEX wiki_article_kind ON wiki_article(kind);
"""

MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
LINK = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]")


def slugify(title: str) -> str:
    return title.replace(" ", "_")


def plain(text: str) -> str:
    """Text without link markup (what a reader sees)."""
    return LINK.sub(lambda m: m.group(2) or m.group(1), text)


def birth_date(person: Any) -> str:
    return f"{person.birth_day} {MONTHS[person.birth_month - 1]} {person.birth_year}"


# -- content generation ------------------------------------------------------------------------------


def _para(rng: random.Random, options: tuple[str, ...], **facts: Any) -> str:
    """Two or three of the template sentences, in random order, filled with ``facts``."""
    return " ".join(o.format(**facts) for o in rng.sample(options, rng.randint(2, len(options))))


def _country_article(rng: random.Random, w: World, c: Any) -> dict[str, Any]:
    towns = [t for t in w.towns if t.country == c.name]
    people = [p for p in w.people if p.nationality == c.name][:12]
    big = sorted(towns, key=lambda t: -t.population)[:8]
    town_links = ", ".join(f"[[{t.name}]]" for t in big)
    summary = (
        f"{c.name} is a {c.government} with a population of about {c.population:,}. Its capital and "
        f"largest city is [[{c.capital}]], and its official language is {c.language}."
    )
    sections = [
        {
            "heading": "History",
            "paragraphs": [
                f"The first {c.name} state was proclaimed in {c.founded}, uniting several river principalities under a "
                f"single crown. Trade along the coast brought wealth to [[{c.capital}]], "
                "which became the seat of government.",
                _para(rng, HISTORY, country=c.name, capital=c.capital, year=c.founded + rng.randint(80, 300)),
                f"In the twentieth century {c.name} joined the regional customs union together with "
                + ", ".join(f"[[{n}]]" for n in c.neighbours)
                + ".",
            ],
        },
        {
            "heading": "Geography",
            "paragraphs": [
                f"{c.name} covers {c.area_km2:,} km2 and borders "
                + ", ".join(f"[[{n}]]" for n in c.neighbours)
                + ". "
                + _para(rng, GEOGRAPHY, country=c.name),
                f"Its main towns are {town_links}.",
            ],
        },
        {
            "heading": "Economy",
            "paragraphs": [
                _para(rng, ECONOMY, country=c.name, currency=c.currency),
                f"The currency is the {c.currency}. "
                f"Tourism centres on [[{c.capital}]] and the old towns of the interior.",
            ],
        },
        {
            "heading": "Culture",
            "paragraphs": [
                f"{c.language} literature flourished in the nineteenth century. Notable people from {c.name} include "
                + (", ".join(f"[[{p.name}]]" for p in people) or "several painters and poets")
                + ".",
                _para(rng, CULTURE, country=c.name, language=c.language),
            ],
        },
    ]
    infobox = [
        ["Capital", f"[[{c.capital}]]"],
        ["Official language", c.language],
        ["Government", c.government.capitalize()],
        ["Founded", str(c.founded)],
        ["Area", f"{c.area_km2:,} km2"],
        ["Population", f"{c.population:,}"],
        ["Currency", c.currency],
        ["Neighbours", ", ".join(f"[[{n}]]" for n in c.neighbours)],
    ]
    return {
        "kind": "country",
        "summary": summary,
        "infobox": infobox,
        "sections": sections,
        "categories": ["Countries", f"{c.language}-speaking countries"],
    }


def _town_article(rng: random.Random, w: World, t: Any) -> dict[str, Any]:
    natives = [p for p in w.people if p.birth_town == t.name]
    universities = [u for u in w.universities if u.town == t.name]
    places = [p for p in w.places if p.town == t.name]
    summary = (
        f"{t.name} is a town in [[{t.country}]] on the {t.river}, with a population of {t.population:,}. "
        f"It was founded in {t.founded}."
    )
    sections = [
        {
            "heading": "History",
            "paragraphs": [
                f"{t.name} was founded in {t.founded} as a market settlement on the {t.river}. "
                + _para(rng, TOWN_HISTORY, town=t.name, year=t.founded + rng.randint(40, 400)),
                _para(rng, TOWN_MODERN, town=t.name, country=t.country),
            ],
        },
        {
            "heading": "Geography",
            "paragraphs": [
                f"The town lies at an elevation of {t.elevation_m} m and covers {t.area_km2} km2. "
                f"Its coordinates are {t.lat:.4f}, {t.lon:.4f}.",
            ],
        },
        {
            "heading": "Landmarks",
            "paragraphs": [
                ("Landmarks include " + ", ".join(p.name for p in places[:8]) + ".")
                if places
                else f"The old town of {t.name} keeps much of its medieval street plan.",
            ]
            + [f"[[{u.name}]] was founded here in {u.founded}." for u in universities],
        },
        {
            "heading": "Notable people",
            "paragraphs": [
                (
                    "People born in "
                    + t.name
                    + " include "
                    + ", ".join(f"[[{p.name}]] ({p.occupation}, born {p.birth_year})" for p in natives)
                    + "."
                )
                if natives
                else f"No notable people from {t.name} are listed yet.",
            ],
        },
    ]
    infobox = [
        ["Country", f"[[{t.country}]]"],
        ["Founded", str(t.founded)],
        ["Population", f"{t.population:,}"],
        ["Area", f"{t.area_km2} km2"],
        ["Elevation", f"{t.elevation_m} m"],
        ["River", t.river],
        ["Coordinates", f"{t.lat:.4f}, {t.lon:.4f}"],
    ]
    return {
        "kind": "town",
        "summary": summary,
        "infobox": infobox,
        "sections": sections,
        "categories": [f"Towns in {t.country}", "Towns"],
    }


def _person_article(rng: random.Random, w: World, p: Any) -> dict[str, Any]:
    life = f"{birth_date(p)} – {p.death_year}" if p.death_year else f"born {birth_date(p)}"
    verb = "was" if p.death_year else "is"
    summary = f"{p.name} ({life}) {verb} a {p.occupation} from [[{p.nationality}]]."
    work_text = (" Best known for the [[" + "]], the [[".join(p.works) + "]].") if p.works else ""
    sections = [
        {
            "heading": "Early life",
            "paragraphs": [
                f"{p.name.split()[0]} was born on {birth_date(p)} in [[{p.birth_town}]]. "
                + _para(rng, EARLY_LIFE, first=p.name.split()[0], occupation=p.occupation),
            ],
        },
        {
            "heading": "Career",
            "paragraphs": [
                _para(rng, CAREER, name=p.name, occupation=p.occupation, year=p.birth_year + rng.randint(20, 35))
                + work_text,
                _para(rng, CAREER_LATE, name=p.name.split()[-1], year=p.birth_year + rng.randint(36, 50)),
            ],
        },
        {
            "heading": "Personal life",
            "paragraphs": [
                (f"{p.name.split()[-1]} was married to [[{p.spouse}]]. " if p.spouse else "")
                + (
                    f"{p.name.split()[-1]} died in {p.death_year}."
                    if p.death_year
                    else f"{p.name.split()[-1]} lives in [[{p.birth_town}]]."
                ),
            ],
        },
        {"heading": "Legacy", "paragraphs": [_para(rng, LEGACY, name=p.name.split()[-1], town=p.birth_town)]},
    ]
    infobox = [["Born", f"{birth_date(p)}, [[{p.birth_town}]], [[{p.nationality}]]"]]
    if p.death_year:
        infobox.append(["Died", str(p.death_year)])
    infobox += [["Nationality", f"[[{p.nationality}]]"], ["Occupation", p.occupation.capitalize()]]
    if p.works:
        infobox.append(["Known for", ", ".join(f"[[{x}]]" for x in p.works)])
    if p.spouse:
        infobox.append(["Spouse", f"[[{p.spouse}]]"])
    return {
        "kind": "person",
        "summary": summary,
        "infobox": infobox,
        "sections": sections,
        "categories": [
            f"{p.occupation.capitalize()}s",
            f"People from {p.birth_town}",
            f"{p.birth_year // 10 * 10}s births",
        ],
    }


def _discovery_article(rng: random.Random, w: World, d: Any) -> dict[str, Any]:
    person = w.person(d.discoverer)
    summary = f"The {d.title} is {d.summary.replace(d.discoverer, f'[[{d.discoverer}]]')}."
    sections = [
        {
            "heading": "Discovery",
            "paragraphs": [
                f"[[{d.discoverer}]] announced the result in {d.year} while working at [[{d.university}]]. "
                + _para(rng, DISCOVERY, field=d.field_name, year=d.year),
            ],
        },
        {
            "heading": "Reception",
            "paragraphs": [_para(rng, RECEPTION, title=d.title, year=d.year + rng.randint(3, 20))],
        },
        {"heading": "Applications", "paragraphs": [_para(rng, APPLICATIONS, title=d.title, field=d.field_name)]},
    ]
    infobox = [
        ["Field", d.field_name.capitalize()],
        ["Discovered by", f"[[{d.discoverer}]]"],
        ["Year", str(d.year)],
        ["Institution", f"[[{d.university}]]"],
        ["Discoverer's birthplace", f"[[{person.birth_town}]]"],
    ]
    return {
        "kind": "discovery",
        "summary": summary,
        "infobox": infobox,
        "sections": sections,
        "categories": [f"{d.field_name.capitalize()}", f"{d.year // 10 * 10}s in science"],
    }


def _university_article(rng: random.Random, w: World, u: Any) -> dict[str, Any]:
    work = [d for d in w.discoveries if d.university == u.name]
    summary = f"The {u.name} is a public research university in [[{u.town}]], founded in {u.founded}."
    sections = [
        {"heading": "History", "paragraphs": [_para(rng, UNI_HISTORY, name=u.name, year=u.founded)]},
        {
            "heading": "Research",
            "paragraphs": [
                ("Discoveries made here include " + ", ".join(f"the [[{d.title}]] ({d.year})" for d in work) + ".")
                if work
                else "The university is known for its teaching hospital and its library.",
            ],
        },
    ]
    infobox = [
        ["Motto", u.motto],
        ["Established", str(u.founded)],
        ["Students", f"{u.students:,}"],
        ["Location", f"[[{u.town}]]"],
    ]
    return {
        "kind": "university",
        "summary": summary,
        "infobox": infobox,
        "sections": sections,
        "categories": ["Universities", f"Education in {u.town}"],
    }


# Sports clubs and their grounds (the grounds are the map's "<town> Stadium" places). A club that moved
# names its former ground and the year it moved, so "the home stadium of X in the 1950s" has an answer.
# (club, sport, home town, former home town or None, year of the move or None)
CLUBS = (
    ("Kingston Rovers", "football", "Kingston", "Wilstead", 1962),
    ("Ironstead United", "football", "Ironstead", None, None),
    ("Hartdale Hawks", "basketball", "Hartdale", "Marshford", 1981),
    ("Crestridge Comets", "ice hockey", "Crestridge", None, None),
    ("Kingshaven Mariners", "baseball", "Kingshaven", "Coldbrook", 1975),
)


def _club_article(rng: random.Random, club: tuple[str, str, str, str | None, int | None]) -> dict[str, Any]:
    name, sport, town, former, moved = club
    founded = (moved - rng.randint(30, 60)) if moved else rng.randint(1880, 1960)
    ground = f"{town} Stadium"
    summary = f"{name} is a professional {sport} club based in [[{town}]]. Its home ground is {ground}."
    history = [f"The club was founded in {founded} by workers of the {town} mills and turned professional soon after."]
    if former and moved is not None:
        history.append(
            f"From its foundation until {moved - 1} the club played its home games at {former} Stadium in "
            f"[[{former}]]. In {moved} it moved to {ground}, where it has played ever since."
        )
    else:
        history.append(f"It has played at {ground} since its foundation.")
    return {
        "kind": "club",
        "summary": summary,
        "infobox": [["Sport", sport], ["Founded", str(founded)], ["Ground", ground], ["Town", f"[[{town}]]"]],
        "sections": [{"heading": "History", "paragraphs": history}],
        "categories": ["Sports clubs", f"Sport in {town}"],
    }


# Real universities the map also carries (its Cambridge, Massachusetts), for questions that start from a
# ranking: (name, founded, students, ranking sentence).
REAL_UNIVERSITIES = (
    (
        "Massachusetts Institute of Technology",
        1861,
        11_920,
        "Its Computer Science and Artificial Intelligence Laboratory makes it the top-ranked computer science "
        "school in Massachusetts and in the United States.",
    ),
    (
        "Harvard University",
        1636,
        21_610,
        "Its computer science programme ranks second in Massachusetts, after the "
        "[[Massachusetts Institute of Technology]].",
    ),
)


def _real_university_article(name: str, founded: int, students: int, ranking: str) -> dict[str, Any]:
    return {
        "kind": "university",
        "summary": f"{name} is a private research university in Cambridge, Massachusetts, founded in {founded}.",
        "infobox": [
            ["Established", str(founded)],
            ["Students", f"{students:,}"],
            ["Location", "Cambridge, Massachusetts"],
        ],
        "sections": [{"heading": "Computer science", "paragraphs": [ranking]}],
        "categories": ["Universities", "Education in Massachusetts"],
    }


def articles(rng: random.Random) -> list[tuple[str, dict[str, Any]]]:
    """Every article as ``(title, fields)`` in a fixed order."""
    w = build_world()
    out: list[tuple[str, dict[str, Any]]] = []
    out += [(c.name, _country_article(rng, w, c)) for c in w.countries]
    out += [(t.name, _town_article(rng, w, t)) for t in w.towns]
    out += [(p.name, _person_article(rng, w, p)) for p in w.people]
    out += [(d.title, _discovery_article(rng, w, d)) for d in w.discoveries]
    out += [(u.name, _university_article(rng, w, u)) for u in w.universities]
    clubs = random.Random("webarena-gym-wiki-clubs-v1")  # own stream: every other article keeps its text
    out += [(club[0], _club_article(clubs, club)) for club in CLUBS]
    out += [(u[0], _real_university_article(*u)) for u in REAL_UNIVERSITIES]
    return out


def seed(conn: sqlite3.Connection, rng: random.Random) -> None:
    rows = []
    for title, a in articles(rng):
        refs = [
            f"{rng.choice(('Abernathy', 'Kowal', 'Moreau', 'Sato', 'Varga'))}, {rng.choice('ABCDEHJKLMR')}. "
            f"({rng.randint(1950, 2021)}). {title}: {rng.choice(REF_TITLES)}. {rng.choice(PUBLISHERS)}."
            for _ in range(rng.randint(3, 6))
        ]
        rows.append(
            (
                title,
                slugify(title),
                a["kind"],
                a["summary"],
                json.dumps(a["infobox"]),
                json.dumps(a["sections"]),
                json.dumps(refs),
                json.dumps(a["categories"]),
            )
        )
    conn.executemany(
        "INSERT INTO wiki_article (title, slug, kind, summary, infobox, sections, refs, categories) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )


# -- app ---------------------------------------------------------------------------------------------


def render_links(text: str) -> Markup:
    """Escape ``text`` and turn its ``[[links]]`` into anchors to the articles."""
    out, last = [], 0
    for m in LINK.finditer(text):
        out.append(html.escape(text[last : m.start()]))
        target, label = m.group(1), m.group(2) or m.group(1)
        out.append(f'<a href="/wiki/{html.escape(slugify(target))}">{html.escape(label)}</a>')
        last = m.end()
    out.append(html.escape(text[last:]))
    return Markup("".join(out))


def snippet(text: str, pattern: str, width: int = 160) -> str:
    text = plain(text)
    at = text.lower().find(pattern.lower())
    start = max(0, at - width // 3) if at >= 0 else 0
    return ("…" if start else "") + text[start : start + width] + ("…" if start + width < len(text) else "")


def create_app(ctx: SiteContext) -> Flask:
    app = make_app(ctx, __name__)
    app.jinja_env.filters["links"] = render_links

    @app.get("/")
    def index() -> str:
        featured = query_one("SELECT * FROM wiki_article WHERE kind = 'discovery' ORDER BY id LIMIT 1")
        counts = query("SELECT kind, COUNT(*) AS n FROM wiki_article GROUP BY kind ORDER BY kind")
        recent = query("SELECT title, slug FROM wiki_article WHERE kind = 'person' ORDER BY id DESC LIMIT 15")
        countries = query("SELECT title, slug FROM wiki_article WHERE kind = 'country' ORDER BY title")
        return render_template("index.html", featured=featured, counts=counts, recent=recent, countries=countries)

    @app.get("/wiki/<path:slug>")
    def article(slug: str) -> Any:
        row = query_one("SELECT * FROM wiki_article WHERE slug = ?", (slug,))
        if row is None:
            row = query_one("SELECT * FROM wiki_article WHERE lower(slug) = lower(?)", (slug,))
            if row is None:
                return render_template("missing.html", title=slug.replace("_", " ")), 404
            return redirect(url_for("article", slug=row["slug"]))
        sections = json.loads(row["sections"])
        linked = {m.group(1) for s in sections for p in s["paragraphs"] for m in LINK.finditer(p)}
        see_also = (
            query(
                f"SELECT title, slug FROM wiki_article WHERE title IN ({','.join('?' * len(linked))}) "
                "ORDER BY title LIMIT 12",
                tuple(linked),
            )
            if linked
            else []
        )
        categories = json.loads(row["categories"])
        navbox = query(
            "SELECT title, slug FROM wiki_article WHERE categories LIKE ? ORDER BY title LIMIT 60",
            (f'%"{categories[0]}"%',),
        )
        return render_template(
            "article.html",
            a=row,
            infobox=json.loads(row["infobox"]),
            sections=sections,
            refs=json.loads(row["refs"]),
            categories=categories,
            see_also=see_also,
            navbox_title=categories[0],
            navbox=navbox,
            languages=LANGUAGE_LINKS,
        )

    @app.get("/search")
    def search() -> Any:
        pattern = (request.args.get("pattern") or "").strip()
        if not pattern:
            return render_template("search.html", pattern="", results=None)
        exact = query_one("SELECT slug FROM wiki_article WHERE lower(title) = lower(?)", (pattern,))
        if exact is not None and request.args.get("go"):
            return redirect(url_for("article", slug=exact["slug"]))
        like = f"%{pattern}%"
        results = paginate(
            "SELECT title, slug, kind, summary, (CASE WHEN lower(title) = lower(?) THEN 0 "
            "WHEN title LIKE ? THEN 1 ELSE 2 END) AS rank FROM wiki_article "
            "WHERE title LIKE ? OR summary LIKE ? OR sections LIKE ? ORDER BY rank, title",
            (pattern, like, like, like, like),
            per_page=20,
        )
        items = [dict(r, snippet=snippet(r["summary"], pattern)) for r in results.items]
        return render_template("search.html", pattern=pattern, results=results, items=items)

    @app.get("/category/<path:name>")
    def category(name: str) -> Any:
        name = name.replace("_", " ")
        rows = query(
            "SELECT title, slug, categories FROM wiki_article WHERE categories LIKE ? ORDER BY title", (f'%"{name}"%',)
        )
        if not rows:
            abort(404)
        return render_template("category.html", name=name, rows=rows)

    @app.get("/contents")
    def contents() -> str:
        kind = request.args.get("kind", "country")
        rows = paginate(
            "SELECT title, slug, summary FROM wiki_article WHERE kind = ? ORDER BY title", (kind,), per_page=50
        )
        kinds = [r["kind"] for r in query("SELECT DISTINCT kind FROM wiki_article ORDER BY kind")]
        return render_template("contents.html", kind=kind, kinds=kinds, rows=rows)

    return app


HISTORY = (
    "During the wars of {year} the kingdom lost its northern provinces, "
    "which it regained by treaty a generation later.",
    "A reform movement in {year} abolished serfdom and moved the university from the old fortress to {capital}.",
    "After a long famine around {year}, many families from {country} emigrated overseas.",
)
GEOGRAPHY = (
    "Much of {country} is covered by rolling hills and mixed forest, cut by wide river valleys.",
    "The north of {country} is mountainous, while the south is a fertile plain drained by slow rivers.",
    "{country} has a temperate climate with snowy winters and warm, wet summers.",
)
ECONOMY = (
    "The economy of {country} rests on machinery, timber and a growing software industry.",
    "{country} exports grain, wine and precision instruments; services make up two thirds of output.",
    "Mining and shipbuilding shaped the economy of {country} until the 1980s; today it relies on trade and tourism.",
)
CULTURE = (
    "The national epic, written in {language}, tells of a ferryman who outwits a river spirit.",
    "Folk music from {country} is known for its three-stringed fiddle and long winter ballads.",
    "Every summer {country} holds a lantern festival on its lakes and rivers.",
)
TOWN_HISTORY = (
    "A stone bridge built in {year} made it the main crossing on the river.",
    "The town received its charter in {year} and grew around its cloth market.",
    "A great fire in {year} destroyed the wooden centre, which was rebuilt in brick.",
)
TOWN_MODERN = (
    "Today {town} is known for its university, its riverside park and a busy weekly market.",
    "The railway reached {town} in the 1870s, and it became an industrial centre of {country}.",
    "Modern {town} is a commuter town with a well-kept old quarter and many cafés.",
)
EARLY_LIFE = (
    "{first} showed an early talent and was sent to boarding school at the age of eleven.",
    "The son or daughter of a schoolteacher, {first} grew up among books and was drawn to the work of a {occupation}.",
    "{first} spent a childhood on the family farm before winning a scholarship to the capital.",
)
CAREER = (
    "{name} began working as a {occupation} in {year} and soon gained a reputation for careful, original work.",
    "In {year} {name} took a post at a provincial institute, where most of the early work was done.",
    "{name}'s first major work appeared in {year} and was widely reviewed.",
)
CAREER_LATE = (
    "From {year} {name} taught a generation of students and wrote several influential books.",
    "{name} received the national order of merit in {year}.",
    "In {year} {name} became president of the national academy.",
)
LEGACY = (
    "A street and a school in {town} are named after {name}.",
    "The {name} prize, awarded every two years, honours young researchers and artists.",
    "{name}'s house in {town} is now a small museum.",
)
DISCOVERY = (
    "The finding was one of the most cited results in {field} of the {year}s decade.",
    "At first the result met scepticism, because the measurements were difficult to repeat.",
    "Independent teams confirmed it within a few years, using improved instruments.",
)
RECEPTION = (
    "By {year} the {title} was part of the standard university curriculum.",
    "A 1990s review called the {title} 'a small idea with large consequences'.",
    "Critics argued in {year} that the {title} was a special case of older results.",
)
APPLICATIONS = (
    "The {title} is used in modern {field} laboratories to calibrate instruments.",
    "Engineers rely on the {title} when designing sensors and storage devices.",
    "The {title} helped explain several puzzles in {field} that had been open for decades.",
)
UNI_HISTORY = (
    "The {name} grew out of a cathedral school and received a royal charter in {year}.",
    "Founded in {year} by a group of merchants, the {name} first taught only law and medicine.",
    "The {name} was established in {year}; its main building is a former customs house.",
)
LANGUAGE_LINKS = (
    "Deutsch",
    "Español",
    "Français",
    "Italiano",
    "Nederlands",
    "Polski",
    "Português",
    "Svenska",
    "Türkçe",
    "Čeština",
    "Suomi",
    "Norsk",
    "Magyar",
    "Română",
)
REF_TITLES = ("a history", "new perspectives", "collected essays", "an introduction", "sources and documents")
PUBLISHERS = ("Kingston University Press", "Northern Academic", "Riverside Books", "Meridian Press")
