"""A user's own server whose chat template takes text only (llama.cpp serving a text model answers a
list of content parts with HTTP 500 "can only concatenate str (not "list") to str"): the first refusal
is recognised, not retried, and the client goes on in text with a note on every call it changed; every
method runs against such a server the way the README's "Your own model server" section says."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest
from model_server import TEXT_ONLY_ERROR, ModelServer
from test_faults_model_server import EXACT_TASK, readme_commands, readme_exports, run_cli

from webarena_gym.experiments.store import StudyStore
from webarena_gym.llm import LLM, ImagesRejectedError, image_part
from webarena_gym.llm.client import TEXT_ONLY_NOTE
from webarena_gym.llm.messages import IMAGE_NOT_SENT

SHOT = [{"role": "user", "content": [{"type": "text", "text": "The page:"}, image_part(b"\x89PNG not really")]}]


def parts(server: ModelServer) -> int:
    """Requests the server got with content lists."""
    return sum(any(isinstance(m["content"], list) for m in r.body["messages"]) for r in server.requests)


@pytest.fixture
def server(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "local-server")
    srv = ModelServer(lambda request: "fine", text_only=True)
    yield srv
    srv.close()


def test_the_first_refusal_is_not_retried_and_the_client_goes_on_in_text(server):
    llm = LLM("openai/fake", api_base=server.url, retries=4, backoff_s=0.01)
    llm.log = []
    assert llm.complete("planner", SHOT).text == "fine"
    refused, sent = llm.log
    assert parts(server) == 1 and refused.attempts == 1  # one refusal, no retries of it
    assert TEXT_ONLY_ERROR in refused.error and refused.error_kind == "configuration"
    assert sent.note == TEXT_ONLY_NOTE
    assert sent.messages == [{"role": "user", "content": f"The page:\n{IMAGE_NOT_SENT}"}]
    # later calls go as text at once; a text-only request is sent unchanged, without a note
    assert llm.complete("operator", SHOT).call.note == TEXT_ONLY_NOTE
    assert llm.complete("operator", [{"role": "user", "content": "hi"}]).call.note is None
    assert parts(server) == 1 and len(server.requests) == 4


def test_without_the_fallback_the_refusal_is_a_configuration_error_naming_the_option(server):
    llm = LLM("openai/fake", api_base=server.url, retries=4, backoff_s=0.01, text_fallback=False)
    with pytest.raises(ImagesRejectedError) as refused:
        llm.complete("planner", SHOT)
    assert refused.value.kind == "configuration" and "screenshots=false" in str(refused.value)
    assert len(server.requests) == 1


def test_another_server_error_is_still_retried(server):
    server.text_only, server.reply = False, lambda request: (500, "the GPU fell over")  # images are fine here
    llm = LLM("openai/fake", api_base=server.url, retries=2, backoff_s=0.01)
    with pytest.raises(Exception, match="after 3 attempts"):
        llm.complete("planner", SHOT)
    assert len(server.requests) == 3


# -- every method against a text-only server, by the README's own-server command ------------------------


@pytest.mark.browser
@pytest.mark.slow
def test_every_method_runs_against_a_text_only_server_by_the_readme_command(tmp_path):
    """The README's llama.cpp line as written, with every LLM method and an LLM call budget that bounds
    the methods a canned answer cannot finish, on one task."""
    methods = [
        "react",
        "agentoccam",
        "agentoccam_judge",
        "coact",
        "coact_fs",
        "plan_and_act",
        "plan_and_act_dynamic",
        "devils_advocate",
        "plan_mcts",
    ]

    def reply(request) -> str:  # an answer most methods' parsers take: give the year and stop
        return "REASON:\nThe page gives the year.\nACTION:\nstop [1796]\nOBSERVATION HIGHLIGHT:\n```stop [1796]```"

    argv = readme_commands()[0]
    readme_url = urlsplit(argv[argv.index("--api-base") + 1])
    try:  # the README's own address when it is free on this machine
        server = ModelServer(reply, port=readme_url.port, text_only=True)
    except OSError:
        server = ModelServer(reply, text_only=True)
        argv[argv.index("--api-base") + 1] = server.url
    argv[argv.index("--tasks") + 1] = EXACT_TASK  # one task of the section's site
    given = {argv[i + 1] for i, a in enumerate(argv) if a == "--policy"}  # the README's own (a study runs each once)
    extra = [a for m in methods if m not in given for a in ("--policy", m)] + ["--max-llm-calls", "6"]
    try:
        out = run_cli(*argv, *extra, "--out", str(tmp_path / "demo"), env=readme_exports(), timeout=1500)
    finally:
        server.close()
    assert out.returncode == 0, out.stderr[-3000:]
    results = {r.policy.split(" ")[0]: r for r in StudyStore(tmp_path / "demo").latest().values()}
    assert set(methods) <= set(results)
    for name in methods:
        result = results[name]
        assert result.status == "done" and result.error_kind is None, (name, result.err_msg)
        assert 1 <= result.llm_calls <= 6, name
    # Plan-MCTS sends its marked screenshots: refused once, then the same prompts in text
    assert parts(server) == 1
    traj = json.loads((tmp_path / "demo" / results["plan_mcts"].trajectory / "trajectory.json").read_text())
    calls = [c for s in traj["steps"] for c in s["llm_calls"]]
    assert TEXT_ONLY_ERROR in calls[0]["error"] and calls[1]["note"] == TEXT_ONLY_NOTE
    assert traj["policy"]["config"]["screenshots"] is True
