"""The fictional world the wikipedia and map sites share: countries, towns, people, discoveries, places, roads.

Entities are invented (but realistic) so an agent must read the sites instead of answering from
memory, and both sites describe the same world: a person's birthplace in an encyclopedia article is a
town the map can route to. Everything derives from one fixed random stream, so the world is identical
in every process; the sites' ``seed`` functions copy it into their tables.
"""

from __future__ import annotations

import functools
import math
import random
from dataclasses import dataclass, field

WORLD_SEED = "webarena-gym-world-v1"

# Centre of the mapped region (the home country); towns are scattered within about 35 km of it.
CENTRE_LAT, CENTRE_LON = 40.44, -79.99

TOWN_HEADS = (
    "Ash",
    "Bram",
    "Cold",
    "Dun",
    "East",
    "Fair",
    "Glen",
    "Hart",
    "Iron",
    "Kings",
    "Lark",
    "Mill",
    "North",
    "Oak",
    "Pine",
    "Red",
    "Stone",
    "Thorn",
    "West",
    "Wil",
    "Ald",
    "Brook",
    "Crest",
    "Elm",
    "Fern",
    "Gold",
    "Hazel",
    "Lynd",
    "Marsh",
    "Rose",
)
TOWN_TAILS = ("ford", "bury", "field", "wick", "ton", "brook", "ham", "ridge", "haven", "dale", "stead", "mere")
COUNTRY_HEADS = (
    "Kes",
    "Val",
    "Or",
    "Mar",
    "Tal",
    "Bel",
    "Dra",
    "Sor",
    "Ven",
    "Lun",
    "Cor",
    "Ith",
    "Zel",
    "Ar",
    "Mor",
    "Nal",
)
COUNTRY_MIDS = ("ta", "mo", "lu", "ri", "va", "ne", "do", "")
COUNTRY_TAILS = ("via", "land", "ria", "stan", "mark", "onia", "esh", "ara")
FIRST_NAMES = (
    "Ada",
    "Alan",
    "Alice",
    "Anton",
    "Beatrice",
    "Boris",
    "Carla",
    "Cyrus",
    "Dalia",
    "Edgar",
    "Elena",
    "Emil",
    "Farah",
    "Felix",
    "Greta",
    "Hugo",
    "Ines",
    "Ivan",
    "Jonas",
    "Julia",
    "Karin",
    "Leon",
    "Lidia",
    "Marek",
    "Marta",
    "Nadia",
    "Nils",
    "Olga",
    "Oscar",
    "Petra",
    "Quentin",
    "Rosa",
    "Rufus",
    "Sabine",
    "Silas",
    "Tamar",
    "Tobias",
    "Ursula",
    "Viktor",
    "Wanda",
    "Xavier",
    "Yara",
    "Yusuf",
    "Zora",
    "Henrik",
    "Ilse",
    "Milo",
    "Nora",
)
SURNAMES = (
    "Abernathy",
    "Brandt",
    "Castell",
    "Dorsey",
    "Ellingham",
    "Falk",
    "Garrow",
    "Halvorsen",
    "Ibsen",
    "Jansky",
    "Kowal",
    "Lindqvist",
    "Marlow",
    "Novak",
    "Okafor",
    "Pell",
    "Quill",
    "Rasmussen",
    "Sato",
    "Tessier",
    "Ulrich",
    "Varga",
    "Whitcombe",
    "Yardley",
    "Zeller",
    "Aldana",
    "Bexley",
    "Corvin",
    "Draper",
    "Eastwood",
    "Fontaine",
    "Grieve",
    "Hollis",
    "Ingram",
    "Jovanovic",
    "Kessler",
    "Lowell",
    "Moreau",
    "Nyberg",
    "Orton",
    "Prescott",
    "Renner",
    "Stroud",
    "Thorne",
    "Vance",
    "Wexler",
    "Achterberg",
    "Bianchi",
    "Carrow",
    "Delacroix",
)
OCCUPATIONS = (
    "physicist",
    "chemist",
    "biologist",
    "mathematician",
    "astronomer",
    "geologist",
    "novelist",
    "poet",
    "painter",
    "composer",
    "architect",
    "politician",
    "engineer",
    "historian",
    "film director",
    "athlete",
)
SCIENCES = {
    "physicist": ("physics", ("effect", "constant", "limit", "principle")),
    "chemist": ("chemistry", ("reaction", "process", "synthesis", "rule")),
    "biologist": ("biology", ("cycle", "hypothesis", "syndrome", "pathway")),
    "mathematician": ("mathematics", ("theorem", "conjecture", "lemma", "inequality")),
    "astronomer": ("astronomy", ("comet", "nebula", "belt", "catalogue")),
    "geologist": ("geology", ("fault", "formation", "glacier", "basin")),
}
CURRENCIES = ("crown", "mark", "florin", "thaler", "dinar", "real", "lira", "ducat")
LANGUAGES = ("Kestavian", "Orlish", "Valmoran", "Belish", "Sorvan", "Lunic", "Corvic", "Thalean")
GOVERNMENTS = ("parliamentary republic", "constitutional monarchy", "federal republic", "presidential republic")
STREETS = (
    "Maple",
    "Oak",
    "Church",
    "Market",
    "Station",
    "River",
    "Mill",
    "High",
    "King",
    "Queen",
    "Park",
    "Bridge",
    "Chapel",
    "School",
    "Orchard",
    "Forest",
    "Lake",
    "Hill",
    "Meadow",
    "Castle",
)
STREET_TYPES = ("Street", "Avenue", "Road", "Lane", "Way")
PLACE_KINDS = (
    ("Town Hall", "town hall"),
    ("Public Library", "library"),
    ("General Hospital", "hospital"),
    ("Museum of Art", "museum"),
    ("History Museum", "museum"),
    ("Post Office", "post office"),
    ("Central Station", "train station"),
    ("Stadium", "stadium"),
    ("High School", "school"),
)
BUSINESS_KINDS = (
    ("{surname}'s Café", "cafe"),
    ("The {street} Bistro", "restaurant"),
    ("{town} Grand Hotel", "hotel"),
    ("{surname} Pharmacy", "pharmacy"),
    ("{street} Street Bakery", "bakery"),
    ("{town} Fire Station", "fire station"),
    ("{surname} Park", "park"),
    ("{town} Farmers Market", "marketplace"),
    ("{surname} Bookshop", "bookshop"),
)


