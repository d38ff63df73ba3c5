"""Planted records of the GitLab-like code host: the fixed facts the tasks in ``tasks/gitlab.json`` ask about.

Everything else in the seed is random (from the seed's ``random.Random``); these records are written with
fixed values so that a task's answer, its reference solution and its checks stay true whatever the
random draws around them are. Names follow WebArena's GitLab where its templates name them
(``byteblaze``, ``primer/design``, ``a11yproject/a11yproject.com``, ``abisubramanya27`` ...).
"""

from __future__ import annotations

from dataclasses import dataclass

# Named users the tasks and anchors mention: username -> full name.
NAMED_USERS = {
    "byteblaze": "Byte Blaze",
    "convexegg": "Convex Egg",
    "yjlou": "Yi-Jie Lou",
    "kilian": "Kilian Brandt",
    "sarah_chen": "Sarah Chen",
    "mkowalski": "Marek Kowalski",
    "lin_wei": "Lin Wei",
    "roshanjossey": "Roshan Jossey",
    "abisubramanya27": "Abishek S",
    "carol_dev": "Carol Nguyen",
    "vinta": "Vinta Chen",
    "ericwu": "Eric Wu",
    "lahwaacz": "Jakub Klinkovský",
    "bblanchon": "Benoît Blanchon",
    "koush": "Koushik Dutta",
    "Seirdy": "Rohan Kumar",
    "davepgreene": "Dave Greene",
    "V13Axel": "Alex Dills",
    "alexhutnik": "Alex Hutnik",
    "justinarmstrong": "Justin Armstrong",
}


@dataclass(frozen=True)
class Issuable:
    """An issue or merge request with fixed content; ``notes`` are (author, body) in order."""

    project: str
    kind: str
    title: str
    description: str
    author: str = "sarah_chen"
    state: str = "opened"
    labels: tuple[str, ...] = ()
    assignee: str | None = None
    reviewer: str | None = None
    created: str = "2023-03-20 10:00:00"
    updated: str | None = None
    branches: tuple[str, str] | None = None
    notes: tuple[tuple[str, str], ...] = ()


