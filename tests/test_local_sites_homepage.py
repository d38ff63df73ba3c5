"""The homepage lists every site of the instance with a working link, as WebArena's does."""

from __future__ import annotations

from webarena_gym.envs.local.framework import SiteContext
from webarena_gym.envs.local.sites import homepage


def test_lists_running_sites_with_links_and_marks_the_others():
    urls = {"map": "http://127.0.0.1:5001", "wikipedia": "http://127.0.0.1:5002"}
    client = homepage.create_app(SiteContext("homepage", ":memory:", urls)).test_client()
    html = client.get("/").data.decode()
    assert '<a href="http://127.0.0.1:5001/">OpenStreetMap</a>' in html
    assert '<a href="http://127.0.0.1:5002/">Wikipedia</a>' in html
    assert html.count("(not running)") == len(homepage.CARDS) - 2
    assert client.get("/scratchpad").status_code == 200


def test_password_page_lists_each_sites_account_as_webarenas_does():
    urls = {"reddit": "http://127.0.0.1:5003"}
    client = homepage.create_app(SiteContext("homepage", ":memory:", urls)).test_client()
    html = client.get("/password.html").data.decode()
    # the forum's and the code host's accounts, the forum linked because it runs on this instance
    assert '<a href="http://127.0.0.1:5003">Postmill Forums</a></td><td>MarvelsGrandpa</td><td>test1234</td>' in html
    assert "<td>byteblaze</td><td>hello1234</td>" in html
    assert "<td>admin</td><td>admin1234</td>" in html
    assert "Wikipedia" not in html  # no account there
