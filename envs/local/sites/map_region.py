"""The map's real-geography region: Pittsburgh, the road east to Philadelphia and Boston, and US states.

WebArena's map questions name real places (CMU, Pittsburgh International Airport, Independence Hall,
MIT, US states), so the map carries them as fixed data with approximate real coordinates, added after
the fictional world's draws so none of its ids, routes or answers move. The fictional towns sit on
Pittsburgh's own coordinates, so :data:`TOWNS` also tells the two regions apart: a "<kind> near
<place>" search stays inside its anchor's region. The region joins the fictional road graph by a single
bridge, so no route between two fictional places can shortcut through it.
"""

from __future__ import annotations

# Junction -> (lat, lon, town). Places hang off the junction their row names.
JUNCTIONS: dict[str, tuple[float, float, str]] = {
    "Downtown": (40.4406, -79.9959, "Pittsburgh"),
    "Oakland": (40.4418, -79.9560, "Pittsburgh"),
    "CMU": (40.4440, -79.9430, "Pittsburgh"),
    "Squirrel Hill": (40.4381, -79.9230, "Pittsburgh"),
    "Shadyside": (40.4543, -79.9350, "Pittsburgh"),
    "East Liberty": (40.4610, -79.9250, "Pittsburgh"),
    "South Side": (40.4285, -79.9700, "Pittsburgh"),
    "West End": (40.4410, -80.0330, "Pittsburgh"),
    "Monroeville": (40.4212, -79.7881, "Monroeville"),
    "Robinson": (40.4570, -80.1580, "Robinson Township"),
    "Moon": (40.5100, -80.2200, "Moon Township"),
    "Airport": (40.4920, -80.2380, "Moon Township"),
    "Harrisburg": (40.2732, -76.8867, "Harrisburg"),
    "King of Prussia": (40.0893, -75.3963, "King of Prussia"),
    "Philadelphia": (39.9526, -75.1652, "Philadelphia"),
    "New York": (40.7128, -74.0060, "New York City"),
    "Providence": (41.8240, -71.4128, "Providence"),
    "Boston": (42.3601, -71.0589, "Boston"),
    "Cambridge": (42.3736, -71.1097, "Cambridge"),
}
# (junction, junction, road, kind): interstates are motorways (driving only); the US routes alongside
# them let walkers and cyclists cross the region too.
ROADS: tuple[tuple[str, str, str, str], ...] = (
    ("Downtown", "Oakland", "Fifth Avenue", "primary"),
    ("Oakland", "CMU", "Forbes Avenue", "primary"),
    ("CMU", "Squirrel Hill", "Forbes Avenue", "primary"),
    ("CMU", "Shadyside", "Morewood Avenue", "secondary"),
    ("Shadyside", "East Liberty", "Centre Avenue", "secondary"),
    ("Oakland", "South Side", "Birmingham Bridge", "secondary"),
    ("Downtown", "South Side", "East Carson Street", "primary"),
    ("Downtown", "West End", "West End Bridge", "primary"),
    ("West End", "Robinson", "Steubenville Pike", "primary"),
    ("Robinson", "Moon", "University Boulevard", "primary"),
    ("Moon", "Airport", "Airport Boulevard", "secondary"),
    ("Downtown", "Robinson", "Interstate 376", "motorway"),
    ("Robinson", "Airport", "Interstate 376", "motorway"),
    ("Downtown", "Squirrel Hill", "Interstate 376", "motorway"),
    ("Squirrel Hill", "Monroeville", "Interstate 376", "motorway"),
    ("Monroeville", "Harrisburg", "Pennsylvania Turnpike", "motorway"),
    ("Harrisburg", "King of Prussia", "Pennsylvania Turnpike", "motorway"),
    ("King of Prussia", "Philadelphia", "Schuylkill Expressway", "motorway"),
    ("Downtown", "Harrisburg", "US Route 22", "primary"),
    ("Harrisburg", "Philadelphia", "US Route 322", "primary"),
    ("Philadelphia", "New York", "New Jersey Turnpike", "motorway"),
    ("New York", "Providence", "Interstate 95", "motorway"),
    ("Providence", "Boston", "Interstate 95", "motorway"),
    ("Philadelphia", "New York", "US Route 1", "primary"),
    ("New York", "Boston", "US Route 1", "primary"),
    ("Boston", "Cambridge", "Massachusetts Avenue", "primary"),
)
# The region's end of the one road to the fictional towns (it meets the nearest town's centre).
BRIDGE = ("Downtown", "Fort Pitt Bridge")
POSTCODES = {
    "Pittsburgh": "15213",
    "Monroeville": "15146",
    "Robinson Township": "15205",
    "Moon Township": "15108",
    "Harrisburg": "17101",
    "King of Prussia": "19406",
    "Philadelphia": "19106",
    "New York City": "10007",
    "Providence": "02903",
    "Boston": "02108",
    "Cambridge": "02139",
}
# Junctions at a city's centre: each city is a searchable place there, named as its town ("New York
# City", as the state of New York is a place of its own).
CITIES = ("Downtown", "Harrisburg", "Philadelphia", "New York", "Providence", "Boston", "Cambridge")
# (name, kind, street address, junction, lat, lon); the town is the junction's.
PLACES: tuple[tuple[str, str, str, str, float, float], ...] = (
    ("Carnegie Mellon University", "university", "5000 Forbes Avenue", "CMU", 40.4433, -79.9436),
    ("Gates and Hillman Centers", "university building", "4902 Forbes Avenue", "CMU", 40.4435, -79.9446),
    ("University of Pittsburgh", "university", "4200 Fifth Avenue", "Oakland", 40.4443, -79.9532),
    ("Gardner Steel Conference Center", "conference centre", "130 Thackeray Avenue", "Oakland", 40.4441, -79.9576),
    ("Wyndham Pittsburgh University Center", "hotel", "100 Lytton Avenue", "Oakland", 40.4456, -79.9522),
    ("The Oaklander Hotel", "hotel", "5130 Bigelow Boulevard", "Oakland", 40.4449, -79.9547),
    ("Hilton Garden Inn Pittsburgh University Place", "hotel", "3454 Forbes Avenue", "Oakland", 40.4380, -79.9610),
    ("United States Postal Service Oakland", "post office", "4316 Forbes Avenue", "Oakland", 40.4420, -79.9555),
    (
        "United States Postal Service Squirrel Hill",
        "post office",
        "1800 Murray Avenue",
        "Squirrel Hill",
        40.4350,
        -79.9225,
    ),
    ("Pittsburgh Bureau of Police Zone 4", "police", "5858 Northumberland Street", "Squirrel Hill", 40.4375, -79.9238),
    ("Giant Eagle Market District", "supermarket", "5550 Centre Avenue", "Shadyside", 40.4574, -79.9330),
    ("Whole Foods Market", "supermarket", "5880 Centre Avenue", "East Liberty", 40.4590, -79.9290),
    ("Trader Joe's", "supermarket", "6343 Penn Avenue", "East Liberty", 40.4560, -79.9170),
    ("Hotel Indigo Pittsburgh East Liberty", "hotel", "123 North Highland Avenue", "East Liberty", 40.4605, -79.9245),
    (
        "US Citizenship and Immigration Services",
        "government office",
        "3000 Sidney Street",
        "South Side",
        40.4275,
        -79.9660,
    ),
    ("Social Security Administration", "government office", "1000 Liberty Avenue", "Downtown", 40.4435, -79.9935),
    ("Duquesne University", "university", "600 Forbes Avenue", "Downtown", 40.4365, -79.9927),
    ("Pittsburgh Bureau of Police Headquarters", "police", "1203 Western Avenue", "Downtown", 40.4510, -80.0170),
    ("Omni William Penn Hotel", "hotel", "530 William Penn Place", "Downtown", 40.4410, -79.9970),
    ("Walmart Supercenter", "supermarket", "6100 Robinson Centre Drive", "Robinson", 40.4555, -80.1610),
    ("Pittsburgh International Airport", "airport", "1000 Airport Boulevard", "Airport", 40.4915, -80.2329),
    ("Hyatt Regency Pittsburgh International Airport", "hotel", "1111 Airport Boulevard", "Airport", 40.4940, -80.2405),
    ("DoubleTree by Hilton Hotel Pittsburgh Airport", "hotel", "8402 University Boulevard", "Moon", 40.5120, -80.2180),
    ("Giant Eagle", "supermarket", "9805 University Boulevard", "Moon", 40.5085, -80.2235),
    ("ALDI", "supermarket", "8800 University Boulevard", "Moon", 40.5070, -80.2150),
    ("Independence Hall", "historic building", "520 Chestnut Street", "Philadelphia", 39.9489, -75.1500),
    ("Massachusetts Institute of Technology", "university", "77 Massachusetts Avenue", "Cambridge", 42.3592, -71.0935),
    ("Harvard University", "university", "1350 Massachusetts Avenue", "Cambridge", 42.3770, -71.1167),
    ("Northeastern University", "university", "360 Huntington Avenue", "Boston", 42.3398, -71.0892),
)
# State -> (lat, lon of its centre, bordering states), as OpenStreetMap's boundary relations share edges.
STATES: dict[str, tuple[float, float, tuple[str, ...]]] = {
    "Pennsylvania": (40.88, -77.80, ("New York", "New Jersey", "Delaware", "Maryland", "West Virginia", "Ohio")),
    "New York": (42.95, -75.53, ("Vermont", "Massachusetts", "Connecticut", "New Jersey", "Pennsylvania")),
    "New Jersey": (40.19, -74.67, ("New York", "Pennsylvania", "Delaware")),
    "Delaware": (39.00, -75.50, ("Pennsylvania", "New Jersey", "Maryland")),
    "Maryland": (39.05, -76.79, ("Pennsylvania", "Delaware", "West Virginia", "Virginia", "District of Columbia")),
    "West Virginia": (38.64, -80.62, ("Pennsylvania", "Maryland", "Virginia", "Kentucky", "Ohio")),
    "Ohio": (40.29, -82.79, ("Pennsylvania", "West Virginia", "Kentucky", "Indiana", "Michigan")),
    "Connecticut": (41.62, -72.73, ("New York", "Massachusetts", "Rhode Island")),
    "Massachusetts": (42.26, -71.81, ("New York", "Vermont", "New Hampshire", "Rhode Island", "Connecticut")),
    "Rhode Island": (41.68, -71.56, ("Connecticut", "Massachusetts")),
    "Vermont": (44.07, -72.67, ("New York", "Massachusetts", "New Hampshire")),
    "New Hampshire": (43.69, -71.58, ("Vermont", "Massachusetts", "Maine")),
    "Maine": (45.37, -69.24, ("New Hampshire",)),
}
# Every town of the region, states included (a state's place is its own "town").
TOWNS = frozenset({town for _, _, town in JUNCTIONS.values()} | set(STATES))
