"""Schema and deterministic seed of the GitLab-like code host.

Thirty projects with real-looking repositories (README, LICENSE, source files), thousands of commits,
hundreds of issues and merge requests. Issues and merge requests share one table (``kind``) because
GitLab treats both as "issuables" with the same assignees, labels, milestones and notes.
Anchor records that tasks ask about are planted with fixed values; the rest comes from ``rng`` only.
"""

from __future__ import annotations

import hashlib
import random
import sqlite3
from datetime import datetime, timedelta

from webarena_gym.envs.local.framework import inserted_id

from .anchors import (
    ANCHOR_BRANCHES,
    ANCHOR_COMMITS,
    ANCHOR_FILES,
    ANCHOR_MEMBERS,
    EXACT_MEMBERS,
    FEED_TOKENS,
    ISSUABLES,
    NAMED_USERS,
    STAR_TOTALS,
    TOP_CONTRIBUTORS,
)

SCHEMA = """
CREATE TABLE gitlab_user (
    id INTEGER PRIMARY KEY,
    username TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    email TEXT NOT NULL,
    password_hash TEXT NOT NULL,
    bio TEXT NOT NULL DEFAULT '',
    status_message TEXT NOT NULL DEFAULT '',
    busy INTEGER NOT NULL DEFAULT 0,
    website TEXT NOT NULL DEFAULT '',
    feed_token TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE TABLE gitlab_group (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    visibility TEXT NOT NULL DEFAULT 'public' CHECK (visibility IN ('private', 'internal', 'public'))
);
CREATE TABLE gitlab_group_member (
    group_id INTEGER NOT NULL REFERENCES gitlab_group(id),
    user_id INTEGER NOT NULL REFERENCES gitlab_user(id),
    access_level INTEGER NOT NULL,
    PRIMARY KEY (group_id, user_id)
);
CREATE TABLE gitlab_project (
    id INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,
    path TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    visibility TEXT NOT NULL DEFAULT 'public' CHECK (visibility IN ('private', 'internal', 'public')),
    default_branch TEXT NOT NULL DEFAULT 'main',
    forked_from_id INTEGER REFERENCES gitlab_project(id),
    created_at TEXT NOT NULL,
    last_activity_at TEXT NOT NULL,
    UNIQUE (namespace, path)
);
CREATE TABLE gitlab_member (
    project_id INTEGER NOT NULL REFERENCES gitlab_project(id),
    user_id INTEGER NOT NULL REFERENCES gitlab_user(id),
    access_level INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (project_id, user_id)
);
CREATE TABLE gitlab_star (
    user_id INTEGER NOT NULL REFERENCES gitlab_user(id),
    project_id INTEGER NOT NULL REFERENCES gitlab_project(id),
    PRIMARY KEY (user_id, project_id)
);
CREATE TABLE gitlab_file (
    project_id INTEGER NOT NULL REFERENCES gitlab_project(id),
    path TEXT NOT NULL,
    content TEXT NOT NULL,
    PRIMARY KEY (project_id, path)
);
CREATE TABLE gitlab_branch (
    project_id INTEGER NOT NULL REFERENCES gitlab_project(id),
    name TEXT NOT NULL,
    PRIMARY KEY (project_id, name)
);
CREATE TABLE gitlab_commit (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES gitlab_project(id),
    sha TEXT NOT NULL,
    author_name TEXT NOT NULL,
    author_email TEXT NOT NULL,
    message TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX gitlab_commit_project ON gitlab_commit(project_id, created_at);
CREATE TABLE gitlab_label (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES gitlab_project(id),
    name TEXT NOT NULL,
    color TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    UNIQUE (project_id, name)
);
CREATE TABLE gitlab_milestone (
    id INTEGER PRIMARY KEY,
    project_id INTEGER NOT NULL REFERENCES gitlab_project(id),
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    start_date TEXT,
    due_date TEXT,
    state TEXT NOT NULL DEFAULT 'active'
);
CREATE TABLE gitlab_issuable (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('issue', 'merge_request')),
    project_id INTEGER NOT NULL REFERENCES gitlab_project(id),
    iid INTEGER NOT NULL,
    title TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    author_id INTEGER NOT NULL REFERENCES gitlab_user(id),
    state TEXT NOT NULL CHECK (state IN ('opened', 'closed', 'merged')),
    milestone_id INTEGER REFERENCES gitlab_milestone(id),
    due_date TEXT,
    source_branch TEXT,
    target_branch TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (project_id, kind, iid)
);
CREATE TABLE gitlab_issuable_user (
    issuable_id INTEGER NOT NULL REFERENCES gitlab_issuable(id),
    user_id INTEGER NOT NULL REFERENCES gitlab_user(id),
    role TEXT NOT NULL CHECK (role IN ('assignee', 'reviewer')),
    PRIMARY KEY (issuable_id, user_id, role)
);
CREATE TABLE gitlab_issuable_label (
    issuable_id INTEGER NOT NULL REFERENCES gitlab_issuable(id),
    label_id INTEGER NOT NULL REFERENCES gitlab_label(id),
    PRIMARY KEY (issuable_id, label_id)
);
CREATE TABLE gitlab_follow (
    follower_id INTEGER NOT NULL REFERENCES gitlab_user(id),
    followee_id INTEGER NOT NULL REFERENCES gitlab_user(id),
    PRIMARY KEY (follower_id, followee_id)
);
CREATE TABLE gitlab_todo (
    id INTEGER PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES gitlab_user(id),
    issuable_id INTEGER NOT NULL REFERENCES gitlab_issuable(id),
    author_id INTEGER NOT NULL REFERENCES gitlab_user(id),
    action TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    created_at TEXT NOT NULL
);
CREATE TABLE gitlab_note (
    id INTEGER PRIMARY KEY,
    issuable_id INTEGER NOT NULL REFERENCES gitlab_issuable(id),
    author_id INTEGER NOT NULL REFERENCES gitlab_user(id),
    body TEXT NOT NULL,
    created_at TEXT NOT NULL
);
"""

