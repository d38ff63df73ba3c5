"""Schema and deterministic seed of the Postmill-like forum.

Volume is WebArena's order of magnitude (40 forums, ~700 submissions, a few thousand comments) so that
listing pages are long. A handful of hand-written "anchor" records are planted with fixed values
because the tasks in ``envs/local/tasks/reddit.json`` ask about them; everything else is generated
from the seed's ``random.Random`` only (no ``hash()``, no wall clock).
"""

from __future__ import annotations

import hashlib
import random
import sqlite3
from datetime import datetime, timedelta

from webarena_gym.envs.local.framework import inserted_id

from .anchors import ACCOUNT_SUBSCRIPTIONS, ANCHOR_COMMENTS, ANCHOR_POSTS, ANCHOR_USERS, LATE_POSTS

SCHEMA = """
CREATE TABLE reddit_user (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    biography TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE TABLE reddit_forum (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE COLLATE NOCASE,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    sidebar TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL
);
CREATE TABLE reddit_moderator (
    forum_id INTEGER NOT NULL REFERENCES reddit_forum(id),
    user_id INTEGER NOT NULL REFERENCES reddit_user(id),
    PRIMARY KEY (forum_id, user_id)
);
CREATE TABLE reddit_subscription (
    user_id INTEGER NOT NULL REFERENCES reddit_user(id),
    forum_id INTEGER NOT NULL REFERENCES reddit_forum(id),
    PRIMARY KEY (user_id, forum_id)
);
CREATE TABLE reddit_submission (
    id INTEGER PRIMARY KEY,
    forum_id INTEGER NOT NULL REFERENCES reddit_forum(id),
    user_id INTEGER NOT NULL REFERENCES reddit_user(id),
    title TEXT NOT NULL,
    url TEXT,
    body TEXT NOT NULL DEFAULT '',
    upvotes INTEGER NOT NULL DEFAULT 1,
    downvotes INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    edited_at TEXT
);
CREATE INDEX reddit_submission_forum ON reddit_submission(forum_id, created_at);
CREATE INDEX reddit_submission_user ON reddit_submission(user_id);
CREATE TABLE reddit_comment (
    id INTEGER PRIMARY KEY,
    submission_id INTEGER NOT NULL REFERENCES reddit_submission(id),
    parent_id INTEGER REFERENCES reddit_comment(id),
    user_id INTEGER NOT NULL REFERENCES reddit_user(id),
    body TEXT NOT NULL,
    upvotes INTEGER NOT NULL DEFAULT 1,
    downvotes INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
);
CREATE INDEX reddit_comment_submission ON reddit_comment(submission_id);
CREATE INDEX reddit_comment_user ON reddit_comment(user_id);
CREATE TABLE reddit_vote (
    user_id INTEGER NOT NULL REFERENCES reddit_user(id),
    kind TEXT NOT NULL CHECK (kind IN ('submission', 'comment')),
    target_id INTEGER NOT NULL,
    choice INTEGER NOT NULL CHECK (choice IN (-1, 1)),
    PRIMARY KEY (user_id, kind, target_id)
);
"""

ACCOUNT = {"username": "MarvelsGrandpa", "password": "test1234"}

# The newest generated record is older than every anchor that a task calls "newest".
_START = datetime(2022, 6, 1)
_SPAN_SECONDS = int((datetime(2023, 3, 28) - _START).total_seconds())

