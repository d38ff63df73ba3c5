"""The LLM client: litellm underneath, plus per-role settings, retries, accounting and a replay cache.

* Any litellm model string works (``gpt-4o``, ``anthropic/...``, ``openai/<name>`` with an API base for a
  local OpenAI-compatible server). API keys come from the environment as litellm reads them; this
  module never stores or records them.
* Settings are per *call role* (``actor``, ``planner``, ``judge`` ...), see :class:`CallSettings`; a role
  may name its own model. ``api_base`` (or ``$WEBARENA_GYM_API_BASE``) reaches every role unless a role
  sets its own.
* Transient failures (rate limits, 5xx, timeouts, connection errors) are retried with exponential
  backoff; when the budget is spent, or on a permanent error, :class:`LLMError` is raised (its ``kind``
  says whether the provider or the configuration failed) and the failed call is still recorded
  (``LLMCall.error``), so the trajectory shows what happened.
* The cache key is (model, messages with images as hashes, settings, sample index), where the sample
  index counts how many samples of that same request were already drawn in this episode: a re-run
  replays the same sequence of answers, even for repeated identical prompts at temperature > 0.
* Per-episode limits on calls, tokens and cost (:mod:`llm.budget`) hold for every role; a spent budget
  raises :class:`LLMBudgetExhausted` before anything is sent.
* A server whose chat template takes text only (llama.cpp's answer to a content list: HTTP 500 "can
  only concatenate str (not "list") to str") is recognised at its first refusal, which is not retried;
  the client then sends text only (see :attr:`LLM.text_fallback`).
* A reply is kept up to ``max_reply_chars`` characters (a provider may ignore ``max_tokens``); the
  length of a cut reply is recorded (``LLMCall.replies_cut``), so a trajectory shows what was dropped.
* A scripted LLM never reaches a provider: its calls carry a placeholder key and an address nothing
  listens on, whatever the script holds.
"""

from __future__ import annotations

import os
import random
import re
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from webarena_gym.llm import budget
from webarena_gym.llm.budget import LLMLimits, LLMSpent
from webarena_gym.llm.cache import ResponseCache, cache_key
from webarena_gym.llm.errors import ErrorKind, ImagesRejectedError, LLMBudgetExhausted, LLMError
from webarena_gym.llm.logprobs import sample_tokens
from webarena_gym.llm.messages import Message, as_text_only, has_parts, with_image_refs
from webarena_gym.llm.redaction import escape_surrogates, redact
from webarena_gym.llm.script import Script
from webarena_gym.llm.tokens import count_message_tokens, count_text_tokens, litellm_module, price, response_cost

DEFAULT_MODEL_ENV = "WEBARENA_GYM_MODEL"
API_BASE_ENV_VAR = "WEBARENA_GYM_API_BASE"
DEFAULT_MODEL = "gpt-4-turbo"
# The output bound of a role that sets none: without one, a local server generates until the episode is
# killed (and keeps generating for nobody). Large enough for any method's structured answer.
DEFAULT_MAX_TOKENS = 2048
# Characters kept of one reply: well above any method's structured answer at DEFAULT_MAX_TOKENS, yet a
# server that ignores max_tokens cannot fill a trajectory (and memory) with gigabytes.
DEFAULT_MAX_REPLY_CHARS = 64_000
# What a scripted call is sent with in place of the user's key and server: should litellm ever take the
# mock for a real request, it fails at once on a port nothing serves, with no credential on the wire.
SCRIPTED_ENDPOINT = {"api_key": "scripted-no-key", "api_base": "http://127.0.0.1:9/v1"}


def default_model() -> str:
    """The model policies use unless configured: ``$WEBARENA_GYM_MODEL`` or GPT-4-Turbo (the papers' backbone)."""
    return os.environ.get(DEFAULT_MODEL_ENV, DEFAULT_MODEL)