ACCOUNT = {"username": "byteblaze", "password": "hello1234"}
ROLES = {10: "Guest", 20: "Reporter", 30: "Developer", 40: "Maintainer", 50: "Owner"}

_START = datetime(2021, 1, 4)
_SPAN_SECONDS = int((datetime(2023, 3, 28) - _START).total_seconds())

_FIRST = (
    "Ana",
    "Ben",
    "Carol",
    "Dmitri",
    "Elena",
    "Farid",
    "Grace",
    "Hiro",
    "Ines",
    "Jonas",
    "Kira",
    "Liam",
    "Maya",
    "Nikhil",
    "Olga",
    "Pablo",
    "Quinn",
    "Rosa",
    "Sven",
    "Tara",
    "Umar",
    "Vera",
    "Wen",
    "Yusuf",
    "Zoe",
    "Amir",
    "Bianca",
    "Chen",
    "Dara",
    "Emil",
)
_LAST = (
    "Torres",
    "Okafor",
    "Lindqvist",
    "Novak",
    "Haddad",
    "Kimura",
    "Moreau",
    "Patel",
    "Schmidt",
    "Rossi",
    "Nguyen",
    "Kowalski",
    "Fischer",
    "Silva",
    "Larsen",
    "Ibrahim",
    "Costa",
    "Ivanova",
    "Murphy",
    "Tanaka",
)

