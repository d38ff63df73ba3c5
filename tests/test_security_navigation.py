"""Hostile navigation (issue 25, findings 2 and 5): open redirects in the local sites' logins, and a
navigation that the agent's own action breaks (Chromium's error page) counted as the agent's failure."""

from __future__ import annotations

import pytest

from webarena_gym.envs.local.data import build
from webarena_gym.envs.local.framework import SiteContext
from webarena_gym.envs.local.sites import gitlab, reddit

# What a login's "go back to" parameter may carry to send the browser to another host, as a browser
# reads it: tabs and newlines are dropped, a backslash is a slash.
OFF_SITE_TARGETS = [
    "/%09/127.0.0.1:1/x",
    "/%0a/127.0.0.1:1/x",
    "/%0d%0a/127.0.0.1:1/x",
    "//127.0.0.1:1/x",
    "/%5c127.0.0.1:1/x",
    "/%5C%5C127.0.0.1:1/x",
    "http://127.0.0.1:1/x",
    "%09//127.0.0.1:1/x",
]


@pytest.fixture(scope="module")
def site_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("sites") / "sites.sqlite"
    build(path, ["reddit", "gitlab"])
    return path


def _reddit_login(site_db, query: str):
    client = reddit.create_app(SiteContext("reddit", str(site_db))).test_client()
    form = {"_username": reddit.ACCOUNT["username"], "_password": reddit.ACCOUNT["password"]}
    return client.post(f"/login?{query}", data=form)


def _gitlab_sign_in(site_db, query: str):
    client = gitlab.create_app(SiteContext("gitlab", str(site_db))).test_client()
    form = {"username": gitlab.ACCOUNT["username"], "password": gitlab.ACCOUNT["password"]}
    return client.post(f"/users/sign_in?{query}", data=form)


@pytest.mark.parametrize("target", OFF_SITE_TARGETS)
def test_a_login_never_redirects_off_the_site(site_db, target):
    for response in (_reddit_login(site_db, f"next={target}"), _gitlab_sign_in(site_db, f"redirect_to={target}")):
        assert response.status_code == 302  # never a 500
        assert response.headers["Location"] == "/"


def test_a_login_still_returns_to_a_page_of_the_site(site_db):
    response = _reddit_login(site_db, "next=/f/books%3Fsort%3Dnew")
    assert response.status_code == 302 and response.headers["Location"] == "/f/books?sort=new"
    response = _gitlab_sign_in(site_db, "redirect_to=/byteblaze/dotfiles")
    assert response.status_code == 302 and response.headers["Location"] == "/byteblaze/dotfiles"
