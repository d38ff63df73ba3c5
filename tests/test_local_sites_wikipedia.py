"""The wikipedia site: hundreds of articles whose infoboxes state the shared world's facts, internal
links that all resolve, search with ranking and pagination, categories, contents tabs and 404s."""

from __future__ import annotations

import json
import re
import sqlite3

import pytest

from webarena_gym.envs.local import data
from webarena_gym.envs.local.framework import SiteContext
from webarena_gym.envs.local.sites import wikipedia as site
from webarena_gym.envs.local.world import build_world


@pytest.fixture(scope="module")
def db_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("wiki") / "sites.sqlite"
    data.build(path, ["wikipedia"])
    return path


@pytest.fixture(scope="module")
def client(db_path):
    return site.create_app(SiteContext("wikipedia", str(db_path), {})).test_client()


def test_hundreds_of_articles_of_every_kind(db_path):
    conn = sqlite3.connect(db_path)
    counts = dict(conn.execute("SELECT kind, COUNT(*) FROM wiki_article GROUP BY kind").fetchall())
    conn.close()
    assert sum(counts.values()) >= 400
    assert set(counts) == {"country", "town", "person", "discovery", "university", "club"}


def test_every_internal_link_points_to_an_article(db_path):
    conn = sqlite3.connect(db_path)
    titles = {r[0] for r in conn.execute("SELECT title FROM wiki_article")}
    targets = set()
    for summary, infobox, sections in conn.execute("SELECT summary, infobox, sections FROM wiki_article"):
        values = [value for _, value in json.loads(infobox)]
        paragraphs = [p for section in json.loads(sections) for p in section["paragraphs"]]
        text = "\n".join([summary, *values, *paragraphs])
        targets |= {m.group(1) for m in site.LINK.finditer(text)}
    conn.close()
    assert targets and targets <= titles


def test_person_article_states_the_worlds_facts(client):
    world = build_world()
    person = next(p for p in world.people if p.works and p.spouse is None)
    html = client.get(f"/wiki/{site.slugify(person.name)}").data.decode()
    infobox = html.split('aria-label="Infobox"')[1].split("</table>")[0]
    assert site.birth_date(person) in infobox
    assert f'<a href="/wiki/{site.slugify(person.birth_town)}">{person.birth_town}</a>' in infobox
    assert person.works[0] in infobox and person.occupation.capitalize() in infobox
    assert len(re.findall(r"<h2 id=", html)) >= 5 and html.count('href="/wiki/') >= 20


def test_search_ranks_the_exact_title_first_and_paginates(client):
    world = build_world()
    town = world.towns[3].name
    html = client.get(f"/search?pattern={town}").data.decode()
    first = re.search(r'<ul class="results">\s*<li><a href="/wiki/([^"]+)"', html).group(1)
    assert first == site.slugify(town)
    many = client.get("/search?pattern=born").data.decode()
    total = int(re.search(r"of (\d+) for", many).group(1))
    assert total > 20 and "Page 1 of" in many
    page2 = client.get("/search?pattern=born&page=2").data.decode()
    assert re.findall(r'href="/wiki/[^"]+">', page2) != re.findall(r'href="/wiki/[^"]+">', many)
    assert "No results" in client.get("/search?pattern=qqqzzz").data.decode()
    go = client.get(f"/search?pattern={town.lower()}&go=1")
    assert go.status_code == 302 and go.headers["Location"] == f"/wiki/{site.slugify(town)}"


def test_missing_pages_case_redirects_categories_and_contents(client):
    world = build_world()
    response = client.get("/wiki/No_Such_Article_Here")
    assert response.status_code == 404 and "does not have an article" in response.data.decode()
    country = world.countries[0].name
    assert client.get(f"/wiki/{country.lower()}").headers["Location"] == f"/wiki/{country}"
    html = client.get("/category/Countries").data.decode()
    assert all(c.name in html for c in world.countries)
    tabs = client.get("/contents?kind=person&page=2").data.decode()
    assert 'aria-selected="true" href="/contents?kind=person"' in tabs and "Page 2 of" in tabs