FORUMS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("AskReddit", "Ask Reddit", ("advice", "childhood memory", "job", "habit", "hobby", "life hack")),
    ("Art", "Art", ("oil painting", "sketch", "watercolor", "sculpture", "digital art", "mural")),
    ("aww", "Aww", ("puppy", "kitten", "rescue dog", "baby goat", "hamster", "otter")),
    ("boston", "Boston", ("T line", "Fenway", "North End", "snow day", "rent", "Cambridge")),
    ("books", "Books", ("novel", "audiobook", "book club", "library", "paperback", "fantasy series")),
    ("consoles", "Consoles", ("PS5", "Xbox Series X", "Nintendo Switch", "controller", "retro console", "Steam Deck")),
    ("Cooking", "Cooking", ("sourdough", "cast iron pan", "ramen", "meal prep", "knife", "spice rack")),
    ("deeplearning", "Deep Learning", ("transformer", "GPU", "dataset", "fine-tuning", "PyTorch", "attention")),
    ("DIY", "Do It Yourself", ("workbench", "deck", "drywall", "shelf", "garden bed", "tile floor")),
    ("EarthPorn", "Earth Porn", ("waterfall", "canyon", "glacier", "sunset", "mountain lake", "desert")),
    (
        "explainlikeimfive",
        "Explain Like I'm Five",
        ("inflation", "vaccine", "black hole", "encryption", "jet lag", "tides"),
    ),
    ("fitness", "Fitness", ("deadlift", "running plan", "protein", "home gym", "stretching", "rest day")),
    ("food", "Food", ("burger", "pizza", "dumplings", "tacos", "cheesecake", "curry")),
    (
        "Futurology",
        "Futurology",
        ("fusion power", "self-driving car", "lab-grown meat", "AI", "space elevator", "battery"),
    ),
    ("gadgets", "Gadgets", ("smartwatch", "e-reader", "mechanical keyboard", "drone", "USB-C hub", "smart speaker")),
    ("gaming", "Gaming", ("open world game", "speedrun", "indie game", "boss fight", "co-op game", "save file")),
    (
        "headphones",
        "Headphones",
        ("noise-cancelling headphones", "IEM", "DAC", "earbuds", "open-back headphones", "ear pads"),
    ),
    (
        "history",
        "History",
        ("Roman empire", "medieval castle", "World War I", "ancient Egypt", "Silk Road", "Renaissance"),
    ),
    ("jerseycity", "Jersey City", ("PATH train", "Newport", "Liberty State Park", "Grove Street", "parking", "ferry")),
    (
        "LifeProTips",
        "Life Pro Tips",
        ("budget", "cleaning trick", "email", "sleep schedule", "grocery list", "password manager"),
    ),
    (
        "MachineLearning",
        "Machine Learning",
        ("benchmark", "paper", "LLM", "reinforcement learning", "diffusion model", "embedding"),
    ),
    ("movies", "Movies", ("sequel", "director's cut", "soundtrack", "horror movie", "trailer", "Marvel movie")),
    ("Music", "Music", ("album", "vinyl record", "guitar riff", "concert", "playlist", "cover song")),
    ("news", "News", ("election", "city council", "heat wave", "court ruling", "strike", "bridge")),
    ("nyc", "New York City", ("subway", "bodega", "apartment hunt", "Central Park", "bagel", "car")),
    (
        "personalfinance",
        "Personal Finance",
        ("401k", "credit card", "emergency fund", "mortgage", "Roth IRA", "student loan"),
    ),
    ("philosophy", "Philosophy", ("free will", "stoicism", "ethics", "consciousness", "Kant", "existentialism")),
    ("photography", "Photography", ("prime lens", "tripod", "golden hour", "film camera", "long exposure", "portrait")),
    ("pics", "Pictures", ("bald eagle", "old photo", "street", "sky", "cat", "bridge")),
    ("programming", "Programming", ("Rust", "code review", "regex", "unit test", "Python", "text editor")),
    (
        "relationship_advice",
        "Relationship Advice",
        ("long-distance relationship", "roommate", "first date", "in-laws", "breakup", "anniversary"),
    ),
    ("science", "Science", ("study", "experiment", "telescope", "fossil", "gene therapy", "climate")),
    ("Seattle", "Seattle", ("rain", "ferry", "Capitol Hill", "coffee shop", "light rail", "hike")),
    ("space", "Space", ("rocket launch", "Mars rover", "nebula", "ISS", "exoplanet", "moon mission")),
    ("sports", "Sports", ("playoffs", "trade deadline", "marathon", "world cup", "rookie", "referee")),
    ("technology", "Technology", ("chip shortage", "smartphone", "browser", "open source", "5G", "data breach")),
    ("television", "Television", ("finale", "season 2", "sitcom", "miniseries", "streaming service", "pilot episode")),
    ("travel", "Travel", ("backpacking trip", "layover", "hostel", "road trip", "passport", "train pass")),
    (
        "wallstreetbets",
        "Wall Street Bets",
        ("options", "earnings call", "meme stock", "index fund", "short squeeze", "dividend"),
    ),
    ("worldnews", "World News", ("summit", "trade deal", "earthquake", "election", "sanctions", "heat record")),
)