@dataclass
class Country:
    name: str
    capital: str
    population: int
    area_km2: int
    currency: str
    language: str
    government: str
    founded: int
    neighbours: list[str] = field(default_factory=list)


@dataclass
class Town:
    name: str
    country: str
    lat: float
    lon: float
    population: int
    founded: int
    elevation_m: int
    area_km2: float
    mapped: bool  # inside the map site's region
    river: str


@dataclass
class Person:
    name: str
    occupation: str
    birth_year: int
    birth_month: int
    birth_day: int
    birth_town: str
    death_year: int | None
    nationality: str
    spouse: str | None = None
    works: list[str] = field(default_factory=list)


@dataclass
class Discovery:
    title: str
    field_name: str
    discoverer: str
    year: int
    university: str
    summary: str


@dataclass
class University:
    name: str
    town: str
    founded: int
    students: int
    motto: str


@dataclass
class Place:
    name: str
    kind: str
    town: str
    address: str
    lat: float
    lon: float


@dataclass
class World:
    countries: list[Country]
    towns: list[Town]
    people: list[Person]
    discoveries: list[Discovery]
    universities: list[University]
    places: list[Place]

    def town(self, name: str) -> Town:
        return next(t for t in self.towns if t.name == name)

    def person(self, name: str) -> Person:
        return next(p for p in self.people if p.name == name)

    def country(self, name: str) -> Country:
        return next(c for c in self.countries if c.name == name)


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    r = 6371.0
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * r * math.asin(math.sqrt(a))


def offset(lat: float, lon: float, north_km: float, east_km: float) -> tuple[float, float]:
    """The point ``north_km``/``east_km`` away (flat-earth approximation, fine at town scale)."""
    return (
        round(lat + north_km / 110.574, 5),
        round(lon + east_km / (111.320 * math.cos(math.radians(lat))), 5),
    )


