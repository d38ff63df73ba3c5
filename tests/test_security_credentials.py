"""Credentials never reach a file the harness writes, and a scripted model never reaches a provider.

The attacks: a password in ``--api-base http://user:pass@host``; a key the provider echoes back in its
answer (a fake OpenAI-compatible server on 127.0.0.1); a scripted empty answer, which litellm takes for
"no mock" and sends to the real provider with the real key.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from model_server import ModelServer

from webarena_gym.experiments.synth.store import JsonlStore
from webarena_gym.llm import LLM, Script
from webarena_gym.llm.redaction import REDACTED, redact

PASSWORD = "hunter2-pa55word"
ECHOED = "sk-proj-EchoedBackByTheProvider0123456789"
MODEL = "openai/fake"


@pytest.mark.parametrize(
    "secret,shown",
    [
        (f"http://alice:{PASSWORD}@127.0.0.1:8000/v1", "http://<redacted>@127.0.0.1:8000/v1"),
        ("https://0123456789abcdefABCDEF01@git.example/x.git", "https://<redacted>@git.example/x.git"),
        ("sk-ant-api03-abcdefghijklmnop", REDACTED),
        ("sk-proj-abcdefghijklmnop", REDACTED),
        ("AIzaSyA1234567890abcdefghijklmnopq", REDACTED),
        ("hf_abcdefghijklmnopqrstu", REDACTED),
        ("gsk_abcdefghijklmnopqrstu", REDACTED),
        ("xai-abcdefghijklmnopqrstu", REDACTED),
        ("Authorization: Bearer abcdefghijklmnopqrstuvwxyz", f"Authorization: {REDACTED}"),
        ('{"api-key": "0123456789abcdef0123456789abcdef"}', f'{{"api-key": "{REDACTED}"}}'),
    ],
)
def test_every_key_shape_in_use_and_url_passwords_are_redacted(secret, shown):
    assert redact(secret) == shown


def test_a_url_without_credentials_or_with_an_address_in_its_query_is_left_alone():
    # a user name alone is no secret: a clone command the task asks for must reach the evaluator intact
    kept = (
        "http://127.0.0.1:7770/customer/account",
        "mailto:a@b.c",
        "http://x.org/?mail=a@b.c",
        "ssh://git@h:22/a.git",
    )
    for text in kept:
        assert redact(text) == text


def written(root: Path) -> list[tuple[Path, bytes]]:
    return [(p, p.read_bytes()) for p in root.rglob("*") if p.is_file()]


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-P", "-m", *args], capture_output=True, text=True, env=env, timeout=900, check=False
    )


@pytest.mark.browser
@pytest.mark.slow
def test_a_url_password_and_an_echoed_key_reach_no_file_of_study_report_dataset_cache_or_rollouts(tmp_path):
    server = ModelServer(lambda request: f"The key is {ECHOED}. In summary, the next action I will perform is "
                         f"```stop [{ECHOED}]```")  # fmt: skip
    try:
        host, port = server.url.removeprefix("http://").split("/")[0].split(":")
        api_base = f"http://alice:{PASSWORD}@{host}:{port}/v1"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("WEBARENA_GYM_", "OPENAI_"))}
        env["OPENAI_API_KEY"] = "local-dummy"
        study, cache = tmp_path / "study", tmp_path / "cache"
        policy = f"react:cache_dir={cache}"
        out = cli(
            "webarena_gym.experiments.cli", "compare", "--policy", policy, "--model", MODEL, "--api-base", api_base,
            "--tasks", "webarena/local.500", "--out", str(study), "--workers", "1", "--no-progress", env=env,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr[-3000:]
        assert server.requests, "the study never called the provider"
        exported = cli("webarena_gym.experiments.cli", "dataset", str(study), "--out", str(tmp_path / "data"), env=env)
        assert exported.returncode == 0, exported.stderr[-3000:]
        rollouts = tmp_path / "rollouts.jsonl"
        collected = cli(
            "webarena_gym.experiments.llm_rollouts", "--model", MODEL, "--api-base", api_base,
            "--tasks", "webarena/local.500", "--n", "1", "--workers", "1", "--out", str(rollouts), env=env,
        )  # fmt: skip
        assert collected.returncode == 0, collected.stderr[-3000:]
    finally:
        server.close()
    synth = JsonlStore(tmp_path / "synth" / "trajectories.jsonl")
    synth.append([{"key": "k", "answer": ECHOED, "api_base": api_base}])
    files = written(study) + written(cache) + written(tmp_path / "data") + [(rollouts, rollouts.read_bytes())]
    files += written(tmp_path / "synth")
    assert any(p.suffix == ".sqlite" for p, _ in files) and (study / "report" / "index.html").exists()
    for path, data in files:
        for secret in (PASSWORD, ECHOED):
            assert secret.encode() not in data, f"{secret} in {path}"
    assert any(REDACTED.encode() in data for _, data in written(study))  # what was there is shown redacted
    for text in (out.stdout, out.stderr, collected.stdout, collected.stderr):
        assert PASSWORD not in text and ECHOED not in text


@pytest.mark.parametrize("answer", ["", None, "   "])
def test_a_scripted_model_never_calls_the_provider_whatever_its_answer(answer, monkeypatch):
    server = ModelServer(lambda request: "a real answer")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-key-that-must-stay-home-0123")
    try:
        llm = LLM(MODEL, api_base=server.url, script=Script({"actor": [answer]}), retries=0)
        completion = llm.complete("actor", [{"role": "user", "content": "go"}])
        assert completion.text == (answer or "")
        assert server.requests == []
    finally:
        server.close()