_TITLES = (
    "What's the best {n} you've tried recently?",
    "Anyone else think the {n} hype is overrated?",
    "Finally finished my first {n} project",
    "TIL something surprising about the {n}",
    "Looking for recommendations: {n}",
    "Weekly {n} discussion thread",
    "Is it worth getting into {n} in 2023?",
    "My honest thoughts on the {n} after a year",
    "Hot take: {n} was better ten years ago",
    "Beginner question about {n}",
    "This {n} made my whole week",
    "How do you keep up with {n} news?",
    "Unpopular opinion about the {n}",
    "The {n} I saw today was unreal",
    "Need help choosing a {n}",
    "Update on my {n} situation",
)
_SENTENCES = (
    "I have been thinking about the {n} for a while now.",
    "Most people I asked had very different opinions about the {n}.",
    "Curious to hear what this community thinks.",
    "Any tips would be greatly appreciated.",
    "I tried a couple of options before settling on this one.",
    "The price was reasonable but the wait was long.",
    "Edit: thanks for all the replies, this blew up overnight.",
    "Happy to answer questions in the comments.",
    "Sorry if this has been asked before, the search did not help much.",
    "Long time lurker, first time posting here.",
    "It turned out much better than I expected.",
    "Honestly the {n} is the part I enjoy most.",
)
_COMMENTS = (
    "This is exactly what I needed today, thanks for sharing.",
    "I respectfully disagree, the {n} is not that simple.",
    "Came here to say the same thing.",
    "Do you have a source for that?",
    "Great post, saving this for later.",
    "I had the same experience with the {n} last year.",
    "Underrated comment right here.",
    "Can confirm, this worked for me too.",
    "That's a bold claim but I kind of agree.",
    "The {n} situation has been getting worse lately.",
    "Thanks, this cleared things up.",
    "Not sure why this is downvoted, it's a fair point.",
    "Any update on this?",
    "lol this thread is gold",
    "I would go with the cheaper option honestly.",
    "My friend works in this area and says the same.",
    "Wow, that looks amazing.",
    "This belongs on the front page.",
)
_ADJ = (
    "Quiet",
    "Brave",
    "Lazy",
    "Cosmic",
    "Rusty",
    "Happy",
    "Salty",
    "Swift",
    "Gentle",
    "Wild",
    "Clever",
    "Sleepy",
    "Lucky",
    "Grumpy",
    "Silver",
    "Crimson",
    "Hidden",
    "Frosty",
    "Sunny",
    "Bold",
)
_NOUN = (
    "Falcon",
    "Otter",
    "Builder",
    "Reader",
    "Panda",
    "Walrus",
    "Pilot",
    "Gardener",
    "Nomad",
    "Wizard",
    "Badger",
    "Llama",
    "Sailor",
    "Ranger",
    "Penguin",
    "Fox",
    "Potato",
    "Comet",
    "Owl",
    "Moose",
)


def hash_password(username: str, password: str) -> str:
    """Salted SHA-256: cheap enough to seed hundreds of users, never stores the clear text."""
    return hashlib.sha256(f"reddit:{username}:{password}".encode()).hexdigest()