# (namespace, path, name, description, language, license)
PROJECTS: tuple[tuple[str, str, str, str, str, str], ...] = (
    ("byteblaze", "dotfiles", "dotfiles", "My shell, editor and git configuration.", "shell", "MIT"),
    (
        "byteblaze",
        "empathy-prompts",
        "empathy-prompts",
        "Writing prompts that help teams practise empathetic code review.",
        "markdown",
        "CC-BY-4.0",
    ),
    (
        "byteblaze",
        "cloud-to-butt",
        "cloud-to-butt",
        "Browser extension that replaces words on web pages.",
        "javascript",
        "MIT",
    ),
    (
        "byteblaze",
        "solarized-prism-theme",
        "solarized-prism-theme",
        "A Solarized colour theme for the Prism syntax highlighter.",
        "css",
        "MIT",
    ),
    ("byteblaze", "gimmiethat.space", "gimmiethat.space", "Source of my personal landing page.", "html", "Apache-2.0"),
    (
        "byteblaze",
        "a11y-webring.club",
        "a11y-webring.club",
        "A webring for accessibility-minded personal sites.",
        "javascript",
        "MIT",
    ),
    (
        "byteblaze",
        "accessible-html-content-patterns",
        "accessible-html-content-patterns",
        "The full HTML5 element set with accessibility notes for each element.",
        "html",
        "MIT",
    ),
    ("byteblaze", "timeit", "timeit", "A tiny command-line stopwatch for timing shell commands.", "python", "GPL-3.0"),
    (
        "byteblaze",
        "web-scraper-kit",
        "web-scraper-kit",
        "Helpers for polite, rate-limited web scraping.",
        "python",
        "Apache-2.0",
    ),
    (
        "byteblaze",
        "pomodoro-cli",
        "pomodoro-cli",
        "Pomodoro timer for the terminal with desktop notifications.",
        "python",
        "MIT",
    ),
    (
        "a11yproject",
        "a11yproject.com",
        "a11yproject.com",
        "The A11Y Project is a community-driven effort to make digital accessibility easier.",
        "javascript",
        "Apache-2.0",
    ),
    (
        "a11yproject",
        "a11y-checklist",
        "a11y-checklist",
        "A checklist for building accessible websites.",
        "markdown",
        "MIT",
    ),
    (
        "primer",
        "design",
        "design",
        "Design guidelines, principles and component documentation for Primer.",
        "markdown",
        "MIT",
    ),
    ("primer", "octicons", "octicons", "A scalable set of icons handcrafted for the web.", "javascript", "MIT"),
    ("primer", "css", "css", "The CSS implementation of the Primer design system.", "css", "MIT"),
    (
        "webdev-guild",
        "jekyll-starter",
        "jekyll-starter",
        "A minimal Jekyll starter with sensible defaults.",
        "html",
        "MIT",
    ),
    ("webdev-guild", "nodebb-theme", "nodebb-theme", "A clean theme for NodeBB forums.", "javascript", "GPL-3.0"),
    (
        "webdev-guild",
        "sveltekit-blog",
        "sveltekit-blog",
        "Markdown-powered blog template built with SvelteKit.",
        "javascript",
        "MIT",
    ),
    ("data-lab", "covid-dashboard", "covid-dashboard", "Dashboard of regional COVID-19 case data.", "python", "MIT"),
    (
        "data-lab",
        "weather-etl",
        "weather-etl",
        "Nightly ETL jobs that collect weather station readings.",
        "python",
        "Apache-2.0",
    ),
    (
        "data-lab",
        "notebook-tools",
        "notebook-tools",
        "Utilities for cleaning and diffing Jupyter notebooks.",
        "python",
        "BSD-3-Clause",
    ),
    (
        "data-lab",
        "ml-benchmarks",
        "ml-benchmarks",
        "Reproducible benchmarks of classic machine learning models.",
        "python",
        "MIT",
    ),
    ("open-maps", "tile-server", "tile-server", "Vector tile server for self-hosted maps.", "javascript", "Apache-2.0"),
    ("open-maps", "geocoder", "geocoder", "Address search and reverse geocoding service.", "python", "Apache-2.0"),
    ("convexegg", "chatgpt", "chatgpt", "A desktop client for chatting with language models.", "javascript", "MIT"),
    ("yjlou", "yjlou.github.io", "yjlou.github.io", "Personal homepage and blog.", "html", "MIT"),
    (
        "kilian",
        "super-awesome-robot",
        "Super_Awesome_Robot",
        "Firmware for a line-following robot kit.",
        "python",
        "GPL-3.0",
    ),
    ("sarah_chen", "recipe-box", "recipe-box", "Store and search family recipes.", "python", "MIT"),
    (
        "mkowalski",
        "kanban-board",
        "kanban-board",
        "A drag-and-drop kanban board in plain JavaScript.",
        "javascript",
        "MIT",
    ),
    (
        "lin_wei",
        "markdown-preview",
        "markdown-preview",
        "Live Markdown preview for the terminal.",
        "python",
        "BSD-3-Clause",
    ),
)
GROUPS = {
    "a11yproject": ("The A11Y Project", "Digital accessibility resources."),
    "primer": ("Primer", "Design system for building consistent interfaces."),
    "webdev-guild": ("Webdev Guild", "Starter kits and themes for the web."),
    "data-lab": ("Data Lab", "Data pipelines and dashboards."),
    "open-maps": ("Open Maps", "Self-hosted map services."),
}
LABELS = (
    ("bug", "#d9534f", "Something is not working"),
    ("enhancement", "#5cb85c", "New feature or request"),
    ("documentation", "#428bca", "Improvements or additions to documentation"),
    ("help wanted", "#f0ad4e", "Extra attention is needed"),
    ("good first issue", "#7f8c8d", "Good for newcomers"),
    ("question", "#9b59b6", "Further information is requested"),
    ("accessibility", "#16a085", "a11y"),
    ("performance", "#34495e", "Speed and resource usage"),
)
_ISSUE_TITLES = (
    "Broken link on the {page} page",
    "Add dark mode support to the {page} page",
    "404 error when opening {page}",
    "Improve colour contrast of the {page} buttons",
    "Typo in the {page} documentation",
    "Crash when saving {page} settings",
    "Update {dep} to the latest version",
    "Keyboard focus lost on {page}",
    "Slow load time on the {page} page",
    "Screen reader does not announce {page} headings",
    "Add unit tests for the {page} module",
    "Support {dep} 2.x",
    "Question: how to configure {page}?",
    "Refactor {page} layout for mobile",
    "Deprecation warnings from {dep}",
)
_MR_TITLES = (
    "Fix broken link on the {page} page",
    "Add {page} page",
    "Bump {dep} from 1.{n}.0 to 1.{m}.0",
    "Refactor {page} component",
    "Improve accessibility of {page} navigation",
    "Add tests for {page}",
    "Update README with {page} instructions",
    "Draft: rewrite {page} styles",
)
_COMMIT_MSGS = (
    "Fix typo in {page} docs",
    "Add {page} page",
    "Update {dep}",
    "Refactor {page} helpers",
    "Improve {page} accessibility",
    "Add tests for {page}",
    "Merge branch '{branch}' into 'main'",
    "Remove unused {dep} import",
    "Tweak {page} styles",
    "Initial commit",
    "Clean up {page} layout",
    "Bump version",
    "Update README",
    "Fix lint errors in {page}",
)
_PAGES = (
    "resources",
    "about",
    "contact",
    "settings",
    "search",
    "login",
    "dashboard",
    "profile",
    "checklist",
    "navigation",
    "footer",
    "colors",
    "typography",
    "buttons",
    "forms",
    "octovisuals",
    "icons",
    "blog",
)
_DEPS = ("eslint", "webpack", "jekyll", "pytest", "requests", "numpy", "postcss", "svelte", "babel", "flask")
_NOTES = (
    "Thanks for reporting, I can reproduce this.",
    "Could you share the steps to reproduce?",
    "I am working on a fix.",
    "This is fixed in the latest release.",
    "Looks good to me!",
    "Can we add a test for this case?",
    "Duplicate of an older issue.",
    "+1, seeing the same thing.",
    "I pushed a new version, please take another look.",
    "Let's discuss this in the next sync.",
)


