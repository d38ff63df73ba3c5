"""The code host's file editor: a new file (with the folders in its path) or a changed one becomes a
commit, the raw URL WebArena's checks read serves it, and bad paths or missing rights change nothing."""

from __future__ import annotations

import sqlite3

import pytest

from webarena_gym.envs.local.framework import SiteContext
from webarena_gym.envs.local.sites import gitlab

SITE = "gitlab"


def _client(db_path, username: str, password: str):
    client = gitlab.create_app(SiteContext("gitlab", str(db_path))).test_client()
    assert client.post("/users/sign_in", data={"username": username, "password": password}).status_code == 302
    return client


@pytest.fixture
def client(db_path):
    return _client(db_path, gitlab.ACCOUNT["username"], gitlab.ACCOUNT["password"])


def _commits(db_path, project: str) -> int:
    ns, path = project.split("/")
    sql = (
        "SELECT COUNT(*) FROM gitlab_commit c JOIN gitlab_project p ON p.id = c.project_id"
        " WHERE namespace = ? AND path = ?"
    )
    return sqlite3.connect(db_path).execute(sql, (ns, path)).fetchone()[0]


def test_a_new_file_in_a_new_folder_is_committed_and_served_raw(client, db_path):
    before = _commits(db_path, "byteblaze/gimmiethat.space")
    assert "New file" in client.get("/byteblaze/gimmiethat.space").data.decode()
    response = client.post(
        "/byteblaze/gimmiethat.space/-/new/main/",
        data={"file_path": "space/urls.txt", "content": "http://a\r\nhttp://b\r\n", "commit_message": ""},
    )
    assert response.status_code == 302
    assert response.headers["Location"] == "/byteblaze/gimmiethat.space/-/blob/main/space/urls.txt"
    assert client.get("/byteblaze/gimmiethat.space/-/raw/main/space/urls.txt").data.decode() == "http://a\nhttp://b\n"
    assert ">space</a>" in client.get("/byteblaze/gimmiethat.space/-/tree/main/").data.decode().replace("📁 ", "")
    assert _commits(db_path, "byteblaze/gimmiethat.space") == before + 1


def test_editing_a_file_replaces_its_content(client):
    client.post("/projects/new", data={"name": "fans", "visibility": "public", "readme": "on"})
    assert client.get("/byteblaze/fans/-/raw/main/README.md").data.decode() == "# fans\n"
    assert "# fans" in client.get("/byteblaze/fans/-/edit/main/README.md").data.decode()
    client.post(
        "/byteblaze/fans/-/edit/main/README.md", data={"content": "# fans\n\n- one\n", "commit_message": "List"}
    )
    assert client.get("/byteblaze/fans/-/raw/main/README.md").data.decode() == "# fans\n\n- one\n"


def test_bad_paths_duplicates_and_missing_files_are_refused(client):
    bad = client.post("/byteblaze/gimmiethat.space/-/new/main/", data={"file_path": "../etc/passwd", "content": "x"})
    assert bad.status_code == 400 and "File path can contain only" in bad.data.decode()
    client.post("/byteblaze/gimmiethat.space/-/new/main/", data={"file_path": "a.txt", "content": "x"})
    again = client.post("/byteblaze/gimmiethat.space/-/new/main/", data={"file_path": "a.txt", "content": "y"})
    assert again.status_code == 400 and "already exists" in again.data.decode()
    assert client.get("/byteblaze/gimmiethat.space/-/raw/main/a.txt").data.decode() == "x"
    assert client.get("/byteblaze/gimmiethat.space/-/edit/main/nope.txt").status_code == 404
