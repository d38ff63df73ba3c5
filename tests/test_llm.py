"""The LLM layer through litellm's real call path (mock_response): retries, timeouts, errors, cache,
accounting and scripted roles."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from webarena_gym.llm import (
    DEFAULT_MAX_TOKENS,
    LLM,
    CallSettings,
    LLMError,
    ResponseCache,
    Script,
    ScriptExhaustedError,
)
from webarena_gym.llm.tokens import count_message_tokens, gpt2_encoding, gpt2_tokens

MSGS = [{"role": "system", "content": "You pick actions."}, {"role": "user", "content": "OBJECTIVE: buy a red hat"}]


def _litellm():
    import litellm

    return litellm


def rate_limit():
    return _litellm().RateLimitError("mock rate limit", llm_provider="openai", model="gpt-4o")


def server_error():
    return _litellm().InternalServerError("mock 500", llm_provider="openai", model="gpt-4o")


def make(script: Script, **kw) -> LLM:
    kw.setdefault("backoff_s", 0.0)
    return LLM("gpt-4o", {"actor": CallSettings(temperature=0.5, max_tokens=64)}, script=script, **kw)


def test_transient_errors_are_retried_until_success():
    script = Script(
        {
            "actor": [
                rate_limit(),
                server_error(),
                _litellm().Timeout("slow", model="gpt-4o", llm_provider="openai"),
                "click [3]",
            ]
        }
    )
    out = make(script, retries=3).complete("actor", MSGS)
    assert out.text == "click [3]"
    assert out.call.attempts == 4 and out.call.error is None
    assert script.remaining("actor") == 0


def test_exhausted_retry_budget_is_a_recorded_error():
    llm = make(Script({"actor": [rate_limit()] * 3 + ["never reached"]}), retries=2)
    llm.log = []
    with pytest.raises(LLMError, match="after 3 attempts: RateLimitError") as info:
        llm.complete("actor", MSGS)
    call = info.value.call
    assert call is not None and call is llm.log[0]
    assert call.attempts == 3 and "RateLimitError" in call.error and call.responses == [""]
    assert llm.script.remaining("actor") == 1


def test_permanent_error_is_not_retried():
    auth = _litellm().AuthenticationError("bad key", llm_provider="openai", model="gpt-4o")
    script = Script({"actor": [auth, "unused"]})
    with pytest.raises(LLMError, match="AuthenticationError") as info:
        make(script, retries=5).complete("actor", MSGS)
    assert info.value.call.attempts == 1
    assert script.remaining("actor") == 1


def test_backoff_grows_exponentially():
    llm = make(Script({"actor": [rate_limit(), rate_limit(), "ok"]}), retries=2, backoff_s=0.1)
    start = time.perf_counter()
    assert llm.complete("actor", MSGS).text == "ok"
    # waits are 0.1 then 0.2 seconds, each jittered into [50%, 100%]
    assert 0.15 <= time.perf_counter() - start < 1.5


def test_per_call_timeout_reaches_litellm():
    llm = make(Script({"actor": [Script.TIMEOUT, Script.TIMEOUT]}), retries=1, timeout=0.2)
    start = time.perf_counter()
    with pytest.raises(LLMError, match="Timeout"):
        llm.complete("actor", MSGS)
    elapsed = time.perf_counter() - start
    assert 0.4 <= elapsed < 3.0  # two attempts, each waited out the 0.2 s timeout


def test_token_and_cost_accounting():
    litellm = _litellm()
    out = make(Script({"actor": ["click [12]"]})).complete("actor", MSGS)
    expected_prompt = litellm.token_counter(model="gpt-4o", messages=MSGS)
    assert out.call.prompt_tokens == expected_prompt > 10
    assert out.call.completion_tokens == litellm.token_counter(model="gpt-4o", text="click [12]")
    p, c = litellm.cost_per_token(
        model="gpt-4o", prompt_tokens=out.call.prompt_tokens, completion_tokens=out.call.completion_tokens
    )
    assert out.call.cost == pytest.approx(p + c) and out.call.cost > 0
    assert out.call.latency_s > 0 and out.call.settings == {"temperature": 0.5, "max_tokens": 64, "n": 1}


def test_unpriced_model_records_tokens_only():
    llm = LLM("openai/my-local-model", script=Script({"actor": ["ok"]}))
    call = llm.complete("actor", MSGS).call
    assert call.cost is None and call.prompt_tokens > 0 and call.completion_tokens > 0


def test_real_path_accounting_uses_litellm_usage_and_cost():
    """Without a script the response's own usage and litellm's completion_cost are recorded."""
    llm = LLM("gpt-4o", {"actor": CallSettings(extra={"mock_response": "fine"})})
    call = llm.complete("actor", MSGS).call
    assert call.responses == ["fine"]
    assert (call.prompt_tokens, call.completion_tokens) == (10, 20)  # litellm's mock usage
    p, c = _litellm().cost_per_token(model="gpt-4o", prompt_tokens=10, completion_tokens=20)
    assert call.cost == pytest.approx(p + c) and call.cost > 0


def test_roles_have_separate_scripts_and_running_out_is_clear():
    script = Script({"actor": ["a1", "a2"], "judge": ["j1"]})
    llm = LLM("gpt-4o", {"actor": CallSettings(), "judge": CallSettings(temperature=0.0)}, script=script)
    assert llm.complete("actor", MSGS).text == "a1"
    assert llm.complete("judge", MSGS).text == "j1"
    assert llm.complete("actor", MSGS).text == "a2"
    with pytest.raises(ScriptExhaustedError, match="no answer left for role 'judge'.*used 1"):
        llm.complete("judge", MSGS)
    with pytest.raises(ScriptExhaustedError, match="role 'planner'"):
        llm.complete("planner", MSGS)


def test_callable_script_items_see_the_messages():
    seen = []
    script = Script({"actor": [lambda m: seen.append(m) or f"saw {len(m)} messages"]})
    assert LLM("gpt-4o", script=script).complete("actor", MSGS).text == "saw 2 messages"
    assert seen[0] == MSGS


def test_n_samples_each_get_their_own_script_answer():
    llm = LLM("gpt-4o", {"actor": CallSettings(n=3)}, script=Script({"actor": ["x", "y", "z"]}))
    out = llm.complete("actor", MSGS)
    assert out.texts == ["x", "y", "z"] and out.call.completion_tokens == 3


_WRITER = """
import sys, json
from webarena_gym.llm import LLM, Script
msgs = json.loads(sys.argv[2])
llm = LLM("gpt-4o", script=Script({"actor": [sys.argv[3] + "-first", sys.argv[3] + "-second"]}), cache_dir=sys.argv[1])
print(json.dumps([llm.complete("actor", msgs).text, llm.complete("actor", msgs).text]))
"""


def _write_in_subprocess(cache_dir: Path, messages: list[dict], tag: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(cache_dir), json.dumps(messages), tag], stdout=subprocess.PIPE, text=True
    )


def test_cache_is_shared_across_processes_and_replays_in_order(tmp_path):
    # Another process and this one write to the same cache at the same time.
    proc = _write_in_subprocess(tmp_path, MSGS, "A")
    mine = LLM("gpt-4o", script=Script({"actor": [f"B{i}" for i in range(40)]}), cache_dir=tmp_path)
    for i in range(40):
        assert mine.complete("actor", [{"role": "user", "content": f"prompt {i}"}]).text == f"B{i}"
    assert json.loads(proc.communicate(timeout=120)[0]) == ["A-first", "A-second"]
    assert proc.returncode == 0
    assert len(ResponseCache(tmp_path)) == 42

    # A new process with an empty script replays both samples, in order, from the cache ...
    llm = LLM("gpt-4o", script=Script({"actor": []}), cache_dir=tmp_path)
    first, second = llm.complete("actor", MSGS), llm.complete("actor", MSGS)
    assert (first.text, second.text) == ("A-first", "A-second")
    assert first.call.cached and first.call.prompt_tokens > 0 and first.call.cost > 0
    # ... a third identical request is a miss (the script has nothing, so it says so) ...
    with pytest.raises(ScriptExhaustedError):
        llm.complete("actor", MSGS)
    # ... and a new episode starts the replay over.
    llm.begin_episode()
    assert llm.complete("actor", MSGS).text == "A-first"


def test_cache_key_separates_parameters_and_scripted_answers(tmp_path):
    LLM(
        "gpt-4o", {"actor": CallSettings(temperature=0.0)}, script=Script({"actor": ["t0"]}), cache_dir=tmp_path
    ).complete("actor", MSGS)
    hot = LLM("gpt-4o", {"actor": CallSettings(temperature=1.0)}, script=Script({"actor": ["t1"]}), cache_dir=tmp_path)
    assert hot.complete("actor", MSGS).text == "t1"  # different temperature: miss
    real = LLM("gpt-4o", {"actor": CallSettings(temperature=0.0, extra={"mock_response": "real"})}, cache_dir=tmp_path)
    assert real.complete("actor", MSGS).text == "real"  # unscripted never reads scripted answers


def test_describe_has_no_credentials(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-abcdefghijklmnopqrstuvwxyz")
    llm = LLM("gpt-4o", {"actor": CallSettings(temperature=0.5)}, script=Script({"actor": ["ok"]}))
    call = llm.complete("actor", MSGS).call
    blob = json.dumps(llm.describe()) + json.dumps(call.to_dict())
    assert "sk-test" not in blob


def test_credential_options_are_sent_but_never_recorded_or_hashed(tmp_path):
    secret = "not-shaped-like-a-key-but-secret"
    llm = LLM(
        "gpt-4o",
        {"actor": CallSettings(extra={"api_key": secret, "api_base": "http://x/v1"})},
        script=Script({"actor": ["ok"]}),
        cache_dir=tmp_path,
    )
    call = llm.complete("actor", MSGS).call
    assert call.settings == {"api_base": "http://x/v1", "max_tokens": DEFAULT_MAX_TOKENS, "n": 1}
    assert secret not in json.dumps(llm.describe()) and secret not in json.dumps(call.to_dict())
    rotated = LLM(
        "gpt-4o",
        {"actor": CallSettings(extra={"api_key": "another", "api_base": "http://x/v1"})},
        script=Script({"actor": []}),
        cache_dir=tmp_path,
    )
    assert rotated.complete("actor", MSGS).call.cached  # a rotated key still hits the cache


def png(color: tuple[int, int, int]) -> bytes:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), color).save(buffer, format="PNG")
    return buffer.getvalue()


def test_an_image_message_round_trips_through_the_cache_keyed_by_its_bytes(tmp_path):
    from webarena_gym.llm import image_part

    def ask(image: bytes) -> list[dict]:
        return [{"role": "user", "content": [{"type": "text", "text": "What colour?"}, image_part(image)]}]

    red, blue = png((255, 0, 0)), png((0, 0, 255))
    first = LLM("gpt-4o", {"actor": CallSettings()}, cache_dir=tmp_path, script=Script({"actor": ["red"]}))
    out = first.complete("actor", ask(red))
    text_only = count_message_tokens("gpt-4o", [{"role": "user", "content": "What colour?"}])
    assert out.text == "red" and out.call.prompt_tokens > text_only + 50  # the image's tokens are counted
    recorded = out.call.to_dict()["messages"][0]["content"][1]["image_url"]["url"]
    digest = hashlib.sha256(red).hexdigest()
    assert recorded == f"sha256:{digest}" and out.call.images == {digest: red} and "images" not in out.call.to_dict()

    again = LLM("gpt-4o", {"actor": CallSettings()}, cache_dir=tmp_path, script=Script({"actor": []}))
    hit = again.complete("actor", ask(red))  # same bytes: replayed from the cache, no script answer used
    assert hit.text == "red" and hit.call.cached and hit.call.prompt_tokens == out.call.prompt_tokens
    with pytest.raises(ScriptExhaustedError):
        again.complete("actor", ask(blue))  # other bytes: a different request


def test_an_image_array_is_encoded_once_while_it_is_among_the_recent_ones():
    import io

    import numpy as np
    from PIL import Image

    from webarena_gym.llm.messages import PNG_MEMO_SIZE, png_bytes

    shot = np.zeros((3, 4, 3), dtype=np.uint8)
    shot[1, 2] = (0, 200, 0)
    png = png_bytes(shot)
    assert np.array_equal(np.asarray(Image.open(io.BytesIO(png))), shot)
    assert png_bytes(shot.copy()) is png  # the same pixels in another array: the kept encoding
    other = shot.copy()
    other[0, 0] = (1, 1, 1)
    assert png_bytes(other) != png and png_bytes(shot.reshape(4, 3, 3)) != png  # pixels and shape both count
    for i in range(PNG_MEMO_SIZE):
        png_bytes(np.full((2, 2, 3), i, dtype=np.uint8))
    assert png_bytes(shot) == png and png_bytes(shot) is not png  # pushed out, encoded again


def test_roles_have_their_own_models_and_settings_and_unknown_options_are_named():
    from webarena_gym.policies.base import build_llm

    llm = build_llm(
        {"planner": CallSettings(temperature=0.0), "executor": CallSettings(max_tokens=512)},
        model="gpt-4o",
        planner_model="openai/my-planner",
        executor_max_tokens=64,
        executor_api_base="http://127.0.0.1:8000/v1",
        script={"planner": ["plan"], "executor": ["act"]},
    )
    assert llm.model_for("planner") == "openai/my-planner" and llm.model_for("executor") == "gpt-4o"
    assert llm.settings("executor").max_tokens == 64
    planned = llm.complete("planner", MSGS)
    acted = llm.complete("executor", MSGS)
    assert planned.call.model == "openai/my-planner" and acted.call.model == "gpt-4o"
    assert acted.call.settings["api_base"] == "http://127.0.0.1:8000/v1" and "api_base" not in planned.call.settings
    with pytest.raises(TypeError, match="unknown option 'planer_model'.*planner_model"):
        build_llm({"planner": CallSettings()}, planer_model="x")


def test_api_base_reaches_every_role_unless_a_role_sets_its_own(monkeypatch):
    monkeypatch.setenv("WEBARENA_GYM_API_BASE", "http://127.0.0.1:9/v1")
    llm = LLM("openai/local", {"a": CallSettings(), "b": CallSettings(extra={"api_base": "http://other/v1"})},
              script=Script({"a": ["x"], "b": ["y"]}))  # fmt: skip
    assert llm.complete("a", MSGS).call.settings["api_base"] == "http://127.0.0.1:9/v1"
    assert llm.complete("b", MSGS).call.settings["api_base"] == "http://other/v1"


def test_errors_say_whether_the_provider_or_the_configuration_failed():
    litellm = _litellm()
    missing_key = litellm.InternalServerError(
        "Missing credentials. Please pass an `api_key`", llm_provider="openai", model="gpt-4o"
    )
    for item, kind, attempts in [
        (missing_key, "configuration", 1),  # litellm reports it as a 500: still not retried
        (
            litellm.BadRequestError("maximum context length is 4096", model="m", llm_provider="openai"),
            "configuration",
            1,
        ),
        (server_error(), "provider", 3),
    ]:
        llm = make(Script({"actor": [item] * 3}), retries=2)
        with pytest.raises(LLMError) as info:
            llm.complete("actor", MSGS)
        assert (info.value.kind, info.value.attempts, info.value.call.error_kind) == (kind, attempts, kind)


def test_gpt2_tokenizer_is_gpt2s_and_needs_no_network():
    encoding = gpt2_encoding()  # tiktoken's own "gpt2" would download its vocabulary here
    assert encoding.n_vocab == 50257 and encoding.eot_token == 50256
    assert encoding.encode("Hello world") == [15496, 995] and encoding.encode(" the") == [262]
    # GPT-2 has no tokens for runs of spaces (p50k_base, whose file it is built from, adds them)
    assert encoding.encode("\t\tlink [12]  x") == [197, 197, 8726, 685, 1065, 60, 220, 2124]
    assert gpt2_tokens("<|endoftext|>") > 1  # markup in page text is text, never a special token
