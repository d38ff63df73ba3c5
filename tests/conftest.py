"""Shared test setup: offline litellm, leased browsers on the shared Playwright driver, seeded site databases."""

import os
import shutil

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOG", "ERROR")

pytest_plugins = ["env_support"]  # static test sites and the env factory fixture


@pytest.fixture(scope="module")
def pristine(request, tmp_path_factory):
    """A seeded database of the test module's local site (its ``SITE`` attribute), built once per module."""
    from webarena_gym.envs.local.data import build

    site = request.module.SITE
    path = tmp_path_factory.mktemp(site) / "pristine.sqlite"
    build(path, [site])
    return path


@pytest.fixture
def db_path(pristine, tmp_path):
    """A fresh copy of the module's pristine site database for one test, which may write to it."""
    path = tmp_path / "site.sqlite"
    shutil.copyfile(pristine, path)
    return path


@pytest.fixture(scope="module")
def leased_browser():
    """A headless Chromium on the shared Playwright driver, under a lease (see ``playwright_lease``)."""
    from webarena_gym.envs.browser import playwright_lease

    with playwright_lease() as playwright:
        chromium = playwright.chromium.launch(headless=True)
        yield chromium
        chromium.close()


@pytest.fixture
def playwright_leased():
    """Hold a driver lease for one test that drives BrowserGym's own classes."""
    from webarena_gym.envs.browser import playwright_lease

    with playwright_lease() as playwright:
        yield playwright


def pytest_sessionfinish(session, exitstatus):
    """Close the idle browsers and site servers the session's environments left for reuse, and the
    Playwright driver that raw BrowserGym envs of the tests shared under a process-long lease."""
    from webarena_gym import envs
    from webarena_gym.envs.browser import stop_playwright

    envs.shutdown()
    stop_playwright()