def _unique(rng: random.Random, make, count: int) -> list[str]:
    seen: list[str] = []
    while len(seen) < count:
        name = make()
        if name not in seen:
            seen.append(name)
    return seen


def _countries(rng: random.Random) -> list[str]:
    return _unique(rng, lambda: rng.choice(COUNTRY_HEADS) + rng.choice(COUNTRY_MIDS) + rng.choice(COUNTRY_TAILS), 24)


@functools.lru_cache(maxsize=1)
def build_world() -> World:
    rng = random.Random(WORLD_SEED)
    country_names = _countries(rng)
    home = country_names[0]
    town_names = _unique(rng, lambda: rng.choice(TOWN_HEADS) + rng.choice(TOWN_TAILS), 150)
    rivers = [f"{rng.choice(TOWN_HEADS)}water River" for _ in range(12)]

    towns: list[Town] = []
    # 40 mapped towns in the home country, spread on a jittered disc so roads have sensible lengths.
    for i, name in enumerate(town_names[:40]):
        angle = i * 2.39996 + rng.uniform(-0.2, 0.2)
        radius = 34 * math.sqrt((i + 0.5) / 40)
        lat, lon = offset(CENTRE_LAT, CENTRE_LON, radius * math.sin(angle), radius * math.cos(angle))
        towns.append(_town(rng, name, home, lat, lon, mapped=True, river=rng.choice(rivers)))
    for i, name in enumerate(town_names[40:]):
        abroad = country_names[1 + i % (len(country_names) - 1)]
        towns.append(
            _town(
                rng,
                name,
                abroad,
                round(rng.uniform(-40, 60), 4),
                round(rng.uniform(-120, 140), 4),
                mapped=False,
                river=rng.choice(rivers),
            )
        )
    towns[0].population = 612_480  # the home capital is the biggest town
    countries = []
    for name in country_names:
        own = [t for t in towns if t.country == name]
        capital = max(own, key=lambda t: t.population).name
        countries.append(
            Country(
                name=name,
                capital=capital,
                population=rng.randint(800_000, 60_000_000),
                area_km2=rng.randint(9_000, 700_000),
                currency=f"{name[:-1] if name.endswith('a') else name} {rng.choice(CURRENCIES)}",
                language=rng.choice(LANGUAGES),
                government=rng.choice(GOVERNMENTS),
                founded=rng.randint(1050, 1960),
            )
        )
    for country in countries:
        country.neighbours = rng.sample([c for c in country_names if c != country.name], 3)

    person_names = _unique(rng, lambda: f"{rng.choice(FIRST_NAMES)} {rng.choice(SURNAMES)}", 220)
    people = []
    for i, name in enumerate(person_names):
        occupation = OCCUPATIONS[i % len(OCCUPATIONS)]
        town = rng.choice(towns[:40]) if i % 3 else rng.choice(towns)
        born = rng.randint(1780, 1985)
        died = born + rng.randint(45, 96) if born < 1940 else None
        people.append(
            Person(
                name=name,
                occupation=occupation,
                birth_year=born,
                birth_month=rng.randint(1, 12),
                birth_day=rng.randint(1, 28),
                birth_town=town.name,
                death_year=died,
                nationality=town.country,
            )
        )
    for a, b in zip(people[::7], people[3::7], strict=False):  # the last seventh may have no partner
        a.spouse, b.spouse = b.name, a.name

    universities = [
        University(
            name=f"University of {t.name}",
            town=t.name,
            founded=rng.randint(1400, 1970),
            students=rng.randint(4_000, 48_000),
            motto=rng.choice(MOTTOS),
        )
        for t in towns[:40:3]
    ]
    discoveries: list[Discovery] = []
    for person in people:
        if person.occupation not in SCIENCES:
            continue
        science, kinds = SCIENCES[person.occupation]
        surname = person.name.split()[-1]
        kind = rng.choice(kinds)
        title = (
            f"{surname} {kind}"
            if kind not in ("theorem", "conjecture", "lemma", "inequality")
            else f"{surname}'s {kind}"
        )
        if any(d.title == title for d in discoveries):
            title = f"{person.name} {kind}"
        year = min(person.birth_year + rng.randint(24, 44), 2020)
        university = rng.choice(universities).name
        summary = rng.choice(SUMMARIES[science]).format(year=year, name=person.name)
        discoveries.append(Discovery(title, science, person.name, year, university, summary))
        person.works.append(title)

    places = _places(rng, towns[:40], people)
    return World(countries, towns, people, discoveries, universities, places)