@dataclass(frozen=True)
class CallSettings:
    """Sampling settings of one call role. ``None`` leaves the provider default, except ``model`` (the
    LLM's) and ``max_tokens`` (the LLM's bound, :data:`DEFAULT_MAX_TOKENS` unless set)."""

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    n: int = 1
    stop: tuple[str, ...] | None = None
    model: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # provider options, e.g. {"api_base": ...}

    def merged(self, **overrides: Any) -> CallSettings:
        known = {k: v for k, v in overrides.items() if k in SETTING_FIELDS}
        extra = {**self.extra, **{k: v for k, v in overrides.items() if k not in SETTING_FIELDS}}
        if "stop" in known and known["stop"] is not None:
            known["stop"] = tuple(known["stop"])
        return replace(self, **known, extra=extra)

    def request_params(self) -> dict[str, Any]:
        """The sampling parameters sent to litellm (and hashed into the cache key)."""
        params = {k: getattr(self, k) for k in ("temperature", "top_p", "max_tokens") if getattr(self, k) is not None}
        if self.stop:
            params["stop"] = list(self.stop)
        params.update(self.extra)
        return params


SETTING_FIELDS = frozenset({"temperature", "top_p", "max_tokens", "n", "stop", "model"})
# Provider options that carry credentials: sent to litellm, never hashed into cache keys or recorded.
CREDENTIAL_PARAMS = frozenset(
    {
        "api_key",
        "azure_ad_token",
        "aws_access_key_id",
        "aws_secret_access_key",
        "aws_session_token",
        "vertex_credentials",
        "extra_headers",
    }
)


@dataclass
class LLMCall:
    """Everything recorded about one logical call (all its samples), as stored in the trajectory.

    ``messages`` are recorded with inline images replaced by ``sha256:<hex>``; the bytes are in
    ``images`` (not serialised), for whoever saves the trajectory to write them as files.
    """

    role: str
    model: str
    messages: list[Message]
    responses: list[str]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None  # USD; None when litellm has no price for the model
    latency_s: float = 0.0
    cached: bool = False  # every sample came from the cache (no tokens were paid for now)
    error: str | None = None
    error_kind: ErrorKind | None = None
    attempts: int = 0
    note: str | None = None  # how the request differs from what the method built (text only)
    settings: dict[str, Any] = field(default_factory=dict)
    replies_cut: dict[str, int] = field(default_factory=dict)  # sample index -> the reply's full length
    images: dict[str, bytes] = field(default_factory=dict, repr=False)
    # per sample, the tokens with their log-probabilities and ids (llm.logprobs.sample_tokens) when the
    # server returned them (a request with logprobs=True); None otherwise
    logprobs: list[dict[str, Any] | None] | None = None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        del data["images"]
        return data


@dataclass
class Completion:
    """What :meth:`LLM.complete` returns: the sample texts and the call record."""

    texts: list[str]
    call: LLMCall

    @property
    def text(self) -> str:
        return self.texts[0]


# litellm reports a missing key for some providers as a server error (500); its text gives it away.
_CREDENTIAL_TROUBLE = re.compile(r"missing credentials|api[_ ]key|credential|unauthori[sz]ed|invalid.*key", re.I)


def is_transient(exc: BaseException) -> bool:
    """Worth retrying: rate limits, server-side errors, timeouts and dropped connections -- but never
    a missing or rejected credential, whatever status the provider gave it."""
    litellm = litellm_module()
    if isinstance(exc, litellm.AuthenticationError | litellm.PermissionDeniedError | litellm.NotFoundError):
        return False
    if _CREDENTIAL_TROUBLE.search(str(exc)):
        return False
    transient = (
        litellm.RateLimitError,
        litellm.InternalServerError,
        litellm.ServiceUnavailableError,
        litellm.Timeout,
        litellm.APIConnectionError,
        litellm.BadGatewayError,
    )
    if isinstance(exc, transient):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status == 429 or status >= 500)


# What text-only chat templates answer to a list of content parts or an image (llama.cpp's Jinja
# templates, vLLM and Ollama for a model without vision).
_PARTS_REJECTED = re.compile(
    r"can only concatenate str \(not \"list\"\) to str|image input is not supported|does not support image"
    r"|not a multimodal model|multimodal .*not supported|image_url.* not supported",
    re.I,
)
TEXT_ONLY_NOTE = "sent as text only: the model server rejected content parts (images)"


