"""Shared test setup: offline litellm, and seeded local-site databases for the site tests."""

import os
import shutil

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_LOG", "ERROR")


@pytest.fixture(scope="module")
def pristine(request, tmp_path_factory):
    """A seeded database of the test module's local site (its ``SITE`` attribute), built once per module."""
    from envs.local.data import build

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