def hash_password(username: str, password: str) -> str:
    return hashlib.sha256(f"gitlab:{username}:{password}".encode()).hexdigest()


def _ts(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%d %H:%M:%S")


def _when(rng: random.Random) -> datetime:
    return _START + timedelta(seconds=rng.randrange(_SPAN_SECONDS))


def _license_text(key: str) -> str:
    titles = {
        "MIT": "MIT License",
        "Apache-2.0": "Apache License, Version 2.0",
        "GPL-3.0": "GNU General Public License v3.0",
        "BSD-3-Clause": "BSD 3-Clause License",
        "CC-BY-4.0": "Creative Commons Attribution 4.0 International",
    }
    return f"{titles[key]}\n\nCopyright (c) 2021 the contributors.\n\nSee the full text of the {titles[key]}.\n"


def _source_files(name: str, language: str, rng: random.Random) -> dict[str, str]:
    """A plausible repository layout for the project's language."""
    mod = name.replace("-", "_").replace(".", "_").lower()
    funcs = rng.sample(
        (
            "parse",
            "render",
            "load_config",
            "fetch",
            "validate",
            "format_output",
            "main",
            "run",
            "build_index",
            "cleanup",
        ),
        4,
    )
    if language == "python":
        body = "\n\n".join(
            f'def {f}(value):\n    """{f.replace("_", " ").capitalize()} the value."""\n    return value\n'
            for f in funcs
        )
        return {
            f"src/{mod}/__init__.py": f'"""{name}."""\n__version__ = "1.{rng.randrange(10)}.0"\n',
            f"src/{mod}/core.py": body,
            "tests/test_core.py": f"from {mod}.core import {funcs[0]}\n\n\n"
            f"def test_{funcs[0]}():\n    assert {funcs[0]}(1) == 1\n",
            "pyproject.toml": f'[project]\nname = "{name}"\nversion = "1.0.0"\n',
            ".gitignore": "__pycache__/\n.venv/\n",
        }
    if language == "javascript":
        body = "\n".join(f"export function {f}(value) {{\n  return value;\n}}\n" for f in funcs)
        return {
            "src/index.js": body,
            "package.json": f'{{\n  "name": "{name}",\n  "version": "1.0.0"\n}}\n',
            "test/index.test.js": f"import {{ {funcs[0]} }} from '../src/index.js';\n",
            ".gitignore": "node_modules/\n",
        }
    if language == "css":
        return {
            "src/theme.css": "pre code {\n  color: #657b83;\n  background: #fdf6e3;\n}\n",
            "package.json": f'{{\n  "name": "{name}"\n}}\n',
        }
    if language == "html":
        return {
            "index.html": f"<!DOCTYPE html>\n<html>\n<head><title>{name}</title></head>\n<body>\n"
            f"<h1>{name}</h1>\n</body>\n</html>\n",
            "css/site.css": "body { margin: 0; }\n",
        }
    if language == "shell":
        return {
            ".bashrc": "export EDITOR=vim\nalias ll='ls -la'\n",
            ".vimrc": "set number\nsyntax on\n",
            ".gitconfig": "[user]\n  name = Byte Blaze\n",
            "install.sh": '#!/bin/sh\nln -s "$PWD/.bashrc" ~\n',
        }
    return {
        "docs/guide.md": f"# Guide\n\nHow to contribute to {name}.\n",
        "CONTRIBUTING.md": "# Contributing\n\nOpen an issue first.\n",
    }


def _make_users(conn: sqlite3.Connection, rng: random.Random) -> dict[str, int]:
    people = dict(NAMED_USERS)
    while len(people) < 72:
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        username = rng.choice(
            (f"{first}{last}".lower(), f"{first[0]}{last}".lower(), f"{first.lower()}_{last[:3].lower()}")
        )
        if username not in people and f"{first} {last}" not in people.values():
            people[username] = f"{first} {last}"
    ids: dict[str, int] = {}
    for username, name in people.items():
        password = ACCOUNT["password"] if username == ACCOUNT["username"] else f"pw-{rng.randrange(10**9)}"
        cur = conn.execute(
            "INSERT INTO gitlab_user (username, name, email, password_hash, bio, created_at, feed_token)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                username,
                name,
                f"{username}@{rng.choice(('gmail.com', 'example.com', 'proton.me'))}",
                hash_password(username, password),
                ""
                if username == ACCOUNT["username"]
                else rng.choice(("", "", "Open source enthusiast.", "Frontend developer.", "Data engineer.")),
                _ts(_START - timedelta(days=rng.randrange(10, 900))),
                _feed_token(username),
            ),
        )
        ids[username] = inserted_id(cur)
    return ids