ISSUABLES: tuple[Issuable, ...] = (
    Issuable(
        "a11yproject/a11yproject.com",
        "issue",
        "404 error on the resources page after the redesign",
        "Several links in the resources section now return a 404.",
        labels=("bug",),
    ),
    Issuable(
        "a11yproject/a11yproject.com",
        "issue",
        "Outdated screen reader survey statistics",
        "The survey numbers on the home page are from 2019.",
        labels=("documentation",),
        created="2023-03-21 09:30:00",
    ),
    Issuable(
        "byteblaze/solarized-prism-theme",
        "issue",
        "Line numbers are hard to read in light mode",
        "The gutter colour has too little contrast.",
        labels=("accessibility",),
        assignee="byteblaze",
        created="2023-03-18 14:00:00",
    ),
    Issuable(
        "primer/design",
        "merge_request",
        "Add octovisuals page",
        "Adds documentation for the new octovisuals illustration set.",
        author="ericwu",
        labels=("documentation",),
        assignee="ericwu",
        created="2023-03-22 16:45:00",
        branches=("octovisuals-page", "main"),
    ),
    Issuable(
        "byteblaze/a11y-webring.club",
        "merge_request",
        "Add verification functions for member sites",
        "Checks that every member site links back to the ring.",
        author="davepgreene",
        labels=("enhancement",),
        assignee="convexegg",
        reviewer="byteblaze",
        created="2023-03-25 11:20:00",
        branches=("verify-sites", "main"),
        notes=(("byteblaze", "Could you add a test for sites that redirect?"),),
    ),
    Issuable(
        "a11yproject/a11yproject.com",
        "merge_request",
        "Add a post about semantic HTML for forms",
        "A new post that explains fieldsets, legends and labels.",
        author="roshanjossey",
        reviewer="byteblaze",
        created="2023-03-12 08:15:00",
        branches=("semantic-html-post", "main"),
        notes=(("byteblaze", "Nice topic, a few comments inline."), ("roshanjossey", "Thanks, addressed them all.")),
    ),
    Issuable(
        "a11yproject/a11yproject.com",
        "merge_request",
        "Fix focus outline for edge cases in the navigation",
        "Keyboard focus disappears on the last navigation item in Safari.",
        author="ericwu",
        created="2023-02-27 13:40:00",
        branches=("focus-edge-cases", "main"),
    ),
    Issuable(
        "byteblaze/empathy-prompts",
        "merge_request",
        "Fix the broken links in the README",
        "Two links to the prompt cards pointed to an old host.",
        author="convexegg",
        created="2023-03-02 17:05:00",
        branches=("fix-readme-links", "main"),
    ),
    Issuable(
        "a11yproject/a11y-checklist",
        "merge_request",
        "Add WCAG 2.2 success criteria to the checklist",
        "Adds the nine new success criteria of WCAG 2.2.",
        author="roshanjossey",
        reviewer="byteblaze",
        created="2023-03-08 10:00:00",
        branches=("wcag-22", "main"),
        notes=(("byteblaze", "Please link each criterion to its understanding document."),),
    ),
    # Issues to be assigned ("the issue regarding ...").
    Issuable(
        "byteblaze/a11y-webring.club",
        "issue",
        "Link to an accessibility statement from every member page",
        "Member pages should say how to report an accessibility barrier.",
        created="2023-03-10 09:00:00",
    ),
    Issuable(
        "primer/design",
        "issue",
        "Clarify usage of flash alerts in dialogs",
        "The guidelines do not say whether a dialog may contain a flash alert.",
        labels=("documentation",),
        created="2023-03-14 15:30:00",
    ),
    Issuable(
        "byteblaze/timeit",
        "issue",
        "Support for nanosecond precision",
        "Short commands all show 0.00 s; print nanoseconds when below a millisecond.",
        labels=("enhancement",),
        created="2023-02-11 11:11:00",
    ),
    # The account's own issues, by keyword: which one was created or updated last, and its state.
    Issuable(
        "a11yproject/a11yproject.com",
        "issue",
        "Add a better contrast checker to the resources page",
        "The linked checker is no longer maintained.",
        author="byteblaze",
        state="closed",
        created="2022-11-10 10:00:00",
        updated="2023-01-05 12:00:00",
    ),
    Issuable(
        "byteblaze/empathy-prompts",
        "issue",
        "Make the prompts better for asynchronous reviews",
        "Most prompts assume a meeting; add ones that work in written reviews.",
        author="byteblaze",
        created="2023-02-14 09:20:00",
        updated="2023-02-20 18:00:00",
    ),
    Issuable(
        "a11yproject/a11yproject.com",
        "issue",
        "Feature request: a dark mode toggle",
        "Readers asked for a dark theme that follows the system setting.",
        author="byteblaze",
        state="closed",
        created="2023-03-01 08:00:00",
        updated="2023-03-10 08:00:00",
    ),
    Issuable(
        "byteblaze/solarized-prism-theme",
        "issue",
        "Feature: a print stylesheet",
        "Printed code blocks lose their background; add print colours.",
        author="byteblaze",
        created="2022-12-01 16:00:00",
        updated="2023-03-15 16:30:00",
    ),
    Issuable(
        "byteblaze/dotfiles",
        "issue",
        "Remove the jq dependency from install.sh",
        "install.sh fails on machines without jq.",
        author="byteblaze",
        created="2023-01-20 19:45:00",
        updated="2023-01-21 08:00:00",
    ),
    Issuable(
        "byteblaze/timeit",
        "issue",
        "Pin the dependency versions in pyproject",
        "Unpinned versions broke the last release.",
        author="byteblaze",
        state="closed",
        created="2022-05-02 14:00:00",
        updated="2022-05-30 14:00:00",
    ),
    Issuable(
        "a11yproject/a11yproject.com",
        "issue",
        "Update the homepage content for the 2023 survey",
        "New survey results are out; the homepage still quotes the old ones.",
        author="byteblaze",
        state="closed",
        created="2023-02-02 10:30:00",
        updated="2023-02-28 10:30:00",
    ),
)