def _ts(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%d %H:%M:%S")


def _random_time(rng: random.Random) -> datetime:
    return _START + timedelta(seconds=rng.randrange(_SPAN_SECONDS))


def _score(rng: random.Random, cap: int) -> tuple[int, int]:
    """Heavy-tailed vote counts, as on a real forum: most items have a handful, a few have hundreds."""
    up = min(cap, int(rng.paretovariate(1.1) * 3))
    return up, int(up * rng.uniform(0.0, 0.35)) + rng.randrange(3)


def _make_users(conn: sqlite3.Connection, rng: random.Random, count: int) -> dict[str, int]:
    names = [ACCOUNT["username"], *ANCHOR_USERS]
    while len(names) < count:
        name = f"{rng.choice(_ADJ)}{rng.choice(_NOUN)}{rng.randrange(10, 1000)}"
        if name not in names:
            names.append(name)
    ids: dict[str, int] = {}
    for name in names:
        password = ACCOUNT["password"] if name == ACCOUNT["username"] else f"pw-{rng.randrange(10**9)}"
        bio = (
            ""
            if name == ACCOUNT["username"]
            else rng.choice(("", "", "Just here to read.", "Coffee, code and cats.", "Opinions are my own."))
        )
        cur = conn.execute(
            "INSERT INTO reddit_user (username, password_hash, biography, created_at) VALUES (?, ?, ?, ?)",
            (name, hash_password(name, password), bio, _ts(_START - timedelta(days=rng.randrange(30, 900)))),
        )
        ids[name] = inserted_id(cur)
    return ids


def _add_comments(
    conn: sqlite3.Connection,
    rng: random.Random,
    post_id: int,
    created: datetime,
    noun: str,
    user_ids: list[int],
    count: int,
) -> None:
    parents: list[int | None] = [None]
    for _ in range(count):
        parent = rng.choice(parents) if len(parents) > 1 and rng.random() < 0.45 else None
        up, down = _score(rng, 400)
        when = created + timedelta(minutes=rng.randrange(5, 60 * 24 * 4))
        cur = conn.execute(
            "INSERT INTO reddit_comment (submission_id, parent_id, user_id, body, upvotes, downvotes,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (post_id, parent, rng.choice(user_ids), rng.choice(_COMMENTS).format(n=noun), up, down, _ts(when)),
        )
        parents.append(inserted_id(cur))


def _plant_late_posts(conn: sqlite3.Connection, forum_ids: dict[str, int]) -> None:
    """``LATE_POSTS`` and their authors, from fixed data only: appended after the random draws, they move no id."""
    for forum, author, title, body, link, up, down, at in LATE_POSTS:
        cur = conn.execute(
            "INSERT INTO reddit_user (username, password_hash, biography, created_at) VALUES (?, ?, '', ?)",
            (author, hash_password(author, f"pw-{author}"), _ts(_START - timedelta(days=365))),
        )
        conn.execute(
            "INSERT INTO reddit_submission (forum_id, user_id, title, url, body, upvotes, downvotes, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (forum_ids[forum], inserted_id(cur), title, link, body, up, down, at),
        )


def seed(conn: sqlite3.Connection, rng: random.Random) -> None:
    """Fill an empty database created from ``SCHEMA``; same ``rng`` state, same rows."""
    users = _make_users(conn, rng, 160)
    user_ids = list(users.values())
    forum_ids: dict[str, int] = {}
    for name, title, nouns in FORUMS:
        cur = conn.execute(
            "INSERT INTO reddit_forum (name, title, description, sidebar, created_at) VALUES (?, ?, ?, ?, ?)",
            (
                name,
                title,
                f"A place to talk about {nouns[0]}, {nouns[1]} and everything {title.lower()}.",
                "Be civil. No spam. Search before posting.",
                _ts(_START - timedelta(days=rng.randrange(400, 2000))),
            ),
        )
        forum_ids[name] = inserted_id(cur)
        for mod in rng.sample(user_ids[1:], 2):
            conn.execute("INSERT INTO reddit_moderator VALUES (?, ?)", (forum_ids[name], mod))
    for uid in user_ids[1:]:
        for fid in rng.sample(list(forum_ids.values()), rng.randrange(2, 12)):
            conn.execute("INSERT INTO reddit_subscription VALUES (?, ?)", (uid, fid))
    for name in ACCOUNT_SUBSCRIPTIONS:
        conn.execute("INSERT INTO reddit_subscription VALUES (?, ?)", (users[ACCOUNT["username"]], forum_ids[name]))
    # Planted authors post only their planted submissions, so "all submissions by X in Y" stays exact.
    authors = [uid for name, uid in users.items() if name not in ANCHOR_USERS]
    nouns_of = {name: nouns for name, _, nouns in FORUMS}
    posts: list[tuple[datetime, str, int, str, str, str | None, int, int]] = []
    for name, _, nouns in FORUMS:
        for _ in range(rng.randrange(30, 46)):
            noun = rng.choice(nouns)
            body = " ".join(s.format(n=noun) for s in rng.sample(_SENTENCES, rng.randrange(0, 4)))
            link = f"https://example.org/{name.lower()}/{rng.randrange(10**6)}" if rng.random() < 0.2 else None
            up, down = _score(rng, 1500)
            posts.append(
                (
                    _random_time(rng),
                    name,
                    rng.choice(authors),
                    rng.choice(_TITLES).format(n=noun),
                    body,
                    link,
                    up,
                    down,
                )
            )
    for forum, author, title, body, link, up, down, at in ANCHOR_POSTS:
        posts.append((datetime.fromisoformat(at), forum, users[author], title, body, link, up, down))
    posts.sort(key=lambda p: p[0])  # ids grow with time, as on a live site
    for created, forum, uid, title, body, link, up, down in posts:
        cur = conn.execute(
            "INSERT INTO reddit_submission (forum_id, user_id, title, url, body, upvotes, downvotes, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (forum_ids[forum], uid, title, link, body, up, down, _ts(created)),
        )
        post_id = inserted_id(cur)
        for text_title, author, text, votes in ANCHOR_COMMENTS:
            if text_title == title:
                up, down = (votes + 2, 2) if votes >= 0 else (1, 1 - votes)
                conn.execute(
                    "INSERT INTO reddit_comment (submission_id, parent_id, user_id, body, upvotes, downvotes,"
                    " created_at) VALUES (?, NULL, ?, ?, ?, ?, ?)",
                    (post_id, users[author], text, up, down, _ts(created + timedelta(hours=1))),
                )
        _add_comments(
            conn,
            rng,
            post_id,
            created,
            rng.choice(nouns_of[forum]),
            user_ids,
            int(rng.expovariate(1 / 6)) if created < _START + timedelta(seconds=_SPAN_SECONDS) else 0,
        )
    for kind, table in (("submission", "reddit_submission"), ("comment", "reddit_comment")):
        rows = conn.execute(f"SELECT id FROM {table} ORDER BY id").fetchall()
        for (target,) in rng.sample(rows, min(len(rows), 400)):
            voter = rng.choice(user_ids[1:])  # the agent's account starts with no votes
            conn.execute(
                "INSERT OR IGNORE INTO reddit_vote VALUES (?, ?, ?, ?)",
                (voter, kind, target, 1 if rng.random() < 0.8 else -1),
            )
    _plant_late_posts(conn, forum_ids)