def _feed_token(username: str) -> str:
    """The user's RSS feed token: planted for the tasks' account, otherwise derived from the username, so
    that the seed's random draws (and every other record) stay as they were before tokens existed."""
    if username in FEED_TOKENS:
        return FEED_TOKENS[username]
    return hashlib.sha256(f"feed:{username}".encode()).hexdigest()[:20]


def _add_issuable(
    conn: sqlite3.Connection,
    project_id: int,
    kind: str,
    iid: int,
    title: str,
    desc: str,
    author: int,
    state: str,
    created: datetime,
    branches: tuple[str | None, str | None],
    milestone: int | None = None,
    updated: datetime | None = None,
) -> int:
    cur = conn.execute(
        "INSERT INTO gitlab_issuable (kind, project_id, iid, title, description, author_id, state, milestone_id,"
        " source_branch, target_branch, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            kind,
            project_id,
            iid,
            title,
            desc,
            author,
            state,
            milestone,
            branches[0],
            branches[1],
            _ts(created),
            _ts(updated or created + timedelta(days=3)),
        ),
    )
    return inserted_id(cur)


# Projects whose issue and merge request lists run over several pages, as WebArena's busiest ones do.
_BUSY = {"a11yproject/a11yproject.com": 3, "primer/design": 3, "byteblaze/a11y-webring.club": 2}