ANCHOR_FILES = {
    "byteblaze/empathy-prompts": (
        "README.md",
        "# empathy-prompts\n\nEmpathy prompts is a deck of writing prompts "
        "that helps engineering teams practise kind, specific feedback in code review."
        "\n\n## How to use\n\nPick one prompt before each review session.\n",
    ),
}
# Members the tasks rely on, on top of the random ones: project -> usernames.
ANCHOR_MEMBERS = {
    "primer/design": ("carol_dev", "ericwu", "byteblaze"),
    "primer/octicons": ("byteblaze",),
    "primer/css": ("byteblaze",),
    "a11yproject/a11yproject.com": ("ericwu", "roshanjossey", "byteblaze"),
    "a11yproject/a11y-checklist": ("byteblaze", "roshanjossey"),
    "byteblaze/a11y-webring.club": ("convexegg", "davepgreene", "Seirdy"),
    "byteblaze/solarized-prism-theme": ("abisubramanya27",),
    "byteblaze/empathy-prompts": ("convexegg", "roshanjossey"),
}
# Projects whose members are exactly the owner plus these (no random members): "who else has access".
EXACT_MEMBERS = {"byteblaze/gimmiethat.space": ("yjlou",), "byteblaze/cloud-to-butt": ("convexegg", "vinta")}
# Branches besides ``main`` that merge-request tasks name: project -> branch names.
ANCHOR_BRANCHES = {
    "primer/design": ("dialog-component", "dialog", "bump-doctocat", "debug-build-time", "octovisuals-page"),
    "a11yproject/a11yproject.com": ("redesign", "feature/replace-gulp", "feature/markdown-figure-block"),
    "byteblaze/dotfiles": ("zsh-support",),
}
# Extra commits that make the tasks' "top contributor" unambiguous: project -> (username, count).
TOP_CONTRIBUTORS = {"primer/design": ("carol_dev", 40), "a11yproject/a11yproject.com": ("ericwu", 35)}
# Commits on fixed days (project, username, timestamp, message) for the per-day commit counts.
ANCHOR_COMMITS: tuple[tuple[str, str, str, str], ...] = (
    ("a11yproject/a11yproject.com", "kilian", "2023-03-05 10:12:00", "Fix the skip link target on posts"),
    ("a11yproject/a11yproject.com", "ericwu", "2023-03-02 09:01:00", "Update the resources index"),
    ("a11yproject/a11yproject.com", "ericwu", "2023-03-02 15:44:00", "Remove the retired screen reader guide"),
    ("a11yproject/a11yproject.com", "kilian", "2023-01-03 11:30:00", "Add alt text to the survey charts"),
    ("primer/design", "carol_dev", "2023-02-06 09:00:00", "Document the dialog sizes"),
    ("primer/design", "carol_dev", "2023-02-06 10:30:00", "Add dialog examples"),
    ("primer/design", "carol_dev", "2023-02-06 16:10:00", "Fix dialog example spacing"),
    ("primer/design", "kilian", "2023-02-06 12:00:00", "Fix a typo in the dialog docs"),
)
# RSS feed tokens shown on the account's Access Tokens page (WebArena's value for its account).
FEED_TOKENS = {"byteblaze": "TMN_bBn9Z48qVbUFZV45"}
# Stars per project for the most-starred ranking (exact totals, far above the random ones).
STAR_TOTALS = {
    "a11yproject/a11yproject.com": 64,
    "primer/octicons": 57,
    "primer/css": 50,
    "data-lab/covid-dashboard": 44,
    "open-maps/tile-server": 39,
    "webdev-guild/sveltekit-blog": 34,
    "convexegg/chatgpt": 30,
    "data-lab/ml-benchmarks": 27,
}