def _town(rng: random.Random, name: str, country: str, lat: float, lon: float, *, mapped: bool, river: str) -> Town:
    return Town(
        name=name,
        country=country,
        lat=lat,
        lon=lon,
        population=int(rng.lognormvariate(10.2, 0.9)) + 1_500,
        founded=rng.randint(900, 1890),
        elevation_m=rng.randint(40, 900),
        area_km2=round(rng.uniform(6, 180), 1),
        mapped=mapped,
        river=river,
    )


def _places(rng: random.Random, towns: list[Town], people: list[Person]) -> list[Place]:
    places: list[Place] = []
    surnames = [p.name.split()[-1] for p in people]
    for t_index, town in enumerate(towns):
        civic = PLACE_KINDS[:3] + tuple(rng.sample(PLACE_KINDS[3:], 3))
        if t_index % 3 == 0 and ("Central Station", "train station") not in civic:
            civic = civic + (("Central Station", "train station"),)
        business = rng.sample(BUSINESS_KINDS, 4)
        names = [(f"{town.name} {suffix}", kind) for suffix, kind in civic]
        for template, kind in business:
            names.append(
                (template.format(surname=rng.choice(surnames), street=rng.choice(STREETS), town=town.name), kind)
            )
        if t_index % 3 == 0:
            names.append((f"University of {town.name}", "university"))
        for name, kind in names:
            if any(p.name == name for p in places):
                continue
            north, east = rng.uniform(-1.6, 1.6), rng.uniform(-1.6, 1.6)
            lat, lon = offset(town.lat, town.lon, north, east)
            address = f"{rng.randint(1, 480)} {rng.choice(STREETS)} {rng.choice(STREET_TYPES)}, {town.name}"
            places.append(Place(name, kind, town.name, address, lat, lon))
    # A lighthouse on an island: reachable on foot by a causeway trail, but not by car.
    island = towns[-1]
    lat, lon = offset(island.lat, island.lon, 4.5, 3.0)
    places.append(
        Place(
            f"{island.name} Island Lighthouse",
            "lighthouse",
            island.name,
            f"1 Causeway Trail, {island.name} Island",
            lat,
            lon,
        )
    )
    return places


MOTTOS = (
    "Knowledge lights the way",
    "Truth through inquiry",
    "Learning without end",
    "By work and wonder",
    "Ever forward",
    "Let there be light",
    "Seek, test, know",
)

SUMMARIES = {
    "physics": (
        "a change in the electrical resistance of thin metal films under strong magnetic fields, "
        "first measured by {name} in {year}",
        "the limit above which a rotating fluid column breaks into stable vortices, derived by {name} in {year}",
    ),
    "chemistry": (
        "a catalytic route that turns plant sugars into lightweight plastics, reported by {name} in {year}",
        "the rule predicting which isomer forms when two unsaturated rings combine, stated by {name} in {year}",
    ),
    "biology": (
        "the seasonal cycle by which alpine mosses store nitrogen in their roots, described by {name} in {year}",
        "a metabolic pathway that lets deep-sea bacteria feed on methane, identified by {name} in {year}",
    ),
    "mathematics": (
        "a statement bounding the number of prime gaps in short intervals, proved by {name} in {year}",
        "a result on colouring the edges of infinite graphs, formulated by {name} in {year}",
    ),
    "astronomy": (
        "a faint object on a 74-year orbit, first observed by {name} in {year}",
        "a cloud of ionised gas in the southern sky, catalogued by {name} in {year}",
    ),
    "geology": (
        "a fracture zone along which the northern highlands slowly rise, mapped by {name} in {year}",
        "a sequence of layered limestone deposits rich in fossils, described by {name} in {year}",
    ),
}