def _seed_project(
    conn: sqlite3.Connection,
    rng: random.Random,
    pid: int,
    full: str,
    users: dict[str, int],
    members: list[int],
    labels: dict[str, int],
    counters: dict[str, int],
) -> None:
    """Commits, branches, milestones, issues and merge requests of one project."""
    people = {r[0]: (r[1], r[2]) for r in conn.execute("SELECT id, name, email FROM gitlab_user")}
    weights = [1 / (i + 1) for i in range(len(members))]
    commits: list[tuple[datetime, int, str | None]] = [
        (_when(rng), rng.choices(members, weights)[0], None) for _ in range(rng.randrange(15, 70))
    ]
    if full in TOP_CONTRIBUTORS:
        who, extra = TOP_CONTRIBUTORS[full]
        commits += [(_when(rng), users[who], None) for _ in range(extra)]
    commits += [(datetime.fromisoformat(at), users[who], msg) for p, who, at, msg in ANCHOR_COMMITS if p == full]
    branches = [
        "main",
        *(
            f"{rng.choice(_PAGES)}-{rng.choice(('fix', 'update', 'component', 'docs'))}"
            for _ in range(rng.randrange(1, 6))
        ),
        *ANCHOR_BRANCHES.get(full, ()),
    ]
    for branch in dict.fromkeys(branches):
        conn.execute("INSERT INTO gitlab_branch VALUES (?, ?)", (pid, branch))
    for when, uid, message in sorted(commits, key=lambda c: (c[0], c[1])):
        msg = message or rng.choice(_COMMIT_MSGS).format(
            page=rng.choice(_PAGES), dep=rng.choice(_DEPS), branch=rng.choice(branches)
        )
        conn.execute(
            "INSERT INTO gitlab_commit (project_id, sha, author_name, author_email, message, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (pid, f"{rng.getrandbits(160):040x}", people[uid][0], people[uid][1], msg, _ts(when)),
        )
    milestones = []
    for n in range(rng.randrange(0, 4)):
        start = _when(rng)
        cur = conn.execute(
            "INSERT INTO gitlab_milestone (project_id, title, start_date, due_date, state) VALUES (?, ?, ?, ?, ?)",
            (
                pid,
                f"v{n + 1}.0",
                start.strftime("%Y-%m-%d"),
                (start + timedelta(days=30)).strftime("%Y-%m-%d"),
                rng.choice(("active", "closed")),
            ),
        )
        milestones.append(inserted_id(cur))
    busy = _BUSY.get(full, 1)
    for kind, low, high in (("issue", 3 * busy, 30 * busy), ("merge_request", 1 * busy, 12 * busy)):
        for _ in range(rng.randrange(low, high)):
            counters[f"{pid}-{kind}"] += 1
            fmt = {
                "page": rng.choice(_PAGES),
                "dep": rng.choice(_DEPS),
                "n": rng.randrange(9),
                "m": rng.randrange(9, 20),
            }
            title = rng.choice(_ISSUE_TITLES if kind == "issue" else _MR_TITLES).format(**fmt)
            created = _when(rng)
            state = rng.choices(
                ("opened", "closed", "merged") if kind == "merge_request" else ("opened", "closed"),
                (5, 2, 4) if kind == "merge_request" else (6, 4),
            )[0]
            source = rng.choice(branches[1:]) if kind == "merge_request" and len(branches) > 1 else None
            iid = _add_issuable(
                conn,
                pid,
                kind,
                counters[f"{pid}-{kind}"],
                title,
                f"{title}.\n\nObserved on {created:%b %d, %Y}.",
                rng.choice(members + list(users.values())[:20]),
                state,
                created,
                (source or "patch-1", "main") if kind == "merge_request" else (None, None),
                rng.choice(milestones) if milestones and rng.random() < 0.4 else None,
                created + timedelta(hours=rng.randrange(1, 24 * 40)),
            )
            for label in rng.sample(sorted(labels), rng.randrange(0, 3)):
                conn.execute("INSERT INTO gitlab_issuable_label VALUES (?, ?)", (iid, labels[label]))
            if rng.random() < 0.5:
                conn.execute("INSERT INTO gitlab_issuable_user VALUES (?, ?, 'assignee')", (iid, rng.choice(members)))
            if kind == "merge_request" and rng.random() < 0.6:
                conn.execute("INSERT INTO gitlab_issuable_user VALUES (?, ?, 'reviewer')", (iid, rng.choice(members)))
            for k in range(rng.randrange(0, 4)):
                conn.execute(
                    "INSERT INTO gitlab_note (issuable_id, author_id, body, created_at) VALUES (?, ?, ?, ?)",
                    (iid, rng.choice(members), rng.choice(_NOTES), _ts(created + timedelta(hours=5 * k + 1))),
                )