def rejects_parts(exc: BaseException) -> bool:
    """The provider refused a request for carrying content parts or images (a text-only template)."""
    return bool(_PARTS_REJECTED.search(str(exc)))


def describe_error(exc: BaseException) -> str:
    """One line for a provider's error, without the credentials some providers echo back."""
    return redact(f"{type(exc).__name__}: {str(exc).strip()[:500]}")


def _mock_reply(answer: Any) -> Any:
    """litellm's mock for a scripted answer. litellm takes a false ``mock_response`` ("" or None) for no
    mock at all and calls the provider, so an empty answer goes as a whole response object."""
    if isinstance(answer, BaseException):
        return answer
    text = "" if answer is None else str(answer)
    return text or {"choices": [{"message": {"role": "assistant", "content": ""}, "finish_reason": "stop"}]}


class LLM:
    """A litellm-backed client with per-role settings; see the module docstring for the guarantees.

    ``retries`` is the number of extra attempts after the first; waits grow as
    ``backoff_s * 2**attempt`` (with jitter) up to ``max_backoff_s``. ``timeout`` is per attempt: a
    call that outlives it is abandoned and its connection closed, which makes OpenAI-compatible servers
    (vLLM, SGLang, llama.cpp's) stop generating it. ``max_tokens`` bounds the reply of every role that
    sets no bound of its own, and ``max_reply_chars`` the characters kept of each reply. ``limits`` are
    the per-episode LLM budget (:mod:`llm.budget`), counted from :meth:`begin_episode`.

    ``text_fallback`` (default on): when the server rejects content parts or images, the call and every
    later one are sent as text (images replaced by a stand-in line, :func:`llm.messages.as_text_only`),
    with a note on each such call. On by default because every method that sends images sends the page
    text too, so a text-only model still gets the observation it needs, and a user's own server works
    without knowing which methods send images; off, the first refusal is a configuration error (the
    study stops, naming the method's option that turns images off).
    """

    def __init__(
        self,
        model: str | None = None,
        roles: dict[str, CallSettings] | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        retries: int = 4,
        timeout: float = 120.0,
        script: Script | None = None,
        backoff_s: float = 2.0,
        max_backoff_s: float = 60.0,
        api_base: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        limits: LLMLimits | None = None,
        text_fallback: bool = True,
        max_reply_chars: int = DEFAULT_MAX_REPLY_CHARS,
    ):
        self.model = model or default_model()
        self.max_tokens = max_tokens
        self.max_reply_chars = max_reply_chars
        self.roles = dict(roles or {})
        self.retries = retries
        self.timeout = float(timeout)
        self.script = script
        self.backoff_s = backoff_s
        self.max_backoff_s = max_backoff_s
        self.api_base = api_base or os.environ.get(API_BASE_ENV_VAR) or None
        self.cache = ResponseCache(cache_dir) if cache_dir is not None else None
        self._drawn: dict[str, int] = {}  # request hash -> samples drawn this episode
        self.log: list[LLMCall] | None = None  # when a list, every call (failed ones too) is appended
        self.limits = limits or LLMLimits()
        self.spent = LLMSpent()  # this episode's use of the limits
        self.text_fallback = text_fallback
        self.text_only = False  # the server rejected content parts: send text from now on

    def settings(self, role: str) -> CallSettings:
        return self.roles.get(role, CallSettings())

    def model_for(self, role: str) -> str:
        return self.settings(role).model or self.model

    def begin_episode(self) -> None:
        """Restart the per-request sample counters, so an episode replays from its own first answer,
        and the episode's LLM budget."""
        self._drawn.clear()
        self.spent = LLMSpent()

    def describe(self) -> dict[str, Any]:
        """JSON-serialisable configuration (no credentials), for the trajectory header."""
        return {
            "model": self.model,
            "api_base": self.api_base,
            "scripted": self.script is not None,
            "retries": self.retries,
            "timeout": self.timeout,
            "max_tokens": self.max_tokens,
            "max_reply_chars": self.max_reply_chars,
            "cache": self.cache is not None,
            "limits": self.limits.to_dict(),
            "text_fallback": self.text_fallback,
            "roles": {
                r: {
                    **asdict(s),
                    "stop": list(s.stop) if s.stop else None,
                    "extra": {k: v for k, v in s.extra.items() if k not in CREDENTIAL_PARAMS},
                }
                for r, s in self.roles.items()
            },
        }

    def complete(self, role: str, messages: list[Message], **overrides: Any) -> Completion:
        """Draw ``n`` samples for ``messages`` under ``role``'s settings (``overrides`` win).

        Raises :class:`LLMError` (carrying the recorded ``LLMCall``) when no answer could be obtained,
        and :class:`LLMBudgetExhausted` (nothing sent) when the episode's LLM budget is spent.
        """
        settings = self.settings(role).merged(**overrides)
        if settings.max_tokens is None:
            settings = replace(settings, max_tokens=self.max_tokens)
        model = settings.model or self.model
        try:
            budget.check(self.limits, self.spent, model)
        except LLMBudgetExhausted as exc:
            self.spent.exhausted = exc.budget  # recorded even when the method answers it itself
            raise
        self.spent.llm_calls += 1
        note = None
        if self.text_only and has_parts(messages):
            messages, note = as_text_only(messages), TEXT_ONLY_NOTE
        try:
            completion = self._complete(role, model, settings, messages, note)
        except ImagesRejectedError:
            if not self.text_fallback:
                raise
            self.text_only = True  # the refused call stays recorded: the trajectory shows why
            return self.complete(role, messages, **overrides)
        call = completion.call
        budget.charge(self.spent, call.prompt_tokens, call.completion_tokens, call.cost)
        return completion

    def _complete(
        self, role: str, model: str, settings: CallSettings, messages: list[Message], note: str | None
    ) -> Completion:
        params = settings.request_params()
        if self.api_base and "api_base" not in params:
            params["api_base"] = self.api_base
        public = {k: v for k, v in params.items() if k not in CREDENTIAL_PARAMS}
        recorded, images = with_image_refs(messages)
        scripted = self.script is not None
        base = cache_key(model, recorded, public, -1, scripted)
        first = self._drawn.get(base, 0)
        self._drawn[base] = first + settings.n
        keys = [cache_key(model, recorded, public, first + i, scripted) for i in range(settings.n)]

        call = LLMCall(
            role=role,
            model=model,
            messages=recorded,
            responses=[""] * settings.n,
            settings={**public, "n": settings.n},
            images=images,
            note=note,
        )
        if self.log is not None:
            self.log.append(call)
        start = time.perf_counter()
        hits = {
            i: hit for i, key in enumerate(keys) if self.cache is not None and (hit := self.cache.get(key)) is not None
        }
        missing = [i for i in range(settings.n) if i not in hits]
        for i, hit in hits.items():
            call.responses[i] = hit[0]
        paid_cost: float | None = 0.0
        try:
            if missing:
                texts, prompt_tokens, completion_tokens, paid_cost, attempts, tokens = self._fetch(
                    role, model, messages, params, len(missing)
                )
                if any(tokens):
                    call.logprobs = [None] * settings.n
                    for i, sample in zip(missing, tokens, strict=True):
                        call.logprobs[i] = sample
                call.attempts = attempts
                call.prompt_tokens, call.completion_tokens = prompt_tokens, completion_tokens
                for i, text in zip(missing, texts, strict=True):
                    if len(text) > self.max_reply_chars:
                        call.replies_cut[str(i)] = len(text)
                        text = text[: self.max_reply_chars]
                    call.responses[i] = text
                    if self.cache is not None:
                        share = None if paid_cost is None else paid_cost / len(missing)
                        self.cache.put(keys[i], model, text, prompt_tokens, completion_tokens // len(missing), share)
            else:  # all cached: show what the call cost when it was made
                call.cached = True
                call.prompt_tokens = hits[0][1]
                call.completion_tokens = sum(h[2] for h in hits.values())
                costs = [h[3] for h in hits.values()]
                paid_cost = None if None in costs else sum(c for c in costs if c is not None)
        except LLMError as exc:
            call.error, call.error_kind = str(exc), exc.kind
            call.attempts = exc.attempts or call.attempts
            call.latency_s = time.perf_counter() - start
            exc.call = call
            raise
        call.cost = paid_cost
        call.latency_s = time.perf_counter() - start
        return Completion(texts=call.responses, call=call)

    # -- the litellm call with retries -------------------------------------------------------------

    def _fetch(
        self, role: str, model: str, messages: list[Message], params: dict[str, Any], n: int
    ) -> tuple[list[str], int, int, float | None, int, list[dict[str, Any] | None]]:
        """Returns (texts, prompt_tokens, completion_tokens, cost, attempts, per-sample tokens) for ``n``
        fresh samples."""
        if self.script is not None:  # one mock call per sample: each sample has its own scripted answer
            texts: list[str] = []
            tokens: list[dict[str, Any] | None] = []
            prompt = completion = attempts = 0
            cost: float | None = 0.0
            for _ in range(n):
                t, p, c, k, a, s = self._with_retries(role, model, messages, params, 1)
                texts += t
                tokens += s
                prompt, completion, attempts = p, completion + c, attempts + a
                cost = None if cost is None or k is None else cost + k
            return texts, prompt, completion, cost, attempts, tokens
        return self._with_retries(role, model, messages, params, n)

    def _with_retries(
        self, role: str, model: str, messages: list[Message], params: dict[str, Any], n: int
    ) -> tuple[list[str], int, int, float | None, int, list[dict[str, Any] | None]]:
        last: BaseException | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                wait = min(self.max_backoff_s, self.backoff_s * 2 ** (attempt - 1))
                time.sleep(wait * (0.5 + random.random() / 2))
            try:
                texts, prompt, completion, cost, tokens = self._once(role, model, messages, params, n)
                return texts, prompt, completion, cost, attempt + 1, tokens
            except LLMError:
                raise
            except Exception as exc:  # litellm maps provider errors onto its exception types
                last = exc
                if has_parts(messages) and rejects_parts(exc):
                    refused = ImagesRejectedError(
                        f"{model} ({role}): the model server takes text only ({describe_error(exc)}); turn the "
                        "method's images off (plan_mcts: screenshots=false) or leave the option text_fallback on"
                    )
                    refused.attempts = attempt + 1
                    raise refused from exc
                if not is_transient(exc):
                    error = LLMError(f"{model} ({role}) failed: {describe_error(exc)}", kind="configuration")
                    error.attempts = attempt + 1
                    raise error from exc
        assert last is not None
        error = LLMError(f"{model} ({role}) failed after {self.retries + 1} attempts: {describe_error(last)}")
        error.attempts = self.retries + 1
        raise error from last

    def _once(
        self, role: str, model: str, messages: list[Message], params: dict[str, Any], n: int
    ) -> tuple[list[str], int, int, float | None, list[dict[str, Any] | None]]:
        litellm = litellm_module()
        # One attempt per call here: this layer owns the retries (the OpenAI client would add its own).
        kwargs: dict[str, Any] = {**params, "timeout": self.timeout, "max_retries": 0}
        if n > 1:
            kwargs["n"] = n
        if self.script is not None:
            kwargs.update(SCRIPTED_ENDPOINT)
            answer = self.script.next(role, messages)
            if answer == Script.TIMEOUT:
                kwargs.update(mock_response="", mock_timeout=True)
            else:
                kwargs["mock_response"] = _mock_reply(answer)
        response = litellm.completion(model=model, messages=messages, **kwargs)
        texts = [escape_surrogates(choice.message.content or "") for choice in response.choices]
        tokens = [sample_tokens(response, choice) for choice in response.choices]
        if self.script is not None:  # the mock's usage is a constant; count what a real call would
            prompt = count_message_tokens(model, messages)
            completion = sum(count_text_tokens(model, t) for t in texts)
            return texts, prompt, completion, price(model, prompt, completion), tokens
        usage = getattr(response, "usage", None)
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion = int(getattr(usage, "completion_tokens", 0) or 0)
        return texts, prompt, completion, response_cost(response), tokens
