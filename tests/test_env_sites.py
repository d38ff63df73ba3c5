"""Pure-Python checks of the site hosts and task helpers."""

from __future__ import annotations

import pytest
from env_support import StaticSiteHost, StaticSites, task_config

from webarena_gym.envs.sites import RealSiteHost, SiteHost, SitesUnavailableError, replace_placeholders, sites_in_config
from webarena_gym.envs.task import answer_from_chat


def test_static_host_satisfies_the_protocol(tmp_path):
    sites = StaticSites(tmp_path)
    try:
        assert isinstance(StaticSiteHost(sites), SiteHost)
        assert isinstance(RealSiteHost(), SiteHost)
    finally:
        sites.close()


def test_placeholders_replaced_everywhere_longest_first():
    config = {
        "start_url": "__SHOPPING_ADMIN__/admin |AND| __SHOPPING__",
        "eval": {"program_html": [{"url": "__SHOPPING__/cart", "locator": ""}], "note": ["__MAP__"]},
    }
    urls = {"shopping": "http://s:1", "shopping_admin": "http://a:2", "map": "http://m:3"}
    out = replace_placeholders(config, urls)
    assert out["start_url"] == "http://a:2/admin |AND| http://s:1"
    assert out["eval"]["program_html"][0]["url"] == "http://s:1/cart"
    assert out["eval"]["note"] == ["http://m:3"]
    assert config["start_url"].startswith("__SHOPPING_ADMIN__")  # the input is not modified


def test_sites_in_config_includes_placeholders_outside_sites():
    config = task_config(start_url="__SHOPPING__ |AND| __WIKIPEDIA__")
    assert sites_in_config(config) == ("shopping", "wikipedia")


def test_answer_from_chat_roles():
    greeting = {"role": "assistant", "message": "Hi!"}
    goal = {"role": "user", "message": "do it"}
    assert answer_from_chat([greeting]) is None
    assert answer_from_chat([greeting, goal]) is None
    assert answer_from_chat([greeting, goal, {"role": "assistant", "message": "42"}]) == "42"
    assert answer_from_chat([greeting, goal, {"role": "infeasible", "message": "no such page"}]) == "N/A: no such page"
    assert answer_from_chat([greeting, goal, {"role": "infeasible", "message": ""}]) == "N/A"


def test_real_site_host_names_missing_variables():
    host = RealSiteHost(("shopping", "gitlab"), environ={"WA_SHOPPING": "http://shop:7770/"})
    assert host.missing_variables() == ["WA_GITLAB"]
    assert host.urls() == {"shopping": "http://shop:7770"}
    with pytest.raises(SitesUnavailableError, match="WA_GITLAB is not set") as err:
        host.prepare()
    assert "export WA_GITLAB=" in str(err.value) and "WA_SHOPPING" not in str(err.value)
    RealSiteHost(("shopping",), environ={"WA_SHOPPING": "http://shop:7770"}).prepare()