def _seed_anchor_issuables(
    conn: sqlite3.Connection,
    pid: int,
    full: str,
    users: dict[str, int],
    labels: dict[str, int],
    counters: dict[str, int],
) -> None:
    """The planted issues and merge requests of one project, after its random ones (so they get the top iids)."""
    for anchor in ISSUABLES:
        if anchor.project != full:
            continue
        counters[f"{pid}-{anchor.kind}"] += 1
        created = datetime.fromisoformat(anchor.created)
        iid = _add_issuable(
            conn,
            pid,
            anchor.kind,
            counters[f"{pid}-{anchor.kind}"],
            anchor.title,
            anchor.description,
            users[anchor.author],
            anchor.state,
            created,
            anchor.branches or (None, None),
            updated=datetime.fromisoformat(anchor.updated) if anchor.updated else None,
        )
        for label in anchor.labels:
            conn.execute("INSERT INTO gitlab_issuable_label VALUES (?, ?)", (iid, labels[label]))
        for role, who in (("assignee", anchor.assignee), ("reviewer", anchor.reviewer)):
            if who:
                conn.execute("INSERT INTO gitlab_issuable_user VALUES (?, ?, ?)", (iid, users[who], role))
        for k, (author, body) in enumerate(anchor.notes):
            conn.execute(
                "INSERT INTO gitlab_note (issuable_id, author_id, body, created_at) VALUES (?, ?, ?, ?)",
                (iid, users[author], body, _ts(created + timedelta(hours=6 * k + 2))),
            )
        if anchor.reviewer == ACCOUNT["username"] and anchor.state == "opened":
            conn.execute(
                "INSERT INTO gitlab_todo (user_id, issuable_id, author_id, action, created_at) VALUES (?, ?, ?, ?, ?)",
                (users[anchor.reviewer], iid, users[anchor.author], "requested a review of", anchor.created),
            )


def _readme(name: str, desc: str, license_key: str, rng: random.Random) -> str:
    """A README in the shape real projects have: intro, badges, install, usage, contributing, licence."""
    steps = rng.sample(
        (
            "Install the dependencies with your package manager.",
            "Copy the example configuration and adjust it to your setup.",
            "Run the test suite once to check that everything works.",
            "Start the development server and open it in a browser.",
            "Build the production bundle.",
            "Read the contributing guide before opening a merge request.",
        ),
        4,
    )
    faq = rng.sample(
        (
            ("Which platforms are supported?", "Linux, macOS and Windows are tested on every release."),
            ("How do I report a bug?", "Open an issue with the steps to reproduce and the version you use."),
            ("Can I use this commercially?", f"Yes, under the terms of the {license_key} license."),
            ("Where is the changelog?", "Every release lists its changes on the releases page."),
            ("How do I get help?", "Ask in the issue tracker; maintainers answer within a few days."),
        ),
        3,
    )
    lines = [f"# {name}", "", desc, "", "## Table of contents", ""]
    lines += [f"- [{t}](#{t.lower()})" for t in ("Installation", "Usage", "FAQ", "Contributing", "License")]
    lines += ["", "## Installation", ""] + [f"{i}. {step}" for i, step in enumerate(steps, 1)]
    lines += ["", "## Usage", "", f"See the documentation in the `docs` folder of {name} for every option.", ""]
    lines += ["## FAQ", ""] + [f"**{q}** {a}\n" for q, a in faq]
    lines += ["## Contributing", "", "Issues and merge requests are welcome. Please follow the code of conduct.", ""]
    lines += ["## License", "", f"Released under the {license_key} license, see LICENSE.", ""]
    return "\n".join(lines)


def seed(conn: sqlite3.Connection, rng: random.Random) -> None:
    """Fill an empty database created from ``SCHEMA``; same ``rng`` state, same rows."""
    users = _make_users(conn, rng)
    others = [u for u in users.values() if u != users["byteblaze"]]
    group_ids: dict[str, int] = {}
    for path, (name, desc) in GROUPS.items():
        group_ids[path] = inserted_id(
            conn.execute("INSERT INTO gitlab_group (path, name, description) VALUES (?, ?, ?)", (path, name, desc))
        )
        for uid in rng.sample(others, 6):
            conn.execute(
                "INSERT INTO gitlab_group_member VALUES (?, ?, ?)", (group_ids[path], uid, rng.choice((30, 40)))
            )
    conn.execute("INSERT INTO gitlab_group_member VALUES (?, ?, 30)", (group_ids["a11yproject"], users["byteblaze"]))
    projects: dict[str, int] = {}
    counters: dict[str, int] = {}
    for namespace, path, name, desc, language, license_key in PROJECTS:
        full = f"{namespace}/{path}"
        created = _when(rng)
        pid = inserted_id(
            conn.execute(
                "INSERT INTO gitlab_project (namespace, path, name, description, visibility, created_at,"
                " last_activity_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    namespace,
                    path,
                    name,
                    desc,
                    "private" if path == "dotfiles" else "public",
                    _ts(created),
                    _ts(created + timedelta(days=rng.randrange(30, 400))),
                ),
            )
        )
        projects[full] = pid
        counters[f"{pid}-issue"] = counters[f"{pid}-merge_request"] = 0
        owner = users.get(namespace)
        members = [owner] if owner else []
        if full in EXACT_MEMBERS:
            members += [users[u] for u in EXACT_MEMBERS[full]]
        else:
            members += [u for u in rng.sample(others, rng.randrange(3, 9)) if u not in members]
            members += [users[u] for u in ANCHOR_MEMBERS.get(full, ()) if users[u] not in members]
        for i, uid in enumerate(members):
            level = 50 if uid == owner else (40 if i == 1 else rng.choice((10, 20, 30, 30, 40)))
            if uid == users["byteblaze"] and owner != uid:
                level = 40 if namespace in ("primer", "a11yproject") else 30
            conn.execute("INSERT INTO gitlab_member VALUES (?, ?, ?, ?)", (pid, uid, level, _ts(created)))
        files = {
            "README.md": _readme(name, desc, license_key, rng),
            "LICENSE": _license_text(license_key),
            **_source_files(name, language, rng),
        }
        if full in ANCHOR_FILES:
            files[ANCHOR_FILES[full][0]] = ANCHOR_FILES[full][1]
        for fpath, content in sorted(files.items()):
            conn.execute("INSERT INTO gitlab_file VALUES (?, ?, ?)", (pid, fpath, content))
        labels = {}
        for lname, color, ldesc in LABELS:
            labels[lname] = inserted_id(
                conn.execute(
                    "INSERT INTO gitlab_label (project_id, name, color, description) VALUES (?, ?, ?, ?)",
                    (pid, lname, color, ldesc),
                )
            )
        _seed_project(conn, rng, pid, full, users, members, labels, counters)
        _seed_anchor_issuables(conn, pid, full, users, labels, counters)
    top = {projects[p] for p in STAR_TOTALS}
    for uid in users.values():
        for pid in rng.sample(sorted(set(projects.values()) - top), rng.randrange(0, 6)):
            conn.execute("INSERT INTO gitlab_star VALUES (?, ?)", (uid, pid))
    for full, total in STAR_TOTALS.items():
        for uid in others[:total]:  # the account itself has starred none of the most-starred projects
            conn.execute("INSERT INTO gitlab_star VALUES (?, ?)", (uid, projects[full]))
